"""The Between domains part of whole-pool tables: values, layout in every format, and tables that keep none."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from nlp_robustness.outputs.table_writer import html_table_document
from nlp_robustness.outputs.tables import (
    BETWEEN_NOTE,
    has_between_domains,
    robustness_table,
    table_caption,
    to_csv_text,
    to_html_text,
    to_latex_text,
    to_markdown_text,
)
from nlp_robustness.statistics.pools import pool_label

POOLS = ["none", "wmt15"]


def summary(offset: float, components: bool = True) -> pd.DataFrame:
    rows = []
    for position, left_out in enumerate(POOLS):
        for method in ("pool", "bagging"):
            pooled = method == "pool" and components
            rows.append({
                "left_out": left_out, "method": method, "mean": 10 + position + offset, "variance": 100.0 + position,
                "cov": 1.0 + position / 10, "between_variance": (2.0 + position) ** 2 if pooled else math.nan,
                "between_sd": 2.0 + position if pooled else math.nan, "within_sd": 9.0 if pooled else math.nan,
                "between_share": 0.04567 + offset / 100 if pooled else math.nan, "domain_mean_sd": 3.0 if pooled else math.nan,
            })
    return pd.DataFrame(rows)


@pytest.fixture
def table() -> pd.DataFrame:
    return robustness_table({"sys_a": summary(0.0), "sys-b": summary(5.0)}, "pool", POOLS)


def test_whole_pool_tables_gain_the_part_after_the_pool_groups(table: pd.DataFrame) -> None:
    assert has_between_domains(table)
    assert list(table.columns) == [
        ("none", "Mean"), ("none", "Var"), ("none", "COV"), ("wmt15", "Mean"), ("wmt15", "Var"), ("wmt15", "COV"),
        ("none", "Between SD"), ("none", "Between %"), ("wmt15", "Between SD"), ("wmt15", "Between %")]
    assert table.loc["sys_a", ("wmt15", "Between SD")] == 3.0
    assert table.loc["sys-b", ("none", "Between %")] == pytest.approx(9.567)  # share in percent
    assert table.loc["sys-b", ("wmt15", "Mean")] == 16.0


def test_bagging_tables_and_studies_without_components_have_no_part() -> None:
    bagging = robustness_table({"sys": summary(0.0)}, "bagging", POOLS)
    assert not has_between_domains(bagging) and bagging.shape[1] == 6
    without = robustness_table({"sys": summary(0.0, components=False)}, "pool", POOLS)
    old_shape = robustness_table({"sys": summary(0.0, components=False).iloc[:, :5]}, "pool", POOLS)
    pd.testing.assert_frame_equal(without, old_shape)
    # summaries as the table job reads them back: NaN written as empty fields
    text = summary(0.0, components=False).to_csv(sep="\t", index=False)
    read_back = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False)
    assert not has_between_domains(robustness_table({"sys": read_back}, "pool", POOLS))
    text = summary(0.0).to_csv(sep="\t", index=False)
    read_back = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False)
    assert robustness_table({"sys": read_back}, "pool", POOLS).loc["sys", ("none", "Between SD")] == 2.0


def test_tables_without_the_part_are_written_as_before() -> None:
    table = robustness_table({"sys": summary(0.0, components=False)}, "pool", POOLS)
    before = html_table_document(table.rename(columns=pool_label, level="left_out"), "caption", decimals=2, index=True)
    assert to_html_text(table, "caption", 2) == before
    assert r"& \multicolumn{6}{c}{Test pool} \\" in to_latex_text(table, "caption", "tab:x")
    assert table_caption("mt", "pool", "Sentence bleu", "test set") == table_caption("mt", "pool", "Sentence bleu", "test set", "", False)


def test_csv_and_markdown_headers_and_rounding(table: pd.DataFrame) -> None:
    frame = pd.read_csv(io.StringIO(to_csv_text(table)), index_col="system")
    assert list(frame.columns[6:]) == ["whole_pool_between_SD", "whole_pool_between_share_pct", "without_wmt15_between_SD",
                                       "without_wmt15_between_share_pct"]
    assert frame.at["sys_a", "whole_pool_between_share_pct"] == pytest.approx(4.567, rel=1e-12)
    markdown = to_markdown_text(table, "caption", decimals=2)
    assert markdown.splitlines()[0].endswith(
        "| COV (without wmt15) | Between SD (whole pool) | Between % (whole pool) | Between SD (without wmt15) | Between % (without wmt15) |")
    assert "| sys_a | 10.00 | 100.00 | 1.00 | 11.00 | 101.00 | 1.10 | 2.00 | 4.57 | 3.00 | 4.57 |" in markdown


def test_latex_names_both_parts_with_their_pools(table: pd.DataFrame) -> None:
    latex = to_latex_text(table, "caption", "tab:x")
    lines = latex.splitlines()
    top = lines.index(r"\toprule")
    assert lines[top + 1] == r"& \multicolumn{6}{c}{Test pool} & \multicolumn{4}{c}{Between domains} \\"
    assert lines[top + 2] == r"\cmidrule(lr){2-7} \cmidrule(lr){8-11}"
    assert lines[top + 3] == (r"Model & \multicolumn{3}{c}{whole pool} & \multicolumn{3}{c}{without wmt15} & "
                              r"\multicolumn{2}{c}{whole pool} & \multicolumn{2}{c}{without wmt15} \\")
    assert lines[top + 4] == r"\cmidrule(lr){2-4} \cmidrule(lr){5-7} \cmidrule(lr){8-9} \cmidrule(lr){10-11}"
    assert lines[top + 5] == r" & Mean & Var & COV & Mean & Var & COV & SD & Share (\%) & SD & Share (\%) \\"
    assert r"sys\_a & 10.00 & 100.00 & 1.00 & 11.00 & 101.00 & 1.10 & 2.00 & 4.57 & 3.00 & 4.57 \\" in lines
    assert r"\begin{tabular}{lrrrrrrrrrr}" in lines


def test_html_heads_the_parts_and_the_caption_says_what_they_hold(table: pd.DataFrame) -> None:
    caption = table_caption("mt", "pool", "Sentence bleu", "test set", "A note.", has_between_domains(table))
    assert caption.endswith(f"left out in turn. {BETWEEN_NOTE} A note.")
    document = to_html_text(table, caption, 2)
    assert '<th scope="colgroup" colspan="6">Test pool</th><th scope="colgroup" colspan="4">Between domains</th>' in document
    assert '<th scope="colgroup" colspan="2">without wmt15</th>' in document and "<th scope=\"col\">Share (%)</th>" in document
    assert '<td class="number">4.57</td>' in document and '<td class="number">2.00</td>' in document
