"""Plots with one house style: annotated heatmaps, delta heatmaps and curves.

Every plot function takes a tidy or wide DataFrame and returns the matplotlib Figure;
saving is ``lcrag.outputs.save.save_figure``. A benchmark's own figures are in its study folder's ``figures.py``
(``lcrag/studies/<name>/figures.py``), drawn with the helpers here.
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


def bar_values(ax, bars, fontsize: float = 6, rotation: float = 0) -> None:
    """Each bar's value above it (two decimals), so a 0.00 bar reads as a zero, not as missing; ``rotation=90``
    writes it upright, for narrow bars whose neighbouring values would run together."""
    ax.bar_label(bars, fmt="%.2f", fontsize=fontsize, padding=2 if rotation else 1, rotation=rotation)


def panel_note(ax, text: str, *, fontsize: float = 8):
    """A note inside the panel, top left on a white box (e.g. "reader X scores 0 on every condition"): the
    explanation of a panel without visible marks. Its gid (:data:`lcrag.outputs.checks.NOTE_GID`) tells the
    output checks the panel is explained (no warning)."""
    from .checks import NOTE_GID

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

    ``table`` has one row per point (e.g. reader × condition, from ``lcrag.outputs.usage.usage_table``
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
