"""Bootstrap confidence intervals (percentile method) for means and paired differences."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def bootstrap_ci(values: Sequence[float], *, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Mean and percentile bootstrap interval of ``values``.

    Returns ``(mean, low, high)``; all NaN for an empty sample, ``(m, m, m)`` for one value.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (float("nan"),) * 3
    m = float(x.mean())
    if x.size == 1:
        return m, m, m
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    means = x[idx].mean(axis=1)
    a = (1 - level) / 2
    return m, float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def paired_bootstrap_ci(a: Sequence[float], b: Sequence[float], **kw) -> tuple[float, float, float]:
    """Mean difference ``a - b`` over paired observations (same items), with its interval.

    ``a`` and ``b`` must be aligned item by item; resampling draws items, keeping pairs.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired bootstrap needs aligned samples, got {x.shape} and {y.shape}")
    return bootstrap_ci(x - y, **kw)
