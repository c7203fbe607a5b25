"""Holm's step-down correction of a family of p-values (Holm 1979).

Sort the ``m`` p-values ascending, ``p_(1) <= ... <= p_(m)``; the adjusted value of the i-th
(1-based) is ``max_{j <= i} min(1, (m - j + 1) * p_(j))``, returned in the input order. NaN
entries (cells without a test) are left NaN and do not count in ``m``. The family is the set
of cells of one figure or table; matches ``statsmodels ... multipletests(method="holm")``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def holm(p_values: Sequence[float]) -> np.ndarray:
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out
