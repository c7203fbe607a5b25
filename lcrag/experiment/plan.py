"""``lcrag run STUDY --dry-run``: the study's pre-flight plan (``lcrag.llm.plan``) without a reader call.

Validates the study exactly as a run does (``prepare``: items, plugins, reader profiles and their
key variables), builds its LC and RAG conditions (retrieval runs locally; no reader is called),
and plans every reader over the task list: calls, N/A over the window, calls already in the
response cache, prompt tokens under each reader's own tokenizer, and cost.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..llm.cache import ResponseCache
from ..llm.plan import plan_frame, plan_tasks
from .config import resolve
from .study import build_tasks, detach_conditions, limited, prepare


def plan_study(source: str | Path | dict, *, readers: list | None = None, out: str | Path | None = None,
               base_dir: str | Path | None = None, overrides: dict | None = None,
               check_overrides: bool = False) -> tuple[pd.DataFrame, dict]:
    """``(plan frame, info)``; info has the study name, item/condition counts and the run directory.
    ``source``: a study file, mapping, spec or built-in study name."""
    if isinstance(source, (str, Path)) and not (Path(source).suffix in (".yaml", ".yml") or Path(source).is_file()):
        from .engine import load_spec

        source = load_spec(str(source))
    prep = prepare(source, base_dir=base_dir, readers=readers, out=out, overrides=overrides)
    if overrides and check_overrides:  # a user's override that changes no task is said (lcrag.experiment.noop)
        import sys

        from .noop import unchanged_by

        same = unchanged_by(source, overrides, base_dir=base_dir, out=out)
        if same:
            print(f"[lcrag] warning: the override(s) {', '.join(same)} change no task of this study", file=sys.stderr)
    cfg = prep.cfg
    if int(getattr(cfg, "repeats", 1) or 1) > 1:  # the plan is where a user decides to spend the repeats
        import sys

        from ..llm.probe import repeats_warning

        for r in prep.readers:
            warn = repeats_warning(r.profile, int(cfg.repeats))
            if warn:
                print(warn, file=sys.stderr)
    built = build_tasks(prep)
    path = resolve(prep.base, cfg.cache) if cfg.cache else None
    cache = None
    if path is None:
        from ..config import response_cache_path

        path = response_cache_path()
    if Path(path).is_file():  # a dry run creates no cache
        cache = ResponseCache(path, mode="use")
    rows = []
    from .repeats import expand, for_reader
    from .runcontrols import apply_limit

    limited_tasks, limit_rec = apply_limit(built.tasks, getattr(cfg, "limit", None),
                                           total=built.items_total or prep.items.total)
    tasks, _ = detach_conditions(expand(limited_tasks, int(getattr(cfg, "repeats", 1) or 1)))
    for entry, r in zip(cfg.readers, prep.readers):
        rows += plan_tasks(limited(for_reader(tasks, r), cfg, r, entry), r.profile, study=cfg.name, identity=r.identity(), cache=cache)
    info = {"study": cfg.name, "items": limit_rec["items_used"] if limit_rec else len(prep.items.items), "conditions": len(built.conditions),
            "prompts": len({t.prompt for t in built.tasks}) or len(cfg.prompts), "readers": [r.name for r in prep.readers], "run_dir": prep.run_dir,
            "judge": getattr(cfg, "judge", None)}
    return plan_frame(rows), info
