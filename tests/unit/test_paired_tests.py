"""The paired tests' edge cases of issue 52: rows that are the same numbers rounded in another order (p = 1, never
separated, never loosening Holm), the few-cluster treatment (the SE widened and t with the clusters' degrees of
freedom, from the cluster counts the engine records), and one rule for the cluster count of every interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from nlp_robustness.statistics.blocks import draw_study_blocks
from nlp_robustness.statistics.comparisons import compare_rows
from nlp_robustness.statistics.engine import CLUSTER_COLUMNS, evaluate_study
from nlp_robustness.statistics.paired_tests import IDENTICAL_ULPS, difference, numerically_identical, two_sided_p
from nlp_robustness.statistics.percentile_intervals import ClusterCounts, cluster_counts, expansion
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions
from nlp_robustness.statistics.pools import WHOLE_POOL, leave_out_labels
from nlp_robustness.statistics.study_design import documents_in_domains

EPSILON = np.finfo(np.float64).eps


def one_ulp_apart(seed: int, resamples: int = 1000) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Two rows that are the same means, the second rounded up by one unit in the last place in its estimate and every
    replicate, as beta2 and beta1 of a system whose faithful and plain scores coincide come out of one matrix product
    (issue 52: differences of ~1e-15): a mean of 40 and replicates around it (ulp 7.1e-15, 3.6e-15 below 32), so the
    replicate differences have an SE of about 1e-16."""
    replicates = np.random.default_rng(seed).normal(40.0, 3.0, resamples)
    return 40.0, float(np.nextafter(40.0, np.inf)), replicates, np.nextafter(replicates, np.inf)


# ---- identical rows -------------------------------------------------------------------------------------------------


def test_rows_rounded_in_another_order_give_p_1_and_a_zero_interval() -> None:
    """Issue 52's β2 − β1 = 0.00 [0.00, 0.00] with p 1e-71..1e-12: replicates one ulp apart (SE ~1e-16: p ~1e-113
    before), and one ulp apart within one binade (SE exactly 0: the former "no spread, p = 0")."""
    estimate_a, estimate_b, first, second = one_ulp_apart(2)
    assert estimate_a != estimate_b and 0 < np.std(first - second, ddof=1) < 1e-15  # the rounding is there
    values = np.random.default_rng(1).uniform(33.0, 63.0, 1000)  # one binade: every ulp the same
    one_binade = difference(40.0, np.nextafter(40.0, 0.0), values, np.nextafter(values, 0.0), 0.95)
    for result in (difference(estimate_a, estimate_b, first, second, 0.95), one_binade):
        assert result.p_value == 1.0
        assert (result.estimate, result.low, result.high, result.standard_error) == (0.0, 0.0, 0.0, 0.0)
    assert numerically_identical(estimate_a, estimate_b, first, second)


def test_a_real_difference_however_small_is_not_identical() -> None:
    """Beyond :data:`IDENTICAL_ULPS` ulps of the scale a difference is tested: a shift of 1e-9 BLEU, constant over the
    replicates, is real (zero spread: p = 0, the documented meaning), and one with spread gets its Wald p."""
    values = np.random.default_rng(3).normal(40.0, 3.0, 1000)
    tolerance = IDENTICAL_ULPS * EPSILON * np.abs(values).max()
    assert tolerance < 1e-9
    shifted = difference(40.0 + 1e-9, 40.0, values + 1e-9, values, 0.95)
    assert shifted.p_value < 1e-12 and shifted.estimate == pytest.approx(1e-9)
    assert not numerically_identical(40.0 + 2 * tolerance, 40.0, values, values)  # the estimates alone differ
    noisy = values + np.random.default_rng(4).normal(0, 1e-6, values.size)
    assert not numerically_identical(40.0, 40.0, noisy, values)
    assert difference(40.0, 40.0, noisy, values, 0.95).p_value == 1.0  # d = 0 exactly: p = 1 as before
    # zero spread, nonzero estimate: every replicate gives the same difference, which is no sampling noise
    assert two_sided_p(0.5, 0.0) == 0.0 and two_sided_p(0.0, 0.0) == 1.0


def test_identical_rows_are_not_separated_and_do_not_loosen_holm() -> None:
    """In :func:`compare_rows` the identical pair is not distinguishable with p = 1, so the real pairs' Holm p uses
    the family's full multiplier (before, the identical pair's p ~ 0 took Holm's first step and left the real pair
    the second: 2 p instead of 3 p)."""
    estimate_a, estimate_b, first, second = one_ulp_apart(5)
    other = first + np.random.default_rng(6).normal(0.0, 1.0, first.size)  # a third row 2.5 SE above: p ~ 0.01
    replicates = {"beta2": first, "beta1": second, "other": other + 2.5}
    estimates = {"beta2": estimate_a, "beta1": estimate_b, "other": estimate_a + 2.5}
    summaries = {row: pd.DataFrame([{"left_out": "none", "method": "pool", "units": 2000, "domains": 1, "mean": value,
                                     "smallest_stratum_clusters": 2000, "cluster_degrees_of_freedom": 1999}])
                 for row, value in estimates.items()}
    table = compare_rows(summaries, {row: ({"none": {"mean": values}}, "same") for row, values in replicates.items()},
                         "none", 0.95, 0.8, 0).set_index(["row_a", "row_b"])
    identical = table.loc[("beta2", "beta1")]
    assert identical["p"] == 1.0 and identical["p_holm"] == 1.0 and identical["verdict"] == "not distinguishable"
    assert (identical["difference"], identical["lo"], identical["hi"]) == (0.0, 0.0, 0.0)
    real = table.drop(index=("beta2", "beta1"))
    assert 0.001 < real["p"].min() < 0.02
    smallest = real["p"].idxmin()
    assert table.at[smallest, "p_holm"] == pytest.approx(3 * table.at[smallest, "p"])


# ---- few clusters ----------------------------------------------------------------------------------------------------


def test_the_few_cluster_treatment_by_hand() -> None:
    """With the design's cluster counts the SE is widened by sqrt(n / (n - 1)) and t has min(B - 1, clusters - strata)
    degrees of freedom; the unadjusted interval and the p use both."""
    deltas = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    result = difference(3.0, 0.0, deltas, np.zeros(deltas.size), 0.9, ClusterCounts(5, 3))
    se = np.std(deltas, ddof=1) * math.sqrt(5 / 4)
    t = scipy_stats.t.ppf(0.95, 3)  # 3 < B - 1 = 7
    assert result.degrees_of_freedom == 3 and result.standard_error == pytest.approx(se)
    assert (result.low, result.high) == pytest.approx((3 - t * se, 3 + t * se))
    assert result.p_value == pytest.approx(2 * scipy_stats.t.sf(3 / se, 3))
    # many clusters: B - 1 bounds the degrees of freedom
    assert difference(3.0, 0.0, deltas, np.zeros(deltas.size), 0.9, ClusterCounts(500, 1996)).degrees_of_freedom == 7
    assert math.isnan(difference(3.0, 0.0, deltas, np.zeros(deltas.size), 0.9, ClusterCounts(1, 0)).p_value)


def test_one_rule_for_the_cluster_count_of_every_interval() -> None:
    """:func:`cluster_counts`: the smallest stratum widens (the corpus pool of 181 documents, the fewest 23 in a test set: for 23,
    factor 1.082, not for their sum, 1.010) and the clusters minus the strata set the tests' degrees of freedom."""
    counts = cluster_counts([68, 23, 46, 44])
    assert counts == ClusterCounts(23, 181 - 4)
    assert expansion(counts.smallest_stratum, 0.95) == pytest.approx(1.082, abs=5e-4)
    assert expansion(181, 0.95) == pytest.approx(1.010, abs=5e-4)
    assert cluster_counts([10, 10, 10], resample_strata=True) == ClusterCounts(10, 2)
    with pytest.raises(ValueError, match="stratum"):
        cluster_counts([3, 0])


def test_the_engine_records_the_cluster_counts_of_every_pool() -> None:
    """The summary's pool rows carry the design's cluster counts (documents nested in domains: the documents), the
    bagging rows NaN; what :func:`compare_rows` reads."""
    rng = np.random.default_rng(7)
    documents = np.array([f"d{index:02d}" for index in range(30)])
    sizes = np.array([8] * 10 + [4] * 20)  # domain a: 10 documents of 8 segments; b: 20 of 4
    units = pd.DataFrame({"domain": np.repeat(["a"] * 10 + ["b"] * 20, sizes), "document": np.repeat(documents, sizes)})
    units["unit_id"] = [str(index) for index in range(len(units))]
    units["score"] = rng.normal(50, 10, len(units))
    pools = leave_out_labels(["a", "b"])
    blocks = draw_study_blocks(units[["domain", "unit_id"]], ["a", "b"], pools, seed=0, namespace=[], n_blocks=3, fraction=0.6)
    summary = evaluate_study(units, ["a", "b"], pools, blocks, np.arange(1.0, 11.0), documents_in_domains(),
                             variance_components=True, uncertainty=UncertaintyOptions(resamples=50), seed_labels=["s"]).summary
    pool_rows = summary[summary["method"] == "pool"].set_index("left_out")
    assert pool_rows.loc[WHOLE_POOL, list(CLUSTER_COLUMNS)].tolist() == [10, 28]
    assert pool_rows.loc["a", list(CLUSTER_COLUMNS)].tolist() == [20, 19]  # without a: the 20 documents of b
    assert summary[summary["method"] != "pool"][list(CLUSTER_COLUMNS)].isna().all().all()


def test_compare_rows_refuses_a_summary_without_cluster_counts() -> None:
    from nlp_robustness.errors import InputError

    summaries = {row: pd.DataFrame([{"left_out": "none", "method": "pool", "units": 10, "domains": 1, "mean": 1.0}])
                 for row in ("x", "y")}
    replicates = {row: ({"none": {"mean": np.arange(10.0)}}, "same") for row in ("x", "y")}
    with pytest.raises(InputError, match="summary of row 'x'.*cluster counts"):
        compare_rows(summaries, replicates, "none", 0.95, 0.8, 0)
