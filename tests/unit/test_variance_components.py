"""Between- and within-domain variance by the method of moments: known truths, a hand computation, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.variance_components import variance_components


def test_simulated_components_recover_the_truth_on_average() -> None:
    rng = np.random.default_rng(26)
    sigma_between, sigma_within, n_domains, n_units = 2.0, 5.0, 8, 50
    labels = np.repeat(np.arange(n_domains), n_units)
    between, within = [], []
    for _ in range(2000):
        scores = 30.0 + np.repeat(rng.normal(0.0, sigma_between, n_domains), n_units) + rng.normal(0.0, sigma_within, labels.size)
        components = variance_components(scores, labels)
        between.append(components.between_variance)
        within.append(components.within_variance)
    assert np.mean(between) == pytest.approx(sigma_between**2, rel=0.04)
    assert np.mean(within) == pytest.approx(sigma_within**2, rel=0.01)


def test_unbalanced_simulation_is_unbiased_too() -> None:
    rng = np.random.default_rng(6)
    sizes = np.array([5, 20, 60, 15, 100, 40])
    labels = np.repeat(np.arange(sizes.size), sizes)
    estimates = np.array([
        variance_components(np.repeat(rng.normal(0.0, 3.0, sizes.size), sizes) + rng.normal(0.0, 4.0, labels.size), labels).between_variance
        for _ in range(3000)
    ])
    assert estimates.mean() == pytest.approx(9.0, rel=0.05)


def test_small_unbalanced_example_by_hand() -> None:
    # domain a: 1, 2, 3 (mean 2); b: 7, 9 (mean 8); grand mean 22 / 5 = 4.4
    components = variance_components([1.0, 2.0, 3.0, 7.0, 9.0], ["a", "a", "a", "b", "b"])
    msb = (3 * (2 - 4.4) ** 2 + 2 * (8 - 4.4) ** 2) / 1  # 43.2
    msw = ((1 + 0 + 1) + (1 + 1)) / 3  # 4/3
    n0 = (5 - (9 + 4) / 5) / 1  # 2.4
    assert components.within_variance == pytest.approx(msw, rel=1e-15)
    assert components.between_variance == pytest.approx((msb - msw) / n0, rel=1e-15)
    assert components.between_variance == pytest.approx(17.444444444444443, rel=1e-15)
    assert components.between_sd == pytest.approx(math.sqrt(17.444444444444443))
    assert components.within_sd == pytest.approx(math.sqrt(4 / 3))
    assert components.between_share == pytest.approx(17.444444444444443 / (17.444444444444443 + 4 / 3))
    assert components.domain_mean_sd == pytest.approx(np.std([2.0, 8.0], ddof=1))
    assert (components.domains, components.units) == (2, 5)


def test_balanced_case_is_the_textbook_formula() -> None:
    rng = np.random.default_rng(3)
    table = rng.normal(50.0, 5.0, size=(4, 6)) + rng.normal(0.0, 20.0, size=(4, 1))  # 4 domains x 6 units
    components = variance_components(table.reshape(-1), np.repeat(["w", "x", "y", "z"], 6))
    msw = table.var(axis=1, ddof=1).mean()
    msb = 6 * table.mean(axis=1).var(ddof=1)
    assert components.within_variance == pytest.approx(msw, rel=1e-12)
    assert msb > msw and components.between_variance == pytest.approx((msb - msw) / 6, rel=1e-12)
    assert components.domain_mean_sd == pytest.approx(table.mean(axis=1).std(ddof=1), rel=1e-12)


def test_domains_closer_than_their_units_predict_are_truncated_at_zero() -> None:
    # equal domain means, large spread within: MSB = 0 < MSW
    components = variance_components([0.0, 10.0, 10.0, 0.0], ["a", "a", "b", "b"])
    assert components.between_variance == 0.0 and components.between_share == 0.0
    assert components.within_variance == pytest.approx(100 / 3 * 3 / 2)
    assert math.isnan(variance_components([5.0, 5.0, 5.0, 5.0], ["a", "a", "b", "b"]).between_share)


def test_single_unit_domains_add_to_the_between_part_only() -> None:
    components = variance_components([0.0, 2.0, 10.0], ["a", "a", "b"])
    assert components.within_variance == pytest.approx(2.0)


def test_errors_name_the_pool() -> None:
    with pytest.raises(InputError, match="bleu, w/o news: 1 domain"):
        variance_components([1.0, 2.0], ["a", "a"], where="bleu, w/o news")
    with pytest.raises(InputError, match="human: every domain has a single unit"):
        variance_components([1.0, 2.0], ["a", "b"], where="human")
    with pytest.raises(InputError, match="x: 3 scores but 2 domain labels"):
        variance_components([1.0, 2.0, 3.0], ["a", "b"], where="x")
    with pytest.raises(InputError, match="not a finite number"):
        variance_components([1.0, math.nan, 3.0], ["a", "b", "b"])
