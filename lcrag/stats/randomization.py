"""Paired approximate randomization test for graded measures (Noreen 1989; Riezler & Maxwell 2005).

Statistic: the mean paired difference ``d = mean(a - b)``. Under H0 the two conditions are
exchangeable within each item, so each item's difference keeps or flips its sign with
probability 1/2. With ``R`` seeded shuffles (default 10,000) the two-sided p-value is
``(1 + #{|d*| >= |d|}) / (1 + R)`` (the add-one estimator, never 0). The exact version
enumerates all ``2^n`` sign patterns and returns ``#{|d*| >= |d|} / 2^n``. Comparisons use a
tolerance of 1e-12 so ties produced by floating point count as ties.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TOL = 1e-12


@dataclass(frozen=True)
class Randomization:
    n: int
    delta: float
    p_value: float
    n_shuffles: int  # 0 for the exact enumeration


def _diffs(a, b) -> np.ndarray:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"randomization test needs aligned samples, got {x.shape} and {y.shape}")
    return x - y


def approximate_randomization(a: Sequence[float], b: Sequence[float], *, n_shuffles: int = 10_000,
                              seed: int = 0) -> Randomization:
    """Two-sided paired approximate randomization test of ``mean(a - b) = 0`` (see module doc)."""
    d = _diffs(a, b)
    if d.size == 0:
        return Randomization(0, float("nan"), float("nan"), n_shuffles)
    obs = abs(d.mean())
    rng = np.random.default_rng(seed)
    count = 0
    for start in range(0, n_shuffles, 2000):  # blocks keep memory flat for large n
        m = min(2000, n_shuffles - start)
        signs = rng.integers(0, 2, size=(m, d.size)) * 2 - 1
        count += int((np.abs((signs * d).mean(axis=1)) >= obs - TOL).sum())
    return Randomization(int(d.size), float(d.mean()), (count + 1) / (n_shuffles + 1), n_shuffles)


def exact_randomization(a: Sequence[float], b: Sequence[float], *, max_n: int = 20) -> Randomization:
    """Exact paired randomization p-value by enumerating all ``2^n`` sign patterns (``n <= max_n``)."""
    d = _diffs(a, b)
    if d.size > max_n:
        raise ValueError(f"exact enumeration of 2^{d.size} patterns refused (max_n={max_n})")
    if d.size == 0:
        return Randomization(0, float("nan"), float("nan"), 0)
    obs = abs(d.mean())
    hits = sum(abs(float(np.dot(s, d)) / d.size) >= obs - TOL for s in itertools.product((1, -1), repeat=d.size))
    return Randomization(int(d.size), float(d.mean()), float(hits) / 2 ** d.size, 0)
