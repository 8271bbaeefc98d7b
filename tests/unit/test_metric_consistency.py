"""The meta-evaluation of metrics on cross-domain consistency (statistics/consistency_measures.py,
metric_consistency.py, metric_agreement.py): hand-computed measures, tau-b and accuracy, cluster assignment,
equality with the engine's functions, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.metric_agreement import kendall_tau_b, pairwise_accuracy, significance_clusters
from nlp_robustness.statistics.consistency_measures import consistency_replicates, interaction_sd
from nlp_robustness.statistics.metric_consistency import meta_evaluate
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions, pool_replicates
from nlp_robustness.statistics.pools import pool_universe
from nlp_robustness.statistics.resampling import cluster_design
from nlp_robustness.statistics.robustness_metrics import gamma_curve
from nlp_robustness.statistics.variance_components import variance_components
from nlp_robustness.studies.profile_uncertainty import replicate_taus

SYSTEMS = ("s0", "s1", "s2", "s3", "s4")
DOMAIN_ORDER = ("news", "chat", "shop")


def study(sparse: bool = False, seed: int = 3):
    """5 systems, 3 domains of 4, 5, 6 documents with 2-4 segments each; metrics A (tracks people) and B (noise)."""
    rng = np.random.default_rng(seed)
    domains, documents = [], []
    for domain, count in zip(DOMAIN_ORDER, (4, 5, 6)):
        for document in range(count):
            size = int(rng.integers(2, 5))
            domains += [domain] * size
            documents += [f"d{document}"] * size
    domains, documents = np.array(domains), np.array(documents)
    n = domains.size
    human = rng.normal(size=(len(SYSTEMS), n)) + rng.normal(size=(len(SYSTEMS), 1))
    metric_a = 2 * human + rng.normal(scale=0.5, size=human.shape)
    metric_b = rng.normal(size=human.shape)
    if sparse:  # each system misses its own segments (one per domain kept at least)
        for row in range(len(SYSTEMS)):
            dropped = rng.choice(n, size=n // 5, replace=False)
            human[row, dropped] = np.nan
        for domain in DOMAIN_ORDER:
            first = np.flatnonzero(domains == domain)[0]
            human[:, first] = rng.normal(size=len(SYSTEMS))
        metric_b[np.isnan(human)] = np.nan
    scores = {"human": human, "A": metric_a, "B": metric_b}
    return scores, domains, documents


EPSILONS = {name: np.linspace(0.1, 3.0, 12) for name in ("human", "A", "B")}


def test_interaction_sd_by_hand():
    means = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [0.0, 2.0, 4.0]])
    # column means 1, 2, 3; row means 2, 2, 2; grand mean 2: residual = M - colmean - rowmean + 2
    residual = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, -1.0], [-1.0, 0.0, 1.0]])
    expected = np.sqrt((residual**2).sum(axis=1) / 2)
    assert np.allclose(interaction_sd(means), expected)
    assert np.allclose(interaction_sd(means + np.array([5.0, -3.0, 0.5])), expected)  # shared domain difficulty removed
    assert np.allclose(interaction_sd(means + np.array([[7.0], [1.0], [-2.0]])), expected)  # system levels removed
    assert np.allclose(interaction_sd(np.stack([means, means])), [expected, expected])  # leading replicate axes


@pytest.mark.parametrize("x, y", [
    ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]),
    ([1, 1, 2, 3, 3, 4], [1, 2, 2, 3, 4, 4]),
    ([0.5, 0.5, 0.5, 1.0], [3.0, 1.0, 2.0, 2.0]),
    ([3, 2, 1, 0], [0, 1, 2, 3]),
])
def test_tau_b_equals_scipy_with_ties(x, y):
    expected = stats.kendalltau(x, y).statistic
    assert kendall_tau_b(np.array(x, float), np.array(y, float)) == pytest.approx(expected, abs=1e-15)


def test_tau_b_vectorised_equals_the_profile_taus():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, size=(50, 8)).astype(float), rng.integers(0, 4, size=(50, 8)).astype(float)
    assert np.allclose(kendall_tau_b(x, y), replicate_taus(x, y), equal_nan=True)
    assert math.isnan(kendall_tau_b(np.ones(4), np.arange(4.0)))  # every pair tied on one side
    assert math.isnan(kendall_tau_b(np.array([1.0, np.nan, 2.0]), np.arange(3.0)))


def test_pairwise_accuracy_by_hand():
    human = np.array([1.0, 2.0, 3.0, 3.0])  # pairs (0,1) (0,2) (0,3) (1,2) (1,3) people order; (2,3) tied: left out
    metric = np.array([1.0, 2.0, 2.0, 0.0])  # agrees on (0,1) (0,2); ties (1,2): disagreement; reverses (0,3) (1,3)
    assert pairwise_accuracy(metric, human) == pytest.approx(2 / 5)
    assert pairwise_accuracy(human, human) == 1.0
    assert math.isnan(pairwise_accuracy(metric, np.ones(4)))


def test_cluster_assignment_compares_with_the_cluster_head():
    metrics = ["m1", "m2", "m3", "m4", "m5"]
    taus = [0.5, 0.9, 0.7, 0.6, 0.1]  # order m2, m3, m4, m1, m5
    separated = {("m2", "m3"): False, ("m2", "m4"): True, ("m4", "m1"): False, ("m3", "m4"): False,
                 ("m4", "m5"): True, ("m1", "m5"): False}
    # m2 opens 1; m3 not separated from m2: 1; m4 separated from m2: opens 2 (though not from m3); m1 joins 2;
    # m5 separated from the head m4: 3 (though not from m1)
    assert significance_clusters(metrics, taus, separated) == {"m2": 1, "m3": 1, "m4": 2, "m1": 2, "m5": 3}
    # a NaN tau (people or the metric tie every pair) has no cluster: not put beside the finite ones it joined before
    nan_cluster = significance_clusters(["a", "b", "c"], [math.nan, 0.2, 0.1], {})
    assert nan_cluster["b"] == nan_cluster["c"] == 1 and math.isnan(nan_cluster["a"])


@pytest.mark.parametrize("sparse", [False, True])
def test_replicates_equal_the_engine(sparse):
    scores, domains, documents = study(sparse)
    labels = ("human/test", "all")
    found = consistency_replicates(scores, "human", domains, documents, SYSTEMS, EPSILONS, 120, 7, labels,
                                   domain_order=DOMAIN_ORDER)
    universe = pool_universe(__import__("pandas").DataFrame({"domain": domains, "document": documents}), DOMAIN_ORDER)
    codes = np.array([DOMAIN_ORDER.index(domain) for domain in domains])
    keys = np.array([f"{domain}\x1f{document}" for domain, document in zip(domains, documents)], dtype=object)
    mask = ~np.isnan(scores["human"])
    for name in scores:
        for row, system in enumerate(SYSTEMS):
            rated = mask[row]
            own = scores[name][row, rated]
            engine, clusters = pool_replicates(own, codes[rated], 3, cluster_design(codes[rated], keys[rated], False, universe),
                                               "unit", EPSILONS[name], UncertaintyOptions(resamples=120, seed=7), labels, True)
            assert np.array_equal(found.replicates[name]["between_sd"][:, row], engine["between_sd"]), (name, system)
            assert np.array_equal(found.replicates[name]["gamma_area"][:, row], engine["gamma_area"]), (name, system)
            assert np.array_equal(found.replicates[name]["quality"][:, row], engine["mean"]), (name, system)
            point = variance_components(own, codes[rated], "engine", keys[rated]).between_sd
            assert found.estimates[name]["between_sd"][row] == point
            assert found.estimates[name]["gamma_area"][row] == float(gamma_curve(own, EPSILONS[name]).mean())
            assert found.estimates[name]["quality"][row] == float(own.mean())
    assert found.clusters == clusters


def test_interaction_replicates_from_weighted_domain_means():
    """The interaction SD of a replicate from its document counts, the slow way: every segment repeated as often as
    its document was drawn."""
    from nlp_robustness.statistics.resampling import map_chunks

    scores, domains, documents = study()
    labels = ("x",)
    found = consistency_replicates(scores, "human", domains, documents, SYSTEMS, EPSILONS, 60, 5, labels, domain_order=DOMAIN_ORDER)
    universe = pool_universe(__import__("pandas").DataFrame({"domain": domains, "document": documents}), DOMAIN_ORDER)
    codes = np.array([DOMAIN_ORDER.index(domain) for domain in domains])
    keys = np.array([f"{domain}\x1f{document}" for domain, document in zip(domains, documents)], dtype=object)
    design = cluster_design(codes, keys, False, universe)
    weights = np.concatenate(map_chunks(lambda chunk: chunk, design, 60, 5, labels))
    for name in scores:
        means = np.stack([[[np.average(scores[name][s, codes == d], weights=weights[b, codes == d]) for d in range(3)]
                           for s in range(len(SYSTEMS))] for b in range(60)])
        assert np.allclose(found.domain_replicates[name], means, rtol=1e-12, atol=1e-12)
        assert np.allclose(found.replicates[name]["interaction_sd"], interaction_sd(means), rtol=1e-10)


def test_tables_deterministic_and_independent_of_threads():
    scores, domains, documents = study()
    arguments = (scores, "human", domains, documents, SYSTEMS, EPSILONS, {"human": True, "A": True, "B": True}, 150, 11, ("t",))
    one, two = meta_evaluate(*arguments, threads=1), meta_evaluate(*arguments, threads=2)
    for table in ("consistency", "agreement", "metric_pairs", "per_domain"):
        first, second = getattr(one, table), getattr(two, table)
        assert first.equals(second), table
    agreement = one.agreement.set_index(["metric", "measure"])
    assert agreement.loc[("A", "quality"), "tau"] > agreement.loc[("B", "quality"), "tau"]
    assert (one.agreement["tau_lo"] <= one.agreement["tau"]).all() and (one.agreement["tau"] <= one.agreement["tau_hi"]).all()
    assert set(one.metric_pairs["measure"]) == {"between_sd", "gamma_area", "interaction_sd", "quality"}
    pairs = one.metric_pairs
    excludes = (pairs["lo"] > 0) | (pairs["hi"] < 0)
    assert (excludes == pairs["separated"]).all()  # the interval and the verdict agree


def test_orientation_and_identical_metrics():
    scores, domains, documents = study()
    flipped = {**scores, "C": -scores["A"], "D": scores["A"].copy()}
    result = meta_evaluate(flipped, "human", domains, documents, SYSTEMS, None,
                           {"human": True, "A": True, "B": True, "C": False, "D": True}, 100, 2, ("o",),
                           measures=("quality", "interaction_sd"))
    agreement = result.agreement.set_index(["metric", "measure"])
    assert agreement.loc[("C", "quality"), "tau"] == agreement.loc[("A", "quality"), "tau"]  # lower-is-better oriented
    pair = result.metric_pairs.set_index(["measure", "metric_a", "metric_b"]).loc[("quality", "A", "D")]
    assert pair["difference"] == 0 and pair["p"] == 1 and not pair["separated"] and pair["lo"] <= 0 <= pair["hi"]
    assert agreement.loc[("A", "quality"), "cluster"] == agreement.loc[("D", "quality"), "cluster"]


def test_bad_input_names_the_score_or_system():
    scores, domains, documents = study()
    higher = {"human": True, "A": True, "B": True}

    def run(changed_scores=scores, systems=SYSTEMS, changed_domains=domains, changed_documents=documents):
        return meta_evaluate(changed_scores, "human", changed_domains, changed_documents, systems, EPSILONS, higher, 20, 0, ("b",))

    holed = {**scores, "B": scores["B"].copy()}
    holed["B"][2, 4] = np.nan
    with pytest.raises(InputError, match="'B'.*'s2'"):
        run(holed)
    with pytest.raises(InputError, match="'A'.*shape"):
        run({**scores, "A": scores["A"][:, :-1]})
    with pytest.raises(InputError, match="at least 3"):
        run({name: values[:2] for name, values in scores.items()}, SYSTEMS[:2])
    lonely = documents.copy()
    lonely[domains == "news"] = "one"
    with pytest.raises(InputError, match="'news'.*1 document"):
        run(changed_documents=lonely)
    unrated = {**scores, "human": scores["human"].copy()}
    unrated["human"][1, domains == "chat"] = np.nan
    with pytest.raises(InputError, match="'s1'.*'chat'"):
        run(unrated)


def no_documents(sparse: bool = False):
    """The study with every segment its own document (no document ids, as WMT'21 MQM is passed): the names sort
    otherwise than the segments' order ("10" < "2"), so the design must follow the segments, not the names."""
    scores, domains, _ = study(sparse)
    return scores, domains, np.arange(domains.size).astype(str)


@pytest.mark.parametrize("sparse", [False, True])
def test_replicates_without_documents_equal_the_engine(sparse):
    """Every document a single segment: the one-way decomposition, as the engine computes it for a study without
    documents -- ``clusters=None`` (what studies/human.py passes for MQM: no document universe, document_clusters
    None) for a system rated on every segment; for a system rated on some, singleton clusters over the study's
    segments in their order (the draws every system shares)."""
    scores, domains, documents = no_documents(sparse)
    labels = ("human/mqm", "all")
    found = consistency_replicates(scores, "human", domains, documents, SYSTEMS, EPSILONS, 120, 7, labels,
                                   domain_order=DOMAIN_ORDER)
    codes = np.array([DOMAIN_ORDER.index(domain) for domain in domains])
    keys = np.array([f"{domain}\x1f{document}" for domain, document in zip(domains, documents)], dtype=object)
    mask = ~np.isnan(scores["human"])
    assert mask.all() != sparse
    for name in scores:
        for row, system in enumerate(SYSTEMS):
            rated = mask[row]
            own = scores[name][row, rated]
            options = UncertaintyOptions(resamples=120, seed=7)
            if rated.all():
                engine, clusters = pool_replicates(own, codes, 3, cluster_design(codes), "unit", EPSILONS[name], options, labels,
                                                   True)
            else:
                engine, clusters = pool_replicates(own, codes[rated], 3, cluster_design(codes[rated], keys[rated], False, (keys, codes)),
                                                   "unit", EPSILONS[name], options, labels, True)
            assert np.isfinite(found.replicates[name]["between_sd"][:, row]).all(), (name, system)
            assert np.array_equal(found.replicates[name]["between_sd"][:, row], engine["between_sd"]), (name, system)
            assert np.array_equal(found.replicates[name]["gamma_area"][:, row], engine["gamma_area"]), (name, system)
            assert np.array_equal(found.replicates[name]["quality"][:, row], engine["mean"]), (name, system)
            point = variance_components(own, codes[rated], "engine").between_sd  # one-way: no documents
            assert found.estimates[name]["between_sd"][row] == point
            assert found.estimates[name]["gamma_area"][row] == float(gamma_curve(own, EPSILONS[name]).mean())
            assert found.estimates[name]["quality"][row] == float(own.mean())
        assert np.all(np.isfinite(found.domain_replicates[name]))
        rated_means = np.stack([[scores[name][s, mask[s] & (codes == d)].mean() for d in range(3)] for s in range(len(SYSTEMS))])
        assert np.allclose(found.domain_means[name], rated_means)
    assert found.clusters == clusters  # the segments of the smallest domain


def test_no_document_study_has_finite_between_sd_intervals():
    scores, domains, documents = no_documents()
    result = meta_evaluate(scores, "human", domains, documents, SYSTEMS, EPSILONS, {"human": True, "A": True, "B": True},
                           100, 4, ("n",))
    between = result.agreement[result.agreement["measure"] == "between_sd"]
    assert np.isfinite(between[["tau", "tau_lo", "tau_hi"]].to_numpy()).all()
    assert (between["cluster"] >= 1).all()
    consistency = result.consistency[result.consistency["measure"] == "between_sd"]
    assert np.isfinite(consistency[["value", "value_lo", "value_hi"]].to_numpy()).all()


def test_tied_values_have_no_tau_interval_or_cluster():
    """People tying every system (pairs 0): tau NaN on every measure, no interval, no cluster; a metric tying every
    system (its replicate taus all NaN) is not put in the cluster of a metric that was tested."""
    scores, domains, documents = study()
    higher = {"human": True, "A": True, "B": True, "C": True}
    tied = {**scores, "C": np.repeat(scores["B"][:1], len(SYSTEMS), axis=0)}  # every system scored alike by C
    result = meta_evaluate(tied, "human", domains, documents, SYSTEMS, {**EPSILONS, "C": EPSILONS["B"]}, higher, 60, 1, ("t",))
    agreement = result.agreement.set_index(["metric", "measure"])
    for measure in ("between_sd", "gamma_area", "interaction_sd", "quality"):
        row = agreement.loc[("C", measure)]
        assert math.isnan(row["tau"]) and math.isnan(row["tau_lo"]) and math.isnan(row["tau_hi"])
        assert math.isnan(row["cluster"])
        assert agreement.loc[("A", measure), "cluster"] == 1
    people_tied = {**scores, "human": np.repeat(scores["human"][:1], len(SYSTEMS), axis=0)}
    result = meta_evaluate(people_tied, "human", domains, documents, SYSTEMS, EPSILONS, higher, 60, 1, ("t",))
    assert (result.agreement["pairs"] == 0).all()
    columns = ["tau", "tau_lo", "tau_hi", "pairwise_accuracy", "accuracy_lo", "accuracy_hi", "cluster"]
    assert result.agreement[columns].isna().all().all()
    assert (result.per_domain["pairs"] == 0).all() and result.per_domain["tau"].isna().all()
