"""Tables behind the NoLiMa figures of the EBG paper, computed from recorded runs (and live ones).

Every function takes tidy frames (``lcrag.studies.nolima.recorded``) and returns a DataFrame in
percentage points, ready for ``lcrag.outputs.save.save_table`` and the figures at the end of this module:

* :func:`fig1_table` / :func:`fig1_heat` — Figure 1: Δ = Ans (EBG prompt) − Ans* (answer-only)
  per model x length (x hop); the heat averages the two hops with equal weight.
* :func:`fig2_table` — Figure 2: TN primary vs secondary citation rate per model.
* :func:`fig3_table` — Figures 3 and 6: TN vs CTN, Ans+Evid and Ans per model.
* :func:`fig11_table` — Figure 11 / Table 15: RAG answer accuracy per model x matched budget.
* :func:`fig12_table` — Figure 12: Δ = Ans_RAG − Ans_LC per model x budget with a paired
  bootstrap interval over the same 8 items (4 needles x 2 hops, same seed in every cell),
  exact McNemar (discordant counts) and paired approximate randomization p-values, both
  Holm-corrected across the cells of the figure.

* :func:`fig5_table` — Figure 5: Ans+Evid per model x length, one hop.
* :func:`table12` — Table 12 laid out (three panels, Ans*/Ans/Δ, two decimals).
* :func:`fig7_table` — Figure 7: Ans − Ans^c (CoT) and Ans − Ans^ce (CoT-EBG).
* :func:`fig2_paper_gap` — Figure 2's rates beside the values the paper's text states.

Figures (notebooks 07-09): :func:`needle_position_curves`, :func:`similarity_bars`, :func:`similarity_diff_bars`,
:func:`attribution_bars`.

Recorded per-row tables are averaged with equal weight per recorded row (the CSVs do not
carry per-row response counts), so some model means differ from the paper's text: up to
3.0 pp for Figure 2 (Sonnet-4.5's secondary rate), see :func:`fig2_paper_gap`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...outputs.plots import fmt_length
from ...stats.bootstrap import paired_bootstrap_ci
from ...stats import approximate_randomization, holm, mcnemar_exact
from .lc import HOPS

FIG1_LENGTHS = (10_000, 20_000, 30_000, 40_000, 50_000, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000,
                700_000, 1_000_000)
"""Columns of the paper's Figure 1 (LC-EBG ``plot_answer_only_heatmap.py``)."""


def _order(readers) -> list[str]:
    """The paper's models in its order, then other readers, then live-run rows (:mod:`.live_runs`), each sorted."""
    from .live_runs import LIVE_MARK
    from .recorded import MODEL_ORDER
    known = [m for m in MODEL_ORDER if m in set(readers)]
    return known + sorted(set(readers) - set(known), key=lambda r: (LIVE_MARK in str(r), str(r)))


def fig1_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Long table: ``run, reader, hop, context_length, ans_ebg, ans_answer_only, delta`` (pp),
    from a frame with ``prompt`` in {nolima-ebg, nolima-answer-only} and a ``nolima_ans_contains`` fraction."""
    keys = ["run", "reader", "hop", "context_length"]
    w = answers.set_index([*keys, "prompt"])["nolima_ans_contains"].unstack("prompt").reset_index()  # keeps N/A (NaN) cells
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
    """Per reader: mean TN primary / secondary citation rate (pp; columns ``nolima_primary_cited``, ``nolima_secondary_cited``) over
    recorded rows, and n_rows."""
    d = tn[tn["setting"] == "TN"]
    g = d.groupby("reader").agg(**{m: (m, "mean") for m in ("nolima_primary_cited", "nolima_secondary_cited")},
                                n_rows=("nolima_primary_cited", "size"), n_lengths=("context_length", "nunique"))
    g[["nolima_primary_cited", "nolima_secondary_cited"]] *= 100
    g["gap"] = g["nolima_primary_cited"] - g["nolima_secondary_cited"]
    return g.reindex(_order(g.index)).reset_index()


#: the reader label of the pooled row of :func:`fig3_table`
POOLED_READER = "all readers (pooled rows)"


def fig3_table(tn: pd.DataFrame, *, pooled: bool = True) -> pd.DataFrame:
    """Per reader: TN and CTN Ans+Evid and Ans (pp), and the CTN − TN drops (Figures 3 and 6).

    With ``pooled`` a last row :data:`POOLED_READER` gives the mean over every TN (CTN) row of every
    reader, each row weighing the same: the paper's "averaged across models" values (App. F.4; 76.2 /
    69.2 / 49.9 / 44.0 on the recorded rows). It is not the mean of the per-reader rows, which weighs
    each reader the same although their numbers of rows differ."""
    d = tn[tn["setting"].isin(["TN", "CTN"])]
    g = d.groupby(["reader", "setting"])[["nolima_ans_evid", "nolima_ans_contains"]].mean().unstack("setting") * 100
    out = pd.DataFrame({"tn_ans_evid": g[("nolima_ans_evid", "TN")], "ctn_ans_evid": g[("nolima_ans_evid", "CTN")],
                        "tn_ans": g[("nolima_ans_contains", "TN")], "ctn_ans": g[("nolima_ans_contains", "CTN")]})
    out = out.reindex(_order(out.index))
    if pooled and not d.empty:
        p = d.groupby("setting")[["nolima_ans_evid", "nolima_ans_contains"]].mean() * 100
        out.loc[POOLED_READER] = [p.loc["TN", "nolima_ans_evid"] if "TN" in p.index else float("nan"),
                                  p.loc["CTN", "nolima_ans_evid"] if "CTN" in p.index else float("nan"),
                                  p.loc["TN", "nolima_ans_contains"] if "TN" in p.index else float("nan"),
                                  p.loc["CTN", "nolima_ans_contains"] if "CTN" in p.index else float("nan")]
    out["drop_ans_evid"] = out["ctn_ans_evid"] - out["tn_ans_evid"]
    out["drop_ans"] = out["ctn_ans"] - out["tn_ans"]
    out.index.name = "reader"
    return out.reset_index()


def fig11_table(rag: pd.DataFrame) -> pd.DataFrame:
    """RAG answer, evidence and joint accuracy (pp; the measures' columns) per reader x matched budget, with n
    (from scored rows)."""
    ms = ["nolima_ans_contains", "nolima_evid_needles_cited", "nolima_ans_evid"]
    g = rag.groupby(["reader", "meta.context_length", "meta.budget"]).agg(
        **{m: (m, "mean") for m in ms}, n=("nolima_ans_contains", "size")).reset_index()
    g[ms] *= 100
    return g.rename(columns={"meta.context_length": "haystack_chars", "meta.budget": "budget"})


def recorded_lc_cells(lc_selected: pd.DataFrame) -> pd.DataFrame:
    """``ans_accuracy_selected_contexts.csv`` as ``reader, context_length, lc_ans`` (pp)."""
    return pd.DataFrame({"reader": lc_selected["model"].map(_display), "context_length": lc_selected["context_length"].astype(int),
                         "lc_ans": lc_selected["ans_accuracy"].astype(float)})


def fig12_table(rag: pd.DataFrame, lc_cells: pd.DataFrame, lc_items: pd.DataFrame, budgets: pd.DataFrame, *,
                n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Δ = Ans_RAG − Ans_LC (pp) per reader x budget.

    Args:
        rag: RAG rows (``reader, meta.context_length, meta.needle_id, meta.hop, nolima_ans_contains``).
        lc_cells: LC cell accuracy ``reader, context_length, lc_ans`` (pp) — for recorded
            models :func:`recorded_lc_cells` of ``ans_accuracy_selected_contexts.csv`` (as the
            paper's Figure 12), for live readers the mean of their LC rows.
        lc_items: LC per-item rows ``reader, context_length, needle_id, hop, nolima_ans_contains`` (any depths).
        budgets: :func:`lcrag.studies.nolima.rag.matched_budgets` (haystack -> matched LC length).

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
    per = lc_items.groupby(["reader", "context_length", "needle_id", "hop"])["nolima_ans_contains"].mean()
    bmap = dict(zip(budgets["haystack_chars"], budgets["matched_lc"]))
    rows = []
    for (reader, hay), g in rag[rag["outcome"] == "ok"].groupby(["reader", "meta.context_length"]):
        L = int(bmap[int(hay)])
        rag_pct = g["nolima_ans_contains"].mean() * 100
        lc_pct = float(sel.get((reader, L), np.nan))
        items = g.sort_values(["meta.needle_id", "meta.hop"])
        lc_items_v = [per.get((reader, L, n, h), np.nan) for n, h in zip(items["meta.needle_id"], items["meta.hop"])]
        a, b = items["nolima_ans_contains"].to_numpy(float), np.asarray(lc_items_v, float)
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
    from .recorded import display_model
    return display_model(name)


def wide(df: pd.DataFrame, index: str, columns: str, value: str, col_order=None) -> pd.DataFrame:
    """Pivot keeping reader order and (optional) column order."""
    w = df.pivot_table(index=index, columns=columns, values=value, aggfunc="first")
    w = w.reindex(_order(w.index))
    if col_order is not None:
        w = w.reindex(columns=[c for c in col_order if c in w.columns])
    return w


# ---------------------------------------------------------------- Figure 5, Table 12, Figure 7, Figure 2 check
def fig5_table(per: pd.DataFrame, hop: str, lengths=FIG1_LENGTHS, *, repeated: str = "all-correct") -> pd.DataFrame:
    """Figure 5 (App. F.3): Ans+Evid (pp) per reader x length for one ``hop``, averaged over needles
    and depths; NaN (N/A) where a reader has no row.

    Follows LC-EBG ``long_context/NoLiMa-based/plotting/plot_combined_accuracy_heatmap.py::build_pivot``
    (``100 * mean(both_correct)`` per model x context length, columns ``DISPLAY_CTXS`` = the
    Figure 1 lengths). ``per`` is :func:`lcrag.studies.nolima.recorded.lc_per_needle_frame`
    (``results_summary_full.csv``: one row per needle x character x depth, ``nolima_ans_evid`` a
    fraction) or live per-item rows with ``reader, hop, context_length, nolima_ans_evid``.

    Their pivot averages raw responses, which are not published; the recorded CSV has one row
    per (needle, depth), and a few rows average several recorded responses (33.33 / 66.67).
    How those repeats entered the paper's figure is not visible in the code, so the paper's text
    decides: ``repeated="all-correct"`` (default) counts such a row as correct only when all its
    responses were, which reproduces every Ans+Evid cell the text of App. F.3 states (Gemini-3-Fl
    one-hop 1M 100, two-hop 1M 93.3; o3-mini 500K 31.2, 700K 18.8; GPT-5 one-hop 1M 94, two-hop
    1M 81; GPT-4.1 one-hop 1M 81, two-hop 1M 62; Gemini-2.5-Fl 600K/700K 81, 1M 94);
    ``repeated="mean"`` (lcrag's former rule) averages the row values (GPT-4.1 two-hop 1M 68.8
    instead of 62). ``tests/studies/test_fidelity_nolima.py`` checks both.
    """
    if repeated not in ("all-correct", "mean"):
        raise ValueError(f"repeated must be 'all-correct' or 'mean', got {repeated!r}")
    d = per[(per["hop"] == hop) & per["nolima_ans_evid"].notna()]
    v = (d["nolima_ans_evid"] >= 1 - 1e-9).astype(float) if repeated == "all-correct" else d["nolima_ans_evid"]
    t = v.groupby([d["reader"], d["context_length"]]).mean().mul(100).unstack("context_length")
    t = t.reindex(index=_order(per["reader"].unique()), columns=list(lengths))
    t.columns = [fmt_length(c) for c in t.columns]
    return t


TABLE12_PANELS = {
    "(a) 10K–100K": tuple(range(10_000, 100_001, 10_000)),
    "(b) 200K–700K": tuple(range(200_000, 700_001, 100_000)),
    "(c) 800K–1M": (800_000, 900_000, 1_000_000),
}
"""Column panels of the paper's Table 12 (a: 10K to 100K, b: 200K to 700K, c: 800K to 1M)."""

TABLE12_CAPTION = ("Table 12 · NoLiMa LC, Ans* (answer-only) vs Ans (EBG) per model, hop and length, n = 16 "
                   "(4 needles x 4 depths); Δ = Ans − Ans*; N/A = no run (over the context window); two decimals")


def snap_sixteenths(v: float, tol: float = 0.051) -> float:
    """A one-decimal recorded percentage of an n = 16 cell back to its exact value
    (93.8 -> 93.75 = 15/16); values that are not within ``tol`` of a sixteenth stay as they are
    (e.g. 86.7 = 13/15 when one case is missing)."""
    if pd.isna(v):
        return v
    k = round(v * 16 / 100)
    exact = k * 100 / 16
    return exact if abs(v - exact) <= tol else v


def table12(long: pd.DataFrame, panels: dict = TABLE12_PANELS, *, snap: bool = True) -> dict[str, pd.DataFrame]:
    """The paper's Table 12 laid out: one frame per panel, rows ``(Model, Hop)``, columns
    ``(length, [Ans*, Ans, Δ])``, values in pp rounded to two decimals ("N/A" kept as NaN).

    ``long`` is :func:`fig1_table` output (``ans_ebg`` = Ans, ``ans_answer_only`` = Ans*, ``delta``).
    The recorded LC tables store one decimal; with ``snap`` (default) each recorded value is first
    put back on its sixteenth (:func:`snap_sixteenths`, n = 16 cases per cell) and Δ recomputed, so
    two decimals are meaningful (93.75 − 81.25 = 12.50, not 93.8 − 81.2 = 12.60). Rows of live runs
    (``run`` starting ``live:``, :mod:`.live_runs`) are exact means of their scored rows and stay as they are.
    """
    out = {}
    long = long.copy()
    if snap:
        from .live_runs import LIVE_RUN

        rec = ~long["run"].astype(str).str.startswith(LIVE_RUN) if "run" in long else pd.Series(True, index=long.index)
        for c in ("ans_ebg", "ans_answer_only"):
            long.loc[rec, c] = long.loc[rec, c].map(snap_sixteenths)
        long.loc[rec, "delta"] = long.loc[rec, "ans_ebg"] - long.loc[rec, "ans_answer_only"]
    m = long.set_index(["reader", "hop", "context_length"])
    readers = _order(long["reader"].unique())
    for name, lengths in panels.items():
        cols = pd.MultiIndex.from_tuples([(fmt_length(L), k) for L in lengths for k in ("Ans*", "Ans", "Δ")],
                                         names=["length", "metric"])
        rows = pd.MultiIndex.from_tuples([(r, h) for r in readers for h in HOPS], names=["Model", "Hop"])
        t = pd.DataFrame(index=rows, columns=cols, dtype=float)
        for (r, h) in rows:
            for L in lengths:
                if (r, h, L) in m.index:
                    v = m.loc[(r, h, L)]
                    t.loc[(r, h), (fmt_length(L), "Ans*")] = v["ans_answer_only"]
                    t.loc[(r, h), (fmt_length(L), "Ans")] = v["ans_ebg"]
                    t.loc[(r, h), (fmt_length(L), "Δ")] = v["delta"]
        out[name] = t.round(2)
    return out


def table12_flat(panels: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One flat frame (for CSV/Markdown) with a ``panel`` column and ``<length> <metric>`` columns."""
    parts = []
    for name, t in panels.items():
        f = t.copy()
        f.columns = [f"{a} {b}" for a, b in f.columns]
        f = f.reset_index()
        f.insert(0, "panel", name)
        parts.append(f)
    return pd.concat(parts, ignore_index=True)


def fig7_table(answers: pd.DataFrame) -> pd.DataFrame:
    """Figure 7 (App. F.5–F.6): per reader x hop x length, Ans under EBG, CoT and CoT-EBG (pp) and
    ``delta_cot`` = Ans − Ans^c, ``delta_cot_ebg`` = Ans − Ans^ce (positive favours EBG).

    ``answers`` has ``prompt`` in {nolima-ebg, nolima-cot, nolima-cot-ebg} and a ``nolima_ans_contains``
    fraction per (run, reader, hop, context_length) (:func:`lcrag.studies.nolima.live.answer_frame`).
    The CoT runs are not in the authors' public code; prompts follow the paper's App. A.
    """
    keys = ["run", "reader", "hop", "context_length"]
    w = answers.set_index([*keys, "prompt"])["nolima_ans_contains"].unstack("prompt").reset_index()
    out = pd.DataFrame({k: w[k] for k in keys})
    out["ans_ebg"] = w.get("nolima-ebg") * 100
    out["ans_cot"] = w.get("nolima-cot") * 100 if "nolima-cot" in w else np.nan
    out["ans_cot_ebg"] = w.get("nolima-cot-ebg") * 100 if "nolima-cot-ebg" in w else np.nan
    out["delta_cot"] = out["ans_ebg"] - out["ans_cot"]
    out["delta_cot_ebg"] = out["ans_ebg"] - out["ans_cot_ebg"]
    return out.sort_values(keys).reset_index(drop=True)


FIG2_PAPER = {
    "Gemini-3-Fl": (99.5, 99.8), "GPT-5": (95.1, 98.6), "Gemini-2.5-Fl": (67.4, 80.8), "o3-mini": (54.9, 88.4),
    "GPT-4o": (71.3, 20.9), "Sonnet-4.5": (64.6, 21.4),
}
"""(primary, secondary) TN citation rates (%) the paper's §5.2 text states for Figure 2."""


def fig2_paper_gap(table: pd.DataFrame) -> pd.DataFrame:
    """Per model the paper states: paper vs measured primary/secondary rate and |difference| (pp).

    ``table`` is :func:`fig2_table` output. The measured values are equal-weight means over the
    recorded CSV rows; the paper weights raw responses (not published)."""
    t = table.set_index("reader")
    rows = []
    for r, (p, s) in FIG2_PAPER.items():
        if r not in t.index:
            continue
        mp, ms = float(t.loc[r, "nolima_primary_cited"]), float(t.loc[r, "nolima_secondary_cited"])
        rows.append({"reader": r, "paper_primary": p, "measured_primary": mp, "paper_secondary": s,
                     "measured_secondary": ms, "abs_diff_primary": abs(mp - p), "abs_diff_secondary": abs(ms - s)})
    return pd.DataFrame(rows)


def table12_text(panels: dict[str, pd.DataFrame]) -> str:
    """Table 12's panels as text (name line, then the panel with N/A and two decimals)."""
    return "\n".join(f"\n{name}\n" + t.to_string(na_rep="N/A", float_format=lambda v: f"{v:.2f}")
                     for name, t in panels.items())


def fig5_tables(per: pd.DataFrame, lengths=FIG1_LENGTHS) -> dict[str, pd.DataFrame]:
    """Figure 5 per hop (:func:`fig5_table`)."""
    return {hop: fig5_table(per, hop, lengths) for hop in HOPS}


def fig7_heat(f7: pd.DataFrame, col: str) -> pd.DataFrame:
    """One Figure 7 panel: ``col`` per (reader · hop) x length label."""
    h = f7.pivot_table(index=["reader", "hop"], columns="context_length", values=col, aggfunc="first")
    h.index = [f"{r} · {hop}" for r, hop in h.index]
    h.columns = [f"{c // 1000}K" if c < 1_000_000 else "1M" for c in h.columns]
    return h


# ---------------------------------------------------------------- the figures of notebooks 07-09 (EBG §5.3, App. G.5)
# (drawn in lcrag's house style: lcrag.outputs.plots)


# ---------------------------------------------------------------- NoLiMa figures (EBG App. G.2, G.5, §5.3)
def needle_position_curves(pos: pd.DataFrame, reranker: str, title: str):
    """Table 16 companion: mean needle position inside the same top-k per ordering (``method``) and
    matched budget, log y-axis; the ``rerank`` line is labelled with the re-ranker used."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for m, g in pos.groupby("method", sort=False):
        label = m if m != "rerank" else f"rerank: {reranker}"
        ax.plot(g["budget"], g["mean_needle_pos"], marker="o", label=label)
    ax.set_ylabel("mean needle position in context")
    ax.set_xlabel("matched LC budget (same chunks, same k)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    return fig


def similarity_bars(d: pd.DataFrame, *, xlabel: str, title: str):
    """Figure 9: horizontal bars of ``original`` cosine per ``character`` (rows in the given order)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.barh(d["character"], d["original"])
    ax.set_xlim(d["original"].min() - 0.02, d["original"].max() + 0.01)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    return fig


def similarity_diff_bars(d: pd.DataFrame, *, title: str):
    """Figure 10: bars of ``diff`` (rephrased − original cosine) per ``character``; blue > 0, red <= 0."""
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    ax.bar(d["character"], d["diff"], color=["tab:blue" if v > 0 else "tab:red" for v in d["diff"]])
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel("cosine(rephrased) − cosine(original)")
    ax.set_title(title, fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    return fig


ATTRIBUTION_COLORS = {"retrieval_miss": "tab:purple", "reading_miss": "tab:red", "grounding_miss": "tab:orange",
                      "ok": "tab:green"}


def attribution_bars(table: pd.DataFrame, title: str, classes=None, *, label_width: int = 34):
    """Failure attribution: one panel per (condition, setting), one stacked bar of class shares per reader
    row, top to bottom in the table's order; ``classes`` default ``lcrag.scoring.attribution.CLASSES``.

    A row is labelled with its reader and source (wrapped at ``label_width`` characters, two lines at most); its n and N/A count
    are printed right of the bar. Rows with n = 0 (every item N/A: no share to draw) are left out and named
    under the figure. Every bar has the same thickness (panel heights follow their row counts), and one
    legend above the panels serves them all."""
    import textwrap

    if classes is None:
        from ...scoring.attribution import CLASSES as classes
    shown = table[pd.to_numeric(table["n"], errors="coerce").fillna(0) > 0]
    dropped = table.drop(shown.index)
    conds = list(dict.fromkeys(zip(shown["condition"], shown["setting"])))
    if not conds:
        raise ValueError("attribution_bars: no row with n > 0 (every reader's items are N/A) — nothing to draw")
    sizes = [int(((shown["condition"] == c) & (shown["setting"] == st)).sum()) for c, st in conds]
    wrap = textwrap.TextWrapper(width=label_width, max_lines=2, placeholder="…")
    row_in, foot_in = 0.34, 0.45 + (0.25 if len(dropped) else 0.0)  # bar rows; legend and note under the panels
    height = row_in * sum(sizes) + 0.75 * len(conds) + 0.8 + foot_in
    fig, axes = plt.subplots(len(conds), 1, figsize=(9, height),
                             gridspec_kw={"height_ratios": [n + 1.2 for n in sizes]}, squeeze=False, sharex=True)
    for ax, (cond, setting) in zip(axes[:, 0], conds):
        g = shown[(shown["condition"] == cond) & (shown["setting"] == setting)]
        y = np.arange(len(g))
        labels = [wrap.fill(str(r)) + f" ({s})" for r, s in zip(g["reader"], g["source"])]
        left = np.zeros(len(g))
        for c in classes:
            share = pd.to_numeric(g[f"{c}_share"], errors="coerce").fillna(0).to_numpy(dtype=float)
            ax.barh(y, share, left=left, height=0.75, color=ATTRIBUTION_COLORS[c], label=c.replace("_", " "))
            left += share
        for yi, (n, na) in enumerate(zip(g["n"], g["n_na"])):
            ax.text(1.01, yi, f"n={int(n)}" + (f", N/A={int(na)}" if na else ""), va="center", ha="left", fontsize=8,
                    transform=ax.get_yaxis_transform(), color="#333333")
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_ylim(len(g) - 0.5, -0.5)  # table order, top to bottom
        ax.set_xlim(0, 1)
        ax.set_title(f"{cond} · {setting}", fontsize=9, loc="left")
        ax.tick_params(axis="x", labelsize=8)
    axes[-1, 0].set_xlabel("share of scored items", fontsize=9)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, foot_in / height, 0.93, 1))
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, ncol=len(names), fontsize=8, loc="lower center", frameon=False,
               bbox_to_anchor=(0.5, (foot_in - 0.4) / height))
    if len(dropped):
        where: dict[str, list[str]] = {}
        for r, c, st in zip(dropped["reader"], dropped["condition"], dropped["setting"]):
            where.setdefault(str(r), []).append(f"{c} · {st}")
        fig.text(0.01, 0.2 / height, "Not shown (n = 0, every item N/A): " + "; ".join(f"{r} in {', '.join(w)}" for r, w in where.items()),
                 fontsize=7, va="top", ha="left", wrap=True, color="#555555")
    return fig
