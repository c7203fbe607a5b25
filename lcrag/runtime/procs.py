"""Process identity helpers: is a process alive, and is it still the same process.

A pid alone can be reused after its process exits; lcrag records ``(pid, start)`` where
``start`` is the process start time in clock ticks since boot (field 22 of
``/proc/<pid>/stat`` on Linux; ``None`` elsewhere, where only the pid is checked).
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path


def start_ticks(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (Linux), or None if unknown/absent."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may contain spaces: split after the last ')'
    rest = data[data.rfind(")") + 2:].split()
    try:
        return int(rest[19])  # field 22 overall
    except (IndexError, ValueError):
        return None


def _zombie(pid: int) -> bool:
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return data[data.rfind(")") + 2:].split()[:1] == ["Z"]


def alive(pid: int, start: int | None = None) -> bool:
    """True when ``pid`` runs (not a zombie) and, when ``start`` is given and known, started then."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError as e:
        if e.errno != errno.EPERM:
            return False
    if _zombie(pid):
        return False
    if start is not None:
        now = start_ticks(pid)
        if now is not None and now != start:
            return False
    return True


def me() -> tuple[int, int | None]:
    """``(pid, start)`` of this process."""
    return os.getpid(), start_ticks(os.getpid())


def hostname() -> str:
    return socket.gethostname()


__all__ = ["alive", "start_ticks", "me", "hostname"]
