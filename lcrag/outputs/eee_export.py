"""Every Eval Ever records of a study run (``lcrag export RUN --format eee``).

Every Eval Ever (EvalEval Coalition, 2026) is a shared JSON format for evaluation results; its aggregate
schema ``eval.schema.json`` (version :data:`SCHEMA_VERSION`) is followed here. One record per reader
(``<reader>.json``): ``model_info`` (the profile's model id and label; ``self_deployed`` for a loopback
endpoint, ``externally_managed`` otherwise; weights availability ``unknown``), ``eval_library``
(``lcrag`` and its version, the run id and config hash), ``source_metadata`` (an ``evaluation_run``,
third party), and one ``evaluation_results`` entry per condition x prompt x measure:

* ``score_details.score`` — the measure's mean over the item means of the scored (``ok``) rows, with
  ``uncertainty`` = the clustered standard error and 95 % t interval over items and the number of
  scored rows (:func:`lcrag.experiment.repeats.summarize`; with one sample per item it is the usual
  ``sd / sqrt(n)``);
* ``metric_config`` — ``continuous`` in [0, 1], higher is better. Measures with values outside [0, 1]
  are left out and listed in ``eval_library.additional_details.measures_left_out``;
* ``source_data`` — ``other`` (``dataset_name`` the study name, the items' SHA-256 and count, and the
  limit caption of a ``--limit`` / ``--sample`` run);
* ``generation_config.generation_args`` — temperature, max tokens and the prompt template's name.

Instance-level records (the schema's optional ``detailed_evaluation_results``) are not written: the
predictions are in the lcrag bundle (``lcrag export RUN``).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ..llm.profiles import is_loopback
from ..runner import read_results
from . import views
from ..experiment.repeats import measure_columns, summarize

SCHEMA_VERSION = "0.3.0"


def _s(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, default=str)


def _num(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def eee_records(run_dir: str | Path, *, retrieved: float | None = None, organization: str = "unknown") -> list[dict[str, Any]]:
    """The Every Eval Ever aggregate record of each reader of ``run_dir`` (module doc); ``organization`` is the
    ``source_organization_name`` (who ran the evaluation; ``unknown`` unless given)."""
    rd = Path(run_dir)
    man, df, _ = views.load_run(rd)
    runs = {r["run"] for r in man["readers"]}
    rows = [r for r in read_results(rd / man["files"]["results_jsonl"]) if r.run in runs]
    ok = df[df["outcome"] == "ok"]
    names = measure_columns(rows)
    unit = [m for m in names if m in ok and ok[m].dropna().between(0, 1).all()]
    left_out = [m for m in names if m not in unit]
    summ = summarize(df, unit) if unit else pd.DataFrame()
    ts = str(int(retrieved if retrieved is not None else time.time()))
    cap = (man.get("run_controls") or {}).get("limit_caption") or ""
    items_sha = {k: v.get("sha256") for k, v in man["data"].items() if isinstance(v, dict) and v.get("sha256")}
    source = {"dataset_name": man["study"]["name"], "source_type": "other",
              "additional_details": {"n_items": str(man["data"].get("n_items")), "study_description":
                                     man["study"].get("description") or "",
                                     **{f"sha256_{k}": v for k, v in items_sha.items()}, **({"limit": cap} if cap else {})}}
    out = []
    for r in man["readers"]:
        prof = r.get("profile") or {}
        model_id = (r.get("identity") or {}).get("model") or prof.get("model") or r["name"]
        urls = [u for u in [prof.get("base_url"), *(prof.get("base_urls") or [])] if u]
        deployed = "self_deployed" if urls and all(is_loopback(u) for u in urls) else (
            "externally_managed" if urls else "unknown")
        results = []
        mine = summ[summ["reader"] == r["name"]] if len(summ) else summ
        for _, s in mine.iterrows():
            res_id = f"{s['condition']}|{s['prompt']}|{s['measure']}"
            unc: dict[str, Any] = {"num_samples": int(s["n_samples"])}
            if _num(s["se"]) is not None:
                unc["standard_error"] = {"value": float(s["se"]), "method": "analytic (clustered by item)"}
                unc["confidence_interval"] = {"lower": float(s["ci_lo"]), "upper": float(s["ci_hi"]),
                                              "confidence_level": 0.95, "method": "Student t over item means"}
            gen = {"temperature": prof.get("temperature"), "prompt_template": str(s["prompt"])}
            if prof.get("max_tokens"):
                gen["max_tokens"] = int(prof["max_tokens"])
            details = {"n_items": str(int(s["n_items"])), "flip_rate": _s(_num(s["flip_rate"])),
                       "majority_acc": _s(_num(s["majority_acc"]))}
            if cap:
                details["limit"] = cap
            results.append({
                "evaluation_result_id": res_id,
                "evaluation_name": f"{man['study']['name']} / {s['condition']} / {s['measure']}",
                "source_data": source,
                "evaluation_timestamp": man.get("created") or "",
                "metric_config": {"evaluation_description": f"lcrag measure {s['measure']} under condition "
                                                            f"{s['condition']} (prompt {s['prompt']})",
                                  "lower_is_better": False, "score_type": "continuous", "min_score": 0.0, "max_score": 1.0},
                "score_details": {"score": float(s["mean"]), "details": details, "uncertainty": unc},
                "generation_config": {"generation_args": gen},
            })
        out.append({
            "schema_version": SCHEMA_VERSION,
            "evaluation_id": f"{man['study']['name']}/{model_id}/{ts}",
            "evaluation_timestamp": man.get("created") or "",
            "retrieved_timestamp": ts,
            "source_metadata": {"source_name": "lcrag run", "source_type": "evaluation_run",
                                "source_organization_name": organization, "evaluator_relationship": "third_party"},
            "eval_library": {"name": "lcrag", "version": str(man.get("lcrag_version") or "unknown"),
                             "additional_details": {"run": r["run"], "config_hash": str(man.get("config_hash")),
                                                    "measures_left_out": _s(left_out)}},
            "model_info": {"name": r.get("label") or r["name"], "id": str(model_id),
                           "inference_platform": str(prof.get("family") or "unknown"),
                           "additional_details": {"deployment_type": deployed, "model_availability": "unknown",
                                                  "reader": r["name"]}},
            "evaluation_results": results,
        })
    return out


def export_eee(run_dir: str | Path, out: str | Path, *, organization: str = "unknown") -> dict[str, Path]:
    """Write ``<reader>.json`` per reader into ``out``; returns the paths by reader name."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for rec in eee_records(run_dir, organization=organization):
        name = rec["model_info"]["additional_details"]["reader"]
        paths[name] = out / f"{name}.json"
        paths[name].write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    return paths


def read_eee(path: str | Path) -> dict[str, dict[str, float]]:
    """``{evaluation_result_id: {"score", "lower", "upper"}}`` of an exported record (the round trip)."""
    rec = json.loads(Path(path).read_text(encoding="utf-8"))
    out = {}
    for r in rec["evaluation_results"]:
        ci = r["score_details"].get("uncertainty", {}).get("confidence_interval", {})
        out[r["evaluation_result_id"]] = {"score": r["score_details"]["score"], "lower": ci.get("lower"),
                                          "upper": ci.get("upper")}
    return out


__all__ = ["SCHEMA_VERSION", "eee_records", "export_eee", "read_eee"]
