"""Refuse to pay twice: a run whose manifest records cached calls that its response cache no longer holds.

A response cache that went missing, was emptied (a zero-length file) or was swapped for another one looks
like a new cache to SQLite, and every call it held would be sent — and paid for — again. Before a run
starts, :func:`check_cache_kept` reads the run directory's previous ``manifest.json`` and its results file:
the cache keys the manifest lists for readers that record their replies, minus the keys of finished rows the
run will reuse from the results file, are the calls that would go out again. When there are such calls and
the cache holds *none* of the manifest's keys, the run stops with :class:`lcrag.errors.ResendRefused`
naming the manifest, the cache file and the count, unless re-sending is confirmed (``lcrag run --resend`` or
``LCRAG_ALLOW_RESEND=1``). A cache that holds some of them (a partly pruned or recovered cache) passes: the
missing ones are sent and stored again.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ResendRefused
from ..types import Outcome

ENV_ALLOW_RESEND = "LCRAG_ALLOW_RESEND"
SAMPLE = 500  # manifest keys looked up in the cache (all of them when fewer)


def resend_allowed() -> bool:
    return os.environ.get(ENV_ALLOW_RESEND, "").strip().lower() in ("1", "true", "yes")


def check_cache_kept(run_dir: Path, results: Path, cache, readers) -> None:
    """Raise ``ResendRefused`` when the cache lost the calls the previous run of ``run_dir`` recorded (module doc)."""
    man_path = Path(run_dir) / "manifest.json"
    if not man_path.is_file() or cache.mode in ("off", "refresh") or resend_allowed():
        return
    from ..runner import read_results
    from .manifest import read_manifest

    man = read_manifest(man_path)
    recording = {r.name for r in readers if r.records_replies}
    keys = sorted({k for r in man["readers"] if r.get("name") in recording for k in (r.get("cache_keys") or [])})
    if not keys:
        return
    reused = {r.cache_key for r in read_results(results) if r.outcome in (Outcome.OK, Outcome.NA)}
    at_risk = [k for k in keys if k not in reused]
    if not at_risk:
        return
    if any(cache.contains(k) for k in keys[:SAMPLE]):
        return
    state = ("missing" if not cache.path.exists() else "empty" if cache.stats()["entries"] == 0
             else "holds other responses only")
    raise ResendRefused(
        f"{man_path} records {len(keys)} cached model calls, but the response cache {cache.path} holds none of them "
        f"(the cache is {state}); running now would send {len(at_risk)} of them again and pay for them twice. Point "
        f"LCRAG_CACHE_DIR (or the study's cache:) at the cache that holds them, restore it (`lcrag cache recover` / "
        f"`lcrag cache import`), or confirm the re-send with `lcrag run --resend` ({ENV_ALLOW_RESEND}=1).")
