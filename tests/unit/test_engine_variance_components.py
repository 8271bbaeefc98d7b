"""The engine's between/within-domain columns: pool rows only, every pool, NaN where they do not apply."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.blocks import BLOCK_COLUMNS, draw_study_blocks
from nlp_robustness.statistics.engine import (
    BETWEEN_COLUMNS,
    SUMMARY_COLUMNS,
    evaluate_study,
    read_summary,
    whole_pool_between_domains,
)
from nlp_robustness.statistics.pools import WHOLE_POOL, units_from_tables
from nlp_robustness.statistics.study_design import documents_in_domains, units_in_domains
from nlp_robustness.statistics.variance_components import variance_components
from nlp_robustness.studies.registry import STUDIES, study_module

DOMAINS = ["a", "b", "c"]
UNITS = units_from_tables(
    {
        "a": pd.DataFrame({"segment_id": ["1", "2", "3", "4"], "bleu": [0.0, 10.0, 20.0, 14.0]}),
        "b": pd.DataFrame({"segment_id": ["1", "2", "3"], "bleu": [30.0, 40.0, 47.0]}),
        "c": pd.DataFrame({"segment_id": ["1", "2"], "bleu": [50.0, 61.0]}),
    },
    "segment_id",
    "bleu",
)
POOLS = [WHOLE_POOL, "a", "c"]


def evaluate(units: pd.DataFrame = UNITS, domains: list[str] = DOMAINS, pools: list[str] = POOLS, **options: object):
    blocks = draw_study_blocks(units[["domain", "unit_id"]], domains, pools, seed=1, namespace=[], n_blocks=2, fraction=0.8)
    return evaluate_study(units, domains, pools, blocks, np.array([5.0]), units_in_domains(), **options)


def test_pool_rows_of_every_pool_hold_the_decomposition_of_their_units() -> None:
    summary = evaluate(variance_components=True).summary
    between_start = SUMMARY_COLUMNS.index(BETWEEN_COLUMNS[0])
    assert tuple(summary.columns) == SUMMARY_COLUMNS and SUMMARY_COLUMNS[between_start:between_start + len(BETWEEN_COLUMNS)] == BETWEEN_COLUMNS
    indexed = summary.set_index(["left_out", "method"])
    for left_out in POOLS:
        pool = UNITS[UNITS["domain"] != left_out]
        expected = variance_components(pool["score"], pool["domain"])
        row = indexed.loc[(left_out, "pool")]
        assert row["between_variance"] == pytest.approx(expected.between_variance, rel=1e-12)
        assert row["between_sd"] == pytest.approx(expected.between_sd, rel=1e-12)
        assert row["within_sd"] == pytest.approx(expected.within_sd, rel=1e-12)
        assert row["between_share"] == pytest.approx(expected.between_share, rel=1e-12)
        assert row["domain_mean_sd"] == pytest.approx(expected.domain_mean_sd, rel=1e-12)
    # whole pool by hand: domain means 11, 39, 55.5 -> their SD
    assert indexed.loc[(WHOLE_POOL, "pool"), "domain_mean_sd"] == pytest.approx(np.std([11.0, 39.0, 55.5], ddof=1))
    assert 0.5 < indexed.loc[(WHOLE_POOL, "pool"), "between_share"] < 1.0
    assert summary.loc[summary["method"] != "pool", list(BETWEEN_COLUMNS)].isna().all().all()


def test_other_columns_do_not_change_and_studies_without_components_get_nan() -> None:
    with_components = evaluate(variance_components=True).summary
    without = evaluate().summary
    pd.testing.assert_frame_equal(with_components.drop(columns=list(BETWEEN_COLUMNS)), without.drop(columns=list(BETWEEN_COLUMNS)))
    assert without[list(BETWEEN_COLUMNS)].isna().all().all()
    assert (without[list(BETWEEN_COLUMNS)].dtypes == np.float64).all()


def test_a_pool_of_one_domain_has_no_between_part() -> None:
    summary = evaluate(domains=["a", "b"], pools=[WHOLE_POOL, "a"], variance_components=True).summary.set_index(["left_out", "method"])
    assert summary.loc[("a", "pool"), list(BETWEEN_COLUMNS)].isna().all()
    assert not math.isnan(summary.loc[(WHOLE_POOL, "pool"), "between_sd"])


def test_pools_without_within_domain_spread_are_errors_naming_the_pool() -> None:
    one_each = units_from_tables({domain: pd.DataFrame({"id": ["1"], "s": [float(index)]}) for index, domain in enumerate(DOMAINS)}, "id", "s")
    blocks = pd.DataFrame(columns=list(BLOCK_COLUMNS))
    with pytest.raises(InputError, match="bleu study, sys, whole pool: every domain has a single unit"):
        evaluate_study(one_each, DOMAINS, [WHOLE_POOL], blocks, np.array([1.0]), units_in_domains(), study="bleu study, sys",
                       variance_components=True)


def test_the_profile_reads_the_whole_pool_components_back(tmp_path: Path) -> None:
    summary = evaluate(variance_components=True).summary
    path = tmp_path / "sys.summary.tsv"
    summary.insert(0, "system", "sys")
    summary.to_csv(path, sep="\t", index=False, lineterminator="\n")
    between_sd, share = whole_pool_between_domains(str(path))
    whole = summary[(summary["left_out"] == WHOLE_POOL) & (summary["method"] == "pool")].iloc[0]
    assert (between_sd, share) == (whole["between_sd"], whole["between_share"])  # full precision round trip
    assert read_summary(str(path))["between_sd"].isna().sum() == 6  # two bagging rows per pool
    evaluate().summary.assign(system="sys")[["system", *SUMMARY_COLUMNS]].to_csv(path, sep="\t", index=False)
    assert all(math.isnan(value) for value in whole_pool_between_domains(str(path)))
    pd.DataFrame({"system": ["sys"], "left_out": [WHOLE_POOL]}).to_csv(path, sep="\t", index=False)
    with pytest.raises(InputError, match="sys.summary.tsv: expected a row column"):
        whole_pool_between_domains(str(path))


def test_every_study_says_whether_its_units_decompose() -> None:
    decides = {name: study_module(name).has_variance_components for name in STUDIES}
    assert decides["domains"]({}) and decides["human"]({}) and decides["perturbations"]({}) and decides["natural_robustness"]({})
    assert decides["sentiment"]({"bagging_unit": "review"}) and not decides["sentiment"]({"bagging_unit": "domain"})
    assert not decides["metric_attacks"]({"bagging_unit": "condition"}) and decides["metric_attacks"]({"bagging_unit": "judgement"})


def test_every_study_says_how_its_units_are_resampled() -> None:
    """Segments, rated segments and reviews belong to one domain (resampled within it); a perturbed segment,
    a record and a DARR judgement appear under every function, type or condition (resampled across them). Asked
    without files (as the plan asks), every study's design says so from its options alone."""
    designs = {name: study_module(name).resampling_design(None, [], "row", "score", {"bagging_unit": "condition"})
               for name in STUDIES}
    assert {name: design.crossed for name, design in designs.items()} == {
        "domains": False, "human": False, "sentiment": False, "perturbations": True, "metric_attacks": True,
        "natural_robustness": True}
    assert {name: design.cluster for name, design in designs.items()} == {
        "domains": "document", "human": "document", "sentiment": None, "perturbations": "unit_id",
        "metric_attacks": "cluster", "natural_robustness": "unit_id"}
    assert all(design.replicate_units is None and design.universe is None for design in designs.values())
    reviews = study_module("sentiment").resampling_design(None, [], "row", "accuracy", {"bagging_unit": "domain"})
    assert (reviews.cluster, reviews.crossed) == ("cluster", False)


def test_documents_are_resampled_whole_and_nest_the_decomposition() -> None:
    """Units with a ``document`` column: the pool's decomposition is the nested one, and resampling whole
    documents of correlated segments widens the mean's interval against resampling segments (design effect
    1 + (m - 1) rho, about 1 + 9 * 0.3 here); a document column of "" changes nothing."""
    from nlp_robustness.statistics.blocks import draw_study_blocks
    from nlp_robustness.statistics.engine import evaluate_study
    from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions
    from nlp_robustness.statistics.pools import document_clusters, leave_out_labels
    from nlp_robustness.statistics.variance_components import variance_components

    rng = np.random.default_rng(6)
    domains = ["a", "b", "c"]
    n_documents, size = 30, 10
    document_effects = rng.normal(0, 6, 3 * n_documents).repeat(size)
    units = pd.DataFrame({
        "domain": np.repeat(domains, n_documents * size), "unit_id": [str(i) for i in range(3 * n_documents * size)],
        "score": 50 + np.repeat([-2.0, 0.0, 2.0], n_documents * size) + document_effects + rng.normal(0, 9, 3 * n_documents * size),
        "document": [f"doc{i // size}" for i in range(n_documents * size)] * 3,
    })
    pools = leave_out_labels([])
    blocks = draw_study_blocks(units[["domain", "unit_id"]], domains, pools, seed=0, namespace=[], n_blocks=4, fraction=0.5)
    options = UncertaintyOptions(resamples=400)

    def whole(frame: pd.DataFrame) -> pd.Series:
        summary = evaluate_study(frame, domains, pools, blocks, np.arange(1.0, 11.0), documents_in_domains(),
                                 variance_components=True, uncertainty=options, seed_labels=["s"]).summary
        return summary[summary["method"] == "pool"].iloc[0]

    by_documents, by_segments = whole(units), whole(units.drop(columns="document"))
    nested = variance_components(units["score"], units["domain"], documents=units["document"])
    assert by_documents["between_variance"] == pytest.approx(nested.between_variance)
    assert by_segments["between_variance"] > by_documents["between_variance"]
    widening = (by_documents["mean_hi"] - by_documents["mean_lo"]) / (by_segments["mean_hi"] - by_segments["mean_lo"])
    assert 1.5 < widening < 2.5
    assert document_clusters(units.assign(document="")) is None
    unchanged = whole(units.assign(document=""))
    assert unchanged["mean_lo"] == by_segments["mean_lo"] and unchanged["between_sd_hi"] == by_segments["between_sd_hi"]


def test_the_document_path_gives_the_weighted_statistics_of_the_same_resamples() -> None:
    """document_statistics (per-document sums, cumulative weights in score order) equals weighted_statistics of the
    unit weights its counts imply, ties at the window ends included (scores rounded to 0.5)."""
    from nlp_robustness.statistics.pool_uncertainty import document_statistics
    from nlp_robustness.statistics.replicate_statistics import weighted_statistics

    rng = np.random.default_rng(8)
    documents = np.sort(rng.integers(0, 120, 1500))
    documents = np.unique(documents, return_inverse=True)[1]
    scores = np.round(np.clip(rng.normal(35, 20, 1500), 0, 100) * 2) / 2
    counts = rng.poisson(1.0, (40, documents.max() + 1)).astype(np.float64)
    epsilons = np.arange(0.5, 60.0, 0.5)
    fast = document_statistics(scores, documents, documents.max() + 1, epsilons)(counts)
    slow = weighted_statistics(scores, counts[:, documents], epsilons)
    for name in ("mean", "variance", "cov", "gamma", "gamma_area"):
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-10, atol=1e-12, err_msg=name)
