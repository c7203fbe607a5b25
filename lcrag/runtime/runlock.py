"""One writer per results file: a run lock holding pid, host and start time.

The lock is the file ``<results file>.run-lock`` (for ``lcrag run``: ``RUN/results.jsonl.run-lock``),
created with ``O_EXCL`` and holding JSON ``{"pid", "start", "host", "started", "argv"}``
(``start`` = process start in clock ticks, :mod:`lcrag.runtime.procs`; ``started`` = UTC time).

* A second run on the same file **refuses** with :class:`RunLocked`, naming the holder, or with
  ``wait=True`` polls until the holder is gone.
* A lock left by a process that no longer runs on this host (killed with SIGKILL, a crashed
  machine's pid reused by another process is told apart by its start time) is **stale**: it is
  broken with a message and the new run proceeds. A lock from another host is never broken
  (its process cannot be checked from here); remove the file by hand if that run is dead.
* Re-entrant within one process: nested holders (``run_study`` then ``run_tasks``) share it,
  and the file is removed when the outermost holder releases it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from . import procs
from ..errors import LcragError

SUFFIX = ".run-lock"

_held: dict[str, int] = {}
_guard = threading.Lock()


class RunLocked(LcragError):
    """Another live process holds the run lock."""


def lock_path(results_path: str | Path) -> Path:
    return Path(str(results_path) + SUFFIX)


def read_lock(path: str | Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def holder_alive(info: dict | None) -> bool:
    """True when the lock's process still runs (or cannot be checked: another host)."""
    if not info:
        return False
    if info.get("host") != procs.hostname():
        return True
    return procs.alive(int(info.get("pid", -1)), info.get("start"))


def describe(info: dict | None) -> str:
    if not info:
        return "an unreadable lock"
    return f"pid {info.get('pid')} on {info.get('host')}, started {info.get('started')}"


def _try_create(path: Path) -> bool:
    pid, start = procs.me()
    info = {"pid": pid, "start": start, "host": procs.hostname(),
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "argv": sys.argv[:6]}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(info) + "\n")
    return True


@contextlib.contextmanager
def run_lock(results_path: str | Path, *, wait: bool = False, poll_s: float = 0.5, timeout_s: float | None = None,
             log: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Hold the run lock of ``results_path`` for the ``with`` block (see module doc)."""
    log = log or (lambda s: print(s, file=sys.stderr))
    path = lock_path(results_path).resolve()
    key = str(path)
    with _guard:
        if _held.get(key):
            _held[key] += 1
            nested = True
        else:
            nested = False
    if nested:
        try:
            yield path
        finally:
            with _guard:
                _held[key] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    said_wait = False
    while not _try_create(path):
        info = read_lock(path)
        if info is None and path.exists():  # being written this instant, or garbage: look again shortly
            time.sleep(0.05)
            info = read_lock(path)
        if not holder_alive(info):
            log(f"[lcrag] breaking a stale run lock {path} ({describe(info)}; that process no longer runs)")
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            continue
        if not wait or (deadline is not None and time.monotonic() > deadline):
            raise RunLocked(f"{Path(results_path)} is in use by another run ({describe(info)}; lock file {path}). "
                            "Wait for it to finish, pass --wait (wait=True) to queue behind it, or write to another "
                            "run directory (--out)")
        if not said_wait:
            log(f"[lcrag] waiting for the run holding {path} ({describe(info)}) to finish")
            said_wait = True
        time.sleep(poll_s)
    with _guard:
        _held[key] = 1
    try:
        yield path
    finally:
        with _guard:
            _held.pop(key, None)
        info = read_lock(path)
        if info and info.get("pid") == os.getpid() and info.get("host") == procs.hostname():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


__all__ = ["run_lock", "RunLocked", "lock_path", "read_lock", "holder_alive"]
