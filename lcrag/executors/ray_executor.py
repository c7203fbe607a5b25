"""``--executor ray``: one reader's tasks sharded over Ray workers (optional extra ``lcrag[ray]``).

:func:`run_tasks_ray` has the contract of :func:`lcrag.runner.run_tasks` (same rows, same
results file, same cache keys) and runs in four steps:

1. **recover** — shard files left by an earlier, interrupted run are merged first
   (:func:`lcrag.executors.shards.merge_shards`), so nothing a killed worker finished is lost;
2. **local pass** — tasks already finished are skipped; tasks answered by the response cache
   or over the reader's context window need no call and run in the driver through
   ``run_tasks`` (this is the whole run under ``LCRAG_CACHE_MODE=replay``);
3. **sharded pass** — the remaining tasks are split into ``workers`` length-balanced shards
   (:func:`lcrag.executors.shards.shard_tasks`); each shard is one Ray task that runs
   ``run_tasks`` with its own cache file and results file, ``threads`` requests in flight,
   and a reader whose calls pass one shared :class:`lcrag.executors.governor.Governor` actor
   (budget cap; 429 cool-downs per endpoint, used by the endpoint pool);
4. **merge** — shard caches and results are folded into the run's cache and results file.

The pre-flight estimate (``budget_usd``) is checked in the driver as in a local run;
``cap_usd`` (default: ``budget_usd`` unless ``allow_over_budget``) is the hard cap on actual
spend enforced across all workers during the run.

Files: shard files live in ``<results>.shards/`` next to the results file, so on a multi-node
cluster the run directory must be on storage every node can reach (e.g. NFS); the response
cache of the driver is written only by the merge step.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import BudgetExceeded, LcragError
from ..llm import prefix
from ..llm.aimd import run_workers
from ..llm.cache import ResponseCache
from ..llm.readers import ChatReader, Reader
from ..llm.tokens import count_messages
from .rayinit import init_ray, require_ray  # noqa: F401  (init_ray re-exported)
from ..runner import RunStats, Scorer, Task, read_results, run_tasks
from ..runtime.options import RunOptions
from ..types import task_id
from .governed import GovernedReader, price
from .governor import Governor, RemoteGovernor
from .shards import FINISHED, merge_shards, shard_paths, shard_tasks, task_key


def remote_governor(cap_usd: float | None):
    """A ``Governor`` running as one Ray actor, wrapped as a ``RemoteGovernor``."""
    ray = require_ray()
    actor = ray.remote(num_cpus=0, max_concurrency=64)(Governor)
    return RemoteGovernor(actor.remote(cap_usd))


def _worker_reader(spec: Any, governor) -> Reader:
    """Build the reader inside a worker: chat readers from their profile (clients are not sent over the wire)."""
    from ..llm.pool import PooledChatClient
    from ..llm.readers import make_reader

    if isinstance(spec, dict) and spec.get("__profile__"):
        reader = make_reader(spec["profile"])
        reader.client = PooledChatClient(reader.profile, governor=governor)
    else:
        reader = spec
    return GovernedReader(reader, governor)


def run_shard(i: int, tasks: list[Task], reader_spec: Any, run: str, results_path: str, cache_mode: str,
              scorer: Scorer, governor, threads: int, pid_dir: str | None = None,
              prefix_order: bool | None = None) -> dict[str, Any]:
    """Body of one Ray task: run one shard into its own cache and results files; returns its counts."""
    if pid_dir:
        Path(pid_dir, f"worker-{i:03d}.pid").write_text(str(os.getpid()))
    res_p, cache_p = shard_paths(results_path, i)
    res_p.parent.mkdir(parents=True, exist_ok=True)
    reader = _worker_reader(reader_spec, governor)
    st = RunStats()
    run_tasks(tasks, reader, run=run, results_path=res_p, scorer=scorer, cache=ResponseCache(cache_p, mode=cache_mode),
              progress=False, max_workers=threads, log=lambda s: None, stats=st, allow_over_budget=True,
              prefix_order=prefix_order)
    return st.as_dict()


def _first_line(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    cause = next((ln for ln in reversed(lines) if "Error" in ln), lines[-1] if lines else "")
    return cause[:300]


def run_tasks_ray(tasks: Sequence[Task], reader: Reader, *, run: str, results_path: str | Path, scorer: Scorer,
                  options: RunOptions | None = None, stats: RunStats | None = None, cap_usd: float | None = None,
                  workers: int = 2, threads: int | None = None, address: str | None = None, max_retries: int = 2,
                  pid_dir: str | Path | None = None, **option_kw: Any) -> list[ResultRow]:
    """Run ``tasks`` over Ray workers (see module doc); returns this run's rows for ``tasks`` in order.

    ``options`` (or the same options as keywords): the run options of :func:`lcrag.runner.run_tasks`
    (:class:`~lcrag.runtime.options.RunOptions`); ``options.prefix_order`` keeps the calls sharing a prompt prefix in
    one shard and sends each shard's calls in prefix order (:mod:`lcrag.llm.prefix`; default ``LCRAG_PREFIX_ORDER``,
    on). Ray's own: ``threads``: requests in flight per worker (default: the profile's ``concurrency``);
    ``max_retries``: Ray re-runs of a shard whose worker died (a re-run resumes from the shard's own results file);
    ``pid_dir``: where workers write their process ids (tests).
    """
    options = RunOptions.of(options, **option_kw)
    prefix_order = prefix.enabled(options.prefix_order)
    budget_usd, allow_over_budget = options.budget_usd, bool(options.allow_over_budget)
    log = options.logger()
    cache = options.cache or ResponseCache()
    results_path = Path(results_path)
    stats = stats if stats is not None else RunStats()
    stats.total = len(tasks)

    merged = merge_shards(results_path, cache)
    if merged:
        log(f"[lcrag] merged {merged['rows']} rows and {merged['cache_records']} cached responses left by an earlier run")

    finished = {r.task_id for r in read_results(results_path) if r.outcome in FINISHED}
    window = reader.profile.context_window
    local: list[Task] = []
    remote: list[Task] = []
    est_tokens, est_usd = 0, 0.0
    for t in tasks:
        if task_id(run, t.item.id, t.condition, reader.name, t.prompt, t.meta.get("sample", 0)) in finished:
            local.append(t)  # run_tasks skips it and returns its row
            continue
        key = task_key(t, reader)
        if cache.mode not in ("off", "refresh") and cache.contains(key) or cache.mode == "replay":
            local.append(t)
            continue
        ntok = count_messages(t.build()[0]) if (window or reader.profile.price_input_per_1m) else 0
        if window and ntok + reader.profile.max_tokens > window:
            local.append(t)
            continue
        est_tokens += ntok
        est_usd += price(reader, ntok, reader.profile.max_tokens)  # per call: a long-context tier is per prompt
        remote.append(t)
    stats.est_tokens = est_tokens
    stats.est_usd = est_usd
    if budget_usd is not None and stats.est_usd > budget_usd and not allow_over_budget:
        raise BudgetExceeded(f"estimated cost ${stats.est_usd:.2f} exceeds the budget ${budget_usd:.2f} "
                             f"({len(remote)} uncached calls); raise the budget or allow_over_budget=True")
    if cap_usd is None and budget_usd is not None and not allow_over_budget:
        cap_usd = budget_usd

    if local:
        st = RunStats()
        run_tasks(local, reader, run=run, results_path=results_path, scorer=scorer, stats=st,
                  options=RunOptions.of(options, cache=cache, log=log, allow_over_budget=True, prefix_order=prefix_order))
        stats.skipped, stats.cached, stats.done, stats.na, stats.failed = st.skipped, st.cached, st.done, st.na, st.failed

    errors: list[str] = []
    if remote:
        ray = init_ray(address)
        shards = shard_tasks(remote, reader, max(1, min(workers, len(remote))), group_prefixes=prefix_order)
        log(f"[lcrag] {reader.label}: {len(remote)} calls in {len(shards)} shards over Ray "
            f"(~{est_tokens:,} prompt tokens, estimated cost ${stats.est_usd:.2f}"
            + (f", shared cap ${cap_usd:.2f})" if cap_usd is not None else ")"))
        governor = remote_governor(cap_usd)
        spec = {"__profile__": True, "profile": reader.profile} if isinstance(reader, ChatReader) else reader
        cpus = float(ray.available_resources().get("CPU", 1.0))
        per = max(0.01, min(1.0, cpus / len(shards)))
        fn = ray.remote(num_cpus=per, max_retries=max_retries)(run_shard)
        refs = {fn.remote(i, s, spec, run, str(results_path), cache.mode, scorer, governor,
                          threads or run_workers(reader.profile), str(pid_dir) if pid_dir else None, prefix_order): i
                for i, s in enumerate(shards)}
        for ref, i in refs.items():
            try:
                st = ray.get(ref)
            except Exception as e:  # a dead worker (RayTaskError, WorkerCrashedError …): keep what it finished
                errors.append(f"shard {i}: {type(e).__name__}: {_first_line(e)}")
                continue
            for k in ("done", "cached", "failed", "na", "attempts", "rate_limited"):
                setattr(stats, k, getattr(stats, k) + st[k])
            stats.spend_usd += st["spend_usd"]
        stats.rate_limited_share = round(stats.rate_limited / stats.attempts, 4) if stats.attempts else 0.0
        gstate = governor.state()
        if gstate["refused"]:
            log(f"[lcrag] shared budget cap ${cap_usd:.2f} reached: {gstate['refused']} calls not sent "
                f"(spent ${gstate['spent_usd']:.4f}); re-run with a higher cap to finish them")
    merged = merge_shards(results_path, cache)
    if errors:
        raise LcragError(f"{len(errors)} shard(s) did not finish ({'; '.join(errors)}); their finished rows are kept "
                         f"({merged.get('rows', 0)} merged) — run again to finish the rest")
    rows = {r.task_id: r for r in read_results(results_path)}
    order = [task_id(run, t.item.id, t.condition, reader.name, t.prompt, t.meta.get("sample", 0)) for t in tasks]
    return [rows[o] for o in order if o in rows]


from ..types import ResultRow  # noqa: E402  (annotation only)

__all__ = ["run_tasks_ray", "init_ray", "remote_governor", "run_shard"]
