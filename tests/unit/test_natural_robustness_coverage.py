"""Coverage of the Natural Robustness intervals on simulated records with a known share.

The truth: ten responders with eight perturbation types each, the shares and perturbation rates of the
default run at 100 records (the six MT rows -- three systems, exact and chrF -- and the four classifiers;
shares of 0 and 1 set to 0.01 and 0.99, since a share never seen changed on 93 records is not known to be 1).
A record's propensity to leave a type's response unchanged is ``expit(a_t + u_r)``, ``u_r ~ N(0, 1)``
shared by the record's types (a record effect: its perturbations are correlated), with ``a_t`` set so
that its mean over records is the type's share; a record gets a perturbation of type t with the type's
rate. The true pooled share weighs each type's share by its rate. For 5, 25 and 100 records, 1,000
replications each, the nominal-0.95 interval must cover the truth in 0.93-0.97 of the cells (per type:
every type of every responder with a perturbation; pooled: every responder).
"""

import numpy as np
import pytest
from scipy.special import expit
from scipy.optimize import brentq

from nlp_robustness.statistics.natural_robustness import binomial_interval, design_effect

# Types: casing, contractions, number_words, punctuation_alteration, punctuation_removal, round_trip_cat,
# round_trip_spa, typos.
MT_RATES = [1.0, 0.18, 0.13, 0.92, 0.93, 0.88, 0.87, 0.93]
REVIEW_RATES = [1.0, 0.89, 0.35, 0.99, 0.99, 1.0, 1.0, 1.0]
PROFILES = [
    ([0.80, 0.89, 0.00, 0.82, 0.61, 0.09, 0.29, 0.00], MT_RATES),
    ([0.50, 1.00, 0.92, 1.00, 0.90, 0.47, 0.80, 0.61], MT_RATES),
    ([0.57, 0.89, 0.00, 0.79, 0.63, 0.17, 0.17, 0.00], MT_RATES),
    ([0.43, 1.00, 0.92, 0.99, 0.92, 0.68, 0.61, 0.66], MT_RATES),
    ([0.03, 0.33, 0.00, 0.24, 0.22, 0.01, 0.05, 0.06], MT_RATES),
    ([0.06, 0.44, 0.08, 0.33, 0.28, 0.03, 0.09, 0.15], MT_RATES),
    ([1.00, 0.94, 1.00, 1.00, 0.98, 0.82, 0.80, 0.91], REVIEW_RATES),
    ([1.00, 0.93, 1.00, 1.00, 1.00, 0.78, 0.75, 0.86], REVIEW_RATES),
    ([1.00, 0.99, 0.97, 1.00, 0.98, 0.78, 0.83, 0.92], REVIEW_RATES),
    ([1.00, 0.90, 1.00, 1.00, 0.95, 0.75, 0.77, 0.96], REVIEW_RATES),
]
RECORD_EFFECT_SD = 1.0
REPLICATIONS = 1000
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(60)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _intercept(share: float) -> float:
    """a with E[expit(a + u)] = share, u ~ N(0, RECORD_EFFECT_SD^2) (Gauss-Hermite quadrature)."""
    return brentq(lambda a: float(expit(a + RECORD_EFFECT_SD * _NODES) @ _WEIGHTS) - share, -30, 30)


def _simulate(shares, rates, n_records, rng):
    """Perturbation indicators and unchanged indicators, each (replications, records, types)."""
    shares = np.clip(np.asarray(shares), 0.01, 0.99)
    intercepts = np.array([_intercept(share) for share in shares])
    propensity = expit(intercepts + RECORD_EFFECT_SD * rng.standard_normal((REPLICATIONS, n_records, 1)))
    perturbed = rng.random((REPLICATIONS, n_records, len(shares))) < np.asarray(rates)
    unchanged = perturbed & (rng.random(perturbed.shape) < propensity)
    pooled_truth = float(np.dot(rates, shares) / np.sum(rates))
    return perturbed.astype(np.float64), unchanged.astype(np.float64), shares, pooled_truth


def _coverage(n_records: int, method: str = "wilson") -> tuple[float, float]:
    rng = np.random.default_rng(20240 + n_records)
    per_type, pooled = [], []
    for shares, rates in PROFILES:
        perturbed, unchanged, truths, pooled_truth = _simulate(shares, rates, n_records, rng)
        totals, kept = perturbed.sum(axis=1), unchanged.sum(axis=1)
        present = totals > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            low, high = binomial_interval(kept / totals, totals, 0.95, method)
        per_type.append(((low <= truths) & (truths <= high))[present])
        assert (high - low)[present].min() > 0  # never a zero-width interval
        counts, same = perturbed.sum(axis=2), unchanged.sum(axis=2)
        effects = np.array([design_effect(m, y) for m, y in zip(counts, same)])
        low, high = binomial_interval(same.sum(axis=1) / counts.sum(axis=1), counts.sum(axis=1) / effects, 0.95, method)
        assert (high - low).min() > 0
        pooled.append((low <= pooled_truth) & (pooled_truth <= high))
    return float(np.concatenate(per_type).mean()), float(np.concatenate(pooled).mean())


@pytest.mark.parametrize("n_records", [5, 25, 100])
def test_wilson_coverage_per_type_and_pooled(n_records):
    per_type, pooled = _coverage(n_records)
    assert 0.93 <= per_type <= 0.97, per_type
    assert 0.93 <= pooled <= 0.97, pooled


def test_zero_of_93_is_not_certainty():
    """typos, exact: 0 of 93 unchanged. Wilson: upper end z^2 / (n + z^2) = 0.0397; Clopper-Pearson
    1 - 0.025^(1/93) = 0.0389; Jeffreys (lower end 0 at x = 0) 0.0266."""
    uppers = {method: binomial_interval(0.0, 93, 0.95, method)[1] for method in ("wilson", "clopper-pearson", "jeffreys")}
    assert uppers["wilson"] == pytest.approx(1.959964**2 / (93 + 1.959964**2), rel=1e-5)
    assert uppers["clopper-pearson"] == pytest.approx(1 - 0.025 ** (1 / 93), rel=1e-6)
    assert uppers["jeffreys"] == pytest.approx(0.02658, abs=1e-4)
    for method in ("wilson", "clopper-pearson", "jeffreys"):
        low, high = binomial_interval([0.0, 1.0], [93, 5], 0.95, method)
        assert low[0] == 0 and high[1] == 1 and 0 < high[0] < 0.05 and 0.4 < low[1] < 1
