"""Each statistic of lcrag.stats against a reference on the same data, and seeded reproducibility."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from lcrag.stats.bootstrap import bootstrap_ci
from lcrag.stats import (approximate_randomization, cluster_bootstrap_ci, cluster_bootstrap_distribution, exact_randomization,
                         holm, mcnemar_exact, mde_paired_binary, mde_paired_graded)
from lcrag.stats.mcnemar import mcnemar_counts
from lcrag.stats.mde import connor_n


@pytest.mark.parametrize("seed", range(12))
def test_mcnemar_matches_statsmodels_exact(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    a = (rng.random(n) < rng.uniform(0.2, 0.9)).astype(float)
    b = (rng.random(n) < rng.uniform(0.2, 0.9)).astype(float)
    ours = mcnemar_exact(a, b)
    table = [[int(((a == 1) & (b == 1)).sum()), ours.b], [ours.c, int(((a == 0) & (b == 0)).sum())]]
    ref = sm_mcnemar(np.array(table), exact=True)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-15)
    assert ours.b == table[0][1] and ours.c == table[1][0] and ours.n == n
    assert ours.delta == pytest.approx(a.mean() - b.mean())


def test_mcnemar_edge_cases():
    assert mcnemar_counts(0, 0) == 1.0
    assert mcnemar_counts(0, 6) == pytest.approx(2 * 0.5 ** 6)  # hand: 2 * P[X <= 0], X ~ Bin(6, 1/2)
    assert mcnemar_counts(5, 5) == 1.0
    with pytest.raises(ValueError, match="0/1"):
        mcnemar_exact([0.5, 1], [1, 0])


def test_holm_matches_statsmodels_and_keeps_nan(monkeypatch):
    # statsmodels' Holm branch ends with gc.collect() (to free a temporary array), a full collection of this
    # process's heap on every call: seconds each in a test worker holding pandas, torch and many fixtures, over
    # 100 s for this test under load. The collection does not touch the values compared; it is skipped here.
    import gc

    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.random(int(rng.integers(1, 15))) ** 2
        ref = multipletests(p, method="holm")[1]
        assert np.allclose(holm(p), ref, rtol=1e-12, atol=0)
    out = holm([0.01, np.nan, 0.04, 0.03])
    assert np.isnan(out[1])
    assert np.allclose(out[[0, 2, 3]], multipletests([0.01, 0.04, 0.03], method="holm")[1])


def _brute_force_p(a, b):
    """Independent reference: enumerate all sign patterns of the paired differences."""
    d = [x - y for x, y in zip(a, b)]
    obs = abs(sum(d) / len(d))
    pats = list(itertools.product((1, -1), repeat=len(d)))
    return sum(abs(sum(s * x for s, x in zip(p, d)) / len(d)) >= obs - 1e-12 for p in pats) / len(pats)


@pytest.mark.parametrize("case", [
    ([1, 1, 1, 0, 1, 1, 0, 1], [0, 1, 0, 0, 0, 1, 0, 0]),
    ([0.9, 0.4, 0.75, 0.6, 0.8, 0.3, 0.95, 0.5, 0.7], [0.5, 0.45, 0.7, 0.2, 0.6, 0.35, 0.9, 0.5, 0.2]),
    ([0.2, 0.4, 0.1, 0.6, 0.3, 0.25], [0.3, 0.1, 0.15, 0.55, 0.35, 0.2]),
])
def test_randomization_against_brute_force(case):
    a, b = map(np.array, case)
    ref = _brute_force_p(a, b)
    assert exact_randomization(a, b).p_value == pytest.approx(ref, abs=1e-12)
    approx = approximate_randomization(a, b, n_shuffles=10_000, seed=7)
    se = math.sqrt(ref * (1 - ref) / 10_000) + 1e-4
    assert abs(approx.p_value - ref) < 4 * se
    assert approx.delta == pytest.approx(float(np.mean(a - b)))


def test_cluster_bootstrap_hand_worked():
    # Cluster A = items (1, 1), cluster B = items (0, 0, 0, 0). Point estimate 2/6.
    # Resamples of 2 clusters: AA -> 4/4 = 1, AB or BA -> 2/6 = 1/3, BB -> 0/8 = 0,
    # with probabilities 1/4, 1/2, 1/4; so the 95% percentile interval is [0, 1].
    vals, cl = [1, 1, 0, 0, 0, 0], ["A", "A", "B", "B", "B", "B"]
    reps = cluster_bootstrap_distribution(vals, cl, n_boot=40_000, seed=1)
    support, counts = np.unique(np.round(reps, 12), return_counts=True)
    assert support.tolist() == [0.0, round(1 / 3, 12), 1.0]
    assert np.allclose(counts / counts.sum(), [0.25, 0.5, 0.25], atol=0.01)
    m, lo, hi = cluster_bootstrap_ci(vals, cl, n_boot=40_000, seed=1)
    assert (m, lo, hi) == (pytest.approx(1 / 3), 0.0, 1.0)
    # the item bootstrap ignores the clustering and is much narrower
    _, ilo, ihi = bootstrap_ci(vals, n_boot=40_000, seed=1)
    assert ihi - ilo < 1.0


def test_cluster_bootstrap_singletons_equal_item_bootstrap():
    rng = np.random.default_rng(0)
    x = rng.random(25)
    assert cluster_bootstrap_ci(x, list(range(25)), seed=5) == bootstrap_ci(x, seed=5)


def test_cluster_bootstrap_paired_and_degenerate():
    a, b = [1, 0, 1, 1], [0, 0, 1, 0]
    assert cluster_bootstrap_ci(a, ["x", "x", "y", "y"], paired=b)[0] == pytest.approx(0.5)
    assert cluster_bootstrap_ci([0.2, 0.4], ["one", "one"]) == (pytest.approx(0.3),) * 3
    assert all(math.isnan(v) for v in cluster_bootstrap_ci([], []))


def test_mde_connor_inverts_and_graded_formula():
    for n, psi in ((40, 0.3), (200, 0.1), (1000, 0.5)):
        d = mde_paired_binary(n, psi)
        assert 0 < d <= psi
        assert connor_n(d, psi) == pytest.approx(n, rel=1e-6)
    assert mde_paired_binary(400, 0.2) < mde_paired_binary(100, 0.2)
    assert math.isnan(mde_paired_binary(50, 0.0))
    assert mde_paired_binary(4, 0.25) == 0.25  # even delta = psi needs more than 4 pairs
    diffs = np.array([1, 0, 0, -1, 1, 1, 0, 0, 1, 0], float)
    za, zb = 1.959963984540054, 0.8416212335729143
    assert mde_paired_graded(diffs) == pytest.approx((za + zb) * diffs.std(ddof=1) / math.sqrt(10))


def test_seeded_runs_are_identical():
    rng = np.random.default_rng(11)
    a, b = rng.random(30), rng.random(30)
    cl = [i // 3 for i in range(30)]
    assert approximate_randomization(a, b, seed=3) == approximate_randomization(a, b, seed=3)
    assert cluster_bootstrap_ci(a, cl, paired=b, seed=3) == cluster_bootstrap_ci(a, cl, paired=b, seed=3)
