"""The QASPER-MP figures of notebooks 13-14 (EBG paper App. E, Tables 9-11), drawn in lcrag's house style
(:mod:`lcrag.outputs.plots`): answerability and refusal bars, metadata-in-chunk coverage."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...outputs.plots import bar_values, figure_legend, panel_note


def header(name: str) -> str:
    """The display header of a measure's column: the measure's label (``lcrag.measures``)."""
    from ...measures import get

    return get(name).label


def qasper_answerability(table9: pd.DataFrame, *, title: str = ""):
    """Two panels of bars per condition: the score (judge or Answer-F1, ``table9["score"]``) and the
    refusal rate, answerable vs unanswerable (``qasper_mp.table_answerability``; Tables 9–10). Every bar's value
    is printed; a reader whose values in a panel are all 0 is named in a note inside that panel
    (:func:`panel_note`), since its bars draw nothing. One legend for the figure, below the panels."""
    score = table9["score"].iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
    for ax, col, sub in ((axes[0], score, f"{header(score)} by answerability"),
                         (axes[1], "qasper_refusal", "refusal rate by answerability")):
        zero = []
        for r, g in table9.groupby("reader"):
            x = np.arange(len(g))
            values = []
            for dx, split in ((-0.2, "answerable"), (0.2, "unanswerable")):
                # a split with no item (a limited run) has no column: its bars are N/A, not an error
                vals = g[f"{col}_{split}"] if f"{col}_{split}" in g else pd.Series(np.nan, index=g.index)
                bar_values(ax, ax.bar(x + dx, vals, 0.4, label=f"{r} · {split}"), fontsize=7, rotation=90)
                values.append(pd.to_numeric(vals, errors="coerce").to_numpy(dtype=float))
            v = np.concatenate(values)
            if np.isfinite(v).any() and np.all(v[np.isfinite(v)] == 0):
                zero.append(str(r))
            ax.set_xticks(x, g["condition"], rotation=45, ha="right", fontsize=7)
        ax.set(ylim=(0, 1.12), title=sub)
        if zero:  # bars of height 0 draw nothing: say so in the panel
            panel_note(ax, "\n".join(f"{r}: 0.00 on every condition, both splits" for r in zero))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    figure_legend(fig, axes)  # the same readers and splits in both panels: one legend, below the panels
    return fig


def qasper_metadata_in_chunk(coverage: pd.DataFrame, table11: pd.DataFrame, *, k: int = 10, title: str = ""):
    """Left: full-corpus all-gold@k and gold recall@k of the plain vs title-in-chunk index
    (``qasper_mp.meta_coverage``); right: the answerable-subset score per condition
    (``qasper_mp.table_metadata_in_chunk``; App. E.7, Table 11)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    x = np.arange(len(coverage))
    axes[0].bar(x - 0.2, coverage[f"all_gold@{k}"], 0.4, label=f"all gold evidence @{k}")
    axes[0].bar(x + 0.2, coverage[f"gold_recall@{k}"], 0.4, label=f"gold-paragraph recall @{k}")
    axes[0].set_xticks(x, coverage["index"])
    axes[0].set(ylim=(0, 1.02), title="full-corpus retrieval (answerable)")
    axes[0].legend(fontsize=7)
    col = next(c for c in table11.columns if c.endswith("(answerable)") and not c.startswith("qasper_refusal"))
    for r, g in table11.groupby("reader"):
        bar_values(axes[1], axes[1].bar(np.arange(len(g)), g[col], 0.6, label=r), fontsize=7)
        axes[1].set_xticks(np.arange(len(g)), g["condition"], fontsize=8)
    axes[1].set(ylim=(0, 1.02), title=f"{header(col.removesuffix(' (answerable)'))}, answerable subset")
    axes[1].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
