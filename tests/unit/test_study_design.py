"""The resampling design of a study (:mod:`nlp_robustness.statistics.study_design`): what each study kind's
``resampling_design`` says, the checks of the value, and that the engine draws exactly what it drew from the loose
parameters the design replaced (``crossed_units``, ``replicate_units``, ``document_universe``, the document column):
pinned numbers of the engine before the design, on one small study of every kind, and the design's pool draws
against the arrays the engine built by hand before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.fileio.text_files import write_table
from nlp_robustness.statistics.blocks import draw_study_blocks
from nlp_robustness.statistics.engine import evaluate_study
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions
from nlp_robustness.statistics.pools import WHOLE_POOL, _pool, _rows_by_domain, document_clusters, leave_out_labels, pool_universe
from nlp_robustness.statistics.resampling import cluster_design
from nlp_robustness.statistics.study_design import (
    StudyDesign,
    documents_in_domains,
    ids_across_domains,
    replicate_units_by_cluster,
    units_in_domains,
)
from nlp_robustness.studies.human import SEGMENT_COLUMNS
from nlp_robustness.studies.metric_attacks import AGREEMENT_KEY_COLUMNS, bootstrap_units
from nlp_robustness.studies.registry import study_module

DOMAINS = ["a", "b", "c"]
POOLS = leave_out_labels(["b"])
EPSILONS = np.array([1.0, 4.0, 9.0])
OPTIONS = UncertaintyOptions(resamples=120, seed=5)


def documents_study() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Segments of documents (3 per document, 4 documents per domain) with a document effect; the row is rated on all
    but one document of domain a, which the universe still holds."""
    rng = np.random.default_rng(21)
    rows = [{"domain": domain, "document": f"d{document}", "unit_id": f"{domain}{document}.{segment}",
             "score": 10.0 * code + 3.0 * document + rng.normal(0, 2.0)}
            for code, domain in enumerate(DOMAINS) for document in range(4) for segment in range(3)]
    units = pd.DataFrame(rows)[["domain", "unit_id", "score", "document"]]
    universe = units[["domain", "document"]].drop_duplicates().reset_index(drop=True)
    return units[~((units["domain"] == "a") & (units["document"] == "d1"))].reset_index(drop=True), universe


def crossed_study() -> pd.DataFrame:
    """Ten segments under every domain (a perturbation function each), scores correlated across domains."""
    rng = np.random.default_rng(22)
    base = rng.normal(40, 8, 10)
    return pd.DataFrame({"domain": np.repeat(DOMAINS, 10), "unit_id": np.tile([f"s{i}" for i in range(10)], 3),
                         "score": np.concatenate([base + rng.normal(code, 2, 10) for code in range(3)])})


def replicate_study() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One unit per domain (a condition's tau) and the +1 / -1 judgements behind it, clustered by segment across
    domains (12 segments of 1-3 judgements)."""
    rng = np.random.default_rng(23)
    segments = np.repeat(np.arange(12), [1, 2, 3] * 4)
    frames = [pd.DataFrame({"domain": domain, "unit_id": [f"j{i}" for i in range(segments.size)],
                            "cluster": [f"seg{segment}" for segment in segments],
                            "score": np.where(rng.random(segments.size) < 0.7 - 0.1 * code, 1.0, -1.0)})
              for code, domain in enumerate(DOMAINS)]
    finer = pd.concat(frames, ignore_index=True)
    tau = finer.groupby("domain", sort=False)["score"].mean()
    return pd.DataFrame({"domain": tau.index, "unit_id": tau.index, "score": tau.to_numpy()}), finer


def reviews_study() -> pd.DataFrame:
    """Reviews scored 0 or 100 in three domains (the sentiment study's ``bagging_unit: review``)."""
    rng = np.random.default_rng(24)
    return pd.DataFrame({"domain": np.repeat(DOMAINS, [30, 20, 25]), "unit_id": [f"r{i}" for i in range(75)],
                         "score": 100.0 * (rng.random(75) < 0.8)})


def blocks_of(units: pd.DataFrame, pools=POOLS, n_blocks: int = 3, fraction: float = 0.6) -> pd.DataFrame:
    return draw_study_blocks(units[["domain", "unit_id"]], DOMAINS, pools, seed=1, namespace=["design"],
                             n_blocks=n_blocks, fraction=fraction)


# ---- the engine draws what it drew before the design ----------------------------------------------------------

#: The engine's numbers before the design (362b1da, loose parameters: ``document_universe``, ``crossed_units``,
#: ``replicate_units``), whole pool, pool method: mean_lo, mean_hi, variance_hi, between_sd_hi, and the means of the
#: first two replicates. A different draw moves them by far more than the tolerance.
BEFORE = {
    "documents": ([10.998592989297691, 21.302411574983612, 144.712070458958, 14.874276576298788],
                  [17.14576356378585, 16.151725541751045]),
    "crossed": ([33.17400177502608, 44.70253448580878, 105.31464063093247, 0.5687322134073541],
                [36.13222046963593, 34.596107797599615]),
    "replicate": ([-0.03878562120331547, 0.40512542473877156, 0.1681961809062138, float("nan")],
                  [0.30864197530864196, 0.5]),
    "reviews": ([69.99906040241439, 88.87739183055594, 93.22630991307071, 2.8709968335531864],
                [82.77777777777777, 78.33333333333333]),
}


def _evaluations():
    """Each kind of study through the engine with its design, as before with the loose parameters."""
    units, universe = documents_study()
    yield "documents", units, documents_in_domains(universe), evaluate_study(
        units, DOMAINS, POOLS, blocks_of(units), EPSILONS, documents_in_domains(universe), "unit",
        variance_components=True, uncertainty=OPTIONS, seed_labels=["design"])
    units = crossed_study()
    yield "crossed", units, ids_across_domains(), evaluate_study(
        units, DOMAINS, POOLS, blocks_of(units), EPSILONS, ids_across_domains(), "unit", variance_components=True,
        uncertainty=OPTIONS, seed_labels=["design"])
    units, finer = replicate_study()
    design = replicate_units_by_cluster(finer, crossed=True)
    yield "replicate", units, design, evaluate_study(
        units, DOMAINS, [WHOLE_POOL], blocks_of(units, [WHOLE_POOL], 2, 0.7), EPSILONS, design, "unit",
        uncertainty=OPTIONS, seed_labels=["design"])
    units = reviews_study()
    yield "reviews", units, units_in_domains(), evaluate_study(
        units, DOMAINS, POOLS, blocks_of(units), EPSILONS, units_in_domains(), "domain", variance_components=True,
        uncertainty=OPTIONS, seed_labels=["design"])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the replicate study's blocks of two conditions: NaN bands
def test_the_engine_with_a_design_gives_the_numbers_it_gave_before() -> None:
    for name, _, _, evaluation in _evaluations():
        whole = evaluation.summary.iloc[0]
        assert (whole["left_out"], whole["method"]) == (WHOLE_POOL, "pool")
        summary, replicates = BEFORE[name]
        found = [whole[column] for column in ("mean_lo", "mean_hi", "variance_hi", "between_sd_hi")]
        assert found == pytest.approx(summary, rel=1e-9, nan_ok=True), name
        assert list(evaluation.replicates[WHOLE_POOL]["mean"][:2]) == pytest.approx(replicates, rel=1e-9), name


def test_a_pool_is_drawn_as_the_loose_parameters_drew_it() -> None:
    """The design's draw of every pool equals :func:`.resampling.cluster_design` of the arrays the engine built from
    the loose parameters: document keys with the universe's documents of the pool, unit ids across domains, the
    replicate units' clusters, units alone."""
    units, universe = documents_study()
    crossed = crossed_study()
    reviews = reviews_study()
    _, finer = replicate_study()
    cases = [(documents_in_domains(universe), units, lambda pool, members: (document_clusters(pool), pool_universe(universe, members))),
             (ids_across_domains(), crossed, lambda pool, members: (pool["unit_id"].to_numpy(), None)),
             (replicate_units_by_cluster(finer, crossed=True), finer, lambda pool, members: (pool["cluster"].to_numpy(), None)),
             (units_in_domains(), reviews, lambda pool, members: (None, None))]
    for design, table, loose in cases:
        for left_out in POOLS:
            members = [domain for domain in DOMAINS if domain != left_out]
            pool, codes = _pool(table, _rows_by_domain(table), DOMAINS, left_out, "design")
            clusters, universe_codes = loose(pool, members)
            for resample_domains in (False, True) if not design.crossed else (False,):
                expected = cluster_design(codes, clusters, resample_domains, universe_codes)
                found = design.resampling(design.clusters(pool), codes, members, resample_domains)
                assert np.array_equal(found.cluster_of_unit, expected.cluster_of_unit), (design.cluster, left_out)
                assert np.array_equal(found.stratum_of_cluster, expected.stratum_of_cluster), (design.cluster, left_out)
                assert found.resample_strata == expected.resample_strata


def test_the_replicates_digest_names_what_is_drawn() -> None:
    units, universe = documents_study()
    assert documents_in_domains(universe).resampled_keys(units).equals(universe.rename(columns={"document": "unit_id"}))
    assert documents_in_domains().resampled_keys(units) is units
    replicated, finer = replicate_study()
    assert replicate_units_by_cluster(finer, crossed=True).resampled_keys(replicated) is finer


# ---- the value and its checks ------------------------------------------------------------------------------------


def test_a_design_that_contradicts_itself_is_refused() -> None:
    with pytest.raises(ValueError, match="cluster must be one of"):
        StudyDesign(cluster="segment")
    with pytest.raises(ValueError, match="crossed"):
        StudyDesign(cluster="unit_id")
    with pytest.raises(ValueError, match="nested"):
        StudyDesign(cluster="document", crossed=True)
    with pytest.raises(ValueError, match="universe"):
        StudyDesign(universe=pd.DataFrame({"domain": ["a"], "document": ["d"]}))
    with pytest.raises(ValueError, match="cluster column"):
        StudyDesign(replicate_units=pd.DataFrame(columns=["domain", "unit_id", "cluster", "score"]))


def test_the_documents_of_a_pool_are_its_clusters_only_where_documents_are_drawn() -> None:
    units, _ = documents_study()
    assert np.array_equal(documents_in_domains().documents(documents_in_domains().clusters(units)), document_clusters(units))
    assert units_in_domains().clusters(units) is None
    assert ids_across_domains().documents(ids_across_domains().clusters(units)) is None


# ---- what every study kind says ----------------------------------------------------------------------------------


def _segments(tmp_path, documents: list[str]) -> dict[str, str]:
    """Two domains' segment tables of two systems, each domain's segments in ``documents`` (one per segment)."""
    files = {}
    for domain in ("news", "social"):
        rows = [{"system": system, "segment_id": str(index), "document": document, "source": "s", "reference": "r",
                 "hypothesis": "h", "human": 1.0}
                for system in ("A", "B") for index, document in enumerate(documents)]
        path = tmp_path / f"{domain}.tsv"
        pd.DataFrame(rows, columns=list(SEGMENT_COLUMNS)).to_csv(path, sep="\t", index=False)
        files[domain] = str(path)
    return files


def test_every_study_kind_states_its_design(tmp_path) -> None:
    """MT segments and rated segments: documents within domains (the human DA study from its universe of rated
    documents; MQM, without documents, one by one); reviews within domains, or the reviews behind a domain's accuracy;
    perturbed segments and records: ids across domains; DARR judgements behind a condition's tau, by segment across
    conditions."""
    module = study_module
    domains_design = module("domains").resampling_design({"wmt14": "x.tsv"}, ["wmt14"], "sys", "bleu", {})
    assert (domains_design.cluster, domains_design.crossed, domains_design.universe) == ("document", False, None)

    human = module("human").resampling_design(_segments(tmp_path, ["d2", "d1", "d2"]), ["news", "social"], "A", "human",
                                              {"format": "wmt-da"})
    assert human.cluster == "document" and not human.crossed and human.replicate_units is None
    assert human.universe.to_dict("list") == {"domain": ["news", "news", "social", "social"], "document": ["d1", "d2"] * 2}
    mqm = module("human").resampling_design(_segments(tmp_path, ["", "", ""]), ["news", "social"], "A", "human",
                                            {"format": "mqm"})
    assert mqm.cluster == "document" and mqm.universe is None

    for name in ("perturbations", "natural_robustness"):
        design = module(name).resampling_design({}, [], "row", "score", {})
        assert (design.cluster, design.crossed, design.replicate_units) == ("unit_id", True, None)

    predictions = tmp_path / "predictions.tsv"
    pd.DataFrame({"review_id": ["1", "2", "3"], "test_domain": ["books", "books", "dvd"], "source": "cross-domain",
                  "label": 1, "predicted": [1, 0, 1], "correct": [1, 0, 1]}).to_csv(predictions, sep="\t", index=False)
    sentiment = module("sentiment")
    assert sentiment.resampling_design({"predictions": str(predictions)}, ["books", "dvd"], "c", "accuracy",
                                       {"bagging_unit": "review"}).cluster is None
    by_domain = sentiment.resampling_design({"predictions": str(predictions)}, ["books", "dvd"], "c", "accuracy",
                                            {"bagging_unit": "domain"})
    assert (by_domain.cluster, by_domain.crossed) == ("cluster", False)
    assert by_domain.replicate_units.to_dict("list") == {
        "domain": ["books", "books", "dvd"], "unit_id": ["1", "2", "3"], "score": [100.0, 0.0, 100.0],
        "cluster": ["books\t1", "books\t2", "dvd\t3"]}

    agreement = tmp_path / "agreement.tsv"
    write_table(pd.DataFrame({"condition": ["clean", "clean", "attack", "attack"], "pair": "de-en", "line": [1, 2, 1, 2],
                              "sid": [7, 8, 7, 8], "unit_id": ["de-en/1", "de-en/2"] * 2, "bleu": [1, -1, -1, -1]}),
                agreement, AGREEMENT_KEY_COLUMNS)
    files = {"agreement": str(agreement)}
    for bagging_unit in ("condition", "judgement"):
        metric = module("metric_attacks").resampling_design(files, ["clean", "attack"], "bleu", "tau", {"bagging_unit": bagging_unit})
        assert (metric.cluster, metric.crossed) == ("cluster", True)
        assert metric.replicate_units.equals(bootstrap_units(files, ["clean", "attack"], "bleu", "tau", {"bagging_unit": bagging_unit}))
