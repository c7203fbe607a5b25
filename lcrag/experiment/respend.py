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
ENV_ON_DAMAGE = "LCRAG_CACHE_ON_DAMAGE"  # "recover" or "fresh": set by `lcrag run --cache-recover/--cache-fresh`
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
    zero = cache.path.is_file() and cache.path.stat().st_size == 0  # not opened: SQLite would make it a new cache
    if not zero and any(cache.contains(k) for k in keys[:SAMPLE]):
        return
    state = ("missing" if not cache.path.exists() else "empty" if zero or cache.stats()["entries"] == 0
             else "holds other responses only")
    raise ResendRefused(
        f"{man_path} records {len(keys)} cached model calls, but the response cache {cache.path} holds none of them "
        f"(the cache is {state}); running now would send {len(at_risk)} of them again and pay for them twice. Point "
        f"LCRAG_CACHE_DIR (or the study's cache:) at the cache that holds them, restore it (`lcrag cache recover` / "
        f"`lcrag cache import`), or confirm the re-send with `lcrag run --resend` ({ENV_ALLOW_RESEND}=1).")


def check_cache_file(cache, readers, log=print, run_dir: Path | None = None) -> None:
    """Stop before a run whose response cache file is zero-length or unreadable, unless told what to do.

    lcrag creates a cache file whole (:func:`lcrag.llm.cachecheck.open_checked`), so a zero-length file at the
    cache path is a cache that lost its contents, and an unreadable one (:func:`lcrag.llm.cachecheck.problem`)
    would stop the run at its first lookup — or, opened as new, send every call it held again. Neither is
    guessed at: the run raises :class:`lcrag.errors.CacheNeedsDecision` naming the file, unless
    ``LCRAG_CACHE_ON_DAMAGE`` (``lcrag run --cache-recover`` / ``--cache-fresh``) says ``recover`` (salvage the
    whole replies first, :func:`lcrag.llm.cachecheck.recover`) or ``fresh`` (rename the file aside as
    ``<name>.set-aside-<UTC time>`` and start an empty cache). Runs whose readers record no replies, and a
    cache that is ``off``, are not stopped. A cache on a read-only mount stops a run that would store replies
    (:class:`lcrag.errors.CacheReadOnly`; ``LCRAG_CACHE_MODE=replay`` reads it). A zero-length file is set aside when re-sending is confirmed
    (``--resend``), and left to :func:`check_cache_kept` when ``run_dir`` has a manifest (it names the calls
    at risk, and passes when the results file already holds them all).
    """
    import datetime as dt

    from ..errors import CacheNeedsDecision
    from ..llm.cache import cache_key
    from ..llm.cachecheck import problem, recheck, recover

    if cache.mode == "off" or not any(r.records_replies for r in readers):
        return
    p = Path(cache.path)
    from ..llm.cachecheck import writable

    if cache.mode in ("use", "refresh") and p.is_file() and not writable(p):
        from ..errors import CacheReadOnly

        raise CacheReadOnly(p)  # before any call: a reply that cannot be stored would be paid for again
    state = problem(p)
    if state is None and p.is_file() and p.stat().st_size == 0:
        state = "a zero-length file (the replies it held are gone, or it was never a cache)"
    if state is None:
        return
    how = os.environ.get(ENV_ON_DAMAGE, "").strip().lower()
    zero = p.is_file() and p.stat().st_size == 0 and state.startswith("a zero-length file (")
    if not how and zero and resend_allowed():
        how = "fresh"
    if not how and zero and run_dir is not None and (Path(run_dir) / "manifest.json").is_file():
        return
    if how == "recover":
        rec = recover(p, cache_key)
        log(f"[lcrag] response cache {p} ({state}): recovered {rec.salvaged} replies, {rec.rejected} dropped as "
            f"not whole, {rec.lost} known lost; the original is kept as {rec.damaged.name}")
    elif how == "fresh":
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        aside = p.with_name(f"{p.name}.set-aside-{stamp}")
        os.replace(p, aside)
        for side in ("-wal", "-shm"):
            q = Path(str(p) + side)
            if q.exists():
                os.replace(q, Path(str(aside) + side))
        recheck(p)
        log(f"[lcrag] response cache {p} ({state}): set aside as {aside.name}; starting an empty cache")
    else:
        raise CacheNeedsDecision(
            f"response cache {p}: {state}. Running on would send — and pay for — again every call it held. "
            f"Choose: `lcrag run … --cache-recover` salvages every whole reply first (the original is kept), "
            f"`lcrag run … --cache-fresh` sets the file aside and starts an empty cache ({ENV_ON_DAMAGE}=recover|fresh "
            f"does the same); `lcrag cache check --db {p}` says more, `lcrag cache recover --db {p}` salvages "
            f"without running.")
