"""Whole-file writes that leave either the old file or the new one, and a clear stop when the disk is full.

:func:`write_atomic` writes to a temporary file beside the target (same directory, so the same file system),
flushes it to disk and renames it over the target (``os.replace``, atomic on POSIX): a crash, a kill or a full
disk never leaves a truncated manifest, report or export. A failed write removes its temporary file. ``ENOSPC``
/ ``EDQUOT`` become :class:`lcrag.errors.DiskFull` naming the file, the bytes needed and the bytes free.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from ..errors import DiskFull

NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def free_bytes(path: str | Path) -> int | None:
    """Free bytes on the file system of ``path`` (its nearest existing parent), or None if unknown."""
    p = Path(path)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def is_no_space(e: BaseException) -> bool:
    """Whether ``e`` is a full disk or quota (OSError ENOSPC/EDQUOT, or SQLite's "database or disk is full")."""
    if isinstance(e, DiskFull):
        return True
    if isinstance(e, OSError) and e.errno in NO_SPACE:
        return True
    return "disk is full" in str(e) or "No space left" in str(e)


def disk_full(path: str | Path, needed: int | None = None, what: str = "") -> DiskFull:
    return DiskFull(path, needed, free_bytes(path), what)


def write_atomic(path: str | Path, data: str | bytes, *, encoding: str = "utf-8", scrub: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename (module doc); returns ``path``.

    ``scrub`` (default): key-shaped substrings are written as ``[key removed]`` (:func:`lcrag.llm.keyscan.scrub`);
    only byte-exact copies (a cache export, whose entries are checked against their hashes) pass ``scrub=False``."""
    from .keyshapes import scrub as scrub_text, scrub_bytes

    path = Path(path)
    if scrub:
        data = scrub_text(data) if isinstance(data, str) else scrub_bytes(data)
    blob = data.encode(encoding) if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(blob)
            while view:
                n = os.write(fd, view)
                if n <= 0:  # nothing more fits
                    raise OSError(errno.ENOSPC, "No space left on device")
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if is_no_space(e):
            raise disk_full(path, len(blob)) from None
        raise
    return path


def append_whole(fd: int, data: bytes, path: str | Path) -> None:
    """Append ``data`` to the open file ``fd`` in one ``write``; a short or failed write (a full disk) is cut
    back to the previous end, so the file never ends in a torn line, and raises ``DiskFull`` naming ``path``."""
    end = os.lseek(fd, 0, os.SEEK_END)
    try:
        n = os.write(fd, data)
    except OSError as e:
        _cut(fd, end)
        if is_no_space(e):
            raise disk_full(path, len(data), "a result row was not written (the file is unchanged)") from None
        raise
    if n != len(data):
        _cut(fd, end)
        raise disk_full(path, len(data), "a result row was not written (the file is unchanged)")


def _cut(fd: int, end: int) -> None:
    try:
        os.ftruncate(fd, end)
    except OSError:
        pass
