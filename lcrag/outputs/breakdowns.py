"""Per-item control flags and the breakdown views of ``lcrag report`` (custom studies).

* :func:`item_flags` — per reader × prompt × item: **sufficient** (Ans = 1 in the ``oracle``
  condition: the gold lines alone let this reader answer) and **answerable without context**
  (Ans = 1 in the ``no-context`` condition). NaN when the control was not run or not scored.
* :func:`add_flags` / :func:`filter_items` — the flags as columns of the results frame, and
  the rows of the items that pass a filter (e.g. only sufficient items, or only items not
  answerable without context), as ``lcrag report --sufficient-only --exclude-no-context-answerable``.
* :func:`k_curve` — mean metric of top-k RAG conditions against k per reader row × setup ×
  chunk order (:mod:`lcrag.contexts.layouts`), k sorted as numbers (never as strings), with the
  retriever's unit recall in the shown context (``recall``: mean over rows of the share of
  the item's gold evidence units that have a line in the context, "any line of the unit"
  convention) — the k-sweep of Jin et al. (arXiv 2410.05983), where accuracy can fall
  with k while recall rises.
* :func:`question_types` — metrics per condition split by question type: single- vs
  multi-hop (1 vs >= 2 gold evidence units) and answerable vs not (accepted answers are
  explicit non-answers such as "NA").
* :func:`positions` — LC rows with depth / distance deciles (:mod:`lcrag.outputs.position`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..contexts.controls import NO_CONTEXT, ORACLE
from .position import add_positions
from ..types import Outcome

FLAGS = ("sufficient", "answerable_without_context")


def item_flags(df: pd.DataFrame, metric: str = "ans") -> pd.DataFrame:
    """``reader, prompt, item_id, sufficient, answerable_without_context`` (1 / 0 / NaN)."""
    ok = df[(df["outcome"] == Outcome.OK) & df["condition"].isin([ORACLE, NO_CONTEXT])]
    keys = ["reader", "prompt", "item_id"]
    base = df[keys].drop_duplicates()
    if ok.empty or metric not in ok:
        return base.assign(sufficient=np.nan, answerable_without_context=np.nan).reset_index(drop=True)
    w = ok.pivot_table(index=keys, columns="condition", values=metric, aggfunc="first")
    out = pd.DataFrame({"sufficient": w[ORACLE] if ORACLE in w else np.nan,
                        "answerable_without_context": w[NO_CONTEXT] if NO_CONTEXT in w else np.nan}, index=w.index).reset_index()
    return base.merge(out, on=keys, how="left").reset_index(drop=True)


def add_flags(df: pd.DataFrame, metric: str = "ans") -> pd.DataFrame:
    d = df.drop(columns=[c for c in FLAGS if c in df.columns])
    return d.merge(item_flags(df, metric), on=["reader", "prompt", "item_id"], how="left")


def filter_items(df: pd.DataFrame, *, sufficient: bool | None = None, answerable_without_context: bool | None = None) -> pd.DataFrame:
    """Rows whose item has the requested flag values (None = no filter); flags from :func:`add_flags`.

    An item whose flag is unknown (control not run) is dropped by a filter on that flag.
    """
    d = df if "sufficient" in df.columns else add_flags(df)
    keep = pd.Series(True, index=d.index)
    if sufficient is not None:
        keep &= d["sufficient"] == float(sufficient)
    if answerable_without_context is not None:
        keep &= d["answerable_without_context"] == float(answerable_without_context)
    return d[keep]


def flags_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per reader row: items, share sufficient, share answerable without context (of known flags)."""
    f = add_flags(df).drop_duplicates(["row", "item_id"])
    g = f.groupby("row", sort=True)
    return pd.DataFrame({"n_items": g.size(), "n_sufficient": g["sufficient"].sum(), "sufficient_share": g["sufficient"].mean(),
                         "n_answerable_without_context": g["answerable_without_context"].sum(),
                         "answerable_without_context_share": g["answerable_without_context"].mean()}).reset_index()


def k_curve(man: dict, df: pd.DataFrame, metrics=("ans", "evid", "ans_evid")) -> pd.DataFrame:
    """``row, setup, order, k, n, <metric>…, recall`` over top-k RAG conditions, k ascending as integers."""
    from .views import role_view

    df = role_view(man, df)  # ans / evid / ans_evid: the measures the study declares for the roles
    topk = {c["condition"]: c for c in man["conditions"] if c["kind"] == "RAG" and c.get("k") is not None}
    ok = df[(df["outcome"] == Outcome.OK) & df["condition"].isin(topk)].copy()
    ms = [m for m in metrics if m in ok.columns]
    if ok.empty or not ms:
        return pd.DataFrame(columns=["row", "setup", "order", "k", "n", *ms, "recall"])
    # a built-in study's condition record may name only its retriever (NoLiMa-RAG: the recorded rankings)
    ok["setup"] = ok["condition"].map(lambda c: " / ".join(str(topk[c][f]) for f in ("retriever", "chunker") if topk[c].get(f))
                                      or c)
    ok["order"] = ok["condition"].map(lambda c: topk[c].get("order") or "score")
    ok["k"] = ok["condition"].map(lambda c: int(topk[c]["k"]))
    if {"meta.n_units", "meta.missing_units"} <= set(ok.columns):
        n = ok["meta.n_units"].astype(float)
        ok["recall"] = ((n - ok["meta.missing_units"].astype(float)) / n).where(n > 0)
    else:
        ok["recall"] = np.nan
    g = ok.groupby(["row", "setup", "order", "k"], sort=True)
    out = g[[*ms, "recall"]].mean()
    out.insert(0, "n", g.size())
    return out.reset_index().sort_values(["row", "setup", "order", "k"], kind="stable").reset_index(drop=True)


def question_types(man: dict, df: pd.DataFrame, metrics=("ans", "evid", "ans_evid")) -> pd.DataFrame:
    """Mean metrics per row × condition × hop type × answerability, with n."""
    from .views import role_view

    df = role_view(man, df)  # ans / evid / ans_evid: the measures the study declares for the roles
    ok = df[df["outcome"] == Outcome.OK].copy()
    ms = [m for m in metrics if m in ok.columns]
    if ok.empty or "meta.hops" not in ok:
        return pd.DataFrame(columns=["row", "condition", "hop_type", "answerable", "n", *ms])
    ok["hop_type"] = np.where(ok["meta.hops"].astype(int) >= 2, "multi-hop", "single-hop")
    ok["answerable"] = np.where(ok["meta.answerable"].astype(bool), "answerable", "not answerable")
    order = {c["condition"]: i for i, c in enumerate(man["conditions"])}
    g = ok.groupby(["row", "condition", "hop_type", "answerable"], sort=True)
    out = g[ms].mean()
    out.insert(0, "n", g.size())
    out = out.reset_index()
    out["_o"] = out["condition"].map(order)
    return out.sort_values(["row", "_o", "hop_type", "answerable"]).drop(columns="_o").reset_index(drop=True)


def positions(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """Scored LC rows with ``depth_decile`` / ``distance_decile`` (:func:`lcrag.outputs.position.add_positions`)."""
    lc = {c["condition"] for c in man["conditions"] if c["kind"] == "LC"}
    d = df[(df["outcome"] == Outcome.OK) & df["condition"].isin(lc)]
    if d.empty or "meta.unit_first_lines" not in d:
        return d.assign(depth=np.nan, distance=np.nan, depth_decile=np.nan, distance_decile=np.nan)
    return add_positions(d)


def item_metadata(man: dict) -> pd.DataFrame:
    """``item_id`` and one ``metadata.<key>`` column per key of the items' ``metadata`` (nested keys dotted).

    Read from the items file the manifest records (``data.items.path``); a run without one (a built-in
    study's item source) has no item metadata: an empty frame with only ``item_id``.
    """
    import json
    from pathlib import Path

    from ..errors import InputError

    path = (man.get("data") or {}).get("items", {}).get("path") if isinstance((man.get("data") or {}).get("items"), dict) else None
    if not path:
        return pd.DataFrame(columns=["item_id"])
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "the run's items file is missing (the manifest records it under data.items.path)")
    recs = []
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(p, f"not JSON ({e.msg})", line=n) from None
            md = obj.get("metadata") or {}
            if not isinstance(md, dict):
                raise InputError(p, "item metadata must be a mapping", line=n, field="metadata")
            recs.append({"item_id": str(obj.get("id")), **{f"metadata.{k}": v for k, v in _flat(md).items()}})
    return pd.DataFrame(recs) if recs else pd.DataFrame(columns=["item_id"])


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v if not isinstance(v, list) else ", ".join(map(str, v))
    return out


def add_metadata(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """The results frame with the items' ``metadata.*`` columns (:func:`item_metadata`) joined on ``item_id``."""
    md = item_metadata(man)
    d = df.drop(columns=[c for c in md.columns if c != "item_id" and c in df.columns])
    return d.merge(md, on="item_id", how="left") if len(md.columns) > 1 else d


def by_field(man: dict, df: pd.DataFrame, field: str, metrics, *, seed: int = 0) -> pd.DataFrame:
    """Per reader row × prompt × condition × value of ``field`` (a ``metadata.*`` column of :func:`add_metadata`
    or any column of the frame, e.g. ``meta.hops``): ``n`` (scored rows), failures, N/A and every metric's mean
    with its 95 % percentile-bootstrap interval (:func:`lcrag.results.aggregate`); a missing value is ``(none)``."""
    from ..errors import InputError
    from ..results import aggregate

    if field not in df.columns:
        known = sorted(c for c in df.columns if c.startswith("metadata."))
        src = ((man.get("data") or {}).get("items") or {}).get("path") if isinstance((man.get("data") or {}).get("items"), dict) else None
        raise InputError(src or "<run>", "no such item field in this run; item metadata fields: "
                         + (", ".join(known) if known else "(none: the items carry no metadata)"), field=field)
    d = df.assign(**{field: df[field].map(lambda v: "(none)" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))})
    out = aggregate(d, ["row", "prompt", "condition", field], [m for m in metrics if m in d.columns], seed=seed)
    order = {c["condition"]: i for i, c in enumerate(man["conditions"])}
    return out.assign(_o=out["condition"].map(order)).sort_values(["row", "prompt", "_o", field], kind="stable") \
        .drop(columns="_o").reset_index(drop=True)
