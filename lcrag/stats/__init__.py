"""Paired significance tests, clustered intervals, multiple-comparison correction and power.

One module per statistic:

* :mod:`.metric` — a measure's aggregate: mean, bootstrap interval, n / n_failed / n_na
  (stage 3 of the scoring contract);
* :mod:`.bootstrap` — percentile bootstrap interval of a mean and of a paired difference;
* :mod:`.mcnemar` — exact McNemar test on paired 0/1 outcomes (discordant counts b, c);
* :mod:`.randomization` — paired approximate randomization (sign flips) for graded measures;
* :mod:`.cluster` — cluster (block) bootstrap of a mean or a paired difference;
* :mod:`.holm` — Holm's step-down correction across the cells of one figure;
* :mod:`.mde` — minimum detectable effect at a run's n (paired binary and graded);
* :mod:`.kappa` — Cohen's kappa, chance-corrected agreement of two raters (a judge against a string rule).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package defining it (imported on first use, so importing one
#: statistic, e.g. :mod:`.metric` from the results tables, does not import scipy)
_WHERE = {"Metric": "metric", "mean_interval": "metric", "bootstrap_ci": "bootstrap", "paired_bootstrap_ci": "bootstrap",
          "McNemar": "mcnemar", "mcnemar_exact": "mcnemar", "Randomization": "randomization",
          "approximate_randomization": "randomization", "exact_randomization": "randomization",
          "cluster_bootstrap_ci": "cluster", "cluster_bootstrap_distribution": "cluster", "holm": "holm",
          "mde_paired_binary": "mde", "mde_paired_graded": "mde", "Kappa": "kappa", "cohen_kappa": "kappa"}
__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'lcrag.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
