"""Tables behind the NoLiMa figures of seed 001, computed from recorded runs (and live ones).

Every function takes tidy frames (``lcrag.data.nolima_recorded``) and returns a DataFrame in
percentage points, ready for ``lcrag.report.save_table`` and ``lcrag.plots``:

* :func:`fig1_table` / :func:`fig1_heat` — Figure 1: Δ = Ans (EBG prompt) − Ans* (answer-only)
  per model x length (x hop); the heat averages the two hops with equal weight.
* :func:`fig2_table` — Figure 2: TN primary vs secondary citation rate per model.
* :func:`fig3_table` — Figures 3 and 6: TN vs CTN, Ans+Evid and Ans per model.
* :func:`fig11_table` — Figure 11 / Table 15: RAG answer accuracy per model x matched budget.
* :func:`fig12_table` — Figure 12: Δ = Ans_RAG − Ans_LC per model x budget with a paired
  bootstrap interval over the same 8 items (4 needles x 2 hops, same seed in every cell),
  exact McNemar (discordant counts) and paired approximate randomization p-values, both
  Holm-corrected across the cells of the figure.

Recorded per-row tables are averaged with equal weight per recorded row (the CSVs do not
carry per-row response counts), so a few model means differ from the paper's text by 1–2 pp.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plots import fmt_length
from ..scoring.bootstrap import paired_bootstrap_ci
from ..stats import approximate_randomization, holm, mcnemar_exact
from .nolima_lc import HOPS

FIG1_LENGTHS = (10_000, 20_000, 30_000, 40_000, 50_000, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000,
                700_000, 1_000_000)
"""Columns of the paper's Figure 1 (LC-EBG ``plot_answer_only_heatmap.py``)."""


def _order(readers) -> list[str]:
    from ..data.nolima_recorded import MODEL_ORDER
    known = [m for m in MODEL_ORDER if m in set(readers)]
    return known + sorted(set(readers) - set(known))


def fig1_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Long table: ``run, reader, hop, context_length, ans_ebg, ans_answer_only, delta`` (pp),
    from a frame with ``prompt`` in {nolima-ebg, nolima-answer-only} and an ``ans`` fraction."""
    keys = ["run", "reader", "hop", "context_length"]
    w = answers.set_index([*keys, "prompt"])["ans"].unstack("prompt").reset_index()  # keeps N/A (NaN) cells
    out = pd.DataFrame({k: w[k] for k in keys})
    out["ans_ebg"] = w.get("nolima-ebg") * 100
    out["ans_answer_only"] = w.get("nolima-answer-only") * 100
    out["delta"] = out["ans_ebg"] - out["ans_answer_only"]
    return out.sort_values(keys).reset_index(drop=True)


def fig1_heat(long: pd.DataFrame, lengths=FIG1_LENGTHS) -> pd.DataFrame:
    """Reader x length Δ (pp), mean of the one-hop and two-hop Δ; NaN (N/A) unless both exist."""
    g = long.groupby(["reader", "context_length"])["delta"].agg(["mean", "count"])
    m = g["mean"].where(g["count"] == len(HOPS)).unstack("context_length")
    m = m.reindex(index=_order(m.index), columns=[L for L in lengths])
    m.columns = [fmt_length(c) for c in m.columns]
    return m


def fig2_table(tn: pd.DataFrame) -> pd.DataFrame:
    """Per reader: mean TN primary / secondary citation rate (pp) over recorded rows, and n_rows."""
    d = tn[tn["setting"] == "TN"]
    g = d.groupby("reader").agg(primary_cited=("primary_cited", "mean"), secondary_cited=("secondary_cited", "mean"),
                                n_rows=("primary_cited", "size"), n_lengths=("context_length", "nunique"))
    g[["primary_cited", "secondary_cited"]] *= 100
    g["gap"] = g["primary_cited"] - g["secondary_cited"]
    return g.reindex(_order(g.index)).reset_index()


def fig3_table(tn: pd.DataFrame) -> pd.DataFrame:
    """Per reader: TN and CTN Ans+Evid and Ans (pp), and the CTN − TN drops (Figures 3 and 6)."""
    d = tn[tn["setting"].isin(["TN", "CTN"])]
    g = d.groupby(["reader", "setting"])[["ans_evid", "ans"]].mean().unstack("setting") * 100
    out = pd.DataFrame({"tn_ans_evid": g[("ans_evid", "TN")], "ctn_ans_evid": g[("ans_evid", "CTN")],
                        "tn_ans": g[("ans", "TN")], "ctn_ans": g[("ans", "CTN")]})
    out["drop_ans_evid"] = out["ctn_ans_evid"] - out["tn_ans_evid"]
    out["drop_ans"] = out["ctn_ans"] - out["tn_ans"]
    return out.reindex(_order(out.index)).reset_index()


def fig11_table(rag: pd.DataFrame) -> pd.DataFrame:
    """RAG answer accuracy (pp) per reader x matched budget, with n (from scored rows)."""
    g = rag.groupby(["reader", "meta.context_length", "meta.budget"]).agg(
        ans=("ans", "mean"), evid=("evid", "mean"), ans_evid=("ans_evid", "mean"), n=("ans", "size")).reset_index()
    g[["ans", "evid", "ans_evid"]] *= 100
    return g.rename(columns={"meta.context_length": "haystack_chars", "meta.budget": "budget"})


def recorded_lc_cells(lc_selected: pd.DataFrame) -> pd.DataFrame:
    """``ans_accuracy_selected_contexts.csv`` as ``reader, context_length, lc_ans`` (pp)."""
    return pd.DataFrame({"reader": lc_selected["model"].map(_display), "context_length": lc_selected["context_length"].astype(int),
                         "lc_ans": lc_selected["ans_accuracy"].astype(float)})


def fig12_table(rag: pd.DataFrame, lc_cells: pd.DataFrame, lc_items: pd.DataFrame, budgets: pd.DataFrame, *,
                n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Δ = Ans_RAG − Ans_LC (pp) per reader x budget.

    Args:
        rag: RAG rows (``reader, meta.context_length, meta.needle_id, meta.hop, ans``).
        lc_cells: LC cell accuracy ``reader, context_length, lc_ans`` (pp) — for recorded
            models :func:`recorded_lc_cells` of ``ans_accuracy_selected_contexts.csv`` (as the
            paper's Figure 12), for live readers the mean of their LC rows.
        lc_items: LC per-item rows ``reader, context_length, needle_id, hop, ans`` (any depths).
        budgets: :func:`lcrag.studies.nolima_rag.matched_budgets` (haystack -> matched LC length).

    ``delta`` = RAG cell − ``lc_ans``. The paired interval pairs the same 8 items (needle x
    hop): RAG 0/1 vs the item's LC accuracy at the matched length averaged over depths;
    ``delta_paired`` is that sample's mean (recorded per-needle rows average a few repeated
    entries, so it can sit a few pp from ``delta``). Same ``seed`` in every cell.

    Significance on the same pairs (:mod:`lcrag.stats`): ``p_mcnemar`` — exact McNemar with
    ``mcnemar_b`` (RAG right, LC wrong) and ``mcnemar_c`` (RAG wrong, LC right), the LC side made
    0/1 by majority over its depths (item correct when its mean LC accuracy is >= 0.5);
    ``p_randomization`` — paired approximate randomization on the graded pairs (10,000 seeded
    sign flips, no binarization). ``p_mcnemar_holm`` / ``p_randomization_holm`` are Holm-corrected
    across all cells of the table (one figure, one family).
    """
    sel = lc_cells.set_index(["reader", "context_length"])["lc_ans"]
    per = lc_items.groupby(["reader", "context_length", "needle_id", "hop"])["ans"].mean()
    bmap = dict(zip(budgets["haystack_chars"], budgets["matched_lc"]))
    rows = []
    for (reader, hay), g in rag[rag["outcome"] == "ok"].groupby(["reader", "meta.context_length"]):
        L = int(bmap[int(hay)])
        rag_pct = g["ans"].mean() * 100
        lc_pct = float(sel.get((reader, L), np.nan))
        items = g.sort_values(["meta.needle_id", "meta.hop"])
        lc_items_v = [per.get((reader, L, n, h), np.nan) for n, h in zip(items["meta.needle_id"], items["meta.hop"])]
        a, b = items["ans"].to_numpy(float), np.asarray(lc_items_v, float)
        keep = ~np.isnan(b)
        m, lo, hi = paired_bootstrap_ci(a[keep], b[keep], n_boot=n_boot, seed=seed) if keep.any() else (np.nan,) * 3
        rows.append({"reader": reader, "haystack_chars": int(hay), "budget": fmt_length(L), "matched_lc": L,
                     "rag_ans": rag_pct, "lc_ans": lc_pct, "delta": rag_pct - lc_pct, "delta_paired": m * 100,
                     "ci_lo": lo * 100, "ci_hi": hi * 100, "n_items": int(keep.sum()), **_tests(a[keep], b[keep], seed)})
    out = pd.DataFrame(rows)
    for col in ("p_mcnemar", "p_randomization"):
        out[f"{col}_holm"] = holm(out[col].to_numpy(float))
    out["_o"] = out["reader"].map({r: i for i, r in enumerate(_order(out["reader"]))})
    return out.sort_values(["_o", "matched_lc"]).drop(columns="_o").reset_index(drop=True)


def _tests(rag: np.ndarray, lc: np.ndarray, seed: int) -> dict:
    """McNemar (LC made 0/1 by majority over depths) and randomization p-values of one cell."""
    if not len(rag):
        return {"mcnemar_b": np.nan, "mcnemar_c": np.nan, "p_mcnemar": np.nan, "p_randomization": np.nan}
    t = mcnemar_exact(np.round(rag), (lc >= 0.5).astype(float))
    r = approximate_randomization(rag, lc, n_shuffles=10_000, seed=seed)
    return {"mcnemar_b": t.b, "mcnemar_c": t.c, "p_mcnemar": t.p_value, "p_randomization": r.p_value}


def _display(name: str) -> str:
    from ..data.nolima_recorded import display_model
    return display_model(name)


def wide(df: pd.DataFrame, index: str, columns: str, value: str, col_order=None) -> pd.DataFrame:
    """Pivot keeping reader order and (optional) column order."""
    w = df.pivot_table(index=index, columns=columns, values=value, aggfunc="first")
    w = w.reindex(_order(w.index))
    if col_order is not None:
        w = w.reindex(columns=[c for c in col_order if c in w.columns])
    return w
