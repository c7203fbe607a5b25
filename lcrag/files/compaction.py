"""Compacting a results file: superseded rows (a task run again after a prompt edit) are dropped.

``results.jsonl`` is append-only while a sweep runs (one whole line per finished row, :class:`lcrag.runner.
ResultsWriter`); a row run again — its prompt template edited, its scorer changed, an error retried — is
appended and the last row per task id wins (:func:`lcrag.runner.read_results`). Left alone, four prompt edits
turn 168 rows into 672 lines. :func:`compact` rewrites the file keeping, for each task id, only its last row,
in the order of those last rows, byte for byte as written; blank lines and a torn final line are dropped. It
holds the results file's lock (the writers' ``flock`` on ``<results>.lock``) and replaces the file atomically
(:func:`lcrag.files.atomicio.write_atomic`), so a crash leaves the old file or the compacted one, never a mix.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .atomicio import write_atomic
from ..types import task_id

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no compaction lock, compaction skipped
    fcntl = None


@contextlib.contextmanager
def _results_lock(path: Path):
    fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def superseded(lines: list[bytes]) -> list[bytes]:
    """The lines to keep: the last whole line of each task id (order of those lines)."""
    last: dict[str, int] = {}
    keep: list[tuple[int, bytes]] = []
    for i, raw in enumerate(lines):
        if not raw.strip() or not raw.endswith(b"\n"):
            continue
        try:
            d = json.loads(raw)
            tid = task_id(d["run"], d["item_id"], d["condition"], d["reader"], d["prompt"],
                          (d.get("meta") or {}).get("sample", 0))  # a repeated item's samples are rows of their own
        except (ValueError, KeyError, TypeError):
            tid = f"\0line{i}"  # not a row lcrag wrote: kept where it is, read_results reports it
        last[tid] = i
        keep.append((i, raw))
    wanted = set(last.values())
    return [raw for i, raw in keep if i in wanted]


def compact(path: str | Path) -> tuple[int, int]:
    """Drop superseded rows of the results file at ``path`` (module doc); returns (lines before, lines after)."""
    path = Path(path)
    if fcntl is None or not path.is_file():
        return (0, 0)
    with _results_lock(path):
        with open(path, "rb") as f:
            lines = f.readlines()
        kept = superseded(lines)
        before = sum(1 for x in lines if x.strip())
        if len(kept) < before:
            write_atomic(path, b"".join(kept))
    return before, len(kept)
