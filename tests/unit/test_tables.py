"""Paper-shaped tables: layout, values and the three output formats."""

from __future__ import annotations

import copy
import io
from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.report_sections import render_caption
from nlp_robustness.outputs.tables import (
    interval_cells,
    robustness_intervals,
    robustness_table,
    table_caption,
    to_csv_text,
    to_html_text,
    to_latex_text,
    to_markdown_text,
)
from nlp_robustness.planning import prepare_config
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.studies.plan import study_plan
from nlp_robustness.studies.plan_entries import StudyTable
from nlp_robustness.studies.study_settings import human_cov_meaningful
from tests.e2e.workflow_runner import DEFAULT_CONFIG
from tests.paths import REPOSITORY


def summary(system_offset: float) -> pd.DataFrame:
    rows = []
    for position, left_out in enumerate(["none", "wmt15", "bio_18"]):
        for method in ("pool", "bagging"):
            rows.append({"left_out": left_out, "method": method, "mean": 10 + position + system_offset,
                         "variance": 100.0 + position, "cov": 1.0 + position / 10})
    return pd.DataFrame(rows)


@pytest.fixture
def table() -> pd.DataFrame:
    return robustness_table({"sys_a": summary(0.0), "sys-b": summary(5.0)}, "pool", ["none", "wmt15", "bio_18"])


def test_rows_are_systems_and_groups_are_left_out_sets(table: pd.DataFrame) -> None:
    assert list(table.index) == ["sys_a", "sys-b"]
    assert list(table.columns.get_level_values(0).unique()) == ["none", "wmt15", "bio_18"]
    assert table.loc["sys-b", ("wmt15", "Mean")] == 16.0
    assert table.loc["sys_a", ("bio_18", "COV")] == pytest.approx(1.2)


def test_csv_round_trips_with_flat_headers(table: pd.DataFrame) -> None:
    frame = pd.read_csv(io.StringIO(to_csv_text(table)), index_col="system")
    assert list(frame.columns[:3]) == ["whole_pool_Mean", "whole_pool_Var", "whole_pool_COV"]
    assert frame.at["sys_a", "without_wmt15_Var"] == 101.0


def test_csv_keeps_full_precision() -> None:
    third = summary(0.0).assign(cov=1 / 3, mean=lambda frame: frame["mean"] + 1e-9)
    table = robustness_table({"sys": third}, "pool", ["none"])
    frame = pd.read_csv(io.StringIO(to_csv_text(table)), index_col="system")
    assert frame.at["sys", "whole_pool_COV"] == 1 / 3 and frame.at["sys", "whole_pool_Mean"] == 10 + 1e-9


def test_markdown_and_latex(table: pd.DataFrame) -> None:
    markdown = to_markdown_text(table, "Caption here.")
    assert markdown.splitlines()[0].startswith(
        "| system | Mean (whole pool) | Var (whole pool) | COV (whole pool) | Mean (without wmt15) |")
    assert "none" not in markdown
    assert "| sys-b | 15.00 | 100.00 | 1.00 |" in markdown and markdown.rstrip().endswith("Caption here.")
    latex = to_latex_text(table, "Bagging & 50% of_it", "tab:x")
    assert r"\multicolumn{3}{c}{whole pool}" in latex and r"\multicolumn{3}{c}{without bio\_18}" in latex
    assert r"sys\_a & 10.00 & 100.00 & 1.00" in latex
    assert r"\caption{Bagging \& 50\% of\_it}" in latex
    assert r"\cmidrule(lr){2-4} \cmidrule(lr){5-7} \cmidrule(lr){8-10}" in latex


def test_missing_leave_out_row_is_an_error() -> None:
    with pytest.raises(InputError, match="sys_a has no design_bagging row"):
        robustness_table({"sys_a": summary(0.0)}, "design_bagging", ["none"])


def test_sentiment_rows_are_named_and_rounded_to_three_places() -> None:
    table = robustness_table({"kitchen_&_housewares": summary(0.0)}, "bagging", ["none", "wmt15"], row_label="training domain")
    assert pd.read_csv(io.StringIO(to_csv_text(table))).columns[0] == "training domain"
    markdown = to_markdown_text(table, "caption", decimals=3)
    assert markdown.startswith("| training domain | Mean (whole pool) |")
    assert "| kitchen_&_housewares | 10.000 | 100.000 | 1.000 | 11.000 | 101.000 | 1.100 |" in markdown
    latex = to_latex_text(table, "caption", "tab:x", decimals=3)
    assert r"kitchen\_\&\_housewares & 10.000 & 100.000 & 1.000 & 11.000" in latex


def test_captions_name_the_paper_table_of_each_branch() -> None:
    assert "(paper Table 3)" in table_caption("mt", "bagging", "Sentence bleu", "test set")
    caption = table_caption("sentiment", "design_bagging", "Accuracy", "test domain", "COV is sigma/mu.")
    assert caption.startswith("Accuracy. Robustness Metrics by design bagging") and "(paper Table 6)" in caption
    assert caption.endswith("Column groups: the whole pool, then each test domain left out in turn. COV is sigma/mu.")


def test_a_cov_without_value_is_written_as_not_available() -> None:
    """A pool whose scores are all 0 has variance 0 and mean 0: COV = 0/0 has no value (an empty field in
    the summary file), which the tables keep as NaN and print as the missing-value marker (an en dash)."""
    summary = pd.DataFrame({
        "left_out": ["none", "a"], "method": ["pool", "pool"], "mean": ["0.5", "0.0"], "variance": ["0.1", "0.0"], "cov": ["0.63", ""],
    })
    table = robustness_table({"sys": summary}, "pool", ["none", "a"])
    assert table.loc["sys", ("a", "COV")] != table.loc["sys", ("a", "COV")]  # NaN
    assert "| \u2013 |" in to_markdown_text(table, "caption") and " \u2013 \\\\" in to_latex_text(table, "caption", "tab:x")


def test_captions_name_the_domains_the_study_leaves_out() -> None:
    none_left_out = table_caption("mt", "pool", "Sentence bleu", "test set", leave_out=[WHOLE_POOL])
    assert "Column groups: the whole pool only (no test set is left out)." in none_left_out and "in turn" not in none_left_out
    some = table_caption("mt", "pool", "Sentence bleu", "test set", leave_out=[WHOLE_POOL, "wmt15", "bio18"])
    assert "Column groups: the whole pool, then each test set left out in turn: wmt15, bio18." in some


def test_a_study_table_caption_file_follows_the_study() -> None:
    template = (Path(__file__).resolve().parents[2] / "report" / "robustness_table.rst").read_text(encoding="utf-8")
    variables = {"metric": "bleu", "study": "mine", "language_pair": "de-fr"}

    def caption(leave_out: list[str]) -> str:
        table = StudyTable("mine/bleu", {}, "system", leave_out, "mt", "Sentence bleu", "test set", "", "x", 2,
                           "robustness_table", variables, "Domains", "mine: bleu")
        return render_caption(template, {**table.caption_context(), "method": "pool"})

    assert "(column groups: the whole pool only (no test set is left out))" in caption([WHOLE_POOL])
    assert "(column groups: the whole pool, then each test set left out in turn: news, social)" in caption([WHOLE_POOL, "news", "social"])
    # every table caption file reads the pools from the study (none states them itself)
    for name in ("robustness_table", "human_robustness_table", "metric_robustness_table", "natural_robustness_consistency_table",
                 "perturbation_robustness_table", "sentiment_robustness_table"):
        text = (Path(__file__).resolve().parents[2] / "report" / f"{name}.rst").read_text(encoding="utf-8")
        assert "{{ snakemake.wildcards.column_groups }}" in text and "left out in turn" not in text, name


def with_bounds(system_offset: float) -> pd.DataFrame:
    """:func:`summary` with an interval for every statistic (as the engine writes the pool rows)."""
    frame = summary(system_offset)
    for column in ("mean", "variance", "cov"):
        frame[f"{column}_lo"], frame[f"{column}_hi"] = frame[column] - 1, frame[column] + 1
    return frame


def test_left_out_groups_are_named_for_the_pool_without_the_domain() -> None:
    """issue 52, item 10: ``wmt15_Mean`` held the mean of the pool *without* wmt15 (ru-en ALMAnaCH
    ``ecommerce_Mean`` -0.2527 beside the e-commerce mean -0.1933); every format names the pool so."""
    summaries = {"sys_a": with_bounds(0.0)}
    table = robustness_table(summaries, "pool", ["none", "wmt15"])
    low, high = robustness_intervals(table, summaries, "pool")
    frame = pd.read_csv(io.StringIO(to_csv_text(table, low, high)), index_col="system")
    assert list(frame.columns[9:12]) == ["without_wmt15_Mean", "without_wmt15_Mean_lo", "without_wmt15_Mean_hi"]
    assert not any(column.startswith("wmt15") for column in frame.columns)
    assert frame.at["sys_a", "without_wmt15_Mean"] == 11.0  # the summary's row of the pool that leaves wmt15 out
    cells = interval_cells(table, low, high, 2)
    assert "| Mean (without wmt15) | Var (without wmt15) | COV (without wmt15) |" in to_markdown_text(cells, "c")
    assert r"\multicolumn{3}{c}{without wmt15}" in to_latex_text(cells, "c", "tab:x")
    assert '<th scope="colgroup" colspan="3">without wmt15</th>' in to_html_text(cells, "c")


def test_a_score_whose_cov_means_nothing_prints_no_cov_in_any_format() -> None:
    """issue 52, item 10: the COV of a DA z score (mean near 0) was printed, with an interval that missed its
    estimate (504.067 [0.000, 304.226]); a table with ``with_cov=False`` has no COV column in any format."""
    summaries = {"sys_a": with_bounds(0.0), "sys-b": with_bounds(5.0)}
    table = robustness_table(summaries, "pool", ["none", "wmt15"], with_cov=False)
    assert list(table.columns) == [("none", "Mean"), ("none", "Var"), ("wmt15", "Mean"), ("wmt15", "Var")]
    low, high = robustness_intervals(table, summaries, "pool")
    cells = interval_cells(table, low, high, 2)
    assert "COV" not in to_csv_text(table, low, high) and "Var_hi" in to_csv_text(table, low, high)
    for text in (to_markdown_text(cells, "c"), to_latex_text(cells, "c", "tab:x"), to_html_text(cells, "c")):
        assert "COV" not in text and "Var" in text
    assert ("none", "COV") in robustness_table(summaries, "pool", ["none", "wmt15"]).columns  # the default keeps it


def test_the_plan_drops_cov_for_human_scores_whose_mean_is_near_or_below_zero() -> None:
    assert not human_cov_meaningful({"format": "mqm", "score": "z"})
    assert not human_cov_meaningful({"format": "wmt-da", "score": "z"})
    assert human_cov_meaningful({"format": "wmt-da", "score": "raw"})
    config = copy.deepcopy(DEFAULT_CONFIG)
    prepare_config(config, REPOSITORY)
    sections = {"domains": "D", "sentiment": "S", "human": "H", "natural": "N", "metric_robustness": "M"}
    plan = study_plan(config, {**sections, **{family: family for family in config["perturbations"]["families"]}})
    cov_of = {directory: table.cov_meaningful for directory, table in plan.tables.items()}
    assert [directory for directory, meaningful in cov_of.items() if not meaningful] == [
        "human/wmt21-mqm/human", "human/wmt22-de-en/human", "human/wmt22-ja-en/human",
        "human/wmt22-zh-en/human"]  # MQM, two DA z studies and the zh-en MQM (mtme)
    assert cov_of["human/wmt21-mqm/bleu"] and cov_of["paper/bleu"]
    assert "COV means nothing and is not printed" in plan.tables["human/wmt22-ja-en/human"].scores
