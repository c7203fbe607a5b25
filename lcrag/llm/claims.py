"""One call in flight per request across the processes (and threads) sharing a response cache.

Two runs that share a cache — two output folders of one study, a notebook beside ``lcrag run`` — used to send
the same uncached request twice, each paying for it. Before sending a request that the cache does not hold,
:func:`claim` takes an exclusive ``flock`` on a lock file chosen by the request's cache key; a second process
(or thread) with the same key waits on that lock, then finds the first one's reply in the cache and reads it
instead of sending (:func:`lcrag.llm.call.cached_read`).

The locks are ``CLAIM_STRIPES`` files ``<cache>.claims/NNNN.lock`` beside the cache file (the key's first hex
digits pick one), so their number stays fixed however many requests a cache holds; two different keys that
share a stripe only wait for each other's call, never change a reply. The kernel releases a claim when its
holder exits, however it dies (``kill -9`` included): nothing needs cleaning up and no claim goes stale. A
waiter gives up after ``timeout_s`` (longer than any one call with its retries), sends the request itself and
reports nothing twice: the cache keeps one reply per key.

Scope: processes on one machine (or sharing a file system whose ``flock`` is coherent) that use one cache file.
Ray workers write per-shard caches (:mod:`lcrag.executors.shards`) whose tasks are disjoint within one run, so a
Ray run sends each request once; two *concurrent* Ray runs of one study are not de-duplicated against each other
(their shards do not see each other's replies until the merge). Without ``fcntl`` (Windows) claims are a no-op.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

from ..files.flockwait import flock_within

CLAIM_STRIPES = 4096
DEFAULT_TIMEOUT_S = 1800.0


def claims_dir(cache_path: str | Path) -> Path:
    """The directory of the claim lock files of the cache at ``cache_path``."""
    p = Path(cache_path)
    return p.with_name(p.name + ".claims")


def lock_file(cache_path: str | Path, key: str) -> Path:
    """The lock file of ``key``: one of ``CLAIM_STRIPES``, picked by the key's leading hex digits."""
    stripe = int(key[:8], 16) % CLAIM_STRIPES if len(key) >= 8 else hash(key) % CLAIM_STRIPES
    return claims_dir(cache_path) / f"{stripe:04d}.lock"


@contextlib.contextmanager
def claim(cache_path: str | Path, key: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[bool]:
    """Hold the claim on ``key`` for the body; yields True when held, False after ``timeout_s`` of waiting."""
    if fcntl is None:
        yield False
        return
    path = lock_file(cache_path, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only cache directory: no claims, the call goes out as before
        yield False
        return
    held = False
    try:
        held = flock_within(fd, timeout_s, max_delay_s=0.1)
        yield held
    finally:
        if held:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
