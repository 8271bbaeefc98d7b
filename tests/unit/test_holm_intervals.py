"""statistics.holm_intervals: the interval printed beside a Holm p agrees with it, on families of real paired
bootstrap differences (simulated rows on shared resamples) and on the edge cases (no spread, no difference, a
difference within floating-point noise, a missing test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlp_robustness.statistics.holm_intervals import holm_family, separated
from nlp_robustness.statistics.paired_tests import Difference, critical_value, difference, holm


def family_of_differences(pairs: int, seed: int) -> list[Difference]:
    """``pairs`` paired differences of rows measured on the same 1,000 bootstrap resamples of 60 units, with true
    differences from 0 to 0.6 SE-units apart (some tests pass alone and fail after Holm)."""
    rng = np.random.default_rng(seed)
    units = rng.normal(0, 1, (pairs + 1, 60))
    units[1:] += np.linspace(0, 0.6, pairs)[:, None]
    weights = rng.multinomial(60, np.full(60, 1 / 60), size=1000) / 60
    replicates = weights @ units.T  # (B, rows)
    estimates = units.mean(axis=1)
    return [difference(estimates[row], estimates[0], replicates[:, row], replicates[:, 0], 0.95) for row in range(1, pairs + 1)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_interval_excludes_zero_exactly_when_holm_separates(seed: int) -> None:
    tests = family_of_differences(15, seed)
    adjusted = holm_family(tests, 0.05)
    p_values = [test.p_value for test in tests]
    assert adjusted.p_holm == pytest.approx(holm(p_values))
    excludes = (adjusted.low > 0) | (adjusted.high < 0)
    assert list(excludes) == [separated(p, 0.05) for p in adjusted.p_holm]
    # the adjusted interval holds the unadjusted one (alpha_i <= alpha) and the smallest p gets Bonferroni's level
    assert all(low <= test.low + 1e-12 and high >= test.high - 1e-12 for low, high, test in zip(adjusted.low, adjusted.high, tests))
    first = int(np.argmin(p_values))
    half = critical_value(0.05 / len(tests), tests[first].degrees_of_freedom) * tests[first].standard_error
    assert adjusted.high[first] - tests[first].estimate == pytest.approx(half)


def test_the_family_has_tests_on_both_sides_of_the_holm_bar() -> None:
    """What makes the test above able to fail: unadjusted intervals that exclude 0 where Holm does not separate."""
    tests = family_of_differences(15, 0)
    adjusted = holm_family(tests, 0.05)
    unadjusted = np.array([test.low > 0 or test.high < 0 for test in tests])
    assert (unadjusted & (adjusted.p_holm >= 0.05)).any() and (adjusted.p_holm < 0.05).any()


def test_edge_cases_no_spread_no_difference_noise_and_missing() -> None:
    no_spread = Difference(0.5, 0.5, 0.5, 0.0, 0.0, 99.0)  # every replicate gives the difference
    none = Difference(0.0, 0.0, 0.0, 0.0, 1.0, 99.0)
    noise = Difference(1e-15, 1e-15 - 2e-16, 1e-15 + 2e-16, 1e-16, 1.0, 99.0)  # p = 1: "identical rows" (issue 52, item 3)
    missing = Difference(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    adjusted = holm_family([no_spread, none, noise, missing], 0.05)
    assert (adjusted.low[0], adjusted.high[0]) == (0.5, 0.5) and adjusted.p_holm[0] == 0.0
    assert adjusted.low[1] <= 0 <= adjusted.high[1] and adjusted.p_holm[1] == 1.0
    assert adjusted.low[2] <= 0 <= adjusted.high[2] and adjusted.p_holm[2] == 1.0
    assert math.isnan(adjusted.low[3]) and math.isnan(adjusted.p_holm[3]) and not separated(adjusted.p_holm[3], 0.05)
    assert holm_family([], 0.05).p_holm.size == 0
