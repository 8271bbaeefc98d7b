"""Error rate and power of the paired comparisons of a study table (Wald test with the bootstrap SE, Holm over the
pairs of a statistic), on simulated systems with a known truth.

**Design.** The default config's MT study size: four fixed domains of 500 segments (the WMT22 test sets) and 20
systems, so a statistic's family has 190 pairs. The systems are *paired* as on real data: every system is scored on
the same segments, y_kj = 30 + a_d + u_j + e_kj with fixed domain effects a = (-6, -2, 2, 6) (a between-domain SD of
5.2), a segment effect u_j ~ N(0, 15^2) shared by all systems and a system's own noise e_kj ~ N(0, 10^2) (systems
correlate at about 0.7, as sentence-BLEU rows of one test set do), and every system's replicates come from the same
resamples (one seed and the same labels, as the engine seeds a study's pools: :func:`.resampling.map_chunks` cluster
counts, the draws :func:`.pool_uncertainty.pool_replicates` makes, computed for the 20 systems at once and checked
against it). The verdicts are computed as :func:`.comparisons.compare_rows` computes them (checked against it too):
:func:`.paired_tests.difference` for every pair, :func:`.paired_tests.holm` over the family, and
:func:`.paired_tests.verdict` at level 0.05. The statistics: the mean, Var (Metric I) and the between-domain SD.

**Global null**: all 20 systems alike. The family-wise error (FWER) of a statistic is the share of simulated test
sets in which any of its 190 pairs is told apart; Holm holds it at 0.05 or below.

**Planted difference**: systems 0 and 1 are made to differ by 5 standard errors of their paired difference in one
statistic (the other 18 systems as under the null; each statistic's planted table is built from the same simulated
test sets): the mean by shifts of +/- 2.5 SE; Var by noise variances 100 +/- Delta / 2; the between SD by domain effects
scaled by 1 +/- g. The SE of each difference is known in closed form (:func:`planted_standard_errors`; checked
against the spread of the simulated differences):

* mean: SE = sigma_e sqrt(2 / N), the segment effect cancels in the paired difference;
* Var: SE^2 = mean_d [2 s0^4 + 2 s1^4 + 4 (a_d^2 + sigma_u^2)(s0^2 + s1^2)] / N, the variance of the difference of
  the influence functions (y0 - m0)^2 - (y1 - m1)^2 within a domain (Gaussian scores, stratified sampling);
* between SD: SE = sigma_e sqrt(2 / (n (D - 1))) to first order (the domain-mean noise of the two systems, weighted by
  a_d / ((D - 1) s), which is the same for both when their effects are a scaled by 1 +/- g).

Holm's strictest step is alpha / 190 (z = 3.65), so a 5 SE difference is found with probability about
Phi(5 - 3.65) = 0.91 (at least; Holm steps down). The test asks for 0.8.

**B = 100.** The first 100 of the 1,000 replicates are exactly what ``resamples: 100`` draws (chunks are seeded by
their index; checked), so the same test sets give the verdicts at B = 100. With the former count p-value
(1 + #) / (B + 1) no pair of 20 systems could be told apart at B = 100 (190 / 101 > 1); the Wald p has no floor, and the
planted pair is still found (only the SE is known less well: about 7 % at B = 100). The FWER at B = 100 is checked
too: the noise of the SE fattens the far tail that Holm's first step reads, which the t reference with B - 1 degrees
of freedom accounts for (with the normal reference the FWER was about 0.06 at B = 100; :data:`KNOWN_EXCESS`).

**Monte-Carlo error.** :data:`REPLICATIONS` = 300 simulated test sets: the SE of a rejection rate of 0.05 is
sqrt(0.05 * 0.95 / 300) = 0.0126, so the FWER check is FWER <= 0.05 + 2 SE = 0.075; the SE of a power of 0.9 is
0.017, so power >= 0.8 is about 6 SE below the expected value. The checks can fail: without Holm (any unadjusted
p < 0.05) the same test sets give a FWER near 1 (asserted), and an SE too small by a factor of 1.4 (segments drawn
one by one where documents are correlated) would give a FWER far above the bound.

**Few documents** (issue 52): 12 systems (66 pairs), four domains of 10 or 20 documents of 5 segments, documents
resampled within domains as the engine resamples WMT documents; a document's effect (SD 8) and a segment's (SD 12)
shared by the systems, each system's own per document (SD 3) and per segment (SD 10). With equal documents the
engine's nested statistics are those of the document means, so the bootstrap runs on the document means of all 12
systems at once (checked against :func:`pool_replicates` with the documents as clusters, and the vectorised p-values
against :func:`difference`). Under the global null, over :data:`FEW_REPLICATIONS` = 1,000 test sets per size (bound
0.05 + 2 MC SE = 0.064), with the few-cluster treatment (SE widened by sqrt(n / (n - 1)), t with min(B - 1, documents -
domains) degrees of freedom) the share of pairs rejected at 0.05 and Holm's FWER are, at 10 / 20 documents per domain:
mean 0.050 / 0.051 and 0.039 / 0.037; between SD 0.042 / 0.036 and 0.022 / 0.018. Without it (t with B - 1, before
issue 52): mean 0.071 / 0.060 and 0.116 / 0.068; between SD 0.061 / 0.044 and 0.077 / 0.029, so the level test fails
on the former reference (asserted for the mean at 10 documents).

Measured (300 test sets, B = 1,000 / B = 100; t with B - 1 degrees of freedom, the SE widened by sqrt(500 / 499)):
FWER under the global null 0.040 / 0.030 (mean), 0.057 / 0.067 (Var), 0.033 / 0.047 (between SD); without Holm
0.90-0.96; power on the planted pair 0.92 / 0.91 (mean), 0.90 / 0.89 (Var), 0.92 / 0.88 (between SD), never in the
wrong direction; the bootstrap SE of the planted difference within 2 % of the closed form. The module takes about 200 s of CPU on one core of a loaded
machine (the few-documents part 15 s of it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.statistics.comparisons import compare_rows
from nlp_robustness.statistics.paired_tests import VERDICTS, critical_value, difference, holm, verdict
from nlp_robustness.statistics.percentile_intervals import ClusterCounts
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions, pool_replicates
from nlp_robustness.statistics.resampling import cluster_design, map_chunks
from nlp_robustness.statistics.robustness_metrics import summarize
from nlp_robustness.statistics.variance_components import variance_components

SYSTEMS = 20
PAIRS = SYSTEMS * (SYSTEMS - 1) // 2
DOMAIN_EFFECTS = np.array([-6.0, -2.0, 2.0, 6.0])
DOMAINS = DOMAIN_EFFECTS.size
PER_DOMAIN = 500
UNITS = DOMAINS * PER_DOMAIN
BASE = 30.0
SEGMENT_SD = 15.0
NOISE_SD = 10.0
RESAMPLES = 1000  # the config default
FEW_RESAMPLES = 100
REPLICATIONS = 300
LEVEL = 0.05
CONFIDENCE = 1 - LEVEL
PLANTED_SE = 5.0
STATISTICS = ("mean", "variance", "between_sd")
#: The FWER bound: 0.05 plus two Monte-Carlo SEs (module docstring).
FWER_BOUND = LEVEL + 2 * math.sqrt(LEVEL * (1 - LEVEL) / REPLICATIONS)
POWER_BOUND = 0.8
CODES = np.repeat(np.arange(DOMAINS), PER_DOMAIN)
LABELS = ["comparison error rates"]
PAIR_LIST = list(itertools.combinations(range(SYSTEMS), 2))
#: The pairs of two systems that are alike in every table (neither is the planted 0 or 1).
NULL_PAIRS = np.array([a >= 2 and b >= 2 for a, b in PAIR_LIST])
PLANTED_PAIR = PAIR_LIST.index((0, 1))
#: The design's cluster counts as the engine records them: segments of the smallest domain, segments - domains.
CLUSTERS = ClusterCounts(PER_DOMAIN, UNITS - DOMAINS)


def planted_standard_errors() -> dict[str, tuple[float, float]]:
    """For each statistic, (the planted parameter, the SE of the paired difference of systems 0 and 1): the mean's
    shift delta, Var's noise-variance difference Delta (solved with its own SE, which grows with it) and the between
    SD's scale g (module docstring)."""
    mean_se = NOISE_SD * math.sqrt(2 / UNITS)
    spread = np.mean(DOMAIN_EFFECTS**2) + SEGMENT_SD**2  # E[w^2] averaged over the (equal) domains

    def variance_se(delta: float) -> float:
        high, low = NOISE_SD**2 + delta / 2, NOISE_SD**2 - delta / 2
        return math.sqrt((2 * high**2 + 2 * low**2 + 4 * spread * (high + low)) / UNITS)

    delta = PLANTED_SE * variance_se(0.0)
    for _ in range(50):  # fixed point of delta = 5 SE(delta): contracts fast (SE barely moves with delta)
        delta = PLANTED_SE * variance_se(delta)
    between_sd = float(np.std(DOMAIN_EFFECTS, ddof=1))
    between_se = NOISE_SD * math.sqrt(2 / (PER_DOMAIN * (DOMAINS - 1)))
    return {"mean": (PLANTED_SE * mean_se, mean_se), "variance": (delta, variance_se(delta)),
            "between_sd": (PLANTED_SE * between_se / (2 * between_sd), between_se)}


PLANTED = planted_standard_errors()


def simulate(replication: int) -> dict[str, np.ndarray]:
    """One simulated test set: the 20 systems' scores (N, 20) under the null and, per statistic, the scores with
    systems 0 and 1 replaced by their planted versions (built from the same draws)."""
    rng = np.random.default_rng([40, replication])
    common = BASE + DOMAIN_EFFECTS[CODES] + rng.normal(0, SEGMENT_SD, UNITS)
    noise = rng.normal(0, NOISE_SD, (UNITS, SYSTEMS))
    null = common[:, None] + noise
    tables = {"null": null}
    shift = PLANTED["mean"][0]
    tables["mean"] = _replace(null, null[:, 0] + shift / 2, null[:, 1] - shift / 2)
    delta = PLANTED["variance"][0]
    tables["variance"] = _replace(null, common + noise[:, 0] * math.sqrt(1 + delta / 2 / NOISE_SD**2),
                                  common + noise[:, 1] * math.sqrt(1 - delta / 2 / NOISE_SD**2))
    scale = PLANTED["between_sd"][0]
    tables["between_sd"] = _replace(null, null[:, 0] + scale * DOMAIN_EFFECTS[CODES], null[:, 1] - scale * DOMAIN_EFFECTS[CODES])
    return tables


def _replace(scores: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    replaced = scores.copy()
    replaced[:, 0], replaced[:, 1] = first, second
    return replaced


def estimates_of(scores: np.ndarray) -> dict[str, np.ndarray]:
    """Every system's point estimates, by the functions the engine uses (:func:`summarize`, :func:`variance_components`)."""
    columns = [(summarize(column), variance_components(column, CODES)) for column in scores.T]
    return {"mean": np.array([plain.mean for plain, _ in columns]),
            "variance": np.array([plain.variance for plain, _ in columns]),
            "between_sd": np.array([parts.between_sd for _, parts in columns])}


def replicates_of(scores: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """Bootstrap replicates (B, systems) of the mean, Var and the between SD of every column of ``scores``: the
    cluster counts of the engine's stratified resamples (:func:`map_chunks`, the draws of :func:`pool_replicates`)
    times the scores, for all systems at once; the between SD is the one-way method of moments of
    :mod:`.variance_components` (equal domains: n0 = n)."""
    design = cluster_design(CODES)
    centred = scores - scores.mean(axis=0)
    squared = centred * centred
    parts = [slice(domain * PER_DOMAIN, (domain + 1) * PER_DOMAIN) for domain in range(DOMAINS)]

    def chunk(counts: np.ndarray) -> dict[str, np.ndarray]:
        sums = np.stack([counts[:, part] @ centred[part] for part in parts], axis=1)  # (rows, D, systems)
        squares = np.stack([counts[:, part] @ squared[part] for part in parts], axis=1)
        means = sums.sum(axis=1) / UNITS
        domain_means = sums / PER_DOMAIN
        between_square = PER_DOMAIN * ((domain_means - means[:, None, :]) ** 2).sum(axis=1) / (DOMAINS - 1)
        within_square = (squares - sums**2 / PER_DOMAIN).sum(axis=1) / (UNITS - DOMAINS)
        between = np.maximum((between_square - within_square) / PER_DOMAIN, 0.0)
        return {"mean": means, "variance": np.maximum(squares.sum(axis=1) / UNITS - means**2, 0.0),
                "between_sd": np.sqrt(between)}

    chunks = map_chunks(chunk, design, RESAMPLES, seed, LABELS, cluster_counts=True)
    replicates = {name: np.concatenate([part[name] for part in chunks]) for name in STATISTICS}
    replicates["mean"] += scores.mean(axis=0)
    return replicates


def family(estimates: np.ndarray, replicates: np.ndarray, statistic: str) -> dict[str, np.ndarray]:
    """The 190 pairs of one statistic as :func:`compare_rows` tests them: difference, SE, p, Holm's p, and the
    verdict's sign (+1: row a "less consistent" / "higher"; -1 the other way; 0 "not distinguishable")."""
    compared = [difference(estimates[a], estimates[b], replicates[:, a], replicates[:, b], CONFIDENCE, CLUSTERS)
                for a, b in PAIR_LIST]
    p_values = np.array([pair.p_value for pair in compared])
    adjusted = holm(p_values)
    words = [verdict(pair.estimate, p_holm, LEVEL, lower_is_more_consistent=statistic != "mean")
             for pair, p_holm in zip(compared, adjusted)]
    up = VERDICTS[0] if statistic == "mean" else VERDICTS[1]  # a higher mean; a larger (less consistent) statistic
    sign = np.array([0 if word == VERDICTS[2] else (1 if word == up else -1) for word in words])
    return {"difference": np.array([pair.estimate for pair in compared]),
            "standard_error": np.array([pair.standard_error for pair in compared]),
            "p": p_values, "p_holm": adjusted, "sign": sign}


def measure() -> dict[str, np.ndarray]:
    """Over :data:`REPLICATIONS` test sets, per statistic and B (1,000 and its first 100): whether any pair is told
    apart under the null (and without Holm), whether a null pair of the planted table is, the planted pair's verdict
    sign, its difference and its bootstrap SE."""
    results: dict[str, list] = {}

    def record(key: str, value: float) -> None:
        results.setdefault(key, []).append(value)

    for replication in range(REPLICATIONS):
        tables = simulate(replication)
        # one bootstrap for the null and the three planted tables' systems 0 and 1 (the same resamples)
        stacked = np.concatenate([tables["null"]] + [tables[name][:, :2] for name in STATISTICS], axis=1)
        replicates = replicates_of(stacked, seed=replication)
        estimates = estimates_of(stacked)
        for statistic in STATISTICS:
            planted_columns = [SYSTEMS + 2 * STATISTICS.index(statistic), SYSTEMS + 2 * STATISTICS.index(statistic) + 1]
            columns = {"null": list(range(SYSTEMS)), "planted": planted_columns + list(range(2, SYSTEMS))}
            for resamples in (RESAMPLES, FEW_RESAMPLES):
                for table, selected in columns.items():
                    compared = family(estimates[statistic][selected], replicates[statistic][:resamples, selected], statistic)
                    key = f"{statistic}|{resamples}|{table}"
                    if table == "null":
                        record(f"{key}|any", float((compared["sign"] != 0).any()))
                        record(f"{key}|any unadjusted", float((compared["p"] < LEVEL).any()))
                    else:
                        record(f"{key}|any null pair", float((compared["sign"][NULL_PAIRS] != 0).any()))
                        record(f"{key}|sign", float(compared["sign"][PLANTED_PAIR]))
                        record(f"{key}|difference", float(compared["difference"][PLANTED_PAIR]))
                        record(f"{key}|standard_error", float(compared["standard_error"][PLANTED_PAIR]))
    return {key: np.array(values) for key, values in results.items()}


@pytest.fixture(scope="module")
def measured() -> dict[str, np.ndarray]:
    return measure()


def test_replicates_are_the_engines_and_b_100_is_the_first_100() -> None:
    scores = simulate(0)["null"][:, :3]
    ours = replicates_of(scores, seed=7)
    estimates = estimates_of(scores)
    for column in range(3):
        for resamples in (RESAMPLES, FEW_RESAMPLES):
            engine, counts = pool_replicates(scores[:, column], CODES, DOMAINS, cluster_design(CODES), "unit", np.array([1.0]),
                                             UncertaintyOptions(resamples=resamples, seed=7), LABELS, variance_components=True)
            assert counts == CLUSTERS
            for statistic in STATISTICS:
                np.testing.assert_allclose(ours[statistic][:resamples, column], engine[statistic], rtol=1e-9, atol=1e-9)
        engine_parts = variance_components(scores[:, column], CODES)
        assert estimates["between_sd"][column] == engine_parts.between_sd
        assert estimates["variance"][column] == pytest.approx(np.var(scores[:, column]), rel=1e-12)


def test_the_verdicts_are_those_of_compare_rows() -> None:
    tables = simulate(1)
    for name in ("null", "mean"):
        scores = tables[name]
        replicates, estimates = replicates_of(scores, seed=1), estimates_of(scores)
        rows = [f"system {index}" for index in range(SYSTEMS)]
        summaries = {row: pd.DataFrame([{"left_out": "none", "method": "pool", "units": UNITS, "domains": DOMAINS,
                                         "smallest_stratum_clusters": CLUSTERS.smallest_stratum,
                                         "cluster_degrees_of_freedom": CLUSTERS.degrees_of_freedom,
                                         **{statistic: estimates[statistic][index] for statistic in STATISTICS}}])
                     for index, row in enumerate(rows)}
        drawn = {row: ({"none": {statistic: replicates[statistic][:, index] for statistic in STATISTICS}}, "same units")
                 for index, row in enumerate(rows)}
        table = compare_rows(summaries, drawn, "none", CONFIDENCE, 0.8, 0)
        for statistic in STATISTICS:
            theirs = table[table["statistic"] == statistic]
            assert list(zip(theirs["row_a"], theirs["row_b"])) == [(rows[a], rows[b]) for a, b in PAIR_LIST]
            assert theirs["pairs"].eq(PAIRS).all() and theirs["paired"].all()
            ours = family(estimates[statistic], replicates[statistic], statistic)
            np.testing.assert_array_equal(theirs["p"].to_numpy(), ours["p"])
            np.testing.assert_array_equal(theirs["p_holm"].to_numpy(), ours["p_holm"])
            np.testing.assert_array_equal(theirs["verdict"].to_numpy() != "not distinguishable", ours["sign"] != 0)
        if name == "mean":  # the planted pair is found on this test set, in the right direction
            planted = table[(table["statistic"] == "mean") & (table["row_a"] == rows[0]) & (table["row_b"] == rows[1])]
            assert planted["verdict"].item() == "higher" and planted["lo"].item() > 0


@pytest.mark.parametrize("statistic", STATISTICS)
def test_the_planted_difference_is_five_standard_errors(measured: dict[str, np.ndarray], statistic: str) -> None:
    """The closed-form SE is the spread of the simulated differences (+/- 12 %: the SD of 300 differences is known to
    about 4 %), and the bootstrap SE estimates it."""
    planted, standard_error = PLANTED[statistic]
    differences = measured[f"{statistic}|{RESAMPLES}|planted|difference"]
    true_difference = planted if statistic != "between_sd" else 2 * planted * float(np.std(DOMAIN_EFFECTS, ddof=1))
    assert true_difference / standard_error == pytest.approx(PLANTED_SE)
    assert np.std(differences, ddof=1) == pytest.approx(standard_error, rel=0.12)
    assert np.mean(differences) == pytest.approx(true_difference, abs=3 * standard_error / math.sqrt(REPLICATIONS))
    # the mean of 300 bootstrap SEs is known far better than one: within 5 % (measured: within 2 %)
    assert np.mean(measured[f"{statistic}|{RESAMPLES}|planted|standard_error"]) == pytest.approx(standard_error, rel=0.05)


#: Measured FWER above the bound, kept as strict expected failures (see the reason): none since the p-values refer
#: d / SE to Student's t with B - 1 degrees of freedom. With the normal reference Var at B = 100 measured 0.097 on
#: these 300 test sets (bound 0.075): at B = 100 the SE is itself noisy (7 %), which fattens the far tail Holm's
#: first step reads (alpha / 190, z = 3.65): the normal's 2.6e-4 is t_99's 4.2e-4.
KNOWN_EXCESS: dict[tuple[str, int], str] = {}


@pytest.mark.parametrize("resamples", [RESAMPLES, FEW_RESAMPLES])
@pytest.mark.parametrize("statistic", STATISTICS)
def test_family_wise_error_under_the_global_null(measured: dict[str, np.ndarray], statistic: str, resamples: int,
                                                 request: pytest.FixtureRequest) -> None:
    if (statistic, resamples) in KNOWN_EXCESS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_EXCESS[statistic, resamples]))
    fwer = measured[f"{statistic}|{resamples}|null|any"].mean()
    assert fwer <= FWER_BOUND, f"{statistic} at B = {resamples}: FWER {fwer} over {PAIRS} pairs (bound {FWER_BOUND:.3f})"
    # Holm holds it strongly: the 153 pairs of unplanted systems in the planted table
    planted_table = measured[f"{statistic}|{resamples}|planted|any null pair"].mean()
    assert planted_table <= FWER_BOUND, f"{statistic}: FWER {planted_table} over the null pairs beside a planted one"
    # the check can fail: the same tests without Holm tell some pair apart almost always
    assert measured[f"{statistic}|{resamples}|null|any unadjusted"].mean() > 0.5


@pytest.mark.parametrize("resamples", [RESAMPLES, FEW_RESAMPLES])
@pytest.mark.parametrize("statistic", STATISTICS)
def test_a_planted_difference_of_five_standard_errors_is_found(measured: dict[str, np.ndarray], statistic: str,
                                                                resamples: int) -> None:
    signs = measured[f"{statistic}|{resamples}|planted|sign"]
    assert (signs < 0).sum() == 0, f"{statistic}: the planted pair was told apart the wrong way round"
    power = (signs > 0).mean()
    assert power >= POWER_BOUND, f"{statistic} at B = {resamples}: power {power}"


# ---- few documents per domain ----------------------------------------------------------------------------------------

#: The issue-52 design: 12 systems (66 pairs), four domains of 10 or 20 documents of 5 segments each.
FEW_SYSTEMS = 12
FEW_PAIRS = list(itertools.combinations(range(FEW_SYSTEMS), 2))
FEW_FIRST, FEW_SECOND = np.array(FEW_PAIRS).T
DOCUMENTS_PER_DOMAIN = (10, 20)
SEGMENTS_PER_DOCUMENT = 5
#: Shared by every system: a document's effect and a segment's; each system's own: per document and per segment.
DOCUMENT_SD, SHARED_SEGMENT_SD, SYSTEM_DOCUMENT_SD, SYSTEM_SEGMENT_SD = 8.0, 12.0, 3.0, 10.0
FEW_REPLICATIONS = 1000
FEW_STATISTICS = ("mean", "between_sd")
#: The bound of the few-document FWER: 0.05 plus two Monte-Carlo SEs of 1,000 test sets.
FEW_FWER_BOUND = LEVEL + 2 * math.sqrt(LEVEL * (1 - LEVEL) / FEW_REPLICATIONS)
#: Where the share of the 66 pairs rejected at level 0.05 must lie ("near the level"): at most 0.015 above it, and not
#: below 0.03 (the between-domain SD, an SD clipped at 0, is conservative by nature: 0.044 at 20 documents per domain
#: even without the treatment).
PER_PAIR_RANGE = (0.03, LEVEL + 0.015)


def document_scores(documents: int, replication: int) -> np.ndarray:
    """One simulated test set under the global null: the 12 systems' scores of every document (documents x 4, 12),
    the mean of its 5 segments y_kjs = 30 + a_d + u_j + v_js + w_kj + e_kjs (u, v shared: document and segment;
    w, e the system's own), documents domain by domain."""
    rng = np.random.default_rng([52, documents, replication])
    total = documents * DOMAINS
    codes = np.repeat(np.arange(DOMAINS), documents)
    shared = BASE + DOMAIN_EFFECTS[codes] + rng.normal(0, DOCUMENT_SD, total)
    shared_segments = rng.normal(0, SHARED_SEGMENT_SD, (total, SEGMENTS_PER_DOCUMENT)).mean(axis=1)
    own = rng.normal(0, SYSTEM_DOCUMENT_SD, (total, FEW_SYSTEMS))
    own_segments = rng.normal(0, SYSTEM_SEGMENT_SD, (total, SEGMENTS_PER_DOCUMENT, FEW_SYSTEMS)).mean(axis=1)
    return (shared + shared_segments)[:, None] + own + own_segments


def document_replicates(means: np.ndarray, documents: int, seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Estimates (systems,) and bootstrap replicates (B, systems) of the mean and the between-domain SD of every system
    from its document means: documents drawn with replacement within each domain (the engine's draws, :func:`map_chunks`
    over the documents' design). With documents of equal size the segments' mean is the documents' mean and the nested
    between-domain SD of the segments (:mod:`.variance_components`, what the engine computes) is the one-way one of the
    documents' means (checked against :func:`pool_replicates` with the documents as clusters)."""
    codes = np.repeat(np.arange(DOMAINS), documents)
    total = codes.size

    def statistics(counts: np.ndarray) -> dict[str, np.ndarray]:
        sums = np.stack([counts[:, codes == domain] @ means[codes == domain] for domain in range(DOMAINS)], axis=1)
        squares = np.stack([counts[:, codes == domain] @ means[codes == domain] ** 2 for domain in range(DOMAINS)], axis=1)
        grand = sums.sum(axis=1) / total
        between_square = documents * ((sums / documents - grand[:, None, :]) ** 2).sum(axis=1) / (DOMAINS - 1)
        within_square = (squares - sums**2 / documents).sum(axis=1) / (total - DOMAINS)
        return {"mean": grand, "between_sd": np.sqrt(np.maximum((between_square - within_square) / documents, 0.0))}

    chunks = map_chunks(statistics, cluster_design(codes), RESAMPLES, seed, LABELS, cluster_counts=True)
    replicates = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in FEW_STATISTICS}
    estimates = {name: values[0] for name, values in statistics(np.ones((1, total))).items()}
    return estimates, replicates


def few_document_p_values(estimate: np.ndarray, replicates: np.ndarray, clusters: ClusterCounts | None) -> np.ndarray:
    """The p-values of the 66 pairs as :func:`.paired_tests.difference` computes them, vectorised over the pairs
    (``clusters`` None: without the few-cluster treatment, t with B - 1 degrees of freedom, as before issue 52;
    checked against :func:`difference` itself)."""
    from scipy import special

    deltas = replicates[:, FEW_FIRST] - replicates[:, FEW_SECOND]
    standard_error = deltas.std(axis=0, ddof=1)
    freedom = replicates.shape[0] - 1
    if clusters is not None:
        standard_error = standard_error * math.sqrt(clusters.smallest_stratum / (clusters.smallest_stratum - 1))
        freedom = min(freedom, clusters.degrees_of_freedom)
    return 2 * special.stdtr(freedom, -np.abs(estimate[FEW_FIRST] - estimate[FEW_SECOND]) / standard_error)


def measure_few_documents(documents: int) -> dict[str, dict[str, np.ndarray]]:
    """Per statistic, over :data:`FEW_REPLICATIONS` null test sets with ``documents`` documents per domain: the share of
    pairs rejected at level 0.05 and whether Holm rejects any, with the few-cluster treatment ("treated") and without
    ("t with B - 1")."""
    clusters = ClusterCounts(documents, documents * DOMAINS - DOMAINS)
    results: dict[str, dict[str, list[float]]] = {}
    for replication in range(FEW_REPLICATIONS):
        estimates, replicates = document_replicates(document_scores(documents, replication), documents, replication)
        for statistic in FEW_STATISTICS:
            for name, counts in (("treated", clusters), ("t with B - 1", None)):
                p = few_document_p_values(estimates[statistic], replicates[statistic], counts)
                rates = results.setdefault(f"{statistic}|{name}", {"per pair": [], "family-wise": []})
                rates["per pair"].append(float((p < LEVEL).mean()))
                rates["family-wise"].append(float((holm(p) < LEVEL).any()))
    return {key: {rate: np.array(values) for rate, values in rates.items()} for key, rates in results.items()}


@pytest.fixture(scope="module")
def few_documents() -> dict[int, dict[str, dict[str, np.ndarray]]]:
    return {documents: measure_few_documents(documents) for documents in DOCUMENTS_PER_DOMAIN}


def test_document_replicates_are_the_engines_and_the_p_values_those_of_difference() -> None:
    documents = 10
    means = document_scores(documents, 0)
    estimates, replicates = document_replicates(means, documents, 3)
    # the segments behind the document means, documents of 5 equal segments: the engine's nested bootstrap
    segments = np.repeat(means, SEGMENTS_PER_DOCUMENT, axis=0)
    segments += np.tile(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), means.shape[0])[:, None]  # mean 0 within a document
    codes = np.repeat(np.arange(DOMAINS), documents * SEGMENTS_PER_DOCUMENT)
    labels = np.array([f"document {index:03d}" for index in np.repeat(np.arange(means.shape[0]), SEGMENTS_PER_DOCUMENT)], dtype=object)
    for column in range(3):
        engine, counts = pool_replicates(segments[:, column], codes, DOMAINS, cluster_design(codes, labels), "unit", np.array([1.0]),
                                         UncertaintyOptions(resamples=RESAMPLES, seed=3), LABELS, variance_components=True)
        assert counts == ClusterCounts(documents, documents * DOMAINS - DOMAINS)
        for statistic in FEW_STATISTICS:
            np.testing.assert_allclose(replicates[statistic][:, column], engine[statistic], rtol=1e-9, atol=1e-9)
        assert variance_components(segments[:, column], codes, documents=labels).between_sd == pytest.approx(
            estimates["between_sd"][column], rel=1e-9)
    for statistic in FEW_STATISTICS:
        for clusters in (counts, None):
            vectorised = few_document_p_values(estimates[statistic], replicates[statistic], clusters)
            one_by_one = [difference(estimates[statistic][a], estimates[statistic][b], replicates[statistic][:, a],
                                     replicates[statistic][:, b], CONFIDENCE, clusters).p_value for a, b in FEW_PAIRS]
            np.testing.assert_allclose(vectorised, one_by_one, rtol=1e-9)


@pytest.mark.parametrize("documents", DOCUMENTS_PER_DOMAIN)
@pytest.mark.parametrize("statistic", FEW_STATISTICS)
def test_with_few_documents_the_tests_hold_their_level(few_documents: dict, statistic: str, documents: int) -> None:
    """Holm's family-wise error at most 0.05 + 2 MC SE, and the share of pairs rejected at level 0.05 near 0.05."""
    rates = few_documents[documents][f"{statistic}|treated"]
    fwer, per_pair = rates["family-wise"].mean(), rates["per pair"].mean()
    assert fwer <= FEW_FWER_BOUND, f"{statistic}, {documents} documents per domain: FWER {fwer} (bound {FEW_FWER_BOUND:.4f})"
    assert PER_PAIR_RANGE[0] <= per_pair <= PER_PAIR_RANGE[1], f"{statistic}, {documents} documents per domain: per pair {per_pair}"


def test_without_the_few_cluster_treatment_the_mean_exceeds_its_level(few_documents: dict) -> None:
    """The check can fail: the same test sets with t on B - 1 degrees of freedom (before issue 52) exceed the bound."""
    untreated = few_documents[10]["mean|t with B - 1"]
    assert untreated["family-wise"].mean() > FEW_FWER_BOUND and untreated["per pair"].mean() > PER_PAIR_RANGE[1]


def test_compare_rows_reads_the_cluster_counts_and_its_intervals_agree_with_holm() -> None:
    """:func:`compare_rows` takes the few-cluster treatment from the summaries' cluster columns (the p-values of the
    vectorised test), and its Holm-adjusted intervals exclude 0 exactly where Holm's p is below the level."""
    documents = 10
    estimates, replicates = document_replicates(document_scores(documents, 5), documents, 5)
    clusters = ClusterCounts(documents, documents * DOMAINS - DOMAINS)
    rows = [f"system {index}" for index in range(FEW_SYSTEMS)]
    summaries = {row: pd.DataFrame([{"left_out": "none", "method": "pool", "units": documents * DOMAINS, "domains": DOMAINS,
                                     "smallest_stratum_clusters": clusters.smallest_stratum,
                                     "cluster_degrees_of_freedom": clusters.degrees_of_freedom,
                                     **{statistic: estimates[statistic][index] for statistic in FEW_STATISTICS}}])
                 for index, row in enumerate(rows)}
    drawn = {row: ({"none": {statistic: replicates[statistic][:, index] for statistic in FEW_STATISTICS}}, "same units")
             for index, row in enumerate(rows)}
    table = compare_rows(summaries, drawn, "none", CONFIDENCE, 0.8, 0)
    for statistic in FEW_STATISTICS:
        theirs = table[table["statistic"] == statistic]
        np.testing.assert_allclose(theirs["p"].to_numpy(), few_document_p_values(estimates[statistic], replicates[statistic], clusters),
                                   rtol=1e-9)
        excludes = (theirs["lo"] > 0) | (theirs["hi"] < 0)
        np.testing.assert_array_equal(excludes.to_numpy(), (theirs["p_holm"] < LEVEL).to_numpy())
        assert theirs["lo"].le(theirs["lo_unadjusted"]).all()
    # the intervals widen by the few-cluster critical value: t with 36 degrees of freedom, not 999
    first = table[table["statistic"] == "mean"].iloc[0]
    half = (first["hi_unadjusted"] - first["lo_unadjusted"]) / 2
    assert half == pytest.approx(critical_value(LEVEL, 36) * first["standard_error"], rel=1e-9)
