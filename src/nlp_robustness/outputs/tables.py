"""Robustness tables shaped like the paper's Tables 1, 3 and 5, as CSV, Markdown and LaTeX.

Rows are systems (or classifiers); column groups are the whole pool, then each left-out domain; each
group holds Mean, Var and COV. The CSV keeps full precision (the engine's summaries are written at full
precision too) with flat headers ``whole_pool_<statistic>`` and ``<left_out>_<statistic>`` (easy to
load); Markdown and LaTeX round to two decimals as the paper prints them (three for accuracies).
"""

from __future__ import annotations

import math

from collections.abc import Mapping, Sequence

import pandas as pd

from nlp_robustness.display_names import METHOD_DESCRIPTIONS
from nlp_robustness.errors import InputError
from nlp_robustness.outputs.table_writer import csv_text, latex_cell, latex_escape, latex_row, latex_table, markdown_table
from nlp_robustness.statistics.engine import csv_group, pool_label

__all__ = ["PAPER_TABLES", "STATISTICS", "csv_group", "robustness_table", "table_caption", "to_csv_text", "to_latex_text",
           "to_markdown_text"]

STATISTICS = {"mean": "Mean", "variance": "Var", "cov": "COV"}

#: The paper's table of each method, for MT (sentence scores) and for sentiment (domain-level accuracy).
PAPER_TABLES = {
    "mt": {"pool": 1, "bagging": 3, "design_bagging": 5},
    "sentiment": {"pool": 2, "bagging": 4, "design_bagging": 6},
}


def table_caption(branch: str, method: str, scores: str, pool: str, note: str = "") -> str:
    """Caption of a robustness table: what is scored, the method and its paper table (a branch without
    one, e.g. ``human``, gets none), the column groups, a note."""
    paper_table = PAPER_TABLES.get(branch, {}).get(method)
    reference = f" (paper Table {paper_table})" if paper_table else ""
    caption = f"{scores}. {METHOD_DESCRIPTIONS[method]}{reference}. Column groups: the whole pool, then each {pool} left out in turn."
    return f"{caption} {note}" if note else caption


def robustness_table(
    summaries: Mapping[str, pd.DataFrame], method: str, leave_out: Sequence[str], row_label: str = "system"
) -> pd.DataFrame:
    """One row per system (or classifier: ``row_label`` names the rows), columns ``(left_out, statistic)`` for ``method``."""
    rows = {}
    for system, summary in summaries.items():
        selected = summary[summary["method"] == method].set_index("left_out")
        missing = [label for label in leave_out if label not in selected.index]
        if missing:
            raise InputError(f"summary of system {system} has no {method} row for left-out {', '.join(missing)}")
        rows[system] = {
            (label, name): _as_float(selected.at[label, column])
            for label in leave_out
            for column, name in STATISTICS.items()
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["left_out", "statistic"])
    table.index.name = row_label
    return table


def _as_float(value: object) -> float:
    """A summary value as a float: an empty field is a COV with no value (0/0: no spread and a zero mean)."""
    return math.nan if value == "" else float(value)


def to_csv_text(table: pd.DataFrame) -> str:
    """CSV at full precision (shortest round-trip form) with flat headers ``<row label>, whole_pool_Mean,
    whole_pool_Var, whole_pool_COV, <left_out>_Mean, ...``."""
    flat = table.copy()
    flat.columns = [f"{csv_group(left_out)}_{statistic}" for left_out, statistic in table.columns]
    return csv_text(flat, index=True)


def to_markdown_text(table: pd.DataFrame, caption: str, decimals: int = 2) -> str:
    """GitHub Markdown: one header row naming the left-out set and statistic (Markdown has no column spans).

    Values are rounded to ``decimals`` places (2 as the paper prints BLEU; accuracies' COV needs 3).
    """
    flat = table.copy()
    flat.columns = [f"{statistic} ({pool_label(left_out)})" for left_out, statistic in table.columns]
    flat.index.name = str(table.index.name or "system")
    return markdown_table(flat, caption=caption, index=True, decimals=decimals, align="l" + "r" * flat.shape[1])


def to_latex_text(table: pd.DataFrame, caption: str, label: str, decimals: int = 2) -> str:
    """A booktabs table with one multicolumn group per left-out test set (needs \\usepackage{booktabs})."""
    groups = list(dict.fromkeys(left_out for left_out, _ in table.columns))
    n_statistics = len(STATISTICS)
    column_spec = "l" + "rrr" * len(groups)
    group_header = latex_row(
        ["Model"] + [rf"\multicolumn{{{n_statistics}}}{{c}}{{{latex_escape(pool_label(group))}}}" for group in groups]
    )
    rules = " ".join(
        rf"\cmidrule(lr){{{2 + index * n_statistics}-{1 + (index + 1) * n_statistics}}}" for index in range(len(groups))
    )
    statistic_header = latex_row([""] + list(STATISTICS.values()) * len(groups))
    body = [latex_row([latex_escape(str(system))] + [latex_cell(value, decimals) for value in values])
            for system, values in table.iterrows()]
    header = [
        rf"& \multicolumn{{{n_statistics * len(groups)}}}{{c}}{{Test pool}} \\",
        group_header,
        rules,
        statistic_header,
    ]
    return latex_table(column_spec, header, body, caption, label)
