"""One study with every condition of recent LC-vs-RAG work, for the conditions notebook (``20_conditions``).

:func:`conditions_study` is a study mapping (the same fields as a study YAML,
``params/study_example.yaml``) over lcrag's generated example corpus (:mod:`.example`) with:

* controls ``no-context`` and ``oracle`` (:mod:`lcrag.contexts.controls`);
* LC at each budget with the ``coherent``, ``shuffled`` and ``masked`` fillers
  (:mod:`lcrag.contexts.layouts`; "length without distraction", arXiv 2510.05381; haystack structure,
  Chroma *Context Rot*);
* top-k and matched-budget RAG in the ``score``, ``document`` (DOS RAG, arXiv 2506.03989),
  ``reverse`` and ``both_ends`` (arXiv 2410.05983) chunk orders;
* ``route`` (Self-Route, arXiv 2407.16833) from every RAG condition to ``LC-full``
  (:mod:`.route`);
* the ``ebg`` (cite line numbers) and ``recite`` (copy the evidence lines first) prompts.

:func:`run_conditions` runs it with :func:`lcrag.experiment.study.run_study` and returns the
per-condition table (:func:`condition_table`), the k-sweep table
(:func:`lcrag.outputs.breakdowns.k_curve`) and the route table (:func:`.route.fallback_table`),
saving the table and the k-sweep figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...types import Outcome
from ...outputs import breakdowns
from ...experiment.route import fallback_table


def conditions_study(readers: list, *, n_companies: int = 12, n_towns: int = 12, seed: int = 0,
                     ks: list[int] = (1, 2, 3, 5, 10, 20), lc_budgets: list = (2000, "full"),
                     prompts: list[str] = ("ebg", "recite"), mask_token: str | None = None,
                     budget_usd: float | None = 5.0) -> dict[str, Any]:
    """The study mapping of the conditions notebook (see module doc)."""
    return {
        "name": "conditions", "description": "lcrag example corpus (generated, fictional) — every condition",
        "data": {"example": {"n_companies": n_companies, "n_towns": n_towns, "seed": seed}}, "seed": seed,
        "prompts": list(prompts), "controls": ["no_context", "oracle"],
        "lc": {"budgets": list(lc_budgets), "placement": "natural", "fillers": ["coherent", "shuffled", "masked"],
               "mask_token": mask_token},
        "rag": {"chunkers": ["sentences"], "retrievers": ["bm25"], "k": list(ks), "match_lc": True,
                "orders": ["score", "document", "reverse", "both_ends"]},
        "route": {"lc_budget": "full"}, "readers": list(readers),
        "scorers": ["ans_contains", "evid_exact_set", "evid_recall", "refusal", "ans_evid"],
        "answer_metric": "ans_contains", "evidence_metric": "evid_exact_set", "joint_metric": "ans_evid",
        "budget_usd": budget_usd,
    }


def _layout(c: dict) -> str:
    if c["kind"] == "LC":
        return c.get("filler") or "coherent"
    if c["kind"] in ("RAG", "ROUTE"):
        return c.get("order") or "score"
    return "-"


def condition_table(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """Per reader row × condition: ``family`` (kind), ``layout`` (filler or chunk order), ``n``,
    mean ``ans`` / ``evid`` / ``ans_evid`` (the role columns of :func:`lcrag.outputs.views.role_view`: the measures the
    study declares), ``recall`` (share of gold units with a line in the
    context; for a route row, of the context it answered from), ``fallback_rate`` (route only),
    ``calls_per_item`` and mean ``prompt_tokens`` per item; ``k`` for top-k RAG and route, in the manifest's condition order."""
    from ...outputs.views import role_view

    conds = {c["condition"]: c for c in man["conditions"]}
    ok = role_view(man, df)
    ok = ok[ok["outcome"] == Outcome.OK].copy()
    n = ok["meta.n_units"].astype(float)
    ok["recall"] = ((n - ok["meta.missing_units"].astype(float)) / n).where(n > 0)
    ok["fallback"] = ok["meta.route_fallback"].astype(float) if "meta.route_fallback" in ok else np.nan
    ok["calls"] = ok["meta.route_calls"].fillna(1).astype(float) if "meta.route_calls" in ok else 1.0
    ms = [m for m in ("ans", "evid", "ans_evid") if m in ok.columns]
    g = ok.groupby(["row", "condition"], sort=False)
    out = g[[*ms, "recall", "fallback", "calls", "prompt_tokens"]].mean().rename(
        columns={"fallback": "fallback_rate", "calls": "calls_per_item"})
    out.insert(0, "n", g.size())
    out = out.reset_index()
    out.insert(2, "family", out["condition"].map(lambda c: conds[c]["kind"]))
    out.insert(3, "layout", out["condition"].map(lambda c: _layout(conds[c])))
    out.insert(4, "k", out["condition"].map(lambda c: conds[c].get("k")).astype("Int64"))
    order = {c: i for i, c in enumerate(conds)}
    out["_o"] = out["condition"].map(order)
    return out.sort_values(["row", "_o"], kind="stable").drop(columns="_o").reset_index(drop=True)


def headline(table: pd.DataFrame, k: int, metric: str = "ans") -> pd.DataFrame:
    """``metric`` per condition (rows: controls, every LC condition, the RAG and route conditions of
    top-``k``) × reader row (columns) — a compact view of :func:`condition_table`."""
    t = table[~table["family"].isin(["RAG", "ROUTE"]) | (table["k"] == k)]
    order = list(dict.fromkeys(t["condition"]))
    w = t.pivot_table(index="condition", columns="row", values=metric, aggfunc="first", sort=False)
    return w.reindex(order).rename_axis(columns=None)


@dataclass
class ConditionsResult:
    run_dir: Path
    table: pd.DataFrame
    k_sweep: pd.DataFrame
    route: pd.DataFrame
    files: dict[str, Any] = field(default_factory=dict)
    figure: Any = None  # the saved k-sweep figure (closed; a notebook displays it inline), None without out_dir


def run_conditions(run_dir: str | Path, readers: list, *, out_dir: str | Path | None = None, name: str = "20_conditions",
                   progress: bool = False, **study: Any) -> ConditionsResult:
    """Run :func:`conditions_study` into ``run_dir`` (data generated under ``run_dir/data``);
    save ``<name>`` (table) and ``<name>_k_sweep`` (figure) into ``out_dir`` when given."""
    import matplotlib.pyplot as plt

    from ...outputs.save import save_figure, save_table
    from ...outputs.report import data_label, k_sweep_figure
    from ...experiment.study import run_study
    from ...outputs.views import load_run

    rd = Path(run_dir)
    run_study(conditions_study(readers, **study), out=rd, base_dir=rd, progress=progress, log=lambda s: None)
    man, df, _ = load_run(rd, with_roles=True)  # the columns ans / evid / ans_evid: the study's declared roles
    res = ConditionsResult(rd, condition_table(man, df), breakdowns.k_curve(man, df), fallback_table(man, df))
    if out_dir is not None:
        label = data_label(man)
        res.files["table"] = save_table(res.table, name, out_dir, float_format="%.3f", source=label)
        fig = k_sweep_figure(res.k_sweep, title=f"Accuracy and retriever recall vs k, per chunk order\n{label}")
        res.files["k_sweep"] = save_figure(fig, f"{name}_k_sweep", out_dir)
        res.figure = fig
        plt.close(fig)
    return res
