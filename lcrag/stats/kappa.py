"""Cohen's kappa: chance-corrected agreement of two raters on the same items (Cohen 1960).

For ``n`` items labelled by raters A and B over categories ``K``: the observed agreement
``p_o`` = share of items with the same label, the agreement expected by chance
``p_e = sum_k pA(k) * pB(k)`` from each rater's marginal shares, and
``kappa = (p_o - p_e) / (1 - p_e)``. When ``p_e = 1`` (both raters give one and the same label to
every item) kappa is undefined: NaN. Pairs with a missing label (None / NaN) are left out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Kappa:
    n: int
    p_observed: float
    p_expected: float
    kappa: float


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def cohen_kappa(a: Sequence, b: Sequence) -> Kappa:
    """Cohen's kappa of two equally long label sequences (module doc)."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: {len(a)} labels against {len(b)}")
    pairs = [(x, y) for x, y in zip(a, b) if not (_missing(x) or _missing(y))]
    n = len(pairs)
    if n == 0:
        return Kappa(0, math.nan, math.nan, math.nan)
    po = sum(x == y for x, y in pairs) / n
    ca, cb = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    pe = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    k = math.nan if pe >= 1.0 else (po - pe) / (1.0 - pe)
    return Kappa(n, po, pe, k)
