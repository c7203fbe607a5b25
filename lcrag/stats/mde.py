"""Minimum detectable effect (MDE) of a paired comparison at the run's n.

Two-sided level ``alpha`` (0.05) and power ``1 - beta`` (0.8); ``z_a = Phi^-1(1 - alpha/2)``,
``z_b = Phi^-1(1 - beta)``.

* **Paired binary** (McNemar; Connor 1987, Biometrics 43:207): with discordant rate
  ``psi = (b + c) / n``, the sample size for a difference ``delta`` is
  ``n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2``; the MDE is the ``delta`` in
  ``(0, psi]`` solving it for the observed ``n`` and ``psi`` (``|delta| <= psi`` always, since
  ``delta = (b - c)/n``; root found numerically). If even ``delta = psi`` needs more than ``n``
  pairs the MDE is reported as ``psi`` (nothing smaller is detectable). With no discordant
  pair (``psi = 0``) it is NaN.
* **Paired graded** (normal approximation): ``MDE = (z_a + z_b) * sd(a - b) / sqrt(n)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm


def _z(alpha: float, power: float) -> tuple[float, float]:
    return float(norm.ppf(1 - alpha / 2)), float(norm.ppf(power))


def connor_n(delta: float, psi: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Pairs needed to detect ``delta`` with discordant rate ``psi`` (Connor 1987)."""
    za, zb = _z(alpha, power)
    return (za * math.sqrt(psi) + zb * math.sqrt(max(psi - delta * delta, 0.0))) ** 2 / (delta * delta)


def mde_paired_binary(n: int, discordant_rate: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest accuracy difference detectable with ``n`` pairs at this discordant rate (module doc)."""
    psi = float(discordant_rate)
    if n <= 0 or not psi > 0:
        return float("nan")
    hi = psi  # |delta| <= psi: delta = (b - c)/n, psi = (b + c)/n
    if connor_n(hi, psi, alpha=alpha, power=power) > n:
        return hi
    return float(brentq(lambda d: connor_n(d, psi, alpha=alpha, power=power) - n, 1e-9, hi))


def mde_paired_graded(diffs, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """``(z_a + z_b) * sd(diffs) / sqrt(n)`` (sample sd, ddof=1); NaN for n < 2."""
    d = np.asarray(diffs, dtype=float)
    if d.size < 2:
        return float("nan")
    za, zb = _z(alpha, power)
    return float((za + zb) * d.std(ddof=1) / math.sqrt(d.size))
