"""Paired significance tests, clustered intervals, multiple-comparison correction and power.

One module per statistic:

* :mod:`.mcnemar` — exact McNemar test on paired 0/1 outcomes (discordant counts b, c);
* :mod:`.randomization` — paired approximate randomization (sign flips) for graded measures;
* :mod:`.cluster` — cluster (block) bootstrap of a mean or a paired difference;
* :mod:`.holm` — Holm's step-down correction across the cells of one figure;
* :mod:`.mde` — minimum detectable effect at a run's n (paired binary and graded).
"""

from .cluster import cluster_bootstrap_ci, cluster_bootstrap_distribution
from .holm import holm
from .mcnemar import McNemar, mcnemar_exact
from .mde import mde_paired_binary, mde_paired_graded
from .randomization import Randomization, approximate_randomization, exact_randomization

__all__ = ["McNemar", "mcnemar_exact", "Randomization", "approximate_randomization", "exact_randomization",
           "cluster_bootstrap_ci", "cluster_bootstrap_distribution", "holm", "mde_paired_binary", "mde_paired_graded"]
