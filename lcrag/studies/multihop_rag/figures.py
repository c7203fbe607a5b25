"""The MultiHop-RAG figures of notebooks 10-12 (EBG paper App. D, Tables 3-7), drawn in lcrag's house style
(:mod:`lcrag.outputs.plots`): answer-only vs EBG bars, retrieval hits and needle coverage, LC vs RAG curves."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...measures import label
from ...outputs.plots import bar_values, figure_legend


# ------------------------------------------------------------------ MultiHop-RAG and QASPER-MP (EBG App. D, E)
def multihop_answer_only_vs_ebg(table3: pd.DataFrame, *, title: str = ""):
    """Grouped bars per reader of Ans* (answer-only), Ans (EBG), Evid recall, Evid strict and Joint
    (the measure columns of ``lcrag.studies.multihop_rag.study.table_answer_only_vs_ebg``, each labelled with its
    measure's label; Table 3 structure)."""
    metrics = [(m, label(m)) for m in ("multihop_ans_star", "multihop_ans", "multihop_evid_recall_located",
                                       "multihop_evid_all_located", "multihop_ans_evid")]
    fig, ax = plt.subplots(figsize=(4.0 + 2.2 * len(table3), 3.4))
    x = np.arange(len(table3))
    w = 0.8 / len(metrics)
    for i, (m, lab) in enumerate(metrics):
        bar_values(ax, ax.bar(x + i * w - 0.4 + w / 2, table3[m], w, label=lab))
    ax.set_xticks(x, table3["reader"])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("accuracy")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def multihop_retrieval(curves: pd.DataFrame, coverage: pd.DataFrame, *, n_queries: int, n_pilot: int, title: str = ""):
    """Two panels: corpus-wide Hits@k any / all per retriever × chunker (``curves``:
    ``multihop_rag.hits_curves``) and pilot needle coverage (``coverage``: the
    ``multihop_needle_coverage`` view; App. D.3–D.4)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    for (rt, ch), h in curves.groupby(["retriever", "chunker"], sort=False):
        line, = axes[0].plot(h.k, h.hits_any, marker="o", label=f"{rt} · {ch} (any)")
        axes[0].plot(h.k, h.hits_all, marker="s", ls="--", color=line.get_color(), label=f"{rt} · {ch} (all)")
    for (rt, ch), c in coverage.groupby(["retriever", "chunker"], sort=False):
        axes[1].plot(c.k, c.all_gold, marker="o", label=f"{rt} · {ch}")
    axes[0].set(xscale="log", xlabel="k", ylabel="fraction of queries", ylim=(0, 1.02),
                title=f"Corpus-wide Hits@k, N={n_queries}")
    axes[1].set(xscale="log", xlabel="K", ylabel="queries with all gold facts in top-K", ylim=(0, 1.02),
                title=f"Pilot needle coverage, n={n_pilot}")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def multihop_lc_vs_rag(curves: pd.DataFrame, *, title: str = ""):
    """One panel per measure (titled with its label): RAG (solid) and RAGpool (dashed) over K per reader, LC as a
    dotted line (``curves``: ``multihop_rag.lc_vs_rag_curves`` — Condition fields ``mode``, ``k``,
    ``pool``; Tables 6–7). One legend for the figure, below the panels (:func:`figure_legend`)."""
    panels = list(dict.fromkeys(curves["metric"]))
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4.2 * max(1, len(panels)), 3.4), squeeze=False)
    for ax, m in zip(axes[0], panels):
        d = curves[curves.metric == m]
        for (reader, _prompt), g in d.groupby(["reader", "prompt"], sort=False):
            for pool, kind, ls in (("open", "RAG", "-"), ("matched", "RAGpool", "--")):
                r = g[(g["mode"] == "RAG") & (g["pool"] == pool)].sort_values("k")
                if len(r):
                    ax.plot(r["k"].astype(int), r["value"], ls=ls, marker="o", label=f"{reader} {kind}")
            lc = g[g["mode"] == "LC"]
            if len(lc):
                ax.axhline(float(lc["value"].iloc[0]), color="k", lw=1, ls=":", label=f"{reader} LC")
        ax.set(xscale="log", xlabel="K", ylim=(0, 1.02), title=label(m))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    figure_legend(fig, axes[0])  # the same readers and kinds in every panel: one legend, below the panels
    return fig
