"""Waiting on a child process in a test without losing the cause of a hang.

Every Python child of the test run has ``PYTHONFAULTHANDLER=1`` (``tests/conftest.py``): on SIGABRT it writes
the Python stack of each of its threads to its stderr before it dies. :func:`communicate` and :func:`run` wait
as ``Popen.communicate`` and ``subprocess.run`` do; when the timeout passes they send SIGABRT to the child and to
every Python process below it (a kernel, a worker; deepest first), collect what the child wrote, kill what is
left, and fail the test with the child's stdout and stderr, stack dumps included. Descendants that write
elsewhere (a kernel's log file) leave their dump there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

#: seconds the child gets, after SIGABRT, to write its stacks and exit
DUMP_GRACE = 10.0


def sigint_default() -> None:
    """``preexec_fn`` for a child that a test stops with SIGINT: SIGINT at its default action in the child, as a shell
    starts a foreground command.

    A test run started in the background of a non-interactive shell (``make test &``, a CI step that backgrounds
    it, a flake loop) ignores SIGINT, and every child inherits the ignore. Python then installs no
    ``KeyboardInterrupt`` handler at start-up, so ``lcrag reproduce`` (which stops on ``KeyboardInterrupt``) never
    sees the test's Ctrl-C and the test waits until it dumps the child's stacks: in such a shell both SIGINT tests of
    ``tests/reproduction/test_reproduce_interrupt.py`` failed every time, each stack showing papermill still
    waiting on the kernel."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _tree(pid: int) -> list[int]:
    """``pid``'s live descendants (from /proc; [] elsewhere), deepest last."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rfind(")") + 2:].split()[1]), []).append(int(d))
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += children.get(p, [])
    return out


def _is_python(pid: int) -> bool:
    try:
        return b"python" in open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0]
    except OSError:
        return False


def _wait_gone(pid: int, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for ``pid`` to exit (gone from /proc, or a zombie its parent has not reaped)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.02)


def dump_and_kill(p: subprocess.Popen) -> tuple[str, str]:
    """SIGABRT to ``p``'s Python descendants (deepest first, each given time to write its dump and exit before the
    next is signalled) and to ``p`` (their faulthandler dumps the stacks),
    up to :data:`DUMP_GRACE` seconds for ``p`` to exit, then SIGKILL to whatever is left; returns ``p``'s
    remaining (stdout, stderr)."""
    below = _tree(p.pid)
    for pid in reversed(below):
        if _is_python(pid):
            try:
                os.kill(pid, signal.SIGABRT)
            except OSError:
                continue
            # one dump at a time: a descendant that shares the child's stderr finishes writing (and dies) before
            # the next process is signalled, so two dumps never interleave line by line
            _wait_gone(pid, DUMP_GRACE / 2)
    try:
        p.send_signal(signal.SIGABRT)
    except OSError:
        pass
    try:
        out, err = p.communicate(timeout=DUMP_GRACE)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    for pid in below:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return out or "", err or ""


def communicate(p: subprocess.Popen, timeout: float, what: str = "child process", input=None) -> tuple:
    """``p.communicate(input, timeout=timeout)``; on timeout the child's stacks are dumped (:func:`dump_and_kill`)
    and the test fails with them."""
    try:
        return p.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        t = time.monotonic()
        out, err = dump_and_kill(p)
        pytest.fail(f"{what} (pid {p.pid}, {p.args!r}) did not finish within {timeout} s; its Python stacks "
                    f"(faulthandler, SIGABRT; {time.monotonic() - t:.1f} s to dump):\n--- stdout ---\n{out}\n"
                    f"--- stderr ---\n{err}", pytrace=False)


def run(args, timeout: float, **kw) -> subprocess.CompletedProcess:
    """``subprocess.run(args, timeout=timeout, **kw)`` (``capture_output=True`` unless stdout/stderr are given);
    on timeout the child's stacks are dumped and the test fails with them."""
    if "stdout" not in kw and "stderr" not in kw:
        kw.setdefault("capture_output", True)
    capture = kw.pop("capture_output", False)
    if capture:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    inp = kw.pop("input", None)
    if inp is not None:
        kw["stdin"] = subprocess.PIPE
    with subprocess.Popen(args, **kw) as p:
        out, err = communicate(p, timeout, what="child process", input=inp)
    return subprocess.CompletedProcess(args, p.returncode, out, err)
