"""A judge checked against human labels: agreement, and a prediction-powered (bias-corrected) mean.

When a user supplies human scores for a small subset of the items an LLM judge scored (EBG App. E.5's
0/0.5/1 judge; LongEval's 1–5 correctness/completeness judge), two things are reported:

* **Agreement** on the labelled subset (:func:`judge_agreement`): exact agreement rate, Cohen's kappa over
  the score values that occur (unweighted: every disagreement counts the same), and the judge's bias
  ``mean(judge) - mean(human)`` on that subset, with ``n``.
* **The prediction-powered estimate** of the mean human score over all items (:func:`ppi_mean`;
  Angelopoulos et al., Science 2023, "Prediction-powered inference"; the estimator ARES uses):
  ``theta = mean_N(f) + mean_n(y - f)``, the judge's mean over the ``N`` judged items corrected by its mean
  error on the ``n`` labelled ones. Its normal-approximation interval at level ``1 - alpha`` is
  ``theta ± z * sqrt(var_N(f)/N + var_n(y - f)/n)`` (sample variances, ``ddof=1``).

Convention: the ``N`` judged items are taken as the unlabelled sample (the labelled items may be among them,
as when a user labels a random subset of a run); labelled items must be a random sample of the items for the
correction to be unbiased. Scores are on the judge's own scale; nothing is rescaled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm


@dataclass(frozen=True)
class PPIEstimate:
    """``theta`` with its interval ``[lo, hi]`` at ``level``; ``judge_mean`` is the uncorrected mean over N."""

    theta: float
    lo: float
    hi: float
    level: float
    n_labelled: int
    n_judged: int
    judge_mean: float
    rectifier: float  # mean_n(y - f): the correction added to the judge's mean


def ppi_mean(judge_all: Sequence[float], judge_labelled: Sequence[float], human_labelled: Sequence[float], *,
             alpha: float = 0.05) -> PPIEstimate:
    """Prediction-powered estimate of the mean human score (module doc); ``judge_labelled[i]`` and
    ``human_labelled[i]`` score the same item. Needs at least 2 labelled and 2 judged items."""
    f_all = np.asarray(judge_all, dtype=np.float64)
    f_l = np.asarray(judge_labelled, dtype=np.float64)
    y_l = np.asarray(human_labelled, dtype=np.float64)
    if f_l.shape != y_l.shape:
        raise ValueError(f"judge_labelled ({f_l.size}) and human_labelled ({y_l.size}) must score the same items")
    if f_l.size < 2 or f_all.size < 2:
        raise ValueError("the prediction-powered interval needs at least 2 labelled and 2 judged items")
    if not (np.isfinite(f_all).all() and np.isfinite(f_l).all() and np.isfinite(y_l).all()):
        raise ValueError("scores must be finite: drop failed judgments (None) before estimating")
    rect = y_l - f_l
    theta = float(f_all.mean() + rect.mean())
    se = float(np.sqrt(f_all.var(ddof=1) / f_all.size + rect.var(ddof=1) / rect.size))
    z = float(norm.ppf(1 - alpha / 2))
    return PPIEstimate(theta, theta - z * se, theta + z * se, 1 - alpha, int(f_l.size), int(f_all.size),
                       float(f_all.mean()), float(rect.mean()))


@dataclass(frozen=True)
class Agreement:
    n: int
    exact: float  # share of items where judge == human
    kappa: float  # Cohen's kappa (unweighted) over the values that occur; NaN when chance agreement is 1
    bias: float  # mean(judge) - mean(human)


def judge_agreement(judge: Sequence[float], human: Sequence[float]) -> Agreement:
    """Agreement of a judge with human labels on the same items (module doc)."""
    f = np.asarray(judge, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if f.shape != y.shape or f.size == 0:
        raise ValueError("judge and human must score the same, non-empty list of items")
    po = float((f == y).mean())
    values = np.union1d(f, y)
    pe = float(sum((f == v).mean() * (y == v).mean() for v in values))
    kappa = (po - pe) / (1 - pe) if pe < 1 else float("nan")
    return Agreement(int(f.size), po, float(kappa), float(f.mean() - y.mean()))
