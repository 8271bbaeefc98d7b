"""Paired comparisons of a study table's rows: Holm over pairs, verdicts, unpaired rows, the Markdown report,
the tables' intervals, and families of rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from nlp_robustness.outputs.comparisons import comparisons_markdown, interval_text
from nlp_robustness.outputs.table_writer import MISSING, p_value_text
from nlp_robustness.outputs.tables import interval_cells, robustness_intervals, robustness_table, to_csv_text
from nlp_robustness.statistics.blocks import draw_study_blocks
from nlp_robustness.statistics.comparisons import compare_rows, verdict_matrix
from nlp_robustness.statistics.engine import evaluate_study
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions, units_digest
from nlp_robustness.statistics.pools import leave_out_labels
from nlp_robustness.statistics.study_design import units_in_domains

DOMAINS = ["a", "b"]


def _units(scale: float, seed: int) -> pd.DataFrame:
    """Two domains of 200 units; the scores' spread is ``scale`` (row noise seeded by ``seed``)."""
    rng = np.random.default_rng(seed)
    base = np.random.default_rng(0).normal(50, 10, 400)
    return pd.DataFrame({"domain": np.repeat(DOMAINS, 200), "unit_id": [str(i) for i in range(400)],
                         "score": 50 + scale * (base - 50) + rng.normal(0, 1, 400)})


def _evaluate(units: pd.DataFrame):
    pools = leave_out_labels([])
    blocks = draw_study_blocks(units[["domain", "unit_id"]], DOMAINS, pools, seed=0, namespace=[], n_blocks=5, fraction=0.6)
    return evaluate_study(units, DOMAINS, pools, blocks, np.arange(1.0, 41.0), units_in_domains(),
                          uncertainty=UncertaintyOptions(resamples=300), seed_labels=["study"])


def test_a_clearly_more_spread_row_is_less_consistent_and_equal_rows_are_not_told_apart() -> None:
    rows = {"narrow": _units(0.5, 1), "wide": _units(2.0, 2), "narrow-too": _units(0.5, 3)}
    evaluations = {row: _evaluate(units) for row, units in rows.items()}
    summaries = {row: evaluation.summary for row, evaluation in evaluations.items()}
    replicates = {row: (evaluation.replicates, units_digest(rows[row])) for row, evaluation in evaluations.items()}
    comparisons = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0)
    variance = comparisons[comparisons["statistic"] == "variance"].set_index(["row_a", "row_b"])
    assert variance.loc[("narrow", "wide"), "verdict"] == "more consistent"
    assert variance.loc[("wide", "narrow-too"), "verdict"] == "less consistent"
    assert variance.loc[("narrow", "narrow-too"), "verdict"] == "not distinguishable"
    assert variance.loc[("narrow", "narrow-too"), "units_to_detect"] > 200  # more units than the 200 per domain here
    assert np.isnan(variance.loc[("narrow", "wide"), "units_to_detect"])
    assert variance["paired"].all() and (variance["p_holm"] >= variance["p"]).all()
    matrix = verdict_matrix(comparisons, "variance", list(rows))
    assert matrix.at["wide", "narrow"] == "less consistent" and matrix.at["narrow", "narrow"] == ""
    report = comparisons_markdown(comparisons, list(rows), "test", 0.95, 2)
    assert "## Var: 2 of 3 pairs told apart" in report
    # rows on different units are compared as independent samples and say so
    replicates["wide"] = (replicates["wide"][0], "another digest")
    unpaired = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0)
    assert not unpaired.set_index(["row_a", "row_b"]).loc[("narrow", "wide"), "paired"].any()


def test_tables_print_value_and_interval_and_the_csv_keeps_both_ends() -> None:
    summaries = {"s": _evaluate(_units(1.0, 1)).summary}
    table = robustness_table(summaries, "pool", ["none"])
    low, high = robustness_intervals(table, summaries, "pool")
    cells = interval_cells(table, low, high, 2)
    mean = table.iloc[0][("none", "Mean")]
    assert cells.iloc[0][("none", "Mean")] == interval_text(mean, low.iloc[0][("none", "Mean")], high.iloc[0][("none", "Mean")], 2)
    assert low.iloc[0][("none", "Mean")] < mean < high.iloc[0][("none", "Mean")]
    header = to_csv_text(table, low, high).splitlines()[0].split(",")
    assert header[1:4] == ["whole_pool_Mean", "whole_pool_Mean_lo", "whole_pool_Mean_hi"]
    assert interval_text(1.0, float("nan"), float("nan"), 1) == "1.0" and interval_text(float("nan"), 0, 1, 1) == "n/a"


def test_rows_are_compared_within_their_family_and_the_report_says_so() -> None:
    """MT systems with MT systems, classifiers with classifiers: no pair crosses families, Holm counts the family's
    pairs, the adjusted interval agrees with the verdict, and a small B is a named warning."""
    rows = {"mt-a": _units(0.5, 1), "mt-b": _units(2.0, 2), "clf-a": _units(0.5, 3), "clf-b": _units(0.6, 4), "clf-c": _units(2.0, 5)}
    evaluations = {row: _evaluate(units) for row, units in rows.items()}
    summaries = {row: evaluation.summary for row, evaluation in evaluations.items()}
    replicates = {row: (evaluation.replicates, units_digest(rows[row])) for row, evaluation in evaluations.items()}
    families = {"mt-a": "MT systems", "mt-b": "MT systems", "clf-a": "classifiers", "clf-b": "classifiers", "clf-c": "classifiers"}
    comparisons = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0, families)
    variance = comparisons[comparisons["statistic"] == "variance"]
    assert len(variance) == 1 + 3
    assert all(families[a] == families[b] for a, b in zip(variance["row_a"], variance["row_b"]))
    assert dict(zip(variance["family"], variance["pairs"])) == {"MT systems": 1, "classifiers": 3}
    separated = variance["verdict"] != "not distinguishable"
    excludes_zero = (variance["lo"] > 0) | (variance["hi"] < 0)
    assert (separated == excludes_zero).all() and separated.any()
    assert ((variance["hi"] - variance["lo"]) >= (variance["hi_unadjusted"] - variance["lo_unadjusted"]) - 1e-12).all()
    assert variance.loc[separated, "units_to_detect"].isna().all()
    report = comparisons_markdown(comparisons, list(rows), "test", 0.95, 2, resamples=100)
    assert "### classifiers: Var: " in report and "(Holm over 3 pairs)" in report
    assert "Warning (uncertainty.resamples = 100)" in report
    assert report.index("## Between SD") < report.index("## Var") if "## Between SD" in report else True
    assert "Warning" not in comparisons_markdown(comparisons, list(rows), "test", 0.95, 2, resamples=1000)


def test_a_table_without_cov_compares_no_cov() -> None:
    """A human score's table prints no COV (its mean is near or below 0); its comparisons must not test one either
    (issue 52, item 10): ``statistics`` names what is compared, the report has no COV section."""
    rows = {"a": _units(0.5, 1), "b": _units(2.0, 2), "c": _units(0.6, 3)}
    evaluations = {row: _evaluate(units) for row, units in rows.items()}
    summaries = {row: evaluation.summary for row, evaluation in evaluations.items()}
    replicates = {row: (evaluation.replicates, units_digest(rows[row])) for row, evaluation in evaluations.items()}
    every = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0)
    without = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0, statistics=["variance", "between_sd", "mean", "gamma_area"])
    assert "cov" in set(every["statistic"]) and "cov" not in set(without["statistic"])
    pd.testing.assert_frame_equal(without.reset_index(drop=True),
                                  every[every["statistic"] != "cov"].reset_index(drop=True))
    assert "## COV" not in comparisons_markdown(without, list(rows), "test", 0.95, 2)


def test_one_p_formatter_for_every_table() -> None:
    """Issue 52: corpus_comparisons.md printed "0.000" where comparisons.md printed "< 0.001"; both use
    :func:`.table_writer.p_value_text` now (tests/unit/test_corpus_scores.py checks the corpus table's files)."""
    assert [p_value_text(p) for p in (1e-40, 0.0, 0.0004, 0.001, 0.0123, 1.0)] == [
        "< 0.001", "< 0.001", "< 0.001", "0.001", "0.012", "1.000"]
    assert p_value_text(math.nan) == MISSING == p_value_text(None)
    comparisons = pd.DataFrame([{"left_out": "none", "statistic": "mean", "family": "all rows", "pairs": 1, "row_a": "x",
                                 "row_b": "y", "paired": True, "difference": 1.0, "lo": 0.5, "hi": 1.5, "lo_unadjusted": 0.6,
                                 "hi_unadjusted": 1.4, "p": 1e-12, "p_holm": 1e-12, "verdict": "higher",
                                 "units_to_detect": np.nan}])
    assert "| < 0.001 |" in comparisons_markdown(comparisons, ["x", "y"], "t", 0.95, 2)
