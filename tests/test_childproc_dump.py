"""tests/childproc.py: a child that hangs past its timeout leaves its Python stacks in the failure message."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

import childproc

HANG = """
import threading, time, sys
def stuck_in_a_worker_thread():
    threading.Event().wait()
threading.Thread(target=stuck_in_a_worker_thread, daemon=True).start()
def wait_for_a_reply_that_never_comes():
    print("ready", flush=True)
    time.sleep(600)
wait_for_a_reply_that_never_comes()
"""

GRANDCHILD = """
import subprocess, sys
p = subprocess.Popen([sys.executable, "-c", "import time\\ndef grandchild_waits():\\n    print('waiting', flush=True)\\n    time.sleep(600)\\ngrandchild_waits()"])
print("started", p.pid, flush=True)
p.wait()
"""


def test_a_hanging_child_is_dumped_with_every_threads_stack_then_killed():
    t = time.monotonic()
    with pytest.raises(pytest.fail.Exception) as e:
        childproc.run([sys.executable, "-c", HANG], timeout=3, text=True)
    msg = str(e.value)
    assert "did not finish within 3 s" in msg
    assert "--- stdout ---\nready" in msg
    # faulthandler's dump (PYTHONFAULTHANDLER=1 from conftest): the main thread's frames and the worker thread's
    assert "Fatal Python error: Aborted" in msg, msg
    assert "in wait_for_a_reply_that_never_comes" in msg and "in stuck_in_a_worker_thread" in msg, msg
    assert "Current thread 0x" in msg and "\nThread 0x" in msg, msg
    assert time.monotonic() - t < 3 + childproc.DUMP_GRACE + 5


def test_a_hanging_grandchild_is_dumped_and_nothing_is_left_running():
    p = subprocess.Popen([sys.executable, "-c", GRANDCHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    grandchild = int(p.stdout.readline().split()[1])
    assert p.stdout.readline() == "waiting\n"  # the grandchild (same stdout) has reached its sleep
    with pytest.raises(pytest.fail.Exception) as e:
        childproc.communicate(p, timeout=1)
    msg = str(e.value)
    # the grandchild shares the child's stderr: its frames are in the message, and so are the child's
    assert "in grandchild_waits" in msg and "in <module>" in msg, msg
    assert p.returncode is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{grandchild}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"grandchild {grandchild} still running")


def test_a_child_that_finishes_in_time_is_returned_as_subprocess_run_would():
    r = childproc.run([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
                      timeout=60, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n")
    r = childproc.run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], timeout=60, text=True,
                      input="abc")
    assert r.stdout == "ABC\n"


def test_sigint_default_undoes_the_ignore_a_background_shell_hands_down():
    """A suite started as ``make test &`` in a non-interactive shell ignores SIGINT, and so does every Python child:
    it then has no ``KeyboardInterrupt`` handler. ``childproc.sigint_default`` gives the child the default back."""
    code = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"

    def ignored() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def ignored_then_default() -> None:
        ignored()
        childproc.sigint_default()

    outs = [subprocess.run([sys.executable, "-c", code], preexec_fn=f, capture_output=True, text=True, timeout=60).stdout.strip()
            for f in (ignored, ignored_then_default)]
    assert outs == ["False", "True"]
