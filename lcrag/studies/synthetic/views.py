"""Tables and figures of the synthetic two-hop study (notebook ``01_synthetic_ebg``; EBG §4.1, Figure 4).

Every function takes the study's summary (:func:`lcrag.studies.synthetic.trials.summary`) or its
difficulty rows (:func:`lcrag.studies.synthetic.difficulty.difficulty`) and returns a table or a
matplotlib figure; saving is the caller's (``lcrag.outputs.save.save_figure`` / ``save_table``).
Conditions are selected by their :class:`~lcrag.types.Condition` records
(:data:`lcrag.studies.synthetic.trials.CONDITIONS`), never by parsing labels.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import pandas as pd

from ...outputs.plots import delta_heatmap, fmt_length, heatmap
from .trials import CONDITIONS


def wide(summary: pd.DataFrame, col: str, cond: str = "LC") -> pd.DataFrame:
    """``col`` of condition ``cond`` as reader (rows) x length (columns, formatted ``10K`` …)."""
    s = summary[summary["condition"] == cond]
    t = s.pivot(index="reader_label", columns="length", values=col)
    t.columns = [fmt_length(c) for c in t.columns]
    t.index.name = None
    return t


def _height(summary: pd.DataFrame, per: float = 0.6) -> float:
    return 1.2 + per * summary["reader_label"].nunique()


def trials_ran(summary: pd.DataFrame, cond: str = "LC") -> tuple[int, int] | None:
    """Fewest and most trials that ran per reader x length of condition ``cond`` (usable replies of either prompt,
    the summary's ``n`` / ``n_answer_only``); None when the summary has no counts."""
    s = summary[summary["condition"] == cond]
    cols = [c for c in ("n", "n_answer_only") if c in s]
    if s.empty or not cols:
        return None
    per = s[cols].fillna(0).max(axis=1).astype(int)
    return int(per.min()), int(per.max())


def trials_text(summary: pd.DataFrame, trials: int | None = None) -> str:
    """``"20 trials/length"`` from the counts that ran (a range when they differ), ``"5 of 20 trials/length"`` when
    fewer ran than the study declares (``trials``)."""
    got = trials_ran(summary)
    if got is None:
        return f"{trials} trials/length" if trials else "trials/length unknown"
    lo, hi = got
    ran = str(hi) if lo == hi else f"{lo}–{hi}"
    return f"{ran} of {trials} trials/length" if trials and hi < trials else f"{ran} trials/length"


def heatmaps_figure(summary: pd.DataFrame, *, needles: str = "lcrag", trials: int | None = None, seed: int = 0):
    """Ans* (answer-only), Ans (EBG) and their difference per reader x length, LC condition. The title's trial
    count is what ran (:func:`trials_text`), ``trials`` the number the study declares."""
    fig, axes = plt.subplots(1, 3, figsize=(15, _height(summary)))
    heatmap(wide(summary, "synthetic_ans_star"), title="Ans* (answer-only), LC", ax=axes[0])
    heatmap(wide(summary, "synthetic_ans"), title="Ans (EBG), LC", ax=axes[1])
    delta_heatmap(wide(summary, "synthetic_ans") - wide(summary, "synthetic_ans_star"), title="Δ Ans − Ans* (EBG − answer-only)", ax=axes[2],
                  limit=1.0)
    axes[1].set_yticklabels([])
    axes[2].set_yticklabels([])
    fig.suptitle(f"Synthetic two-hop (lcrag genre-matched pool, needles={needles}, {trials_text(summary, trials)}, seed {seed})",
                 y=1.02)
    fig.tight_layout()
    return fig


def joint_figure(summary: pd.DataFrame):
    """Ans+Evid (strict) and Evid (strict) of the EBG prompt per reader x length, LC condition."""
    fig, axes = plt.subplots(1, 2, figsize=(14, _height(summary)))
    heatmap(wide(summary, "ans_evid"), title="Ans+Evid (exact set) — EBG prompt, LC", ax=axes[0])
    heatmap(wide(summary, "synthetic_evid_exact_set"), title="Evid (exact set) — EBG prompt, LC", ax=axes[1])
    axes[1].set_yticklabels([])
    fig.tight_layout()
    return fig


def reader_rows(summary: pd.DataFrame, reader: str) -> pd.DataFrame:
    """The summary rows of the reader named ``reader`` (its name, e.g. ``"extractive"``, or its label).

    Views select the reader they show by name: which reader comes first in a summary depends on
    the profile that ran it (a reader capped to the LC condition would leave every RAG cell empty).
    Raises ``ValueError`` naming the readers present when ``reader`` ran nothing here."""
    names = summary["reader"] if "reader" in summary else summary["reader_label"]
    rows = summary[(names == reader) | (summary["reader_label"] == reader)]
    if rows.empty:
        present = sorted(set(names))
        raise ValueError(f"no summary rows of reader {reader!r}; readers present: {', '.join(map(str, present))}")
    return rows


def conditions_hop2_figure(summary: pd.DataFrame, conditions: Sequence[str] | None = None, *, reader: str):
    """Share of haystacks whose second-hop fact is in the context shown, per condition x length, of
    the reader named ``reader`` (:func:`reader_rows`; ``conditions`` gives the row order). Only the
    conditions that reader ran are rows."""
    s = reader_rows(summary, reader)
    present = set(s["condition"])
    conds = [c for c in (conditions or CONDITIONS) if c in present]
    t = s.pivot(index="condition", columns="length", values="synthetic_ctx_hop2").reindex(conds)
    t.columns = [fmt_length(c) for c in t.columns]
    t.index.name = None
    fig, ax = plt.subplots(1, 1, figsize=(9, 1.2 + 0.5 * len(conds)))
    heatmap(t, title=f"second-hop fact in the context shown (synthetic_ctx_hop2), {', '.join(dict.fromkeys(s['reader_label']))}", ax=ax)
    return fig


def rag_pivot(summary: pd.DataFrame, value: str, *, reader: str) -> pd.DataFrame:
    """``value`` of the RAG conditions (``Condition.mode == "RAG"``) of the reader named ``reader``
    (:func:`reader_rows`), condition x length. Raises ``ValueError`` when that reader ran no RAG
    condition (an empty table is never returned)."""
    s = reader_rows(summary, reader)
    rag = s[s["condition"].map(lambda c: c in CONDITIONS and CONDITIONS[c].mode == "RAG")]
    if rag.empty:
        raise ValueError(f"reader {reader!r} ran no RAG condition (it ran {', '.join(sorted(set(s['condition'])))})")
    t = rag.pivot(index="condition", columns="length", values=value)
    t.columns = [fmt_length(c) for c in t.columns]
    t.columns.name = None
    return t


def rank_figure(dif: pd.DataFrame, retriever: str = "bm25"):
    """Median question-alone rank of the first- and second-hop facts vs haystack length (log-log)."""
    fig, ax = plt.subplots(1, 1, figsize=(7, 4))
    bm = dif[dif["retriever"] == retriever]
    for col, lab in (("rank_hop1", "first-hop fact"), ("rank_hop2", "second-hop fact")):
        g = bm.groupby("length")[col].median()
        ax.plot(g.index, g.values, marker="o", label=lab)
    ax.axhline(10, color="grey", ls="--", lw=1, label="top 10")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("haystack length (characters)")
    ax.set_ylabel(f"median {'BM25' if retriever == 'bm25' else retriever} rank, question alone")
    ax.legend()
    ax.set_title("Second hop sinks with length; first hop stays on top")
    return fig


__all__ = ["wide", "reader_rows", "heatmaps_figure", "joint_figure", "conditions_hop2_figure", "rag_pivot", "rank_figure"]


class MarkdownText(str):
    """A string a notebook renders as Markdown (``_repr_markdown_``)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def what_it_shows(summary: pd.DataFrame, cond: str = "LC") -> MarkdownText:
    """The closing text of Figure 4, computed from what ran: per reader (its label, which says what kind
    of reader it is) the lengths it read in condition ``cond``, the EBG replies scored (``n``), the
    contexts over its window (N/A), and the mean Ans\\* (answer-only), Ans (EBG) and Δ = Ans − Ans\\*
    over the lengths where both are scored — beside the paper's finding (Δ ≈ 0, high accuracy to 1M
    characters for three frontier models). Nothing is said about a reader that did not run."""
    s = summary[summary["condition"] == cond]
    out = ["**What it shows.** The paper (Figure 4) finds Ans\\* and Ans nearly identical for its three frontier "
           "models (the citation requirement \"neither substantially helps nor hurts\"), with accuracies high up to "
           f"1M characters. In this run ({cond} condition):", ""]
    if s.empty:
        return MarkdownText("\n".join(out + [f"* no reader ran the {cond} condition."]))
    for reader, g in s.groupby("reader_label", sort=True):
        both = g.dropna(subset=["synthetic_ans_star", "synthetic_ans"])
        lengths = sorted(int(x) for x in g["length"].unique())
        span = fmt_length(lengths[0]) + (f"–{fmt_length(lengths[-1])}" if len(lengths) > 1 else "")
        na = int(g["n_na"].fillna(0).sum()) if "n_na" in g else 0
        line = f"* **{reader}**: {len(lengths)} length(s) ({span}), {int(g['n'].fillna(0).sum())} EBG replies scored"
        line += f", {na} context(s) over its window (N/A)" if na else ""
        if len(both):
            a_star, a = float(both["synthetic_ans_star"].mean()), float(both["synthetic_ans"].mean())
            line += f"; mean Ans\\* {a_star:.2f}, Ans {a:.2f}, Δ (EBG − answer-only) {a - a_star:+.2f}"
        else:
            line += "; no length with both Ans\\* and Ans scored"
        out.append(line + ".")
    out += ["", "Compare each Δ with the paper's ≈ 0; a reader labelled as a baseline or a smoke test gives floors, "
                "not a capable model's accuracy."]
    return MarkdownText("\n".join(out))
