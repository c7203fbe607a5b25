r"""The tables behind ``lcrag report``: computed from a run directory, no model, no retrieval.

* :func:`load_run` — the manifest, the rows of *this* configuration (run ids of the
  manifest; the JSONL may hold older runs) as a tidy frame, and the retrieval ranks. Every study
  scores under its measures' names (``ans_contains``, ``synthetic_ans``, ``nolima_evid_needles_cited`` …);
  its spec declares which of them play the three roles every view reads (``answer_metric``,
  ``evidence_metric``, ``joint_metric`` → ``ans``, ``evid``, ``ans_evid``); :func:`roles` reads that
  declaration (``man["roles"]``) and ``load_run(..., with_roles=True)`` adds the role columns to the
  frame in memory for the report's tables (the result files keep one name per number).
* :func:`headline` — the study's headline measures (role measures, plus Ans\* where the study
  has it) with the papers' labels: what the run summary and the report lead with.
* :func:`summary` — per reader × prompt × condition: n, failures, N/A, parse-failure rate and
  mean + 95% percentile-bootstrap CI of every metric (:func:`lcrag.results.aggregate`).
* :func:`deltas` — LC − RAG per reader × prompt × (LC condition, RAG condition) × metric over
  the items scored in both (paired bootstrap, :func:`lcrag.stats.bootstrap.paired_bootstrap_ci`).
* :func:`hits` / :func:`coverage` — Hits@k (any gold unit / all gold units in the top k) and the
  CDF of the per-item full-coverage k per chunker × retriever (EBG App. D.3, G.1).
* :func:`attribution` — retrieval / reading / grounding miss shares
  (:mod:`lcrag.scoring.attribution`; "present" = every gold unit has a line in the context).
* :func:`failures` — parse-failure and refusal rates (refusal = explicit non-answer such as
  "NA", :func:`lcrag.scoring.answer.is_refusal`, among scored rows).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..contexts.controls import NO_CONTEXT
from ..errors import InputError
from ..results import aggregate, to_frame
from ..runner import read_results
from ..scoring.answer import is_refusal
from ..scoring.attribution import attribution_table
from ..stats.bootstrap import paired_bootstrap_ci
from ..scoring.retrieval import full_coverage_cdf, hits_curve
from ..types import Outcome, ParseStatus
from ..experiment.manifest import read_manifest

CORE = ["ans", "evid", "ans_evid"]
LABELS = {"ans": "Ans", "evid": "Evid", "ans_evid": "Ans+Evid"}


def _measure(name: str):
    from .. import measures

    measures.load_all()
    try:
        return measures.get(name)
    except KeyError:  # a plug-in measure whose module is not loaded here
        return None


#: role -> the manifest's ``metrics`` field that declares its measure (the spec's field of the same name)
ROLE_FIELDS = {"ans": "answer_metric", "evid": "evidence_metric", "ans_evid": "joint_metric"}


def declared(man: dict, df: pd.DataFrame | None = None) -> dict[str, str | None]:
    """``{role: measure or None}``: the measures a run's study declares for the roles ``ans``, ``evid`` and
    ``ans_evid`` (the manifest's ``metrics.answer_metric`` / ``evidence_metric`` / ``joint_metric``, resolved when the
    study ran; ``None``: the study has no measure in that role).

    A manifest written before the joint role was declared (no ``joint_metric`` field) takes its declaration from
    the study's spec of the same name, where lcrag has one built in (an own study's name is usually its own: then
    the manifest's ``answer_metric`` / ``evidence_metric`` stay, and the joint is ``ans_evid`` when the run has it,
    as the own-study scorer wrote it then). Never guessed from a measure's label."""
    mets = man.get("metrics") or {}
    if "joint_metric" in mets:
        return {r: mets.get(f) for r, f in ROLE_FIELDS.items()}
    name = (man.get("study") or {}).get("name")
    if not mets.get("answer_metric") and name:
        from ..experiment.engine import builtin_names, load_spec

        if name in builtin_names():
            spec = load_spec(name)
            return {r: getattr(spec, f, None) for r, f in ROLE_FIELDS.items()}
    out = {r: mets.get(f) for r, f in ROLE_FIELDS.items()}
    if out["ans"] and out["evid"] and (df is None or "ans_evid" in df.columns):
        out["ans_evid"] = "ans_evid"
    return out


def roles(man: dict, df: pd.DataFrame) -> dict[str, dict[str, str]]:
    """``{role: {"column": measure, "label": header}}`` for the roles ``ans``, ``evid`` and ``ans_evid``: the
    measures the study declares (:func:`declared`), each with the measure's label. A role the study declares no
    measure for (LongEval has no joint measure), or whose column ``df`` lacks, is left out. The one accessor of a
    role's column: every view, table and export that shows "the answer / evidence / joint measure" reads it here."""
    out: dict[str, dict[str, str]] = {}
    for role, col in declared(man, df).items():
        if col is not None and col in df.columns:
            m = _measure(col)
            out[role] = {"column": col, "label": m.label if m else col}
    return out


def role_view(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the role columns ``ans``, ``evid`` and ``ans_evid`` (those the study declares a measure for) added in
    memory as views of the declared measures (``man["roles"]``, else :func:`roles`) — what the report's tables read.
    A frame that has them already is returned as is; the result files never hold them."""
    rs = man.get("roles") or roles(man, df)
    add = {role: df[r["column"]] for role, r in rs.items() if r["column"] != role and role not in df.columns}
    return df.assign(**add) if add else df


def role_column(man: dict, df: pd.DataFrame, role: str) -> str | None:
    """The column of ``role`` (``ans``, ``evid``, ``ans_evid``) in ``df``: the role's own column where
    :func:`load_run` added it (``with_roles=True``), else the measure the study declares for it (:func:`roles`);
    ``None`` when the study has none."""
    if role in df.columns and role not in (man.get("metrics") or {}).get("scorers", []):
        return role
    r = (man.get("roles") or roles(man, df)).get(role)
    return r["column"] if r and r["column"] in df.columns else None


def headline(man: dict, df: pd.DataFrame) -> list[tuple[str, str]]:
    r"""``[(column, label)]``: the study's headline measures in the papers' order — Ans\* (an answer
    measure labelled "Ans*", where the study has one), then the ``ans``, ``evid`` and ``ans_evid``
    roles (:func:`roles`). Columns are the role names (``ans`` …) once :func:`load_run` added them."""
    out = []
    for n in (man.get("metrics") or {}).get("scorers", []):
        m = _measure(n) if n in df.columns else None
        if m is not None and m.kind == "answer" and m.label == "Ans*":
            out.append((n, "Ans*"))
            break
    rs = man.get("roles") or roles(man, df)
    for r in CORE:
        if r in rs and r in df.columns:
            out.append((r, rs[r]["label"]))
    return out


def role_label(man: dict, role: str) -> str:
    """The display label of ``role`` in this run: the papers' header of the measure behind it
    (``Evid (strict)``, ``Answer-F1`` …), the role's own label (``Ans``) for an own study."""
    r = (man.get("roles") or {}).get(role)
    return r["label"] if r else LABELS.get(role, role)


def load_run(run_dir: str | Path, *, with_roles: bool = False) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """``(manifest, results frame, retrieval ranks)`` of a run directory (a path or a
    :class:`lcrag.outputs.runview.Run`).

    ``man["roles"]`` is always set (:func:`roles`); ``with_roles`` also adds the role columns ``ans``,
    ``evid`` and ``ans_evid`` to the frame, in memory, as views of the measures the study declares for them
    (what ``lcrag report`` and ``lcrag export`` read). A results file written before the roles were declared may
    hold ``ans`` / ``evid`` columns of its own (the own-study scorer wrote them then): they are dropped on
    reading, the declared measures' columns hold the same values."""
    rd = Path(run_dir)
    mp = rd / "manifest.json"
    if not mp.is_file():
        raise InputError(rd, "not a run directory: manifest.json is missing (run `lcrag run study.yaml` first)")
    man = read_manifest(mp)
    runs = {r["run"] for r in man["readers"]}
    rows = [r for r in read_results(rd / man["files"]["results_jsonl"]) if r.run in runs]
    if not rows:
        raise InputError(rd / "results.jsonl", "no result rows of this run's configuration")
    df = to_frame(rows)
    df = df.drop(columns=[c for c in ("ans", "evid") if c in df.columns and c not in man["metrics"]["scorers"]])
    df["reader_label"] = df["meta.reader_label"]
    clash = df.groupby("reader_label")["reader"].transform("nunique") > 1  # two readers, one label
    df.loc[clash, "reader_label"] = df.loc[clash, "reader_label"] + " (" + df.loc[clash, "reader"] + ")"
    multi = df["prompt"].nunique() > 1
    df["row"] = df["reader_label"] + (" · " + df["prompt"] if multi else "")
    from ..experiment.judging import merge

    df = merge(rd, df, man)  # the judge's measure, when the run has a judge (lcrag.experiment.judging)
    man["roles"] = roles(man, df)
    if with_roles:
        df = role_view(man, df)
    rp = rd / man["files"]["retrieval_ranks"]
    ranks = pd.read_csv(rp) if rp.is_file() and rp.stat().st_size > 1 else pd.DataFrame()
    return man, df, ranks


def status_note(man: dict, df: pd.DataFrame, run_dir: str | Path) -> str | None:
    """None for a complete run; else one sentence: partial (interrupted / killed) or still running, rows present."""
    status = man.get("status", "complete")
    if status == "complete":
        return None
    from ..runtime.runlock import holder_alive, lock_path, read_lock

    expected = sum(int(r.get("expected_rows") or 0) for r in man["readers"])
    have = f"{len(df)} of {expected} rows" if expected else f"{len(df)} rows"
    if status == "running" and holder_alive(read_lock(lock_path(Path(run_dir) / man["files"]["results_jsonl"]))):
        return f"this run is still running: the report shows the {have} finished so far"
    why = f" ({man['stopped']})" if man.get("stopped") else " (its process was killed)"
    return f"this run is partial — it stopped before it finished{why}; the report shows the {have} it wrote"


def condition_order(man: dict, present) -> list[str]:
    names = [c["condition"] for c in man["conditions"]]
    return [c for c in names if c in set(present)]


def role_columns(man: dict, df: pd.DataFrame) -> list[str]:
    """The columns of the roles ``ans``, ``evid``, ``ans_evid`` in ``df``, in that order (:func:`role_column`)."""
    return [c for c in (role_column(man, df, r) for r in CORE) if c is not None]


def metric_names(man: dict, df: pd.DataFrame) -> list[str]:
    """The role columns (:func:`role_columns`), then every other measure of the study (a measure behind a role
    column that :func:`load_run` added is not repeated)."""
    first = role_columns(man, df)
    behind = {r["column"] for role, r in (man.get("roles") or {}).items() if role in df.columns}
    extra = [m for m in man["metrics"]["scorers"] if m in df.columns and m not in first and m not in behind]
    extra += ["judge"] if "judge" in df.columns and "judge" not in extra else []
    return first + extra


def summary(man: dict, df: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    out = aggregate(df, ["row", "prompt", "condition"], metric_names(man, df), seed=seed)
    order = {c: i for i, c in enumerate(condition_order(man, out["condition"]))}
    return out.sort_values(["row", "condition"], key=lambda s: s.map(order) if s.name == "condition" else s).reset_index(drop=True)


def deltas(man: dict, df: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    kinds = {c["condition"]: c["kind"] for c in man["conditions"]}
    ok = df[df["outcome"] == Outcome.OK]
    conds = condition_order(man, ok["condition"].unique())
    lcs, rags = [c for c in conds if kinds[c] == "LC"], [c for c in conds if kinds[c] == "RAG"]
    recs = []
    for (row, prompt), g in ok.groupby(["row", "prompt"], sort=True):
        for m in role_columns(man, g):
            wide = g.pivot_table(index="item_id", columns="condition", values=m, aggfunc="first")
            for a in lcs:
                for b in rags:
                    if a not in wide or b not in wide:
                        continue
                    pair = wide[[a, b]].dropna()
                    if pair.empty:
                        continue
                    d, lo, hi = paired_bootstrap_ci(pair[a].values, pair[b].values, seed=seed, n_boot=n_boot)
                    recs.append({"row": row, "prompt": prompt, "metric": m, "lc": a, "rag": b, "n_pairs": len(pair),
                                 "lc_mean": float(pair[a].mean()), "rag_mean": float(pair[b].mean()),
                                 "delta": d, "delta_lo": lo, "delta_hi": hi})
    return pd.DataFrame(recs, columns=["row", "prompt", "metric", "lc", "rag", "n_pairs", "lc_mean", "rag_mean",
                                       "delta", "delta_lo", "delta_hi"])


def _ranks_by_setup(ranks: pd.DataFrame):
    for (ch, rt), g in ranks.groupby(["chunker", "retriever"], sort=True):
        items = {i: [None if pd.isna(r) else int(r) for r in gi.sort_values("unit")["rank"]] for i, gi in g.groupby("item_id", sort=False)}
        yield f"{rt} / {ch}", items


def hits(ranks: pd.DataFrame, ks) -> pd.DataFrame:
    if ranks.empty:
        return pd.DataFrame(columns=["setup", "k", "hits_any", "hits_all", "gold_recall", "n_items", "n_gold"])
    parts = [hits_curve(items, ks).assign(setup=setup) for setup, items in _ranks_by_setup(ranks)]
    df = pd.concat(parts, ignore_index=True)
    return df[["setup", "k", "hits_any", "hits_all", "gold_recall", "n_items", "n_gold"]]


def coverage(ranks: pd.DataFrame) -> pd.DataFrame:
    """Per setup, fraction of items whose full-coverage k is <= k, at every distinct item value."""
    if ranks.empty:
        return pd.DataFrame(columns=["setup", "k", "fraction_covered", "n_items"])
    parts = [full_coverage_cdf(items).assign(setup=setup) for setup, items in _ranks_by_setup(ranks)]
    return pd.concat(parts, ignore_index=True)[["setup", "k", "fraction_covered", "n_items"]]


def coverage_summary(ranks: pd.DataFrame) -> pd.DataFrame:
    """Per setup: items, fully covered items, median / max full-coverage k and its characters."""
    if ranks.empty:
        return pd.DataFrame(columns=["setup", "n_items", "n_never_covered", "median_full_coverage_k", "max_full_coverage_k",
                                     "median_full_coverage_chars"])
    per = ranks.drop_duplicates(["item_id", "chunker", "retriever"]).copy()
    per["setup"] = per["retriever"] + " / " + per["chunker"]
    recs = []
    for setup, g in per.groupby("setup", sort=True):
        k = g["full_coverage_k"].dropna()
        recs.append({"setup": setup, "n_items": len(g), "n_never_covered": int(g["full_coverage_k"].isna().sum()),
                     "median_full_coverage_k": float(k.median()) if len(k) else np.nan,
                     "max_full_coverage_k": float(k.max()) if len(k) and len(k) == len(g) else np.nan,
                     "median_full_coverage_chars": float(g["full_coverage_chars"].dropna().median()) if len(k) else np.nan})
    return pd.DataFrame(recs)


def attribution(df: pd.DataFrame, man: dict | None = None) -> pd.DataFrame:
    """Attribution per row × condition over the study's answer and joint roles (:func:`role_column`; without ``man``
    the role columns ``ans`` / ``ans_evid``); the no-context control is left out (nothing to retrieve or
    read), and with the oracle control an item the oracle also misses is an ``evidence_miss``."""
    none = {c["condition"] for c in man["conditions"] if c["kind"] == "none"} if man else {NO_CONTEXT}
    d = df[(df["outcome"] == Outcome.OK) & ~df["condition"].isin(none)]
    # the answer and joint roles' columns (the role columns of role_view, else the declared measures)
    ans, joint = (role_column(man, d, r) if man else r for r in ("ans", "ans_evid"))
    if ans is None or joint not in d.columns or "meta.gold_in_context" not in d.columns:
        return pd.DataFrame()
    d = d.dropna(subset=[joint]).copy()
    d["meta.gold_in_context"] = d["meta.gold_in_context"].astype(float)
    suff = "sufficient" if "sufficient" in d.columns and d["sufficient"].notna().any() else None
    t = attribution_table(d, ["row", "condition"], present="meta.gold_in_context", ans=ans, ans_evid=joint, sufficient=suff)
    return _in_condition_order(man, t) if man else t


def _in_condition_order(man: dict, t: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by reader row, then by the study's condition order (k as listed, never as strings)."""
    if t.empty:
        return t
    order = {c["condition"]: i for i, c in enumerate(man["conditions"])}
    return t.assign(_o=t["condition"].map(order)).sort_values(["row", "_o"], kind="stable").drop(columns="_o").reset_index(drop=True)


def failures(df: pd.DataFrame, man: dict | None = None) -> pd.DataFrame:
    recs = []
    for (row, prompt, cond), g in df.groupby(["row", "prompt", "condition"], sort=True):
        ok = g[g["outcome"] == Outcome.OK]
        js = ok[ok["parse_status"] != ParseStatus.NOT_JSON]
        recs.append({"row": row, "prompt": prompt, "condition": cond, "n": len(ok),
                     "n_failed": int((g["outcome"] == Outcome.ERROR).sum()), "n_na": int((g["outcome"] == Outcome.NA).sum()),
                     "parse_fail_rate": float(js["parse_status"].isin([ParseStatus.FAILED, ParseStatus.EMPTY]).mean()) if len(js) else np.nan,
                     "refusal_rate": float(ok["answer"].map(is_refusal).mean()) if len(ok) else np.nan})
    out = pd.DataFrame(recs)
    return _in_condition_order(man, out) if man is not None else out


def usage(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """Cost, latency, cache hits, lengths and N/A / truncation rates per row × condition (``lcrag.outputs.usage``)."""
    from .usage import usage_table

    out = usage_table(df, ["row", "condition"])
    order = {c: i for i, c in enumerate(condition_order(man, out["condition"]))}
    return out.sort_values(["row", "condition"], key=lambda s: s.map(order) if s.name == "condition" else s).reset_index(drop=True)
