"""Judge agreement and the prediction-powered estimate against hand-worked cases."""

import math

import pytest

from lcrag.stats.ppi import judge_agreement, ppi_mean


def test_ppi_mean_hand_worked():
    # labelled: human y = 1,0,1,1; judge f = 1,1,1,0 -> y - f = 0,-1,0,1, mean 0, sample variance 2/3
    # judged (N = 6): f = 1,1,0,1,1,0 -> mean 2/3, sample variance (4*(1/3)^2 + 2*(2/3)^2)/5 = (12/9)/5 = 4/15
    est = ppi_mean([1, 1, 0, 1, 1, 0], [1, 1, 1, 0], [1, 0, 1, 1])
    assert est.theta == pytest.approx(2 / 3)
    assert est.rectifier == pytest.approx(0.0)
    se = math.sqrt((4 / 15) / 6 + (2 / 3) / 4)  # sqrt(0.0444 + 0.1667) = 0.45947
    assert est.hi - est.theta == pytest.approx(1.959963985 * se)
    assert (est.n_labelled, est.n_judged, est.level) == (4, 6, 0.95)


def test_ppi_corrects_a_lenient_judge():
    # the judge gives 1 where humans give 0.5 on every labelled item: the estimate moves down by 0.5
    est = ppi_mean([1.0] * 10 + [0.0] * 10, [1.0, 1.0, 0.0], [0.5, 0.5, -0.5])
    assert est.judge_mean == pytest.approx(0.5)
    assert est.theta == pytest.approx(0.0)


def test_ppi_rejects_mismatched_or_failed_judgments():
    with pytest.raises(ValueError, match="same items"):
        ppi_mean([1, 0], [1, 0, 1], [1, 0])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1, float("nan")], [1, 0], [1, 0])


def test_agreement_hand_worked():
    # judge 1,1,0.5,0 vs human 1,0.5,0.5,0: exact 3/4; p_e = sum over values of p_judge(v) * p_human(v)
    # v=0: 1/4*1/4, v=0.5: 1/4*2/4, v=1: 2/4*1/4 -> (1 + 2 + 2)/16 = 5/16; kappa = (3/4 - 5/16)/(11/16) = 7/11
    a = judge_agreement([1, 1, 0.5, 0], [1, 0.5, 0.5, 0])
    assert (a.n, a.exact) == (4, 0.75)
    assert a.kappa == pytest.approx(7 / 11)
    assert a.bias == pytest.approx((2.5 - 2.0) / 4)
