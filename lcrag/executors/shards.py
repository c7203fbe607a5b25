"""Sharding a task list, and merging per-shard caches and results back into one run.

Sharding (:func:`shard_tasks`) is deterministic: tasks are ordered longest prompt first
(characters of all messages; ties by cache key) and each goes to the shard with the fewest
characters so far (ties: fewest tasks, then lowest shard id) — longest-processing-time
scheduling. Lengths are thereby interleaved: every shard gets the same mix of short and long
prompts (a shard never holds all the 1M-character contexts), shard totals differ by at most
one prompt, and the same task list always gives the same shards, whatever its order: the
shard of a task depends only on the cache keys and lengths of the list. With ``group_prefixes``
(the Ray executor under prefix-aware order, :mod:`lcrag.llm.prefix`) the units placed this way
are the groups of tasks whose prompts share a prefix key (:func:`lcrag.llm.prefix.affinity_key`)
instead of single tasks, so the calls over one haystack stay in one worker, where they are sent
back to back; a group's length is the sum of its prompts' (ties by its smallest cache key).

Each shard writes its own files in the run's shard directory ``<results>.shards/``:
``results-NNN.jsonl`` (the runner's append-only results format) and ``cache-NNN.sqlite`` (a
response cache). :func:`merge_shards` folds them into the run's ``results.jsonl`` and response
cache and removes them. It is idempotent and crash-safe: a row whose task already has a
finished (``ok``/``na``) row in the main file is not appended again, cache records are keyed
by their content hash, and shard files are deleted only after both merges succeeded. After the
merge, ``LCRAG_CACHE_MODE=replay`` serves every recorded call from the one cache, whatever the
number of workers used before or later.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..llm.cachecheck import insert_rows
from ..llm.cache import ResponseCache, cache_key
from ..llm.prefix import affinity_key
from ..llm.readers import Reader
from ..runner import ResultsWriter, Task, read_results
from ..types import Outcome

FINISHED = (Outcome.OK, Outcome.NA)


def task_request(t: Task, reader: Reader) -> dict[str, Any]:
    """The cache request of a task, as ``lcrag.runner.run_tasks`` builds it (``Task.request``)."""
    return t.request(reader.identity())[0]


def task_key(t: Task, reader: Reader) -> str:
    return cache_key(task_request(t, reader))


def prompt_chars(t: Task) -> int:
    messages, _, _ = t.build()
    return sum(len(m.get("content") or "") for m in messages)


def shard_tasks(tasks: Sequence[Task], reader: Reader, n_shards: int, *,
                group_prefixes: bool = False) -> list[list[Task]]:
    """Split ``tasks`` into ``n_shards`` length-balanced lists (see module doc); empty shards are dropped."""
    if n_shards < 1:
        raise ValueError("n_shards must be at least 1")
    import heapq

    units: dict[str, list] = {}
    for i, t in enumerate(tasks):
        key = task_key(t, reader)
        unit = affinity_key(t.build()[0]) if group_prefixes else f"{key}\x00{i}"  # grouped, or each task alone
        units.setdefault(unit, []).append((prompt_chars(t), key, t))
    sized = sorted(((sum(c for c, _, _ in u), min(k for _, k, _ in u), [t for _, _, t in sorted(u, key=lambda x: x[1])])
                    for u in units.values()), key=lambda x: (-x[0], x[1]))
    shards: list[list[Task]] = [[] for _ in range(n_shards)]
    heap = [(0, 0, i) for i in range(n_shards)]  # (characters so far, tasks so far, shard)
    for chars, _key, ts in sized:  # longest first, each to the lightest shard
        total, count, i = heapq.heappop(heap)
        shards[i].extend(ts)
        heapq.heappush(heap, (total + chars, count + len(ts), i))
    return [s for s in shards if s]


def shard_dir(results_path: str | Path) -> Path:
    p = Path(results_path)
    return p.parent / (p.name + ".shards")


def shard_paths(results_path: str | Path, i: int) -> tuple[Path, Path]:
    d = shard_dir(results_path)
    return d / f"results-{i:03d}.jsonl", d / f"cache-{i:03d}.sqlite"


def merge_caches(shards: Sequence[str | Path], into: ResponseCache) -> int:
    """Copy every record of the shard cache files into ``into``; returns the records copied.

    Each record's key is re-checked against the hash of its stored request (an altered shard
    is refused, naming the file). Same key, same request: a record present in several shards
    is stored once.
    """
    n = 0
    conn = into._conn()
    for sp in shards:
        sp = Path(sp)
        if not sp.is_file():
            raise InputError(sp, "no such cache shard")
        src = sqlite3.connect(sp, timeout=60)
        try:
            rows = src.execute("SELECT key, created, model, request, response FROM responses ORDER BY created").fetchall()
        except sqlite3.DatabaseError as e:
            raise InputError(sp, f"not a response cache: {e}") from None
        finally:
            src.close()
        for k, _c, _m, req, _r in rows:
            if cache_key(json.loads(req)) != k:
                raise InputError(sp, "key does not match the hash of its request (altered record)", field=k)
        conn.execute("BEGIN")
        try:
            insert_rows(conn, rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        n += len(rows)
    return n


def merge_results(shards: Sequence[str | Path], results_path: str | Path) -> int:
    """Append each shard's rows (last per task) to ``results_path`` unless already finished there."""
    done = {r.task_id for r in read_results(results_path) if r.outcome in FINISHED}
    writer = ResultsWriter(results_path)
    n = 0
    try:
        for sp in shards:
            for r in read_results(sp):
                if r.task_id in done:
                    continue
                writer.append(r)
                n += 1
                if r.outcome in FINISHED:
                    done.add(r.task_id)
    finally:
        writer.close()
    return n


def merge_shards(results_path: str | Path, cache: ResponseCache) -> dict[str, int]:
    """Merge and remove every shard file of a run (see module doc); ``{}`` when there are none."""
    d = shard_dir(results_path)
    if not d.is_dir():
        return {}
    caches = sorted(d.glob("cache-*.sqlite"))
    results = sorted(d.glob("results-*.jsonl"))
    out = {"shards": len(results), "cache_records": merge_caches(caches, cache) if cache.mode != "off" else 0,
           "rows": merge_results(results, results_path)}
    for p in sorted(d.iterdir()):  # shard files, and a shard cache's claim locks (lcrag.llm.claims: a folder)
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()
    d.rmdir()
    return out


__all__ = ["shard_tasks", "task_key", "task_request", "merge_caches", "merge_results", "merge_shards", "shard_dir", "shard_paths"]
