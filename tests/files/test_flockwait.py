"""lcrag.files.flockwait: an exclusive flock taken within a deadline, or reported as not taken."""

import fcntl
import os
import threading
import time

from lcrag.files.flockwait import flock_within


def _fd(path):
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)


def test_a_free_lock_is_taken_and_a_held_one_is_not_within_the_deadline(tmp_path):
    a, b = _fd(tmp_path / "l"), _fd(tmp_path / "l")  # two descriptors: flock locks are per open file
    try:
        assert flock_within(a, 1.0)
        t0 = time.monotonic()
        assert not flock_within(b, 0.2)
        assert 0.2 <= time.monotonic() - t0 < 2.0
        fcntl.flock(a, fcntl.LOCK_UN)
        assert flock_within(b, 0.0)  # free: taken on the first attempt, whatever the deadline
    finally:
        os.close(a), os.close(b)


def test_a_lock_released_while_waiting_is_taken(tmp_path):
    a, b = _fd(tmp_path / "l"), _fd(tmp_path / "l")
    try:
        assert flock_within(a, 1.0)
        threading.Timer(0.1, fcntl.flock, (a, fcntl.LOCK_UN)).start()
        assert flock_within(b, 10.0, max_delay_s=0.01)
    finally:
        os.close(a), os.close(b)


def test_a_descriptor_that_refuses_flock_is_reported_not_raised(tmp_path):
    fd = _fd(tmp_path / "l")
    os.close(fd)  # a closed descriptor: flock raises OSError (EBADF), as a file system without flock does
    assert flock_within(fd, 1.0) is False
