"""The notebook of the synthetic two-hop study for ``lcrag reproduce`` (:mod:`lcrag.reproduction.notebooks`).

Dry run of notebook 01: one haystack per length is built and counted; it stands for the ``trials``
haystacks of that length (same character target, different shuffles)."""

from __future__ import annotations

from ...reproduction.notebooks import Notebook, NotebookPlan
from ...llm.profiles import load_profile
from ...llm.plan import plan_tasks


def plan_01(p: dict) -> NotebookPlan:
    from .data import default_pool, needles as needle_set
    from ...runner import Task
    from .trials import SyntheticConfig, build_trial

    trials = {name: int(lim["trials"]) for name, lim in dict(p.get("reader_limits") or {}).items() if "trials" in lim}
    cfg = SyntheticConfig(lengths=[int(x) for x in p["lengths"]], trials=int(p["trials"]), seed=int(p["seed"]),
                          needles=p["needles"], readers=list(p["readers"]), reader_trials=trials)
    cfg.validate()
    pool = default_pool(cfg.pool_size, cfg.seed)
    nds = needle_set(cfg.needles)
    sample = []
    for length in cfg.lengths:
        item, ctx = build_trial(length, 0, cfg.seed, pool, nds, cfg.stopping_rule)
        sample += [Task(item=item, context=ctx, prompt=pr, condition=ctx.condition) for pr in cfg.prompts]
    rows = []
    for prof in [load_profile(n) for n in cfg.readers]:
        n = min(cfg.trials, cfg.reader_trials.get(prof.name, cfg.trials))
        rows += plan_tasks(sample, prof, study="01 synthetic", weight=lambda t, n=n: n)
    return NotebookPlan("01", rows)


NOTEBOOKS = {"01_synthetic_ebg": Notebook(plan=plan_01)}
