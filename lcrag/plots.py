"""Plots with one house style: annotated heatmaps, delta heatmaps and curves.

Every plot function takes a tidy or wide DataFrame and returns the matplotlib Figure;
saving is ``lcrag.report.save_figure``.
"""

from __future__ import annotations

import sys
import warnings

import matplotlib

if "ipykernel" not in sys.modules:  # scripts and tests draw off-screen; a notebook keeps its inline backend
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

sns.set_theme(context="paper", style="white", font_scale=1.05)


#: Panel and legend labels for the display columns of the MultiHop-RAG and QASPER-MP tables (the papers'
#: headers, EBG App. D–E). Labels only: the tables keep their column names; an unknown name is shown as is.
PANEL_LABELS = {
    "ans_star": "Ans* (answer-only)", "ans": "Ans (EBG)", "evid_recall": "Evid recall",
    "evid_strict": "Evid strict (all gold cited)", "joint": "Ans+Evid (joint)",
    "answer_f1": "Answer-F1", "evidence_f1": "Evidence-F1", "judge": "LLM judge",
}


def panel_label(name: str) -> str:
    """The paper's header for a display column (:data:`PANEL_LABELS`), else ``name``."""
    return PANEL_LABELS.get(name, name)


def _print_values(ax, bars, fontsize: float = 6, rotation: float = 0) -> None:
    """Each bar's value above it (two decimals), so a 0.00 bar reads as a zero, not as missing; ``rotation=90``
    writes it upright, for narrow bars whose neighbouring values would run together."""
    ax.bar_label(bars, fmt="%.2f", fontsize=fontsize, padding=2 if rotation else 1, rotation=rotation)


def panel_note(ax, text: str, *, fontsize: float = 8):
    """A note inside the panel, top left on a white box (e.g. "reader X scores 0 on every condition"): the
    explanation of a panel without visible marks. Its gid (:data:`lcrag.outputs_check.NOTE_GID`) tells the
    output checks the panel is explained (no warning)."""
    from .outputs_check import NOTE_GID

    return ax.text(0.02, 0.97, text, transform=ax.transAxes, ha="left", va="top", fontsize=fontsize, color="#333333",
                   gid=NOTE_GID, bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": "#bbbbbb", "alpha": 0.9})


def coincident(series: list[tuple[str, np.ndarray, np.ndarray]]) -> list[tuple[list[str], np.ndarray, np.ndarray]]:
    """Group lines that coincide: ``series`` is ``(label, x, y)`` per line; returns ``(labels, x, y)`` per
    distinct line, in first-seen order, where ``labels`` are every label whose x and y are equal
    (NaN equals NaN). Draw each group once, labelled with its labels joined."""
    groups: list[tuple[list[str], np.ndarray, np.ndarray]] = []
    for label, x, y in series:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        for labels, gx, gy in groups:
            if gx.shape == x.shape and gy.shape == y.shape and np.array_equal(gx, x, equal_nan=True) \
                    and np.array_equal(gy, y, equal_nan=True):
                labels.append(label)
                break
        else:
            groups.append(([label], x, y))
    return groups


def figure_legend(fig, axes, *, ncol: int | None = None, fontsize: float = 9, **kw):
    """One legend for the whole figure, below the panels: the distinct labels of every panel in ``axes``
    (first handle of each label). Returns the legend, or ``None`` when no panel has a labelled artist."""
    handles: dict[str, object] = {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    if not handles:
        return None
    n = ncol or min(len(handles), 4)
    return fig.legend(list(handles.values()), list(handles), loc="upper center", ncol=n, fontsize=fontsize,
                      frameon=False, bbox_to_anchor=(0.5, 0.0), **kw)


def fmt_length(n: int | float) -> str:
    """Character length as 10K / 1M labels."""
    n = int(n)
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}K"
    return str(n)


def heatmap(
    table: pd.DataFrame,
    *,
    title: str = "",
    ax=None,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap: str = "viridis",
    fmt: str = ".2f",
    annot: pd.DataFrame | None = None,
    na_label: str = "N/A",
    cbar_label: str = "",
    center: float | None = None,
    tight: bool = True,
):
    """Annotated heatmap of a wide table (rows × columns). NaN cells are shown hatched as N/A.

    ``annot`` may hold per-cell strings (e.g. "0.80\\n[0.70, 0.90]") to print instead of values.
    ``tight=False`` leaves the figure's layout to the caller: a figure of several heatmaps lays itself
    out once, after the last one (each ``tight_layout`` measures every text of the figure: ~0.3 s for
    the three annotated panels of notebook 02's Figure 8).
    """
    if ax is None:
        w = max(4.5, 0.75 * table.shape[1] + 2.5)
        h = max(2.5, 0.5 * table.shape[0] + 1.5)
        fig, ax = plt.subplots(figsize=(w, h))
    else:
        fig = ax.figure
    data = table.astype(float)
    labels = annot if annot is not None else data.map(lambda v: "" if pd.isna(v) else format(v, fmt))
    labels = labels.where(~data.isna(), na_label) if annot is None else labels
    if center is None or np.isclose(center - vmin, vmax - center):
        _mesh(data, labels, ax=ax, vmin=vmin, vmax=vmax, cmap=cmap, cbar_label=cbar_label)
    else:  # an off-centre diverging map: seaborn re-cuts the colour map around ``center``
        with warnings.catch_warnings():  # seaborn's own call of a matplotlib API due to change: not the caller's concern
            warnings.filterwarnings("ignore", message="The set_bad function", category=PendingDeprecationWarning)
            sns.heatmap(
                data, ax=ax, vmin=vmin, vmax=vmax, cmap=cmap, center=center,
                annot=labels.values, fmt="", annot_kws={"fontsize": 8}, xticklabels=True, yticklabels=True,
                linewidths=0.5, linecolor="white", cbar_kws={"label": cbar_label} if cbar_label else None,
            )
    if data.isna().any().any():
        ax.patch.set_facecolor("#eeeeee")
        ax.patch.set_hatch("//")
        ax.patch.set_edgecolor("#bbbbbb")
        for (r, c), v in np.ndenumerate(data.values):
            if np.isnan(v):
                ax.text(c + 0.5, r + 0.5, na_label, ha="center", va="center", fontsize=8, color="#555555")
    ax.set_title(title)
    ax.set_xticklabels(ax.get_xticklabels(), rotation=45, ha="right")
    ax.set_yticklabels(ax.get_yticklabels(), rotation=0)
    if tight:
        fig.tight_layout()
    return fig


def _mesh(data: pd.DataFrame, labels: pd.DataFrame, *, ax, vmin: float, vmax: float, cmap: str, cbar_label: str) -> None:
    """The cells, annotations, ticks and colour bar ``seaborn.heatmap`` draws (``linewidths=0.5``, white lines,
    every tick label, annotation text dark on light cells and white on dark ones by relative luminance > 0.408),
    drawn with matplotlib directly: seaborn draws the whole figure once more to test tick-label overlap, the
    largest cost of a report's heatmaps. With a centre half-way between ``vmin`` and ``vmax`` seaborn's
    re-centred colour map is the map itself."""
    from matplotlib.colors import to_rgb

    values = np.ma.masked_invalid(data.to_numpy(dtype=float))
    mesh = ax.pcolormesh(values, cmap=cmap, vmin=vmin, vmax=vmax, linewidths=0.5, edgecolor="white")
    nrows, ncols = values.shape
    ax.set(xlim=(0, ncols), ylim=(0, nrows))
    ax.invert_yaxis()
    ax.set_xticks(np.arange(ncols) + 0.5, [str(c) for c in data.columns])
    ax.set_yticks(np.arange(nrows) + 0.5, [str(i) for i in data.index], rotation="vertical")
    ax.set_xlabel("" if data.columns.name is None else str(data.columns.name))
    ax.set_ylabel("" if data.index.name is None else str(data.index.name))
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    mesh.update_scalarmappable()
    colors = mesh.get_facecolors()
    flat = values.ravel()
    text = labels.to_numpy().ravel()
    full = len(colors) == nrows * ncols  # masked cells: a transparent face colour, or none (matplotlib versions)
    k = 0
    for i in range(nrows * ncols):  # no annotation on a masked cell, as in seaborn
        if flat.mask is not np.ma.nomask and flat.mask[i]:
            k += full
            continue
        rgb = np.array(to_rgb(colors[k]))
        k += 1
        lin = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        lum = float(lin @ [0.2126, 0.7152, 0.0722])
        ax.text(i % ncols + 0.5, i // ncols + 0.5, str(text[i]), ha="center", va="center", fontsize=8,
                color=".15" if lum > 0.408 else "w")
    cb = ax.figure.colorbar(mesh, ax=ax, label=cbar_label or None)
    cb.outline.set_linewidth(0)


def delta_heatmap(table: pd.DataFrame, *, title: str = "", ax=None, limit: float | None = None, annot: pd.DataFrame | None = None, cbar_label: str = "Δ",
                  tight: bool = True):
    """Diverging heatmap centred on 0 (e.g. EBG − answer-only, RAG − LC)."""
    data = table.astype(float)
    lim = limit if limit is not None else max(0.05, float(np.nanmax(np.abs(data.values))) if data.size and not data.isna().all().all() else 1.0)
    return heatmap(data, title=title, ax=ax, vmin=-lim, vmax=lim, cmap="RdBu", center=0.0, fmt="+.2f", annot=annot, cbar_label=cbar_label,
                   tight=tight)


def curves(df: pd.DataFrame, x: str, y: str, hue: str, *, title: str = "", ax=None, logx: bool = False, ylabel: str | None = None, marker: str = "o"):
    """Line plot of ``y`` against ``x`` per ``hue`` group (tidy input)."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 3.8))
    else:
        fig = ax.figure
    sns.lineplot(data=df, x=x, y=y, hue=hue, marker=marker, ax=ax)
    if logx:
        ax.set_xscale("log")
    ax.set_title(title)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    sns.despine(ax=ax)
    fig.tight_layout()
    return fig


def ci_label(mean: float, low: float, high: float, fmt: str = ".2f") -> str:
    """"0.80\\n[0.70, 0.90]" cell label; "N/A" for NaN."""
    if mean is None or np.isnan(mean):
        return "N/A"
    return f"{mean:{fmt}}\n[{low:{fmt}}, {high:{fmt}}]"


def accuracy_vs_cost(table: pd.DataFrame, *, x: str = "usd_per_call", y: str = "ans", hue: str = "reader",
                     label: str | None = "condition", title: str = "", ax=None, logx: bool = True):
    """Scatter of accuracy ``y`` against cost ``x`` per ``hue`` group, each point labelled by ``label``.

    ``table`` has one row per point (e.g. reader × condition, from ``lcrag.usage.usage_table``
    merged with a summary). Points without a cost (0 or NaN: free local readers, unrecorded
    usage) are drawn at the axis' left edge with a hollow marker and listed as such.
    """
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    d = table.dropna(subset=[y]).copy()
    cost = d[x].astype(float)
    paid = cost > 0
    floor = float(cost[paid].min()) / 2 if paid.any() else 1e-6
    d["_x"] = np.where(paid, cost, floor)
    palette = dict(zip(d[hue].unique(), sns.color_palette(n_colors=max(1, d[hue].nunique()))))
    for key, g in d.groupby(hue, sort=False):
        gp = g[g[x].astype(float) > 0]
        gf = g[~(g[x].astype(float) > 0)]
        if len(gp):
            ax.scatter(gp["_x"], gp[y], color=palette[key], label=str(key), s=36)
        if len(gf):
            ax.scatter(gf["_x"], gf[y], facecolors="none", edgecolors=palette[key], s=36,
                       label=f"{key} (no recorded cost)")
        if label:
            for _, r in g.iterrows():
                ax.annotate(str(r[label]), (r["_x"], r[y]), fontsize=6, xytext=(3, 3), textcoords="offset points")
    if logx and paid.any():
        ax.set_xscale("log")
    xlabel = {"usd_per_call": "cost per call (USD)", "usd": "cost (USD)"}.get(x, x)
    ax.set(xlabel=xlabel + (" — hollow: no recorded cost, drawn at the left edge" if (~paid).any() else ""), ylabel=y, title=title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    sns.despine(ax=ax)
    fig.tight_layout()
    return fig


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
        from .scoring.attribution import CLASSES as classes
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


# ------------------------------------------------------------------ MultiHop-RAG and QASPER-MP (EBG App. D, E)
def multihop_answer_only_vs_ebg(table3: pd.DataFrame, *, title: str = ""):
    """Grouped bars per reader of Ans* (answer-only), Ans (EBG), Evid recall, Evid strict and Joint
    (the columns of ``lcrag.studies.multihop_rag.study.table_answer_only_vs_ebg``; Table 3 structure)."""
    metrics = [(m, panel_label(m)) for m in ("ans_star", "ans", "evid_recall", "evid_strict", "joint")]
    fig, ax = plt.subplots(figsize=(4.0 + 2.2 * len(table3), 3.4))
    x = np.arange(len(table3))
    w = 0.8 / len(metrics)
    for i, (m, lab) in enumerate(metrics):
        _print_values(ax, ax.bar(x + i * w - 0.4 + w / 2, table3[m], w, label=lab))
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
    """One panel per display metric: RAG (solid) and RAGpool (dashed) over K per reader, LC as a
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
        ax.set(xscale="log", xlabel="K", ylim=(0, 1.02), title=panel_label(m))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    figure_legend(fig, axes[0])  # the same readers and kinds in every panel: one legend, below the panels
    return fig


def qasper_answerability(table9: pd.DataFrame, *, title: str = ""):
    """Two panels of bars per condition: the score (judge or Answer-F1, ``table9["score"]``) and the
    refusal rate, answerable vs unanswerable (``qasper_mp.table_answerability``; Tables 9–10). Every bar's value
    is printed; a reader whose values in a panel are all 0 is named in a note inside that panel
    (:func:`panel_note`), since its bars draw nothing. One legend for the figure, below the panels."""
    score = table9["score"].iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
    for ax, col, sub in ((axes[0], score, f"{panel_label(score)} by answerability"), (axes[1], "refusal", "refusal rate by answerability")):
        zero = []
        for r, g in table9.groupby("reader"):
            x = np.arange(len(g))
            values = []
            for dx, split in ((-0.2, "answerable"), (0.2, "unanswerable")):
                # a split with no item (a limited run) has no column: its bars are N/A, not an error
                vals = g[f"{col}_{split}"] if f"{col}_{split}" in g else pd.Series(np.nan, index=g.index)
                _print_values(ax, ax.bar(x + dx, vals, 0.4, label=f"{r} · {split}"), fontsize=7, rotation=90)
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
    col = next(c for c in table11.columns if c.endswith("(answerable)") and not c.startswith("refusal"))
    for r, g in table11.groupby("reader"):
        _print_values(axes[1], axes[1].bar(np.arange(len(g)), g[col], 0.6, label=r), fontsize=7)
        axes[1].set_xticks(np.arange(len(g)), g["condition"], fontsize=8)
    axes[1].set(ylim=(0, 1.02), title=f"{panel_label(col.removesuffix(' (answerable)'))}, answerable subset")
    axes[1].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ LongEval-RAG (tables of runs x measures)
#: The range of a LongEval measure, by column name (a name ending in `` (low)`` / `` (high)`` takes its measure's):
#: a panel's axis never runs past it (:func:`metric_panels`). Measures not named here keep an axis fitted to the values.
MEASURE_RANGES: dict[str, tuple[float, float]] = {
    "ROUGE-L": (0.0, 1.0), "Precision": (0.0, 1.0), "Recall": (0.0, 1.0), "Jaccard": (0.0, 1.0),
    "Nugget Cov.": (0.0, 1.0), "TFC1": (-1.0, 1.0),
}


def measure_range(name: str, ranges: dict[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    """The range of measure ``name`` (``ranges``, then :data:`MEASURE_RANGES`; a `` (low)`` / `` (high)`` suffix
    is dropped), or ``None`` when unknown."""
    table = {**MEASURE_RANGES, **(ranges or {})}
    base = name.removesuffix(" (low)").removesuffix(" (high)")
    return table.get(name, table.get(base))


def metric_panels(table: pd.DataFrame, *, label: str, metrics: list[str], title: str = "", best: str = "max",
                  ranges: dict[str, tuple[float, float]] | None = None):
    """One horizontal-bar panel per measure column of ``table`` (rows: runs or variants named by ``label``, in the
    table's order, top to bottom), each bar's value printed and the best run of each measure (``best``: ``"max"``
    or ``"min"``) drawn dark. Every measure keeps its own axis: the LongEval tables mix scales (ROUGE-L 0–1, average
    grade 0–4, TFC1 −1–1); the axis is fitted to the values with room for the printed value, but never runs past the
    measure's range (:func:`measure_range`; ``ranges`` adds or overrides measures) — a value printed where the
    axis ends is written inside its bar. A missing value leaves its bar out and is printed ``n/a``."""
    if best not in ("max", "min"):
        raise ValueError(f"best must be 'max' or 'min', got {best!r}")
    missing = [m for m in [label, *metrics] if m not in table.columns]
    if missing:
        raise ValueError(f"metric_panels: no column {missing} in the table (columns: {list(table.columns)})")
    names = table[label].astype(str).tolist()
    y = np.arange(len(names))
    fig, axes = plt.subplots(1, len(metrics), figsize=(2.3 * len(metrics) + 1.8, 0.32 * len(names) + 1.3),
                             sharey=True, squeeze=False)
    for ax, m in zip(axes[0], metrics):
        v = pd.to_numeric(table[m], errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(v)
        top = (np.nanmax(v) if best == "max" else np.nanmin(v)) if ok.any() else np.nan
        ax.barh(y[ok], v[ok], color=np.where(v[ok] == top, "#1f3b73", "#9db4d9"), height=0.7)
        lo, hi = (min(0.0, np.nanmin(v)), max(0.0, np.nanmax(v))) if ok.any() else (0.0, 1.0)
        pad = 0.28 * ((hi - lo) or 1.0)
        left, right = lo - (pad if lo < 0 else 0), hi + pad
        bounds = measure_range(m, ranges)
        cut_left = cut_right = False  # the measure's range ends the axis before the room for a printed value
        if bounds is not None:
            cut_left, cut_right = left < bounds[0], right > bounds[1]
            left, right = max(left, bounds[0]), min(right, bounds[1])
        ax.set_xlim(left, right)
        room = 0.22 * (right - left)  # the width a printed value needs beside its bar
        for i in range(len(v)):
            x = v[i] if ok[i] else 0.0
            neg = bool(ok[i] and v[i] < 0)
            inside = bool(ok[i] and ((not neg and cut_right and v[i] > right - room)
                                     or (neg and cut_left and v[i] < left + room)))
            text = f"{v[i]:.3f}" if ok[i] else "n/a"
            if inside:  # no room between the bar's end and the axis' end: print the value inside the bar
                ax.text(x, y[i], f" {text} ", va="center", ha="left" if neg else "right", fontsize=7,
                        color="white" if v[i] == top else "#1a1a1a")  # readable on the dark and the light bar
            else:
                ax.text(x, y[i], f"{text} " if neg else f" {text}", va="center", ha="right" if neg else "left", fontsize=7)
        ax.axvline(0, color="k", lw=0.6)
        ax.set_title(m, fontsize=9)
        ax.xaxis.set_major_locator(plt.MaxNLocator(nbins=4))  # a narrow panel: few ticks, none running together
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_yticks(y, names, fontsize=8)
    axes[0][0].invert_yaxis()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
