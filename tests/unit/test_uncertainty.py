"""The uncertainty layer's core: seeded weights, weighted statistics against the plain ones, paired tests,
Holm, verdicts, the blocks' jackknife, the engine's use of them, and agreement with scipy's bootstrap and
permutation test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from nlp_robustness.statistics.blocks import draw_study_blocks
from nlp_robustness.statistics.engine import evaluate_study
from nlp_robustness.statistics.paired_tests import (
    adjusted_levels,
    critical_value,
    two_sided_p,
    VERDICTS,
    difference,
    holm,
    verdict,
)
from nlp_robustness.statistics.percentile_intervals import interval
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions, block_interval, pool_replicates
from nlp_robustness.statistics.pools import WHOLE_POOL, leave_out_labels
from nlp_robustness.statistics.power import se_precision, units_to_detect
from nlp_robustness.statistics.replicate_statistics import (
    _grid_bins,
    block_statistics,
    weighted_between_domains,
    weighted_statistics,
)
from nlp_robustness.statistics.resampling import (
    CHUNK,
    cluster_design,
    label_codes,
    gathers,
    map_chunks,
    resample_blocks,
    resample_weights,
    stratum_sizes,
)
from nlp_robustness.statistics.robustness_metrics import epsilon_grid, gamma_curve, summarize
from nlp_robustness.statistics.study_design import units_in_domains
from nlp_robustness.statistics.variance_components import variance_components

EPSILONS = epsilon_grid(1, 100, 1)
#: Unequal domain sizes, so that stratification is visible.
DOMAIN_SIZES = (7, 12, 5)


def unequal_domains() -> np.ndarray:
    return np.repeat(["x", "y", "z"], DOMAIN_SIZES)


def all_weights(design, n_resamples: int, seed: int, *labels: str) -> np.ndarray:
    return np.concatenate(list(resample_weights(design, n_resamples, seed, *labels)))


# --- weights -------------------------------------------------------------------------------------------------


def test_weights_do_not_depend_on_threads_or_on_how_many_chunks_are_drawn() -> None:
    design = cluster_design(unequal_domains())
    one = np.concatenate(map_chunks(lambda weights: weights, design, 3 * CHUNK + 7, 5, ["study", "none"], threads=1))
    two = np.concatenate(map_chunks(lambda weights: weights, design, 3 * CHUNK + 7, 5, ["study", "none"], threads=2))
    np.testing.assert_array_equal(one, two)
    assert one.shape == (3 * CHUNK + 7, sum(DOMAIN_SIZES))
    # fewer resamples: the same leading chunks
    np.testing.assert_array_equal(all_weights(design, 2 * CHUNK, 5, "study", "none"), one[: 2 * CHUNK])
    # the chunk split of the work: every chunk has CHUNK rows but the last
    assert [len(chunk) for chunk in resample_weights(design, 2 * CHUNK + 1, 5, "s")] == [CHUNK, CHUNK, 1]
    # other labels or another seed: other weights
    assert not np.array_equal(all_weights(design, CHUNK, 5, "study", "wmt14"), one[:CHUNK])
    assert not np.array_equal(all_weights(design, CHUNK, 6, "study", "none"), one[:CHUNK])


def test_stratified_weights_keep_every_domain_size() -> None:
    domains = unequal_domains()
    weights = all_weights(cluster_design(domains), 120, 1, "s")
    for label, size in zip("xyz", DOMAIN_SIZES):
        np.testing.assert_array_equal(weights[:, domains == label].sum(axis=1), size)
    assert np.all(weights == np.round(weights)) and weights.min() >= 0
    assert weights.max() > 1  # units really are drawn several times


def test_two_stage_weights_draw_whole_domains() -> None:
    domains = np.repeat(["x", "y", "z", "w"], 3)
    weights = all_weights(cluster_design(domains, resample_domains=True), 200, 2, "s")
    per_domain = weights.reshape(200, 4, 3).sum(axis=2)
    assert np.all(per_domain % 3 == 0)  # a domain drawn k times brings 3k unit draws
    np.testing.assert_array_equal(per_domain.sum(axis=1), 12)
    assert np.any(per_domain == 0)  # some domain is absent from some replicate


def test_crossed_clusters_bring_every_unit_of_an_id() -> None:
    # segment ids 0..5 under each of three perturbation functions
    domains = np.repeat(["f1", "f2", "f3"], 6)
    ids = np.tile(np.arange(6), 3)
    design = cluster_design(domains, ids)
    assert design.n_clusters == 6 and np.all(design.stratum_of_cluster == 0)
    weights = all_weights(design, 150, 3, "s")
    by_id = weights.reshape(150, 3, 6)
    np.testing.assert_array_equal(by_id[:, 0, :], by_id[:, 1, :])
    np.testing.assert_array_equal(by_id[:, 0, :], by_id[:, 2, :])
    np.testing.assert_array_equal(by_id[:, 0, :].sum(axis=1), 6)  # six ids drawn per replicate
    with pytest.raises(ValueError, match="clusters span domains"):
        cluster_design(domains, ids, resample_domains=True)


def test_nested_clusters_are_stratified_by_their_domain() -> None:
    domains = np.repeat(["x", "y"], [4, 6])
    clusters = np.array(["a", "a", "b", "b", "c", "c", "c", "d", "d", "d"])
    weights = all_weights(cluster_design(domains, clusters), 100, 4, "s")
    np.testing.assert_array_equal(weights[:, :4].sum(axis=1), 4)  # 2 clusters of 2 drawn in x
    np.testing.assert_array_equal(weights[:, 4:].sum(axis=1), 6)
    np.testing.assert_array_equal(weights[:, 0], weights[:, 1])


def test_bad_requests_are_refused() -> None:
    design = cluster_design(unequal_domains())
    with pytest.raises(ValueError, match="at least one resample"):
        next(resample_weights(design, 0, 1))
    with pytest.raises(ValueError, match="3 cluster ids for 24 units"):
        cluster_design(unequal_domains(), [1, 2, 3])
    with pytest.raises(ValueError, match="confidence"):
        interval([1.0, 2.0], 1.0)


# --- weighted statistics ----------------------------------------------------------------------------------------


def bleu_like(rng: np.random.Generator, size: int) -> np.ndarray:
    scores = 100 * rng.beta(2, 3, size)
    scores[rng.random(size) < 0.1] = 0.0
    return scores


@pytest.mark.parametrize("scores", [
    np.array([0.0, 10.0, 20.0, 30.0, 40.0, 50.0]),  # distances hit the grid exactly (strict |t - mu| < eps)
    np.array([5.0, 5.0, 5.0]),  # no spread: gamma 0
    bleu_like(np.random.default_rng(0), 333),
    1e6 + np.random.default_rng(1).normal(0, 3, 50),  # large scores: centring keeps the variance
])
def test_unit_weights_give_the_plain_statistics(scores: np.ndarray) -> None:
    weighted = weighted_statistics(scores, np.ones((1, scores.size)), EPSILONS)
    plain = summarize(scores)
    assert weighted["mean"][0] == pytest.approx(plain.mean, rel=1e-12)
    assert weighted["variance"][0] == pytest.approx(plain.variance, rel=1e-9, abs=1e-12)
    if plain.variance > 0:
        assert weighted["cov"][0] == pytest.approx(plain.cov, rel=1e-9)
    np.testing.assert_allclose(weighted["gamma"][0], gamma_curve(scores, EPSILONS), rtol=1e-9, atol=1e-15)
    assert weighted["gamma_area"][0] == pytest.approx(gamma_curve(scores, EPSILONS).mean(), rel=1e-9, abs=1e-15)
    # weights None: the same
    unweighted = weighted_statistics(scores, None, EPSILONS)
    np.testing.assert_allclose(unweighted["gamma"], weighted["gamma"], rtol=1e-12, atol=1e-15)


def test_integer_weights_are_the_repeated_sample() -> None:
    rng = np.random.default_rng(2)
    scores = np.round(bleu_like(rng, 80), 1)
    weights = rng.integers(0, 4, size=(6, scores.size)).astype(np.float64)
    weighted = weighted_statistics(scores, weights, EPSILONS)
    for row, counts in enumerate(weights):
        repeated = np.repeat(scores, counts.astype(int))
        plain = summarize(repeated)
        assert weighted["mean"][row] == pytest.approx(plain.mean, rel=1e-12)
        assert weighted["variance"][row] == pytest.approx(plain.variance, rel=1e-10)
        assert weighted["cov"][row] == pytest.approx(plain.cov, rel=1e-10)
        np.testing.assert_allclose(weighted["gamma"][row], gamma_curve(repeated, EPSILONS), rtol=1e-10)


def test_weighted_between_domains_is_the_decomposition_of_the_repeated_sample() -> None:
    rng = np.random.default_rng(3)
    codes = np.repeat(np.arange(3), [20, 30, 25])
    scores = bleu_like(rng, codes.size) + 8 * codes
    weights = rng.integers(0, 3, size=(5, codes.size)).astype(np.float64)
    weighted = weighted_between_domains(scores, codes, 3, weights)
    for row, counts in enumerate(weights):
        repeated = np.repeat(np.arange(codes.size), counts.astype(int))
        plain = variance_components(scores[repeated], codes[repeated])
        assert weighted["between_variance"][row] == pytest.approx(plain.between_variance, rel=1e-9)
        assert weighted["between_sd"][row] == pytest.approx(plain.between_sd, rel=1e-9)
        assert weighted["within_sd"][row] == pytest.approx(plain.within_sd, rel=1e-9)
        assert weighted["between_share"][row] == pytest.approx(plain.between_share, rel=1e-9)
        assert weighted["domain_mean_sd"][row] == pytest.approx(plain.domain_mean_sd, rel=1e-9)


# --- intervals, tests, Holm, verdicts -----------------------------------------------------------------------------


def test_interval_is_the_percentile_interval_ignoring_nan() -> None:
    values = np.arange(101, dtype=np.float64)
    assert interval(values, 0.9) == pytest.approx((5.0, 95.0))
    assert interval(np.append(values, np.nan), 0.9) == pytest.approx((5.0, 95.0))
    low, high = interval([1.0, np.nan], 0.9)
    assert math.isnan(low) and math.isnan(high)


def test_holm_against_hand_computed_values() -> None:
    # sorted 0.01, 0.03, 0.04, 0.2 -> 4 * 0.01, 3 * 0.03, max(0.09, 2 * 0.04), max(0.09, 0.2)
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.2]), [0.04, 0.09, 0.09, 0.2])
    adjusted = holm([0.01, np.nan, 0.02, 0.6])  # NaN is not counted: m = 3
    np.testing.assert_allclose(adjusted[[0, 2, 3]], [0.03, 0.04, 0.6])
    assert math.isnan(adjusted[1])
    np.testing.assert_allclose(holm([0.5, 0.7]), [1.0, 1.0])  # capped at 1
    assert holm([]).size == 0


def test_verdicts_follow_the_sign_and_the_adjusted_p() -> None:
    assert verdict(-1.0, 0.01, 0.05) == VERDICTS[0] == "more consistent"
    assert verdict(2.0, 0.01, 0.05) == "less consistent"
    assert verdict(-1.0, 0.05, 0.05) == "not distinguishable"  # p must be below the level
    assert verdict(0.0, 0.0, 0.05) == "not distinguishable"
    assert verdict(-1.0, math.nan, 0.05) == "not distinguishable"
    assert verdict(-1.0, 0.01, 0.05, lower_is_more_consistent=False) == "less consistent"


def test_units_to_detect_against_a_hand_computation() -> None:
    # z = 1.959964 + 0.841621 = 2.801585; 500 * (2.801585 * 0.5 / 1)^2 = 981.1 -> 982
    assert units_to_detect(500, 1.0, 0.5, 0.05, 0.8) == 982
    assert units_to_detect(500, -1.0, 0.5, 0.05, 0.8) == 982
    # twice the SE needs four times the units
    assert units_to_detect(100, 2.0, 2.0, 0.05, 0.8) == math.ceil(100 * 2.801585**2)
    assert units_to_detect(500, 0.0, 0.5, 0.05) == math.inf
    assert math.isnan(units_to_detect(500, 1.0, 0.0, 0.05))
    assert math.isnan(units_to_detect(500, math.nan, 0.5, 0.05))


def test_difference_by_hand() -> None:
    result = difference(3.0, 1.0, np.array([2.0, 3.0, 4.0, 5.0, 6.0]), np.array([1.0, 1.0, 1.0, 1.0, 1.0]), 0.5)
    # deltas 1..5: SE = sd(1..5) = 1.5811; against Student's t with B - 1 = 4 degrees of freedom: the interval
    # 2 +/- t_{4, 0.75} SE, p = 2 P(T_4 > 2 / SE)
    se = np.std([1, 2, 3, 4, 5], ddof=1)
    t = scipy_stats.t.ppf(0.75, 4)
    assert result.estimate == 2.0 and result.degrees_of_freedom == 4
    assert result.standard_error == pytest.approx(se)
    assert (result.low, result.high) == pytest.approx((2 - t * se, 2 + t * se))
    assert result.p_value == pytest.approx(2 * scipy_stats.t.sf(2 / se, 4))
    assert two_sided_p(2.0, se) == pytest.approx(2 * scipy_stats.norm.sf(2 / se))  # infinitely many: the normal
    with pytest.raises(ValueError, match="differ in length"):
        difference(1.0, 0.0, [1.0, 2.0], [1.0], 0.95)
    assert math.isnan(difference(1.0, 0.0, [np.nan, 1.0], [0.0, 0.0], 0.95).p_value)
    assert two_sided_p(0.0, 1.0) == 1.0 and two_sided_p(1.0, 0.0) == 0.0 and math.isnan(two_sided_p(1.0, math.nan))


def test_the_p_value_has_no_resampling_floor() -> None:
    """The count p of a bootstrap test cannot fall below 1 / (B + 1); the Wald p falls as far as the evidence
    goes, so Holm over 190 pairs (20 systems) can still separate a clear difference at B = 100."""
    rng = np.random.default_rng(5)
    replicates = rng.normal(10.0, 1.0, 100)
    result = difference(10.0, 0.0, replicates, np.zeros(100), 0.95)
    assert result.p_value < 1e-12
    assert holm([result.p_value, *[0.5] * 189])[0] < 0.05


def test_adjusted_intervals_exclude_zero_exactly_when_holm_separates() -> None:
    """The Holm-adjusted interval (level alpha p / p_Holm) excludes 0 exactly when the adjusted p is below alpha, on
    random families of every size; it is never narrower than the unadjusted one nor wider than Bonferroni's."""
    rng = np.random.default_rng(4)
    for case in range(400):
        m = int(rng.integers(1, 60))
        estimates = rng.normal(0, 3, m) * (rng.random(m) < 0.5)
        errors = rng.uniform(0.3, 2.0, m)
        p = np.array([two_sided_p(d, se) for d, se in zip(estimates, errors)])
        adjusted = holm(p)
        levels = adjusted_levels(p, adjusted, 0.05)
        assert np.all(levels <= 0.05 + 1e-15) and np.all(levels >= 0.05 / m - 1e-15)
        half = scipy_stats.norm.ppf(1 - levels / 2) * errors
        excludes = (estimates - half > 0) | (estimates + half < 0)
        np.testing.assert_array_equal(excludes, adjusted < 0.05, err_msg=str(case))
        degrees = float(rng.integers(20, 1000))  # the t reference of B replicates: the same agreement
        p_t = np.array([two_sided_p(d, se, degrees) for d, se in zip(estimates, errors)])
        adjusted_t = holm(p_t)
        half_t = np.array([critical_value(level, degrees) for level in adjusted_levels(p_t, adjusted_t, 0.05)]) * errors
        np.testing.assert_array_equal((estimates - half_t > 0) | (estimates + half_t < 0), adjusted_t < 0.05)
    zero = adjusted_levels([0.0, 0.0, 0.3], holm([0.0, 0.0, 0.3]), 0.05)
    np.testing.assert_allclose(zero[:2], [0.05 / 3, 0.05 / 2])


def test_se_precision() -> None:
    assert se_precision(1000) == pytest.approx(1.959964 / math.sqrt(1998))
    assert se_precision(100) > 0.13 and se_precision(1) == math.inf


def test_block_interval_against_a_hand_computation() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0])
    # M = 4, n = 10, b = 6, d = 4: sum of squares 5; variance 5 * (6 / (4 * 4) + 1 / (4 * 3)) = 2.291667
    half = 3.182446305284263 * math.sqrt(5 * (6 / 16 + 1 / 12))
    low, high = block_interval(values, 10, 6, 0.95)
    assert (float(low), float(high)) == pytest.approx((2.5 - half, 2.5 + half), rel=1e-12)
    low, high = block_interval(values, 10, 6, 0.95, estimate=2.0)  # centred on the given estimate
    assert (float(low), float(high)) == pytest.approx((2.0 - half, 2.0 + half), rel=1e-12)
    curves_low, _ = block_interval(np.column_stack([values, 2 * values]), 10, 6, 0.95)
    np.testing.assert_allclose(curves_low, [2.5 - half, 5.0 - 2 * half])
    assert np.isnan(block_interval(values, 6, 6, 0.95)[0])  # blocks are the whole pool
    assert np.isnan(block_interval(values[:1], 10, 6, 0.95)[0])  # one block


# --- the engine ---------------------------------------------------------------------------------------------------


DOMAINS = ["wmt14", "wmt17", "wmt19"]


def study_units(rng: np.random.Generator, per_domain: int = 60) -> pd.DataFrame:
    return pd.DataFrame({
        "domain": np.repeat(DOMAINS, per_domain),
        "unit_id": np.tile(np.arange(per_domain).astype(str), len(DOMAINS)),
        "score": bleu_like(rng, per_domain * len(DOMAINS)),
    })


def evaluate(units: pd.DataFrame, uncertainty: UncertaintyOptions | None, seed_labels=("study",), **keywords):
    leave_out = leave_out_labels(DOMAINS)
    blocks = draw_study_blocks(units, DOMAINS, leave_out, seed=1, namespace=["test"], n_blocks=10, fraction=0.6)
    return evaluate_study(units, DOMAINS, leave_out, blocks, EPSILONS, units_in_domains(), uncertainty=uncertainty,
                          seed_labels=list(seed_labels), **keywords)


OPTIONS = UncertaintyOptions(resamples=200, seed=3)


def test_rows_of_a_study_share_their_resamples() -> None:
    rng = np.random.default_rng(5)
    system_a = study_units(rng)
    system_b = system_a.assign(score=bleu_like(rng, len(system_a)))
    difference_row = system_a.assign(score=system_a["score"] - system_b["score"])
    first, again = evaluate(system_a, OPTIONS), evaluate(system_a, OPTIONS)
    second, of_difference = evaluate(system_b, OPTIONS), evaluate(difference_row, OPTIONS)
    for left_out in leave_out_labels(DOMAINS):
        for name, values in first.replicates[left_out].items():
            np.testing.assert_array_equal(values - again.replicates[left_out][name], 0)
        # the mean is linear: mean*(a) - mean*(b) = mean*(a - b) only if both saw the same resamples
        np.testing.assert_allclose(first.replicates[left_out]["mean"] - second.replicates[left_out]["mean"],
                                   of_difference.replicates[left_out]["mean"], atol=1e-9)
    itself = difference(1.0, 1.0, first.replicates[WHOLE_POOL]["variance"], again.replicates[WHOLE_POOL]["variance"], 0.95)
    assert itself.p_value == 1.0 and itself.low == itself.high == 0.0
    other_study = evaluate(system_a, OPTIONS, seed_labels=("another study",))
    assert not np.array_equal(other_study.replicates[WHOLE_POOL]["mean"], first.replicates[WHOLE_POOL]["mean"])
    threaded = evaluate(system_a, UncertaintyOptions(resamples=200, seed=3, threads=2))
    np.testing.assert_array_equal(threaded.replicates[WHOLE_POOL]["gamma_area"], first.replicates[WHOLE_POOL]["gamma_area"])


def test_without_uncertainty_the_intervals_are_nan() -> None:
    evaluation = evaluate(study_units(np.random.default_rng(6)), None)
    interval_columns = [column for column in evaluation.summary if column.endswith(("_lo", "_hi"))]
    assert len(interval_columns) == 14
    assert evaluation.summary[interval_columns].isna().all().all()
    assert evaluation.gamma[["gamma_lo", "gamma_hi"]].isna().all().all()
    assert evaluation.replicates == {}


def test_intervals_hold_the_estimates_in_a_normal_case() -> None:
    evaluation = evaluate(study_units(np.random.default_rng(7), 200), OPTIONS, variance_components=True)
    summary = evaluation.summary
    for name in ("mean", "variance", "cov", "gamma_area"):
        assert (summary[f"{name}_lo"] < summary[name]).all() and (summary[name] < summary[f"{name}_hi"]).all(), name
    pools = summary[(summary["method"] == "pool")]
    assert pools["between_sd_lo"].notna().all() and (pools["between_sd_lo"] <= pools["between_sd_hi"]).all()
    assert summary.loc[summary["method"] != "pool", "between_sd_lo"].isna().all()
    whole = evaluation.gamma[(evaluation.gamma["method"] == "pool") & (evaluation.gamma["left_out"] == WHOLE_POOL)]
    assert (whole["gamma_lo"] <= whole["gamma"] + 1e-12).all() and (whole["gamma"] <= whole["gamma_hi"] + 1e-12).all()
    # the mean's interval is about +/- 1.96 SE of a stratified mean
    row = pools[pools["left_out"] == WHOLE_POOL].iloc[0]
    scores = study_units(np.random.default_rng(7), 200)
    standard_error = math.sqrt(sum(group.var(ddof=0) * len(group) for _, group in scores.groupby("domain")["score"])) / len(scores)
    assert row["mean_hi"] - row["mean_lo"] == pytest.approx(2 * 1.96 * standard_error, rel=0.2)


# --- agreement with scipy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("statistic, scipy_statistic", [("mean", np.mean), ("variance", np.var)])
def test_percentile_interval_agrees_with_scipy_bootstrap(statistic: str, scipy_statistic) -> None:
    """One domain (no stratification), 2,000 resamples each: the endpoints agree within 15 % of the interval's
    width (their Monte-Carlo SE is about 2 % of it)."""
    scores = bleu_like(np.random.default_rng(8), 400)
    options = UncertaintyOptions(resamples=2000, seed=9)
    codes = np.zeros(scores.size, dtype=np.int64)
    replicates = pool_replicates(scores, codes, 1, cluster_design(codes), "unit", np.array([1.0]), options, ["scipy"])[0][statistic]
    ours = interval(replicates, 0.95)
    theirs = scipy_stats.bootstrap((scores,), lambda values, axis: scipy_statistic(values, axis=axis), vectorized=True,
                                   method="percentile", n_resamples=2000, confidence_level=0.95,
                                   rng=np.random.default_rng(10)).confidence_interval
    width = theirs.high - theirs.low
    assert ours[0] == pytest.approx(theirs.low, abs=0.15 * width)
    assert ours[1] == pytest.approx(theirs.high, abs=0.15 * width)


def paired_p_values(shift: float, seed: int) -> tuple[float, float]:
    """p of the paired bootstrap test of the mean difference (:func:`difference`) and of scipy's paired
    permutation test, on 40 correlated pairs whose true mean difference is ``shift``."""
    rng = np.random.default_rng(seed)
    common = rng.normal(50, 10, 40)
    first, second = common + rng.normal(0, 3, 40), common + shift + rng.normal(0, 3, 40)
    options, codes = UncertaintyOptions(resamples=4000, seed=seed), np.zeros(40, dtype=np.int64)
    replicates = [pool_replicates(values, codes, 1, cluster_design(codes), "unit", np.array([1.0]), options, ["paired"])[0]["mean"]
                  for values in (first, second)]
    bootstrap = difference(first.mean(), second.mean(), *replicates, 0.95).p_value
    permutation = scipy_stats.permutation_test((first, second), lambda x, y, axis: np.mean(x - y, axis=axis),
                                               permutation_type="samples", vectorized=True, n_resamples=9999,
                                               rng=np.random.default_rng(seed)).pvalue
    return bootstrap, permutation


def test_paired_test_agrees_with_scipy_permutation_test() -> None:
    null_bootstrap, null_permutation = paired_p_values(0.0, 11)
    assert null_bootstrap > 0.05 and null_permutation > 0.05
    clear_bootstrap, clear_permutation = paired_p_values(4.0, 12)
    assert clear_bootstrap < 0.05 and clear_permutation < 0.05
    moderate_bootstrap, moderate_permutation = paired_p_values(1.2, 13)
    assert 0.05 < moderate_permutation < 0.5  # a moderate case indeed
    assert moderate_bootstrap == pytest.approx(moderate_permutation, abs=0.05)
    _, tiny_permutation = paired_p_values(8.0, 14)
    assert paired_p_values(8.0, 14)[0] < 1e-6 < tiny_permutation  # the permutation p stops at 1 / 10,000


def test_gathered_blocks_are_the_weights_resamples() -> None:
    """The engine gathers the drawn scores stratum by stratum for units nested in domains; the statistics equal
    those of the weights (the same draws), domains in any order of the units."""
    rng = np.random.default_rng(0)
    codes = np.array([2] * 30 + [0] * 50 + [1] * 20)
    rng.shuffle(codes)
    scores = rng.random(100) * 100
    design = cluster_design(codes)
    assert gathers(design) and not gathers(cluster_design(codes, codes))
    weighted = [weighted_statistics(scores, weights, EPSILONS) | weighted_between_domains(scores, codes, 3, weights)
                for weights in resample_weights(design, 120, 3, "t")]
    gathered = [block_statistics(blocks, 40.0, EPSILONS, between=True) for blocks in resample_blocks(design, scores - 40.0, 120, 3, "t")]
    assert [block.shape for block in next(resample_blocks(design, scores, 120, 3, "t"))] == [(50, 50), (50, 20), (50, 30)]
    assert list(stratum_sizes(design)) == [50, 20, 30]
    for name in ("mean", "variance", "cov", "gamma_area", "between_sd", "between_share"):
        np.testing.assert_allclose(np.concatenate([chunk[name] for chunk in gathered]),
                                   np.concatenate([chunk[name] for chunk in weighted]), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="one-stage design"):
        next(resample_blocks(cluster_design(codes, codes // 2), scores, 10, 0))



@pytest.mark.parametrize("grid", [EPSILONS, epsilon_grid(0.1, 15, 0.1), epsilon_grid(0.005, 0.5, 0.005), epsilon_grid(0, 3, 1),
                                  np.array([0.5, 1.0, 4.0, 4.0, 9.0]), np.array([2.0]), np.array([3.0, 1.0, 2.0])])
def test_grid_bins_are_searchsorted(grid: np.ndarray) -> None:
    """The bins of the gamma histograms are searchsorted's to the integer: on the grid points and one step either
    side of them, outside the grid, NaN and infinities, on even and uneven (or unsorted) grids."""
    rng = np.random.default_rng(0)
    values = np.concatenate([grid, np.nextafter(grid, -np.inf), np.nextafter(grid, np.inf), -grid, [0.0, -0.0, 1e300, -1e300],
                             [np.nan, np.inf, -np.inf], rng.uniform(-1, 1.2 * grid.max() + 1, 5000)])
    even = values[: values.size // 14 * 14]
    for shaped in (values, even.reshape(-1, 7), even.reshape(7, -1)[:, ::2]):  # and a strided view
        bins = _grid_bins(grid, shaped)
        assert bins.dtype == np.intp
        np.testing.assert_array_equal(bins, np.searchsorted(grid, shaped, side="right"))


def test_label_codes_are_numpys_inverse() -> None:
    """String cluster ids are coded as np.unique codes them (so the same clusters get the same draws), by the
    factorising path; other labels by np.unique itself."""
    labels = np.array(["b/10", "a/2", "b/10", "a/10", "\u00e4", "", "a/2", "B/1"], dtype=object)
    np.testing.assert_array_equal(label_codes(labels), np.unique(labels, return_inverse=True)[1])
    numbers = np.array([3, 1, 3])
    np.testing.assert_array_equal(label_codes(numbers), np.unique(numbers, return_inverse=True)[1])
    assert label_codes(labels).dtype == label_codes(numbers).dtype == np.int64


def test_widened_or_reflected_intervals_of_a_non_negative_statistic_stay_at_or_above_0() -> None:
    replicates = np.r_[np.zeros(60), np.linspace(0.1, 3.0, 40)]  # a between-domain SD often truncated at 0
    assert interval(replicates, 0.95, estimate=0.5, clusters=10)[0] < 0  # widening alone leaves the range
    low, high = interval(replicates, 0.95, estimate=0.5, clusters=10, non_negative=True)
    assert low == 0.0 and high > 2.5
    assert interval(replicates, 0.95, estimate=0.2, reflect=True, non_negative=True)[0] == 0.0


def test_a_reflected_interval_always_reaches_its_estimate() -> None:
    """Replicates all above the estimate (a domain-level Var made of noise): the basic interval would end below
    the estimate; it is extended to reach it."""
    replicates = np.linspace(0.05, 0.12, 200)
    low, high = interval(replicates, 0.95, estimate=0.045, reflect=True, non_negative=True)
    assert low == 0.0 and high == pytest.approx(0.045)
