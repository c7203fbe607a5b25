"""Cluster (block) bootstrap of a mean or a paired mean difference (Davison & Hinkley 1997, §3.8).

Items that share a haystack, document or needle are not independent (trials of one needle at
several depths succeed or fail together), so the resampling unit is the **cluster**: each
replicate draws ``G`` clusters with replacement from the ``G`` observed ones and takes the
mean over **all items** of the drawn clusters (a ratio of sums, so large clusters weigh more,
exactly as in the point estimate). The interval is the percentile interval of the replicate
means (``level`` = 0.95 → 2.5 % and 97.5 % quantiles, numpy's default linear interpolation).
With one item per cluster this is the ordinary percentile bootstrap.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


def _groups(values, clusters):
    x = np.asarray(values, dtype=float)
    if len(clusters) != x.size:
        raise ValueError(f"{x.size} values but {len(clusters)} cluster labels")
    keys = list(dict.fromkeys(clusters))
    idx = {k: i for i, k in enumerate(keys)}
    g = np.array([idx[c] for c in clusters], dtype=int)
    sums = np.bincount(g, weights=x, minlength=len(keys))
    counts = np.bincount(g, minlength=len(keys)).astype(float)
    return x, sums, counts


def cluster_bootstrap_distribution(values: Sequence[float], clusters: Sequence[Hashable], *, n_boot: int = 2000,
                                   seed: int = 0) -> np.ndarray:
    """The ``n_boot`` replicate means (see module doc)."""
    x, sums, counts = _groups(values, clusters)
    rng = np.random.default_rng(seed)
    draw = rng.integers(0, sums.size, size=(n_boot, sums.size))
    return sums[draw].sum(axis=1) / counts[draw].sum(axis=1)


def cluster_bootstrap_ci(values: Sequence[float], clusters: Sequence[Hashable], *, n_boot: int = 2000,
                         level: float = 0.95, seed: int = 0, paired: Sequence[float] | None = None) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values`` (or of ``values - paired``) resampling whole clusters.

    All NaN for an empty sample; ``(m, m, m)`` for a single cluster (nothing to resample).
    """
    x = np.asarray(values, dtype=float)
    if paired is not None:
        y = np.asarray(paired, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"paired cluster bootstrap needs aligned samples, got {x.shape} and {y.shape}")
        x = x - y
    if x.size == 0:
        return (float("nan"),) * 3
    m = float(x.mean())
    if len(set(clusters)) == 1:
        return m, m, m
    reps = cluster_bootstrap_distribution(x, clusters, n_boot=n_boot, seed=seed)
    a = (1 - level) / 2
    return m, float(np.quantile(reps, a)), float(np.quantile(reps, 1 - a))
