"""The judge role of a run: a judged-correctness measure ``judge`` for free-form answers.

``lcrag run STUDY --judge PROFILE`` (or ``judge: PROFILE`` in the study file; a profile name, a
profile YAML file or an inline mapping) asks a grader model, after the readers ran, to score
every scored row's answer against the item's accepted answers with the EBG judge prompt
(App. E.5: 0 / 0.5 / 1; :func:`lcrag.llm.judge.judge`). Each judgment is one call through the
one cached call path: the same response cache as the run (a re-run is served from it), the
window guard (a prompt over the judge's window is not sent) and the run's budget: the judge's
estimated spend on uncached calls is capped at ``budget_usd`` minus the cost of this run's
uncached reader rows; the judgment that would pass the cap stops the judging (``BudgetExceeded``)
after the judgments made so far are written.

The judgments go to ``judgments.csv`` in the run directory (``run, item_id, condition, reader,
prompt, sample, judge, judge_reason, judge_cached, judge_error, judge_profile``; ``judge`` empty
when the judgment failed, did not parse or was over the window — never scored as 0), and the
run's frame (:func:`lcrag.outputs.views.load_run`) gets the column ``judge``.

:func:`agreement` — how far to trust the judge: per reader row and string measure (exact match,
containment, the answer metric) over the rows that have both a judgment and the measure,
Cohen's kappa (:func:`lcrag.stats.kappa.cohen_kappa`) between *judged correct* (score 1; a 0.5
counts as not correct) and the measure's 0/1 value, with the observed agreement and the rows
where they disagree in each direction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..files.atomicio import write_atomic
from ..errors import BudgetExceeded
from ..llm.cache import ResponseCache
from ..types import Outcome

FILE = "judgments.csv"
COLUMNS = ["run", "item_id", "condition", "reader", "prompt", "sample", "judge", "judge_reason", "judge_cached",
           "judge_error", "judge_profile"]
#: measures a judge is compared with (when the run has them)
STRING_MEASURES = ("exact", "ans_contains", "ans")


def judge_rows(rows, items: dict[str, Any], profile, *, cache: ResponseCache, budget_usd: float | None = None,
               log=None) -> pd.DataFrame:
    """Judge every ``ok`` row of ``rows`` (:class:`lcrag.types.ResultRow`) whose item is in ``items``
    (id -> :class:`lcrag.types.Item`); returns the :data:`COLUMNS` frame. Raises ``BudgetExceeded`` with the
    frame of the judgments made so far as ``.judgments``."""
    from ..llm.call import Budget
    from ..llm.judge import judge
    from ..llm.readers import make_reader

    reader = make_reader(profile)
    budget = Budget(budget_usd)
    name = reader.profile.name if hasattr(reader, "profile") else str(profile)
    recs = []
    todo = [r for r in rows if r.outcome == Outcome.OK and r.item_id in items]
    for r in todo:
        item = items[r.item_id]
        try:
            j = judge(item.question, list(item.answers), r.answer or "", reader, cache, budget=budget)
        except BudgetExceeded as e:
            out = pd.DataFrame(recs, columns=COLUMNS)
            err = BudgetExceeded(f"judge {name}: {e} (judged {len(recs)} of {len(todo)} rows; the rest have no "
                                 f"judgment)")
            err.judgments = out
            raise err from None
        recs.append({"run": r.run, "item_id": r.item_id, "condition": r.condition, "reader": r.reader, "prompt": r.prompt,
                     "sample": int(r.meta.get("sample", 0) or 0), "judge": j.score, "judge_reason": j.reason,
                     "judge_cached": bool(j.cached), "judge_error": j.error, "judge_profile": name})
    if log:
        failed = sum(x["judge"] is None for x in recs)
        log(f"[lcrag] judge {name}: {len(recs)} rows judged, {sum(x['judge_cached'] for x in recs)} from the cache"
            + (f", {failed} without a judgment (failed, unparseable or over the window)" if failed else ""))
    return pd.DataFrame(recs, columns=COLUMNS)


def write(run_dir: str | Path, judgments: pd.DataFrame) -> Path:
    p = Path(run_dir) / FILE
    write_atomic(p, judgments.to_csv(index=False))
    return p


def merge(run_dir: str | Path, df: pd.DataFrame, man: dict) -> pd.DataFrame:
    """``df`` with the column ``judge`` from ``judgments.csv``, matched on run, item, condition, reader, prompt
    and sample — when the manifest records a judge (a run made again without one keeps the file but not the
    measure)."""
    p = Path(run_dir) / FILE
    if not man.get("judge") or not p.is_file() or p.stat().st_size < 2:
        return df
    j = pd.read_csv(p, dtype={"item_id": str})
    keys = ["run", "item_id", "condition", "reader", "prompt"]
    d = df.drop(columns=[c for c in ("judge",) if c in df.columns])
    d = d.assign(_sample=d["meta.sample"].fillna(0).astype(int) if "meta.sample" in d else 0)
    j = j.rename(columns={"sample": "_sample"})[[*keys, "_sample", "judge"]].drop_duplicates([*keys, "_sample"], keep="last")
    return d.merge(j, on=[*keys, "_sample"], how="left").drop(columns="_sample")


def spent_usd(rows) -> float:
    """Cost of the rows that were not served from the cache (this invocation's spend on readers)."""
    return float(sum((r.cost_usd or 0.0) for r in rows if not r.cached))


def agreement(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """``row, measure, n, agree, p_expected, kappa, judge_only, measure_only, n_partial`` (module doc)."""
    from ..stats.kappa import cohen_kappa

    cols = ["row", "measure", "n", "agree", "p_expected", "kappa", "judge_only", "measure_only", "n_partial"]
    if "judge" not in df.columns:
        return pd.DataFrame(columns=cols)
    ok = df[(df["outcome"] == Outcome.OK) & df["judge"].notna()]
    am = (man.get("metrics") or {}).get("answer_metric")
    ms = [m for m in dict.fromkeys([*STRING_MEASURES, *([am] if am else [])]) if m in ok.columns]
    recs = []
    for row, g in ok.groupby("row", sort=True):
        for m in ms:
            gm = g.dropna(subset=[m])
            vals = gm[m].astype(float)
            if gm.empty or not vals.isin([0.0, 1.0]).all():
                continue
            jc = (gm["judge"].astype(float) >= 1.0).astype(float)
            k = cohen_kappa(jc.tolist(), vals.tolist())
            recs.append({"row": row, "measure": m, "n": k.n, "agree": k.p_observed, "p_expected": k.p_expected,
                         "kappa": k.kappa, "judge_only": int(((jc == 1) & (vals == 0)).sum()),
                         "measure_only": int(((jc == 0) & (vals == 1)).sum()),
                         "n_partial": int((gm["judge"].astype(float) == 0.5).sum())})
    return pd.DataFrame(recs, columns=cols)


def manifest_record(profile, judgments: pd.DataFrame, *, stopped: str = "") -> dict[str, Any]:
    """What the manifest keeps of the judge: its profile (no secrets) and the counts of its judgments."""
    from ..llm.readers import make_reader

    r = make_reader(profile)
    prof = r.profile.model_dump(mode="json") if hasattr(r, "profile") else {"name": str(profile)}
    prof = {k: v for k, v in prof.items() if "key" not in k.lower() or k == "api_key_env"}
    return {"profile": prof, "identity": json.loads(json.dumps(r.identity(), default=str)),
            "rows_judged": int(len(judgments)), "judged": int(judgments["judge"].notna().sum()),
            "from_cache": int(judgments["judge_cached"].astype(bool).sum()) if len(judgments) else 0,
            "status": "stopped: " + stopped if stopped else "complete", "file": FILE,
            "mean": float(np.nanmean(judgments["judge"].astype(float))) if judgments["judge"].notna().any() else None}
