"""Coverage of the uncertainty layer on simulated data with a known truth (nominal 95 %).

Every unit score is drawn from a known population: four domains (fixed, of equal size, as the engine's
stratified bootstrap assumes) whose scores are 0 with probability 0.1 (sentence BLEU's empty matches) and
otherwise 100 * Beta(a, b) with different (a, b) per domain, so the domain means lie apart (a planted
between-domain SD of about 9 on a within-domain SD of about 24). The truth of every statistic is the value
of the population functional, computed analytically from the Beta distributions (:func:`population_truth`):
the mixture's mean, population variance, sigma / mu, gamma-area on the 1..100 grid, and the between-domain
variance of fixed domains, the variance (ddof 1) of the domain means, with its share of
between + mean within-domain variance.

Each check runs 1,000 simulated test sets (the binomial SE of a coverage of 0.95 is then 0.007, so the
band [0.93, 0.97] is about +/- 3 SE). The bootstrap draws 400 resamples per test set (not the 1,000 of
the config), which keeps the module within a few minutes on one core; 400 percentile replicates estimate
the 2.5 % and 97.5 % quantiles well enough that coverage moves by well under the band (Monte-Carlo error
of the endpoints widens or narrows the interval at random, which averages out over test sets).
Where only the variance is needed, the epsilon grid is a single point (gamma is not looked at).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from nlp_robustness.statistics.blocks import draw_study_blocks
from nlp_robustness.statistics.engine import evaluate_study
from nlp_robustness.statistics.paired_tests import difference
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions, pool_replicates, replicate_intervals
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.statistics.resampling import cluster_design
from nlp_robustness.statistics.robustness_metrics import epsilon_grid, gamma_curve, summarize
from nlp_robustness.statistics.study_design import units_in_domains
from nlp_robustness.statistics.variance_components import variance_components

#: Beta parameters of the four domains' non-zero scores (means 40, 50, 33, 57 before the zeros).
DOMAIN_BETAS = ((2.0, 3.0), (3.0, 3.0), (2.0, 4.0), (4.0, 3.0))
#: Share of zero scores in every domain.
ZERO_SHARE = 0.1
EPSILONS = epsilon_grid(1, 100, 1)
REPLICATIONS = 1000
RESAMPLES = 400
CONFIDENCE = 0.95
BAND = (0.93, 0.97)
#: The statistics whose whole-pool bootstrap coverage is checked at every size.
POOL_STATISTICS = ("mean", "variance", "cov", "gamma_area")
#: The default WMT22 size (4 test sets of about 500 segments) and a smaller one.
SIZES = (500, 100, 25)  # the WMT22 domains' size, a small test set, a family's sample (25 segments)
#: Units per domain of the bagging check (the engine per test set: blocks, bagged statistics, pandas).
BAGGED_SIZE = 250
#: Units per domain of the paired test, and the planted excess noise SD of the third row (noise SD 10 + it).
PAIRED_SIZE = 100
PLANTED_SD = 6.0


def draw_scores(rng: np.random.Generator, per_domain: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores of ``per_domain`` units in each domain, and their domain codes."""
    scores = []
    for a, b in DOMAIN_BETAS:
        values = 100 * rng.beta(a, b, per_domain)
        values[rng.random(per_domain) < ZERO_SHARE] = 0.0
        scores.append(values)
    return np.concatenate(scores), np.repeat(np.arange(len(DOMAIN_BETAS)), per_domain)


def population_truth() -> dict[str, float]:
    """The population value of every checked statistic (see the module docstring), analytically."""
    keep = 1 - ZERO_SHARE
    means = np.array([keep * 100 * a / (a + b) for a, b in DOMAIN_BETAS])
    second = np.array([keep * 1e4 * a * (a + 1) / ((a + b) * (a + b + 1)) for a, b in DOMAIN_BETAS])
    mean = float(means.mean())
    variance = float(second.mean() - mean**2)
    inside = np.zeros(EPSILONS.size)
    for a, b in DOMAIN_BETAS:
        upper = scipy_stats.beta.cdf(np.minimum(1.0, (mean + EPSILONS) / 100), a, b)
        lower = scipy_stats.beta.cdf(np.maximum(0.0, (mean - EPSILONS) / 100), a, b)
        inside += (ZERO_SHARE * (mean < EPSILONS) + keep * (upper - lower)) / len(DOMAIN_BETAS)
    gamma = (1 - inside) * EPSILONS**2 / variance
    between_variance = float(np.var(means, ddof=1))
    within_variance = float((second - means**2).mean())
    return {
        "mean": mean, "variance": variance, "cov": math.sqrt(variance) / mean, "gamma_area": float(gamma.mean()),
        "between_sd": math.sqrt(between_variance),
        "between_share": between_variance / (between_variance + within_variance),
    }


TRUTH = population_truth()


def estimates_of(scores: np.ndarray, codes: np.ndarray) -> dict[str, float]:
    """The point estimates the engine centres its intervals on (the same functions it uses)."""
    plain = summarize(scores)
    parts = variance_components(scores, codes)
    return {"mean": plain.mean, "variance": plain.variance, "cov": plain.cov,
            "gamma_area": float(gamma_curve(scores, EPSILONS).mean()),
            "between_sd": parts.between_sd, "between_share": parts.between_share}


def pool_coverage(per_domain: int, variance_components: bool) -> dict[str, float]:
    """Share of simulated test sets whose whole-pool bootstrap interval (:func:`pool_replicates`) holds the truth."""
    names = POOL_STATISTICS + (("between_sd", "between_share") if variance_components else ())
    hits = dict.fromkeys(names, 0)
    for replication in range(REPLICATIONS):
        scores, codes = draw_scores(np.random.default_rng([per_domain, replication]), per_domain)
        options = UncertaintyOptions(confidence=CONFIDENCE, resamples=RESAMPLES, seed=replication)
        replicates, clusters = pool_replicates(scores, codes, len(DOMAIN_BETAS), cluster_design(codes), "unit", EPSILONS,
                                               options, ["coverage"], variance_components)
        bounds = replicate_intervals(replicates, estimates_of(scores, codes), CONFIDENCE, clusters, reflect=False)
        for name in names:
            hits[name] += bounds[f"{name}_lo"] <= TRUTH[name] <= bounds[f"{name}_hi"]
    return {name: count / REPLICATIONS for name, count in hits.items()}


def bagged_coverage(per_domain: int) -> dict[tuple[str, str], float]:
    """Coverage of the blocks' jackknife intervals (30 blocks of 0.6 of the pool) of the engine's bagged
    mean and variance, both methods; the blocks are drawn anew for every test set."""
    domains = ["d0", "d1", "d2", "d3"]
    hits: dict[tuple[str, str], int] = {}
    options = UncertaintyOptions(confidence=CONFIDENCE, resamples=2)  # the pool bootstrap is not looked at here
    for replication in range(REPLICATIONS):
        scores, codes = draw_scores(np.random.default_rng([7, per_domain, replication]), per_domain)
        units = pd.DataFrame({"domain": np.asarray(domains)[codes], "unit_id": np.arange(scores.size).astype(str),
                              "score": scores})
        blocks = draw_study_blocks(units, domains, [WHOLE_POOL], seed=replication, namespace=["coverage"],
                                   n_blocks=30, fraction=0.6)
        summary = evaluate_study(units, domains, [WHOLE_POOL], blocks, np.array([1.0]), units_in_domains(),
                                 uncertainty=options).summary
        for row in summary[summary["method"] != "pool"].itertuples():
            for name in ("mean", "variance"):
                key = (row.method, name)
                hits[key] = hits.get(key, 0) + (getattr(row, f"{name}_lo") <= TRUTH[name] <= getattr(row, f"{name}_hi"))
    return {key: count / REPLICATIONS for key, count in hits.items()}


def paired_rejections(per_domain: int, planted_sd: float) -> tuple[float, float]:
    """Rejection rates at level 0.05 of the paired bootstrap test of the variance of row a against b (equal
    true variance: the null) and against c (its noise SD larger by ``planted_sd``): rows share a per-unit
    component, so they are correlated as systems on the same segments are."""
    level = 1 - CONFIDENCE
    null = planted = 0
    for replication in range(REPLICATIONS):
        rng = np.random.default_rng([11, per_domain, replication])
        common, codes = draw_scores(rng, per_domain)
        rows = {"a": common + rng.normal(0, 10, common.size), "b": common + rng.normal(0, 10, common.size),
                "c": common + rng.normal(0, 10 + planted_sd, common.size)}
        options = UncertaintyOptions(confidence=CONFIDENCE, resamples=RESAMPLES, seed=replication)
        replicates = {name: pool_replicates(values, codes, len(DOMAIN_BETAS), cluster_design(codes), "unit", np.array([1.0]),
                                            options, ["paired"])[0]["variance"] for name, values in rows.items()}
        variances = {name: float(np.var(values)) for name, values in rows.items()}
        null += difference(variances["a"], variances["b"], replicates["a"], replicates["b"], CONFIDENCE).p_value < level
        planted += difference(variances["a"], variances["c"], replicates["a"], replicates["c"], CONFIDENCE).p_value < level
    return null / REPLICATIONS, planted / REPLICATIONS


@pytest.fixture(scope="module")
def measured() -> Callable:
    """Each simulation once per module (several tests read the same run)."""
    cache: dict = {}

    def run(key: tuple, function: Callable, *arguments) -> object:
        if key not in cache:
            cache[key] = function(*arguments)
        return cache[key]

    return run


def test_truth_is_that_of_a_very_large_sample() -> None:
    scores, codes = draw_scores(np.random.default_rng(2024), 250_000)
    assert scores.mean() == pytest.approx(TRUTH["mean"], rel=2e-3)
    assert scores.var() == pytest.approx(TRUTH["variance"], rel=5e-3)
    means = np.bincount(codes, weights=scores) / np.bincount(codes)
    assert np.std(means, ddof=1) == pytest.approx(TRUTH["between_sd"], rel=5e-3)
    assert gamma_curve(scores, EPSILONS).mean() == pytest.approx(TRUTH["gamma_area"], rel=5e-3)


#: Measured coverage outside the band, kept as strict expected failures (see the reasons).
KNOWN_MISSES = {
    ("gamma_area", 500): "measured 0.987 at 4 x 500 (1,000 test sets, 400 resamples): over-covers. The 10 % "
                         "zeros are an atom at distance mu from the mean, and gamma(eps) jumps by 0.1 eps^2 / s^2 "
                         "where mu crosses a grid point; the percentile interval of this non-smooth functional is "
                         "too wide (conservative). At 4 x 100 mu's SE spans several grid points and it is 0.953.",
    ("gamma_area", 25): "measured 0.920 at 4 x 25 (1,000 test sets, 400 resamples, expanded percentile): short. "
                        "With 25 units a domain the same jumps make the bootstrap distribution of the gamma-area "
                        "too narrow; the moment statistics cover at this size (0.94-0.95).",
}


@pytest.mark.parametrize("per_domain", SIZES)
@pytest.mark.parametrize("statistic", POOL_STATISTICS)
def test_whole_pool_bootstrap_covers_the_truth(measured: Callable, statistic: str, per_domain: int,
                                               request: pytest.FixtureRequest) -> None:
    if (statistic, per_domain) in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[statistic, per_domain]))
    coverage = measured(("pool", per_domain), pool_coverage, per_domain, per_domain == 500)[statistic]
    assert BAND[0] <= coverage <= BAND[1], f"{statistic} at 4 x {per_domain}: coverage {coverage}"


@pytest.mark.parametrize("statistic", ["between_sd", "between_share"])
def test_between_domain_bootstrap_covers_the_planted_between_part(measured: Callable, statistic: str) -> None:
    assert TRUTH["between_sd"] > 5  # planted, not near 0
    coverage = measured(("pool", 500), pool_coverage, 500, True)[statistic]
    assert BAND[0] <= coverage <= BAND[1], f"{statistic} at 4 x 500: coverage {coverage}"


@pytest.mark.parametrize("method", ["bagging", "design_bagging"])
@pytest.mark.parametrize("statistic", ["mean", "variance"])
def test_blocks_jackknife_covers_the_truth(measured: Callable, method: str, statistic: str) -> None:
    coverage = measured(("bagged", BAGGED_SIZE), bagged_coverage, BAGGED_SIZE)[method, statistic]
    assert BAND[0] <= coverage <= BAND[1], f"{method} {statistic} at 4 x {BAGGED_SIZE}: coverage {coverage}"


def test_paired_test_holds_its_level_and_has_power(measured: Callable) -> None:
    null, planted = measured(("paired", PAIRED_SIZE), paired_rejections, PAIRED_SIZE, PLANTED_SD)
    assert 0.03 <= null <= 0.07, f"rejection rate under the null: {null}"
    assert planted > 0.8, f"power on the planted difference: {planted}"
