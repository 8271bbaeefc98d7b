"""Between- and within-domain variance by the method of moments: known truths, a hand computation, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.variance_components import document_sums, nested_components, variance_components


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


def _documents(rng: np.random.Generator, sizes: list[int], domain_effects: list[float], document_sd: float,
               unit_sd: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores, domain labels and document labels: domain i has documents of the given sizes."""
    scores, domains, documents = [], [], []
    for index, effect in enumerate(domain_effects):
        for number, size in enumerate(sizes):
            scores.append(50 + effect + rng.normal(0, document_sd) + rng.normal(0, unit_sd, size))
            domains += [f"d{index}"] * size
            documents += [f"doc{number}"] * size  # the same ids in every domain: documents are nested by domain
    return np.concatenate(scores), np.array(domains), np.array(documents)


def test_the_nested_estimator_takes_document_noise_out_of_the_between_part() -> None:
    """Unbalanced documents of 2-20 segments: averaged over 300 test sets the nested estimate of the
    between-domain variance is the planted one (fixed domains: the variance, ddof 1, of the domain effects)
    within Monte-Carlo error, and the document variance is the planted 16; the one-way estimate, which counts
    document noise as spread between domains, lies well above."""
    rng = np.random.default_rng(3)
    effects = [-3.0, 0.0, 1.0, 2.0]
    sizes = list(rng.integers(2, 21, 30))
    nested, one_way, documents = [], [], []
    for _ in range(300):
        scores, domains, labels = _documents(rng, sizes, effects, 4.0, 12.0)
        with_documents = variance_components(scores, domains, documents=labels)
        nested.append(with_documents.between_variance)
        documents.append(with_documents.document_variance)
        one_way.append(variance_components(scores, domains).between_variance)
    truth = float(np.var(effects, ddof=1))
    assert np.mean(nested) == pytest.approx(truth, abs=4 * np.std(nested) / np.sqrt(300) + 0.05)
    assert np.mean(documents) == pytest.approx(16.0, rel=0.1)
    excess = np.asarray(one_way) - np.asarray(nested)  # on the same test sets: paired
    assert np.mean(excess) > 4 * np.std(excess) / np.sqrt(300) and np.mean(excess) > 0.2  # about 16 / 30 documents


def test_documents_of_one_unit_each_give_the_one_way_estimate() -> None:
    rng = np.random.default_rng(4)
    scores = rng.normal(50, 10, 60)
    domains = np.repeat(["a", "b", "c"], 20)
    plain = variance_components(scores, domains)
    own = variance_components(scores, domains, documents=np.arange(60).astype(str))
    assert own == plain and np.isnan(plain.document_variance)


def test_the_replicate_form_is_the_point_estimate_at_unit_weights() -> None:
    """nested_components with every document counted once is the estimate; counted twice each, the same
    between part (every document duplicated is the same design, twice as many documents)."""
    rng = np.random.default_rng(5)
    scores, domains, labels = _documents(rng, [3, 8, 5, 12], [-2.0, 2.0, 0.0], 3.0, 8.0)
    codes = np.unique(domains, return_inverse=True)[1]
    keys = np.unique(np.char.add(domains, labels), return_inverse=True)[1]
    document_domain = np.zeros(keys.max() + 1, dtype=np.int64)
    document_domain[keys] = codes
    sums = document_sums(scores, keys, keys.max() + 1)
    once = nested_components(np.ones((1, keys.max() + 1)), *sums, document_domain, 3)
    estimate = variance_components(scores, domains, documents=labels)
    assert once["between_variance"][0] == pytest.approx(estimate.between_variance)
    assert once["within_variance"][0] == pytest.approx(estimate.within_variance)
