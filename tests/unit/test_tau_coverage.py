"""Coverage of the segment-bootstrap tau interval and the level and power of the paired tau test, on simulated
DARR judgements with a known truth.

Three pairs whose segments carry several judgements each (Poisson around 23, 20 and 10, as the default run's
lt-en, gu-en and kk-en), correlated within a segment: a segment's concordance probability q is Beta with
mean (1 + tau) / 2 and concentration 6 (intra-segment correlation 1 / 7 = 0.14; the default run measures 0.06
to 0.19). The number of judgements is independent of q, so the population tau of a pair is exactly
2 E[q] - 1 = tau, and the tables' pooled tau the mean of the three. Two variants share each segment's q; the
second copies the first's verdict on half the judgements (correlated metrics), so under the null both have the
same tau; the planted difference lowers the second's q by 0.075 (tau by 0.15).

Sizes: the default's 30 segments per pair (2,000 replications, 1,000 resamples) and 100 per pair (1,000
replications, 400 resamples, to stay fast). Measured (these seeds): pooled coverage 0.943 at 30 segments per pair,
0.934 at 100; single pairs 0.929-0.938 at 30 (the percentile interval is a little short on 30 clusters) and
0.943-0.950 at 100. Null rejection of the paired test at 0.05: 0.066 at 30 (slightly liberal), 0.051 at 100;
power on a planted tau difference of 0.15: 1.00 (0.32 for 0.05), 300 replications.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from nlp_robustness.statistics.darr_bootstrap import tau_replicates
from nlp_robustness.statistics.paired_tests import difference
from nlp_robustness.statistics.percentile_intervals import interval

TRUE_TAU = np.array([0.3, 0.25, 0.4])
JUDGEMENTS_PER_SEGMENT = np.array([23.0, 20.0, 10.0])
CONCENTRATION = 6.0
COPIED = 0.5


def simulate(rng: np.random.Generator, segments: int, planted: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-segment sums of +1 / -1 agreements of two variants ``(S, 2)``, judgements ``(S,)`` and pair codes."""
    strata = np.repeat(np.arange(3), segments)
    mean = (1 + TRUE_TAU[strata]) / 2
    probability = rng.beta(mean * CONCENTRATION, (1 - mean) * CONCENTRATION)
    judgements = 1 + rng.poisson(JUDGEMENTS_PER_SEGMENT[strata] - 1)
    first = rng.binomial(judgements, probability)
    copied = rng.binomial(judgements, COPIED) if planted == 0 else np.zeros_like(judgements)
    copied_concordant = rng.hypergeometric(first, judgements - first, copied) if planted == 0 else np.zeros_like(judgements)
    second = copied_concordant + rng.binomial(judgements - copied, np.clip(probability - planted / 2, 0, 1))
    sums = np.stack([2 * first - judgements, 2 * second - judgements], axis=1).astype(float)
    return sums, judgements.astype(float), strata


@functools.cache
def experiment(segments: int, replications: int, resamples: int, planted: float) -> tuple[np.ndarray, float]:
    """Coverage of the 95 % interval of the first variant (three pairs, then pooled) and the share of paired
    tests of the pooled difference with p < 0.05."""
    rng = np.random.default_rng(2027 + segments)
    covered = np.zeros(4)
    rejected = 0
    for replication in range(replications):
        sums, judgements, strata = simulate(rng, segments, planted)
        replicates = tau_replicates(sums, judgements, strata, resamples, replication, "coverage")
        estimate = np.stack([sums[strata == pair].sum(axis=0) / judgements[strata == pair].sum() for pair in range(3)])
        pooled = replicates.mean(axis=1)
        for pair in range(3):
            low, high = interval(replicates[:, pair, 0], 0.95)
            covered[pair] += low <= TRUE_TAU[pair] <= high
        low, high = interval(pooled[:, 0], 0.95)
        covered[3] += low <= TRUE_TAU.mean() <= high
        tested = difference(estimate[:, 0].mean(), estimate[:, 1].mean(), pooled[:, 0], pooled[:, 1], 0.95)
        rejected += tested.p_value < 0.05
    return covered / replications, rejected / replications


def test_pooled_interval_holds_its_level_at_the_default_size() -> None:
    coverage, _ = experiment(30, 2000, 1000, 0.0)
    assert 0.93 <= coverage[3] <= 0.97
    assert all(0.92 <= value <= 0.97 for value in coverage[:3])  # a single pair on 30 segments: slightly short


def test_every_interval_holds_its_level_at_a_larger_size() -> None:
    coverage, _ = experiment(100, 1000, 400, 0.0)
    assert all(0.93 <= value <= 0.97 for value in coverage), coverage


@pytest.mark.parametrize("segments, replications, resamples", [(30, 2000, 1000), (100, 1000, 400)])
def test_paired_test_rejects_at_its_level_under_the_null(segments, replications, resamples) -> None:
    _, rejected = experiment(segments, replications, resamples, 0.0)
    assert 0.03 <= rejected <= 0.07


def test_paired_test_detects_a_planted_difference() -> None:
    _, rejected = experiment(30, 300, 400, 0.15)
    assert rejected > 0.5
    _, small = experiment(30, 300, 400, 0.05)
    assert small < rejected  # power grows with the difference
