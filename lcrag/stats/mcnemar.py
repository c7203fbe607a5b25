"""Exact McNemar test for paired binary outcomes (McNemar 1947; exact binomial form).

For ``n`` items scored 0/1 under conditions A and B, the discordant counts are
``b`` = #(A=1, B=0) and ``c`` = #(A=0, B=1). Under H0 (equal marginal accuracy) each
discordant pair is A-favoured with probability 1/2, so ``b ~ Binomial(b + c, 1/2)`` and the
two-sided exact p-value is ``min(1, 2 * P[X <= min(b, c)])``. With no discordant pair the
p-value is 1. This equals ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``.
The accuracy difference is ``(b - c) / n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom


@dataclass(frozen=True)
class McNemar:
    """Result of :func:`mcnemar_exact`: ``n`` pairs, ``b`` (A right, B wrong), ``c`` (A wrong, B right)."""

    n: int
    b: int
    c: int
    p_value: float

    @property
    def delta(self) -> float:
        """Accuracy of A minus accuracy of B, ``(b - c) / n`` (NaN for n = 0)."""
        return (self.b - self.c) / self.n if self.n else float("nan")

    @property
    def discordant_rate(self) -> float:
        return (self.b + self.c) / self.n if self.n else float("nan")


def mcnemar_counts(b: int, c: int) -> float:
    """Two-sided exact p-value from the discordant counts (see module doc)."""
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    m = b + c
    if m == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(b, c), m, 0.5)))


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> McNemar:
    """Exact McNemar test of paired 0/1 outcomes ``a`` (condition A) and ``b`` (condition B).

    Values must be 0 or 1 (floats 0.0/1.0 allowed); pairs are aligned item by item.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"McNemar needs aligned samples, got {x.shape} and {y.shape}")
    bad = ~np.isin(x, (0.0, 1.0)) | ~np.isin(y, (0.0, 1.0))
    if bad.any():
        raise ValueError(f"McNemar needs 0/1 outcomes; got {x[bad][:1].tolist() or y[bad][:1].tolist()}")
    nb = int(((x == 1) & (y == 0)).sum())
    nc = int(((x == 0) & (y == 1)).sum())
    return McNemar(n=int(x.size), b=nb, c=nc, p_value=mcnemar_counts(nb, nc))
