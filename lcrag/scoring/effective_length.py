"""Effective context length: the longest length at which a reader keeps its short-context score.

Definition (NoLiMa, Modarressi et al. 2025: "effective length" = the largest tested length
whose score is at least 85% of the model's base score; RULER, Hsieh et al. 2024, uses the same
idea with an absolute threshold). Here:

* ``base`` — the score at the *shortest* tested length of that reader (NoLiMa averages its three
  shortest lengths, 250–1K tokens; the EBG grids start at 10K characters, so the shortest one is used);
* ``threshold`` — ``ratio × base`` (NoLiMa: ratio 0.85), or an absolute ``threshold`` when
  given (RULER's convention);
* the effective length is the longest length ``L`` such that **every** tested length ``≤ L``
  scores ``≥ threshold`` (a prefix rule: a late recovery after a drop does not extend it);
  ``None`` when even the shortest length is below an absolute threshold.

Lengths are in the unit of the study (characters in the EBG paper's tables); NaN scores (all
rows N/A or failed) end the prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

NOLIMA_RATIO = 0.85


@dataclass(frozen=True)
class EffectiveLength:
    length: int | None  # longest length within the margin (None: none)
    base: float  # score at the shortest length
    threshold: float  # score a length must reach
    longest_tested: int


def effective_length(lengths: Sequence[int], scores: Sequence[float], *, ratio: float = NOLIMA_RATIO,
                     threshold: float | None = None) -> EffectiveLength:
    """Effective length of one reader from its (length, score) points (see module doc)."""
    if len(lengths) != len(scores) or not len(lengths):
        raise ValueError("lengths and scores must be non-empty and of equal size")
    pts = sorted(zip((int(x) for x in lengths), (float(s) for s in scores)))
    base = pts[0][1]
    thr = float(threshold) if threshold is not None else ratio * base
    eff = None
    for length, s in pts:
        if np.isnan(s) or s < thr - 1e-12:
            break
        eff = length
    return EffectiveLength(eff, base, thr, pts[-1][0])


def effective_length_table(df: pd.DataFrame, *, length: str, score: str, by: str | Sequence[str] = "reader",
                           ratio: float = NOLIMA_RATIO, threshold: float | None = None) -> pd.DataFrame:
    """One row per group of ``by``: base score, threshold, effective length and longest tested length.

    ``df`` is tidy: one row per (group, length) with the mean ``score`` (e.g. a summary table).
    """
    by = [by] if isinstance(by, str) else list(by)
    out = []
    for keys, g in df.groupby(by, sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        g = g.groupby(length, as_index=False)[score].mean()
        e = effective_length(g[length].tolist(), g[score].tolist(), ratio=ratio, threshold=threshold)
        out.append({**dict(zip(by, keys)), "base": e.base, "threshold": e.threshold,
                    "effective_length": e.length, "longest_tested": e.longest_tested})
    return pd.DataFrame(out)
