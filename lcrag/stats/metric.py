"""Metrics — stage 3 of the scoring contract (filter -> scorer -> metric): one aggregate with its interval.

A :class:`Metric` is the mean of one measure's values over a group of rows with its percentile
bootstrap interval (:func:`lcrag.stats.bootstrap.bootstrap_ci`, resampling rows; ``level`` 0.95 by
default) and the counts that say what it is the mean *of*: ``n`` scored rows (outcome ``ok``) with
a value, ``n_failed`` rows whose call failed (``error``) and ``n_na`` rows not sent (over the
context window). Failed, not-sent and valueless rows (``None``/NaN: e.g. an unusable reply under
the authors' rule, or an evidence measure on an answer-only prompt) are in no denominator.
:func:`lcrag.results.aggregate` builds its tables from these.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .bootstrap import bootstrap_ci

OK, ERROR, NA = "ok", "error", "na"


@dataclass(frozen=True)
class Metric:
    """Mean of one measure over a group with its bootstrap interval and the group's counts."""

    name: str
    value: float
    lo: float
    hi: float
    n: int
    n_failed: int = 0
    n_na: int = 0
    level: float = 0.95

    def as_dict(self) -> dict[str, float | int]:
        """``{name: value, name_lo: lo, name_hi: hi}`` (the columns of an aggregate table)."""
        return {self.name: self.value, f"{self.name}_lo": self.lo, f"{self.name}_hi": self.hi}


def mean_interval(name: str, values: Sequence[float | None], outcomes: Iterable[str] | None = None, *,
                  n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> Metric:
    """The :class:`Metric` of ``values`` (one per row; ``outcomes`` aligned with them, default all
    ``ok``): the mean and interval of the ``ok`` rows' non-missing values (module doc)."""
    vals = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    outs = np.asarray(list(outcomes) if outcomes is not None else [OK] * len(vals), dtype=object)
    if len(outs) != len(vals):
        raise ValueError(f"{name}: {len(vals)} values but {len(outs)} outcomes")
    ok = vals[(outs == OK) & ~np.isnan(vals)]
    mean, lo, hi = bootstrap_ci(ok, n_boot=n_boot, level=level, seed=seed)
    return Metric(name, mean, lo, hi, int(ok.size), int((outs == ERROR).sum()), int((outs == NA).sum()), level)
