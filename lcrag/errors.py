"""Errors that name the file, line and field of bad input."""

from __future__ import annotations

from pathlib import Path


class LcragError(Exception):
    """Base class of lcrag's own errors."""


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
