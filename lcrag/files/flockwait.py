"""Waiting for an exclusive ``flock`` with a deadline (POSIX advisory locks, one open descriptor each).

:func:`flock_within` is the loop the encode lock of the local embedding store (``lcrag.embeddings.encoders``) and
the request claims of the response cache (``lcrag.llm.claims``) share: non-blocking attempts with a doubling pause
(5 ms up to ``max_delay_s``) until the lock is taken or the deadline passes. A lock not taken in time, or a file
system without ``flock``, is reported, not raised: both callers then go on without it, as before they had one."""

from __future__ import annotations

import time

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: callers check for fcntl first
    fcntl = None


def flock_within(fd: int, timeout_s: float, max_delay_s: float = 0.05) -> bool:
    """Take an exclusive ``flock`` on ``fd`` within ``timeout_s`` seconds; True when held (release it with
    ``fcntl.flock(fd, fcntl.LOCK_UN)`` or by closing ``fd``), False when the deadline passed first or the file
    system refuses ``flock``."""
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, max_delay_s)
        except OSError:  # a file system without flock
            return False
