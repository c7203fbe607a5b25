"""Accuracy by position in a long-context haystack: needle depth and two-fact distance.

Definitions (line-based; NoLiMa measures depth the same way, as a fraction of the haystack):

* a gold unit's **relative position** is ``(line - base) / n_lines`` in ``[0, 1)``: the index
  of its first line among the ``n_lines`` rendered lines of the haystack (headers included);
* an item's **depth** is the mean relative position of its gold units (a one-needle item:
  the needle's position); its **depth decile** is ``min(9, floor(10 * depth))`` (0 = the
  first tenth of the haystack);
* the **distance** of an item with two or more gold units is the difference between the
  largest and smallest relative positions (0 = adjacent, close to 1 = opposite ends); its
  decile is binned the same way. Items with fewer than two units have no distance.

Units missing from the context (``None``) are ignored; an item without a placed unit has no
position. :func:`position_table` aggregates a metric per group × decile with ``n`` and the
item ids of every cell (the HTML report links each heatmap cell to them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

DECILES = list(range(10))


def decile(x: float) -> int | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return int(min(9, max(0, math.floor(10 * float(x)))))


def unit_positions(first_lines: Sequence[int | None], n_lines: int, base: int = 0) -> list[float]:
    if not n_lines:
        return []
    return [(int(ln) - base) / n_lines for ln in first_lines or [] if ln is not None and not (isinstance(ln, float) and math.isnan(ln))]


def item_depth(first_lines, n_lines: int, base: int = 0) -> float:
    pos = unit_positions(first_lines, n_lines, base)
    return float(np.mean(pos)) if pos else float("nan")


def item_distance(first_lines, n_lines: int, base: int = 0) -> float:
    pos = unit_positions(first_lines, n_lines, base)
    return float(max(pos) - min(pos)) if len(pos) >= 2 else float("nan")


def add_positions(df: pd.DataFrame, *, first_lines: str = "meta.unit_first_lines", n_lines: str = "meta.n_lines",
                  base: int = 0) -> pd.DataFrame:
    """``df`` with ``depth``, ``depth_decile``, ``distance`` and ``distance_decile`` columns."""
    d = df.copy()
    fl = d[first_lines] if first_lines in d else pd.Series([None] * len(d), index=d.index)
    nl = d[n_lines] if n_lines in d else pd.Series([0] * len(d), index=d.index)
    d["depth"] = [item_depth(f, int(n) if pd.notna(n) else 0, base) for f, n in zip(fl, nl)]
    d["distance"] = [item_distance(f, int(n) if pd.notna(n) else 0, base) for f, n in zip(fl, nl)]
    d["depth_decile"] = d["depth"].map(decile)
    d["distance_decile"] = d["distance"].map(decile)
    return d


def position_table(df: pd.DataFrame, by: Sequence[str], metric: str, axis: str = "depth_decile") -> pd.DataFrame:
    """Mean ``metric`` per ``by`` × ``axis`` decile: ``by + [axis, n, <metric>, items]``.

    ``df`` needs the columns of :func:`add_positions`; rows without the metric or the
    position are dropped. ``items`` is the sorted list of item ids of the cell.
    """
    d = df.dropna(subset=[metric, axis])
    cols = [*by, axis, "n", metric, "items"]
    if d.empty:
        return pd.DataFrame(columns=cols)
    g = d.groupby([*by, axis], sort=True)
    out = g.agg(n=(metric, "size"), value=(metric, "mean"), items=("item_id", lambda s: sorted(set(s)))).reset_index()
    out[axis] = out[axis].astype(int)
    return out.rename(columns={"value": metric})[cols]


def position_heatmap(table: pd.DataFrame, index: str, metric: str, axis: str = "depth_decile", *, title: str = "", ax=None):
    """Heatmap of ``table`` (rows ``index``, columns deciles 0–9 in numeric order, n in each cell)."""
    from .plots import heatmap

    w = table.pivot_table(index=index, columns=axis, values=metric, aggfunc="first").reindex(columns=DECILES)
    n = table.pivot_table(index=index, columns=axis, values="n", aggfunc="first").reindex(index=w.index, columns=DECILES)
    lab = pd.DataFrame([[("" if pd.isna(v) else f"{v:.2f}\nn={int(k)}") for v, k in zip(rv, rn)]
                        for rv, rn in zip(w.values, n.values)], index=w.index, columns=w.columns)
    what = "needle depth" if axis.startswith("depth") else "distance between gold units"
    w.columns = lab.columns = [f"{10 * c}–{10 * c + 10}%" for c in DECILES]
    w.index.name = lab.index.name = None
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 1.8 + 0.6 * len(w)))
    heatmap(w, annot=lab, ax=ax, title=title or f"{metric} by {what} (decile of the haystack)")
    ax.set_xlabel(f"{what} (share of haystack lines)")
    return ax.figure
