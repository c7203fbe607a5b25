r"""``lcrag export RUN``: a bundle to cite a result and re-score it elsewhere.

Written to ``RUN/export`` (or ``out``):

* ``predictions.jsonl`` — one line per result row of this run's configuration: ``run``,
  ``item_id``, ``condition``, ``reader``, ``prompt``, ``outcome``, ``answer``, ``lines``
  (cited, as rendered), ``gold_lines``, ``raw`` (the reply as kept in the row) and ``cache_key``;
* ``scores.csv`` (always) and ``scores.parquet`` (when ``pyarrow`` is installed) — the tidy
  table: identifiers, every metric, control flags (``sufficient``,
  ``answerable_without_context``) and the condition metadata;
* ``manifest.json`` — the run manifest plus ``export``: data file SHA-256, prompt templates
  with their versions, scorer names, tokenizer (``lcrag.llm.tokens`` encoding), lcrag version;
* ``leaderboard.csv`` — one line per reader × prompt: study, config hash, reader, model,
  prompt, n items, and the mean of each headline measure (:func:`.views.headline`: Ans\*, Ans,
  Evid, Ans+Evid where the study has them) of the best LC and best RAG condition (by Ans+Evid,
  else Ans, else the first headline measure scored) and of the oracle and no-context controls.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..contexts.controls import NO_CONTEXT, ORACLE
from ..resources.templates import load_prompt
from ..runner import read_results
from ..types import Outcome
from . import breakdowns, views


def tokenizer_name() -> str:
    """The token counter of the runner's window guard and cost estimate (:func:`lcrag.llm.tokens.method`)."""
    from ..llm.tokens import method

    return method()


def leaderboard(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    kinds = {c["condition"]: c["kind"] for c in man["conditions"]}
    ok = df[df["outcome"] == Outcome.OK]
    prof = {r["name"]: r.get("profile", {}).get("model") or r["name"] for r in man["readers"]}
    heads = [c for c, _ in views.headline(man, df)]
    recs = []
    for (reader, prompt), g in ok.groupby(["reader", "prompt"], sort=True):
        ms = [m for m in heads if g[m].notna().any()]
        if not ms:  # no headline measure scored on this prompt's rows
            continue
        key = next((m for m in ("ans_evid", "ans") if m in ms), ms[0])
        means = g.groupby("condition")[ms].mean()
        rec = {"study": man["study"]["name"], "config_hash": man["config_hash"][:12], "lcrag_version": man["lcrag_version"],
               "reader": reader, "model": prof.get(reader, reader), "prompt": prompt, "n_items": int(g["item_id"].nunique())}
        for kind, tag in (("LC", "best_lc"), ("RAG", "best_rag")):
            cs = [c for c in means.index if kinds.get(c) == kind]
            best = means.loc[cs, key].idxmax() if cs else None
            rec[f"{tag}_condition"] = best
            for m in ms:
                rec[f"{tag}_{m}"] = float(means.loc[best, m]) if best is not None else np.nan
        for cond, tag in ((ORACLE, "oracle"), (NO_CONTEXT, "no_context")):
            for m in ms:
                rec[f"{tag}_{m}"] = float(means.loc[cond, m]) if cond in means.index else np.nan
        recs.append(rec)
    return pd.DataFrame(recs)


def export(run_dir: str | Path, out: str | Path | None = None) -> dict[str, Path]:
    rd = Path(run_dir)
    man, df, _ = views.load_run(rd, with_roles=True)
    dst = Path(out) if out else rd / "export"
    dst.mkdir(parents=True, exist_ok=True)
    runs = {r["run"] for r in man["readers"]}
    paths: dict[str, Path] = {"predictions": dst / "predictions.jsonl"}
    with open(paths["predictions"], "w", encoding="utf-8") as f:
        for r in read_results(rd / man["files"]["results_jsonl"]):
            if r.run in runs:
                f.write(json.dumps({"run": r.run, "item_id": r.item_id, "condition": r.condition, "reader": r.reader,
                                    "prompt": r.prompt, "outcome": r.outcome, "answer": r.answer, "lines": r.lines,
                                    "gold_lines": r.gold_lines, "raw": r.meta.get("raw", ""), "cache_key": r.cache_key},
                                   ensure_ascii=False) + "\n")
    scores = breakdowns.add_flags(df)
    drop = [c for c in ("answer", "lines", "gold_lines", "error", "meta.raw", "meta.unit_first_lines", "meta.invalid_lines")
            if c in scores.columns]
    scores = scores.drop(columns=drop)
    for c in scores.columns:  # lists / dicts in metadata -> JSON text, so CSV and Parquet agree
        if scores[c].map(lambda v: isinstance(v, (list, dict))).any():
            scores[c] = scores[c].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    paths["scores_csv"] = dst / "scores.csv"
    scores.to_csv(paths["scores_csv"], index=False)
    if importlib.util.find_spec("pyarrow") is not None:
        paths["scores_parquet"] = dst / "scores.parquet"
        scores.astype({c: "string" for c in scores.columns if scores[c].dtype == object}).to_parquet(paths["scores_parquet"], index=False)
    prompts = {}
    for p in man.get("prompts", []):
        try:
            t = load_prompt(p)
            prompts[p] = {"label": t.label, "version": t.version, "expects_json": t.expects_json}
        except Exception as e:  # a template removed since the run: recorded, not fatal
            prompts[p] = {"error": str(e)}
    man_out = {**man, "export": {"data_sha256": {k: v.get("sha256") for k, v in man["data"].items() if isinstance(v, dict)},
                                 "prompts": prompts, "scorers": man["metrics"], "tokenizer": tokenizer_name(),
                                 "lcrag_version": man["lcrag_version"]}}
    paths["manifest"] = dst / "manifest.json"
    paths["manifest"].write_text(json.dumps(man_out, indent=2, default=str) + "\n", encoding="utf-8")
    paths["leaderboard"] = dst / "leaderboard.csv"
    lb = leaderboard(man, df)
    cap = (man.get("run_controls") or {}).get("limit_caption")
    if cap:  # a --limit / --sample run: its row is not a full-study score
        lb["limit"] = cap
    lb.to_csv(paths["leaderboard"], index=False)
    return paths
