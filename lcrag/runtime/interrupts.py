"""Stopping a sweep cleanly on Ctrl-C (SIGINT) or SIGTERM.

Convention (what :func:`lcrag.runner.run_tasks` does with :func:`handling`):

* the **first** SIGINT or SIGTERM stops submitting new calls at once; calls already in flight
  (at most the reader's concurrency) may finish for ``grace_s`` seconds (default 10,
  ``LCRAG_STOP_GRACE_S``), and every finished row is written;
* a **second** SIGINT or SIGTERM, or the end of the grace period, abandons the calls still in
  flight (their worker threads are daemons: nothing waits for them, their results are
  dropped and never written);
* the sweep then raises :class:`RunInterrupted` — a ``KeyboardInterrupt``, so a notebook cell
  stops as on any interrupt and ``except Exception`` does not swallow it — carrying the
  counts of calls done, cancelled (in flight, abandoned) and left (never sent), and the exit
  status a command should return: 128 + signal number (130 for SIGINT, 143 for SIGTERM).

Signal handlers can only be installed from the main thread; elsewhere :func:`handling` is a
no-op and the sweep runs as before. A Jupyter kernel's interrupt is a SIGINT to the kernel
process, so a notebook cell gets the same clean stop.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

DEFAULT_GRACE_S = 10.0


def grace_s() -> float:
    try:
        return float(os.environ.get("LCRAG_STOP_GRACE_S", DEFAULT_GRACE_S))
    except ValueError:
        return DEFAULT_GRACE_S


def exit_status(signum: int | None) -> int:
    """Shell convention 128 + signal number (130 SIGINT, 143 SIGTERM); 130 when unknown."""
    return 128 + int(signum or signal.SIGINT)


def signal_name(signum: int | None) -> str:
    try:
        return signal.Signals(signum or signal.SIGINT).name
    except ValueError:  # pragma: no cover
        return f"signal {signum}"


class RunInterrupted(KeyboardInterrupt):
    """A sweep stopped by a signal after writing every finished row (see module doc)."""

    def __init__(self, signum: int | None, *, done: int = 0, cancelled: int = 0, left: int = 0, message: str = ""):
        self.signum = signum or signal.SIGINT
        self.done, self.cancelled, self.left = done, cancelled, left
        self.message = message or (f"interrupted by {signal_name(self.signum)}: {done} calls done, "
                                   f"{cancelled} in flight cancelled, {left} not sent")
        super().__init__(self.message)

    @property
    def exit_status(self) -> int:
        return exit_status(self.signum)

    def __str__(self) -> str:
        return self.message


@dataclass
class StopRequest:
    """What the handlers recorded: how many signals, the first one, and when."""

    grace_s: float = field(default_factory=grace_s)
    count: int = 0
    signum: int | None = None
    first_at: float | None = None
    announced: bool = False

    @property
    def requested(self) -> bool:
        return self.count > 0

    def record(self, signum: int) -> None:
        self.count += 1
        if self.signum is None:
            self.signum, self.first_at = signum, time.monotonic()

    def abort(self) -> bool:
        """True when in-flight calls are to be abandoned: a second signal or the grace period is over."""
        if not self.requested:
            return False
        return self.count >= 2 or time.monotonic() - (self.first_at or 0.0) >= self.grace_s


_ACTIVE: list[StopRequest] = []


class StopSending(Exception):
    """Raised where a call waits for its turn (an adaptive-concurrency gate, :mod:`lcrag.llm.aimd`) once a stop is
    requested: the call is not sent, and the runner counts it as not sent (no row)."""


def requested() -> bool:
    """Whether a stop (Ctrl-C / SIGTERM) is requested in the sweep under way in this process."""
    return any(s.requested for s in _ACTIVE)


@contextlib.contextmanager
def handling(signals=(signal.SIGINT, signal.SIGTERM)) -> Iterator[StopRequest]:
    """Record SIGINT/SIGTERM into a :class:`StopRequest` instead of dying; restores the old handlers.

    Nested use shares the outer request. Outside the main thread nothing is installed.
    """
    if _ACTIVE:
        yield _ACTIVE[-1]
        return
    stop = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, _frame):
        stop.record(signum)
        if stop.count >= 3:  # the sweep did not react: give the user their interrupt back
            raise RunInterrupted(signum, message=f"interrupted by {signal_name(signum)} (third signal)")

    old = {s: signal.getsignal(s) for s in signals}
    for s in signals:
        signal.signal(s, handler)
    _ACTIVE.append(stop)
    try:
        yield stop
    finally:
        _ACTIVE.remove(stop)
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


class DaemonPool:
    """A minimal executor on daemon threads: abandoned calls never block the interpreter's exit.

    ``concurrent.futures.ThreadPoolExecutor`` joins its workers at exit, so a process could not
    quit while an HTTP call hangs; here ``shutdown(wait=False)`` just lets them go.
    """

    def __init__(self, workers: int, name: str = "lcrag-call"):
        self.workers = max(1, int(workers))
        self.name = name
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        fut: Future = Future()
        self._q.put((fut, fn, args))
        if len(self._threads) < self.workers:
            t = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()
        return fut

    def _work(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            fut, fn, args = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as e:  # delivered to the caller through the future
                fut.set_exception(e)

    def shutdown(self, wait: bool = False) -> None:
        for _ in self._threads:
            self._q.put(None)
        if wait:
            for t in self._threads:
                t.join()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into :class:`RunInterrupted` (a ``KeyboardInterrupt``) so ``finally`` blocks run.

    For command entry points: without it SIGTERM ends the process at once, skipping the code
    that stops a local server or releases a lock. Main thread only; restores the old handler.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, _frame):
        raise RunInterrupted(signum, message=f"interrupted by {signal_name(signum)}")

    old = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)


__all__ = ["RunInterrupted", "StopRequest", "StopSending", "requested", "handling", "DaemonPool", "terminate_as_interrupt", "exit_status", "grace_s"]
