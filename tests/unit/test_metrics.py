"""Robustness metrics I-III (nlp_robustness.statistics.robustness_metrics): hand-computed values, paper readings, properties, errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nlp_robustness.statistics.robustness_metrics import (
    RobustnessSummary,
    coefficient_of_variation,
    cov_from_moments,
    epsilon_grid,
    gamma_curve,
    population_variance,
    summarize,
)

# Scores like sentence BLEU: finite values in [0, 100], at least two of them.
bleu_like = arrays(np.float64, st.integers(2, 60), elements=st.floats(0, 100, allow_nan=False, width=64))
# Any magnitude, including values whose squared deviations would underflow or overflow.
wide_range = arrays(np.float64, st.integers(2, 30), elements=st.floats(-1e100, 1e100, allow_nan=False, width=64))
positive_epsilons = arrays(np.float64, st.integers(1, 20), elements=st.floats(1e-3, 200, allow_nan=False))

# [0, 10, 20, 30]: mean 15, |t - mu| = 15, 5, 5, 15, population variance 500/4 = 125, sample variance 500/3.
SIMPLE = np.array([0.0, 10.0, 20.0, 30.0])


def test_population_variance_by_hand():
    assert population_variance(SIMPLE) == 125.0
    assert population_variance([7.0, 7.0, 7.0]) == 0.0
    assert population_variance([3.0]) == 0.0


def test_coefficient_of_variation_by_hand_is_sigma_over_mu():
    assert coefficient_of_variation(SIMPLE) == pytest.approx(math.sqrt(125.0) / 15.0)
    assert coefficient_of_variation([7.0, 7.0, 7.0]) == 0.0


def test_cov_follows_the_papers_tables_not_algorithm_3():
    # Table 1, WMT'14, nothing left out: mean 32.52, variance 723.56, COR 0.83.
    assert round(cov_from_moments(32.52, 723.56), 2) == 0.83
    assert round(723.56 / 32.52, 2) != 0.83  # Algorithm 3 as printed (no square root) would give 22.25
    # Tables 3 and 5 (bagging, design bagging) form COR from the averaged moments the same way.
    assert round(cov_from_moments(32.09, 706.49), 2) == 0.83  # Table 3, WMT'14
    assert round(cov_from_moments(8.55, 185.95), 2) == 1.59  # Table 5, IWSLT'17


def test_cov_with_zero_mean():
    assert cov_from_moments(0.0, 4.0) == math.inf
    assert math.isnan(cov_from_moments(0.0, 0.0))
    assert math.isnan(coefficient_of_variation([0.0, 0.0]))
    assert coefficient_of_variation([-1.0, 1.0]) == math.inf


@pytest.mark.parametrize("mean, variance", [(math.nan, 1.0), (1.0, math.inf), (1.0, -0.5)])
def test_cov_from_moments_rejects_bad_moments(mean, variance):
    with pytest.raises(ValueError):
        cov_from_moments(mean, variance)


def test_gamma_by_hand():
    gamma = gamma_curve(SIMPLE, [1.0, 6.0, 15.0, 16.0])
    # eps 1: no score within 1 of 15 -> (1 - 0) * 1 / (500/3); eps 6: two within -> 0.5 * 36 * 3 / 500;
    # eps 15: strict, the two at distance 15 stay outside -> 0.5 * 225 * 3 / 500; eps 16: all within -> 0.
    np.testing.assert_allclose(gamma, [3 / 500, 0.108, 0.675, 0.0], rtol=1e-12)


def test_gamma_uses_strict_inequality_at_the_boundary():
    # |t - mu| = 5 exactly for 10 and 20: they are *not* within eps = 5, but are within eps = 5 + tiny.
    at_boundary, just_above = gamma_curve(SIMPLE, [5.0, np.nextafter(5.0, 6.0)])
    assert at_boundary == pytest.approx(1.0 * 25.0 / (500.0 / 3.0))
    assert just_above == pytest.approx(0.5 * 25.0 / (500.0 / 3.0))


def test_gamma_is_two_sided():
    # Scores far *below* the mean count as outside too (the paper's one-sided "t - mu < eps" would not).
    assert gamma_curve([0.0, 100.0, 100.0, 100.0], [10.0])[0] > 0.0


def test_gamma_of_constant_scores_is_zero():
    np.testing.assert_array_equal(gamma_curve([42.0] * 5, [0.0, 1.0, 50.0]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(gamma_curve([42.0], [1.0]), [0.0])


def test_gamma_at_zero_epsilon_is_zero():
    assert gamma_curve(SIMPLE, [0.0])[0] == 0.0


@settings(max_examples=300, deadline=None)
@given(scores=bleu_like, epsilons=positive_epsilons)
def test_gamma_never_exceeds_one(scores, epsilons):
    """Chebyshev holds for the empirical distribution, and the sample variance is the larger one."""
    gamma = gamma_curve(scores, epsilons)
    assert gamma.shape == epsilons.shape
    assert np.all(gamma >= 0.0)
    assert np.all(gamma <= (scores.size - 1) / scores.size + 1e-12)


@settings(max_examples=300, deadline=None)
@given(scores=wide_range, epsilons=positive_epsilons)
def test_gamma_stays_finite_and_bounded_at_any_scale(scores, epsilons):
    gamma = gamma_curve(scores, epsilons)
    assert np.all(np.isfinite(gamma)) and np.all(gamma >= 0.0) and np.all(gamma <= 1.0)


def test_gamma_of_tiny_deviations():
    # The squared deviations (1.5e-241)^2 underflow to 0 in floating point, yet gamma is well defined:
    # sigma^2 = 2 * (1.5e-241)^2, so gamma(1e-241) = (1 - 0) * 1e-482 / 4.5e-482 and gamma(1) = 0.
    np.testing.assert_allclose(gamma_curve([3e-241, 0.0], [1e-241, 1.0]), [1 / 4.5, 0.0], rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(scores=bleu_like, epsilons=positive_epsilons)
def test_gamma_matches_a_direct_loop(scores, epsilons):
    mu = scores.mean()
    sample_variance = np.var(scores, ddof=1)
    if sample_variance == 0.0:
        return
    expected = [(1 - np.mean(np.abs(scores - mu) < eps)) * eps**2 / sample_variance for eps in epsilons]
    np.testing.assert_allclose(gamma_curve(scores, epsilons), expected, rtol=1e-9, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(scores=bleu_like)
def test_variance_and_summary_agree_with_numpy(scores):
    summary = summarize(scores)
    assert summary.mean == pytest.approx(np.mean(scores))
    assert summary.variance == pytest.approx(np.var(scores), rel=1e-9, abs=1e-9)
    assert summary.variance == population_variance(scores)
    if summary.mean > 0:
        assert summary.cov == pytest.approx(math.sqrt(summary.variance) / summary.mean)


def test_summarize_returns_frozen_summary():
    summary = summarize(SIMPLE)
    assert summary == RobustnessSummary(mean=15.0, variance=125.0, cov=math.sqrt(125.0) / 15.0)
    with pytest.raises(AttributeError):
        summary.mean = 0.0  # type: ignore[misc]


def test_epsilon_grid():
    default = epsilon_grid()
    np.testing.assert_array_equal(default, np.arange(1.0, 101.0))
    np.testing.assert_array_equal(epsilon_grid(1, 10, 4), [1.0, 5.0, 9.0])
    tenths = epsilon_grid(0.0, 1.0, 0.1)  # 1.0 / 0.1 = 9.999999999999998 in floating point: stop still kept
    assert tenths.size == 11 and tenths[-1] == pytest.approx(1.0)
    np.testing.assert_array_equal(epsilon_grid(3, 3, 1), [3.0])


@pytest.mark.parametrize("start, stop, step", [(1, 100, 0), (1, 100, -1), (5, 1, 1), (-1, 5, 1), (1, math.inf, 1)])
def test_epsilon_grid_rejects_bad_bounds(start, stop, step):
    with pytest.raises(ValueError):
        epsilon_grid(start, stop, step)


@pytest.mark.parametrize(
    "function",
    [population_variance, coefficient_of_variation, summarize, lambda scores: gamma_curve(scores, [1.0])],
)
@pytest.mark.parametrize("scores", [[], [1.0, math.nan], [math.inf, 1.0], [[1.0, 2.0], [3.0, 4.0]]])
def test_invalid_scores_raise(function, scores):
    with pytest.raises(ValueError):
        function(scores)


@pytest.mark.parametrize("epsilons", [[], [-1.0], [math.nan], [[1.0]]])
def test_invalid_epsilons_raise(epsilons):
    with pytest.raises(ValueError):
        gamma_curve(SIMPLE, epsilons)
