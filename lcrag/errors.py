"""Errors that name the file, line and field of bad input."""

from __future__ import annotations

from pathlib import Path


class LcragError(Exception):
    """Base class of lcrag's own errors."""


class NotApplicable(LcragError):
    """A view or export that does not apply to this run (a study without RAG conditions has no TREC
    run file): the message is the one-line reason. Commands print it and exit 0, writing nothing."""


class InputError(LcragError, ValueError):
    """Bad input data: the message always names the file, the line (1-based) and the field.

    Args:
        path: file (or directory) the bad value came from.
        message: what is wrong.
        line: 1-based line number in the file (JSONL/CSV/TSV rows), or None for whole-file
            formats where no line applies.
        field: the offending field name (dotted path for nested values), or None.
    """

    def __init__(self, path: str | Path, message: str, *, line: int | None = None, field: str | None = None):
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = self.path
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


class ConfigError(InputError):
    """A parameter file or parameter value is invalid."""


class CacheMiss(LcragError, KeyError):
    """Replay mode found no recorded response for a request."""

    def __init__(self, key: str, description: str = ""):
        self.key = key
        msg = f"replay mode: no recorded response for cache key {key}"
        if description:
            msg += f" ({description})"
        msg += "; re-run with cache mode 'use' to record it, or import the run's cache (lcrag cache import)."
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return self.args[0]


class BudgetExceeded(LcragError):
    """A sweep's estimated cost is above the configured cap."""


class CacheDamaged(LcragError):
    """The response cache file is not a readable SQLite database (truncated, overwritten, a directory …).

    The message names the file and the two commands that help: ``lcrag cache check`` (what is wrong) and
    ``lcrag cache recover`` (salvage the readable responses into a new file, keeping the damaged one beside it)."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"response cache {self.path} is damaged: {reason}. Run `lcrag cache check --db {self.path}` "
                         f"for details and `lcrag cache recover --db {self.path}` to copy every readable response into "
                         f"a new cache (the damaged file is kept beside it); or point LCRAG_CACHE_DIR elsewhere.")


def mount_point(path: str | Path) -> str | None:
    """The mount point of the file system holding ``path`` (its nearest existing parent), or None."""
    import os

    p = Path(os.path.abspath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        while not os.path.ismount(p) and p != p.parent:
            p = p.parent
    except OSError:
        return None
    return str(p)


class DiskFull(LcragError, OSError):
    """A write failed for lack of space: names the file, the bytes it needed and the bytes free."""

    def __init__(self, path: str | Path, needed: int | None = None, free: int | None = None, what: str = ""):
        self.path = str(path)
        self.needed = needed
        self.free = free
        need = f"; needed {needed:,} bytes" if needed is not None else ""
        have = f", {free:,} free" if free is not None else ""
        mnt = mount_point(path)
        self.device = mnt
        dev = f" (the file system mounted at {mnt})" if mnt and mnt != "/" else ""
        super().__init__(f"no space left on the device of {self.path}{dev}{need}{have}{(': ' + what) if what else ''}. "
                         f"Free some space (or move the run directory / LCRAG_CACHE_DIR) and run the same command "
                         f"again: finished work is kept and the run resumes.")

    def __str__(self) -> str:  # OSError formats its args otherwise
        return self.args[0]


class CacheReadOnly(LcragError):
    """The response cache is on a read-only file system (or folder): it can be read (``LCRAG_CACHE_MODE=replay``)
    but no reply can be stored, so no call is sent that would be paid for and lost."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        super().__init__(f"response cache {self.path} is on a read-only file system: its replies can be read "
                         f"(LCRAG_CACHE_MODE=replay) but new ones cannot be stored. Point LCRAG_CACHE_DIR at a "
                         f"writable folder (copy the cache there) to make new calls.")


class CacheNeedsDecision(LcragError):
    """A run's response cache file is zero-length or unreadable: the run stops until told to recover it or to
    start afresh (``lcrag run --cache-recover`` / ``--cache-fresh``), never re-spending silently."""


class ResendRefused(LcragError):
    """The run's manifest records cached calls that its response cache no longer holds (missing, empty or
    replaced file): running would send (and pay for) them again, so the run stops unless told to re-send."""
