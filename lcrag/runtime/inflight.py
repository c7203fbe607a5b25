"""The requests a run had in flight when it stopped without finishing them (``kill -9``, a crash, power loss).

The runner appends ``+<cache key>`` to ``<results>.inflight`` just before it sends a request that the response
cache does not hold, and ``-<cache key>`` once the call has returned (its reply stored, or its failure known).
Read in order with set semantics (``+`` adds the key, ``-`` removes it), the journal's open keys are the requests
sent by a run that never learnt their outcome. The next run of the same folder counts how many of them it sends
again — the provider may have answered (and billed) them once already — and says so in its resume summary
(:attr:`lcrag.runtime.resume.ResumeCounts.resent_in_flight`). At most ``concurrency`` requests are in flight at
a time, so a kill re-sends at most that many.

Each line is one ``write`` on a descriptor opened with ``O_APPEND`` (whole lines from concurrent worker threads);
the journal is rewritten with only its open keys when a run starts (runs of one folder hold the run lock, so
nothing else writes it then) and removed when a run closes it with no key open. A journal that cannot be written (a read-only or full disk) is skipped silently:
it only feeds a count.
"""

from __future__ import annotations

import os
from pathlib import Path


def journal_path(results_path: str | Path) -> Path:
    p = Path(results_path)
    return p.with_name(p.name + ".inflight")


def open_keys(path: Path) -> set[str]:
    """The keys opened and never closed in the journal at ``path`` (empty when it is missing or unreadable)."""
    keys: set[str] = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("+"):
                    keys.add(line[1:])
                elif line.startswith("-"):
                    keys.discard(line[1:])
    except OSError:
        pass
    return keys


class InFlight:
    """The journal of one results file (module doc)."""

    def __init__(self, results_path: str | Path):
        self.path = journal_path(results_path)
        self.stale = open_keys(self.path)  # in flight when the previous run of this folder stopped
        self._fd: int | None = None
        try:
            from ..files.atomicio import write_atomic

            if self.stale or self.path.exists():
                write_atomic(self.path, "".join(f"+{k}\n" for k in sorted(self.stale)))
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            self._fd = None

    def _write(self, line: str) -> None:
        if self._fd is not None:
            try:
                os.write(self._fd, line.encode("ascii", "replace"))
            except OSError:
                pass

    def opened(self, key: str) -> None:
        self._write(f"+{key}\n")

    def closed(self, key: str) -> None:
        self._write(f"-{key}\n")

    def close(self) -> None:
        """Close the journal; it is removed when no key is left open (a run that ended, however it ended, with
        every call's outcome known), so a finished run folder holds no journal."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if not open_keys(self.path):
                try:
                    self.path.unlink()
                except OSError:
                    pass
