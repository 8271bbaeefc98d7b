"""The one table writer: escaping, rounding and the missing-value marker in every format, and golden
outputs of the writers it replaced (texts the old code wrote for these frames, written out literally;
the only change is the missing marker, once "n/a", now an en dash)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.display_names import MISSING, METRIC_NAMES, metric_name
from nlp_robustness.outputs.metric_robustness import frame_markdown
from nlp_robustness.outputs.natural_robustness import changes_markdown
from nlp_robustness.outputs.table_writer import (
    csv_text,
    format_value,
    html_table_document,
    is_missing,
    latex_cell,
    latex_escape,
    latex_row,
    markdown_escape,
    markdown_table,
    write_summary_table,
)
from nlp_robustness.outputs.tables import robustness_table, to_csv_text, to_latex_text, to_markdown_text


def test_the_missing_marker_is_an_en_dash_for_every_kind_of_missing_value() -> None:
    assert MISSING == "\u2013"
    for value in (None, pd.NA, pd.NaT, math.nan, np.float64("nan")):
        assert is_missing(value) and format_value(value, 2) == MISSING and latex_cell(value, 3) == MISSING
    for value in (0, 0.0, "", "n/a", False):
        assert not is_missing(value)


def test_rounding_fixed_decimals_integers_booleans_and_unrounded_floats() -> None:
    assert format_value(2 / 3, 2) == "0.67" and format_value(0.125, 2) == "0.12"  # round half to even, as f-strings do
    assert format_value(-0.001, 2) == "-0.00"  # Markdown/LaTeX print fixed decimals exactly
    assert format_value(3.2e-05, 3, keep_small=True) == "3.2e-05" and format_value(-0.0, 3, keep_small=True) == "0.000"
    assert format_value(np.int64(3000), 3) == "3000" and format_value(True, 2) == "True"
    assert format_value(0.1 + 0.2) == "0.30000000000000004" and format_value(1e-07) == "1e-07"  # no decimals: as Python prints


def test_markdown_escapes_pipes_and_line_breaks_in_headers_and_cells() -> None:
    assert markdown_escape("a|b\r\nc") == "a\\|b  c"
    frame = pd.DataFrame({"x|y": ["one\ntwo", "p|q"], "n": [1.5, math.nan]})
    assert markdown_table(frame, align="lr", decimals=1, caption="C") == (
        "| x\\|y | n |\n|---|---:|\n| one two | 1.5 |\n| p\\|q | \u2013 |\n\nC\n")
    with pytest.raises(ValueError, match="align"):
        markdown_table(frame, align="l")


def test_latex_escapes_its_special_characters() -> None:
    assert latex_escape(r"a_b & 50% #1 $x$ {y} ~ ^ \ |") == (
        r"a\_b \& 50\% \#1 \$x\$ \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{} |")
    assert latex_row(["a", latex_cell(1 / 3, 2), latex_cell(math.nan)]) == r"a & 0.33 & " + MISSING + r" \\"


def test_html_escapes_text_and_marks_missing_cells() -> None:
    document = html_table_document(pd.DataFrame({"name": ["<b> & c"], "v": [math.nan]}), "T <1> & 2")
    assert "<td>&lt;b&gt; &amp; c</td>" in document and f'<td class="missing">{MISSING}</td>' in document
    assert "<caption>T &lt;1&gt; &amp; 2</caption>" in document


def _robustness() -> pd.DataFrame:
    def summary(mean: float, cov: object) -> pd.DataFrame:
        return pd.DataFrame([{"left_out": left_out, "method": "pool", "mean": mean + index, "variance": 2.0 / 3,
                              "cov": cov if index else 0.125} for index, left_out in enumerate(["none", "wmt_14"])])

    return robustness_table({"sys_a": summary(10.0, 0.5), "b & c": summary(0.0, "")}, "pool", ["none", "wmt_14"])


def test_robustness_table_golden_markdown_latex_and_csv() -> None:
    """MultiIndex columns (pool, statistic) flattened for Markdown, grouped by multicolumns in LaTeX."""
    table = _robustness()
    assert to_markdown_text(table, "Cap 50%.") == (
        "| system | Mean (whole pool) | Var (whole pool) | COV (whole pool) | Mean (without wmt_14) | Var (without wmt_14) | COV (without wmt_14) |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n"
        "| sys_a | 10.00 | 0.67 | 0.12 | 11.00 | 0.67 | 0.50 |\n"
        "| b & c | 0.00 | 0.67 | 0.12 | 1.00 | 0.67 | \u2013 |\n\nCap 50%.\n")
    assert to_latex_text(table, "Cap 50%.", "tab:x") == (
        "\\begin{table}[t]\n\\centering\n\\small\n\\begin{tabular}{lrrrrrr}\n\\toprule\n"
        "& \\multicolumn{6}{c}{Test pool} \\\\\n"
        "Model & \\multicolumn{3}{c}{whole pool} & \\multicolumn{3}{c}{without wmt\\_14} \\\\\n"
        "\\cmidrule(lr){2-4} \\cmidrule(lr){5-7}\n & Mean & Var & COV & Mean & Var & COV \\\\\n\\midrule\n"
        "sys\\_a & 10.00 & 0.67 & 0.12 & 11.00 & 0.67 & 0.50 \\\\\n"
        "b \\& c & 0.00 & 0.67 & 0.12 & 1.00 & 0.67 & \u2013 \\\\\n"
        "\\bottomrule\n\\end{tabular}\n\\caption{Cap 50\\%.}\n\\label{tab:x}\n\\end{table}\n")
    assert to_csv_text(table) == (
        "system,whole_pool_Mean,whole_pool_Var,whole_pool_COV,without_wmt_14_Mean,without_wmt_14_Var,without_wmt_14_COV\n"
        "sys_a,10.0,0.6666666666666666,0.125,11.0,0.6666666666666666,0.5\n"
        "b & c,0.0,0.6666666666666666,0.125,1.0,0.6666666666666666,\n")


def test_robustness_table_html_groups_the_statistics_under_each_pool() -> None:
    document = html_table_document(_robustness(), "t", decimals=2, index=True)
    assert '<tr><th scope="col" rowspan="2">system</th><th scope="colgroup" colspan="3">none</th>' in document
    assert '<th scope="col">COV</th></tr>' in document and f'<td class="missing">{MISSING}</td>' in document


def test_small_frame_and_summary_goldens(tmp_path) -> None:
    rates = pd.DataFrame({"attack": ["none", "visual"], "p": [0.0, 0.1], "segments": [3, 3], "word_rate": [0.0, 1 / 3]})
    assert frame_markdown(rates, "Rates") == (
        "| attack | p | segments | word_rate |\n|---|---|---|---|\n| none | 0.000 | 3 | 0.000 |\n| visual | 0.100 | 3 | 0.333 |\n\nRates\n")
    summary = pd.DataFrame({"dataset": ["wmt|14", "bio"], "rows": [3000, 12], "share": [0.5, 1e-07], "ok": [True, False]})
    expected = "| dataset | rows | share | ok |\n|---|---|---|---|\n| wmt\\|14 | 3000 | 0.5 | True |\n| bio | 12 | 1e-07 | False |\n"
    assert markdown_table(summary) == expected
    write_summary_table(summary, tmp_path / "s.csv", tmp_path / "s.md")
    assert (tmp_path / "s.md").read_text(encoding="utf-8") == expected
    assert (tmp_path / "s.csv").read_text(encoding="utf-8") == csv_text(summary) == (
        "dataset,rows,share,ok\nwmt|14,3000,0.5,True\nbio,12,1e-07,False\n")


def test_natural_changes_golden() -> None:
    changes = pd.DataFrame([{"inputs": "reviews", "family": "natural", "type": "typos", "sampled": 10, "perturbed": 8,
                             "skipped": 2, "share_perturbed": 0.8, "rejected_by_meaning_check": 0.1, "chrf_to_input": 91.25,
                             "levenshtein_similarity_to_input": math.nan}])
    assert changes_markdown(changes).startswith(
        "| inputs | family | type | sampled | perturbed | skipped | rejected by meaning check | chrF to input | Levenshtein similarity |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|\n| reviews | natural | typos | 10 | 8 | 2 | 0.10 | 91.2 | \u2013 |\n\nHow much")


def test_display_names_are_one_registry() -> None:
    assert metric_name("chrf") == "chrF" and metric_name("meteor") == "meteor"
    assert set(METRIC_NAMES) == {"bleu", "chrf", "levenshtein"}
