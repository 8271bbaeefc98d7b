"""Robustness tables shaped like the paper's Tables 1, 3 and 5, as CSV, Markdown, LaTeX and HTML.

Rows are systems (or classifiers); column groups are the whole pool, then the pool without each left-out
domain in turn; each group holds Mean, Var and COV. The CSV keeps full precision (the engine's summaries are
written at full precision too) with flat headers ``whole_pool_<statistic>`` and ``without_<left_out>_<statistic>``
(easy to load; :func:`.pools.csv_group`: the values are those of the pool *without* that domain); Markdown,
LaTeX and HTML name the groups ``whole pool`` and ``without <left_out>`` (:func:`.pools.pool_label`) and round to
two decimals as the paper prints them (three for accuracies).

**COV only where it means something.** COV = sigma / mu is a ratio of a score measured from a true zero; a
score whose mean is near or below 0 (a human MQM score, negative; a rater-standardised DA z score, centred on
0) gives a COV that means nothing, and its bootstrap interval need not even hold its estimate (504.067
[0.000, 304.226] on a DA z score). The study plan marks such a table (:attr:`.plan.StudyTable.cov_meaningful`)
and :func:`robustness_table` then leaves the COV columns out of every format (``with_cov=False``).

The whole-pool table (method ``pool``) of a study whose summaries hold the between/within-domain
decomposition (:mod:`nlp_robustness.statistics.variance_components`) gets a second part, **Between
domains**, after the pool groups: for the whole pool and each left-out domain again, the between-domain
SD and its share of the variance in percent (CSV: ``<pool>_between_SD``, ``<pool>_between_share_pct``).
"""

from __future__ import annotations

import math

from collections.abc import Hashable, Iterable, Mapping, Sequence

import pandas as pd

from nlp_robustness.display_names import METHOD_DESCRIPTIONS
from nlp_robustness.errors import InputError
from nlp_robustness.outputs.table_writer import (
    csv_text,
    html_table_document,
    latex_cell,
    latex_escape,
    latex_row,
    latex_table,
    markdown_table,
)
from nlp_robustness.statistics.pools import column_groups, csv_group, pool_label

__all__ = ["BETWEEN_DOMAINS", "BETWEEN_NOTE", "BETWEEN_STATISTICS", "PAPER_TABLES", "STATISTICS", "csv_group", "has_between_domains",
           "interval_cells", "robustness_intervals", "robustness_table", "table_caption", "to_csv_text", "to_html_text", "to_latex_text", "to_markdown_text"]

STATISTICS = {"mean": "Mean", "variance": "Var", "cov": "COV"}

#: The part of a whole-pool table after the pool groups, and its statistics (summary column -> name).
BETWEEN_DOMAINS = "Between domains"
BETWEEN_STATISTICS = {"between_sd": "Between SD", "between_share": "Between %"}
#: How the between statistics read under their part's header (LaTeX, HTML) and in a CSV header.
_SHARE = BETWEEN_STATISTICS["between_share"]
_BETWEEN_SHORT = {"Between SD": "SD", _SHARE: "Share (%)"}
_BETWEEN_CSV = {"Between SD": "between_SD", "Between %": "between_share_pct"}
#: Decimals of the share in percent, whatever the table's.
_SHARE_DECIMALS = 2
#: What the Between domains part holds, for the captions of the tables that have it.
BETWEEN_NOTE = (
    "Between domains: the between-domain SD of the unit scores and its share (%) of their variance, "
    "sigma2_b / (sigma2_b + sigma2_w), from a one-way random-effects decomposition by domain (method of moments); "
    "a pool of one domain has none."
)

#: The paper's table of each method, for MT (sentence scores) and for sentiment (domain-level accuracy).
PAPER_TABLES = {
    "mt": {"pool": 1, "bagging": 3, "design_bagging": 5},
    "sentiment": {"pool": 2, "bagging": 4, "design_bagging": 6},
}


def table_caption(branch: str, method: str, scores: str, pool: str, note: str = "", between_domains: bool = False,
                  leave_out: Sequence[str] | None = None) -> str:
    """Caption of a robustness table: what is scored, the method and its paper table (a branch without
    one, e.g. ``human``, gets none), the column groups (``leave_out``: the table's pools, naming the domains
    left out; None: each ``pool`` in turn, unnamed), what the Between domains part holds (when the
    table has it: :func:`has_between_domains`), a note."""
    paper_table = PAPER_TABLES.get(branch, {}).get(method)
    reference = f" (paper Table {paper_table})" if paper_table else ""
    groups = f"the whole pool, then each {pool} left out in turn" if leave_out is None else column_groups(leave_out, pool)
    caption = f"{scores}. {METHOD_DESCRIPTIONS[method]}{reference}. Column groups: {groups}."
    if between_domains:
        caption = f"{caption} {BETWEEN_NOTE}"
    return f"{caption} {note}" if note else caption


def has_between_domains(table: pd.DataFrame) -> bool:
    """Whether a :func:`robustness_table` has the Between domains part."""
    return any(statistic in BETWEEN_STATISTICS.values() for _, statistic in table.columns)


def robustness_table(
    summaries: Mapping[str, pd.DataFrame], method: str, leave_out: Sequence[str], row_label: str = "system",
    with_cov: bool = True,
) -> pd.DataFrame:
    """One row per system (or classifier: ``row_label`` names the rows), columns ``(left_out, statistic)`` for ``method``.

    The ``pool`` table gets the Between domains part (statistics :data:`BETWEEN_STATISTICS`, the share in
    percent) when every summary has its columns and one of them holds a value (a study without the
    decomposition has NaN throughout). ``with_cov=False`` (a score whose mean is near or below 0): no COV
    columns (module docstring).
    """
    between = method == "pool" and _has_components(summaries.values())
    statistics = {column: name for column, name in STATISTICS.items() if with_cov or column != "cov"}
    rows = {}
    for system, summary in summaries.items():
        selected = summary[summary["method"] == method].set_index("left_out")
        missing = [label for label in leave_out if label not in selected.index]
        if missing:
            raise InputError(f"summary of system {system} has no {method} row for left-out {', '.join(missing)}")
        rows[system] = {
            (label, name): _as_float(selected.at[label, column])
            for label in leave_out
            for column, name in statistics.items()
        }
        if between:
            rows[system] |= {
                (label, name): _as_float(selected.at[label, column]) * (100.0 if column == "between_share" else 1.0)
                for label in leave_out
                for column, name in BETWEEN_STATISTICS.items()
            }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["left_out", "statistic"])
    table.index.name = row_label
    return table


def robustness_intervals(table: pd.DataFrame, summaries: Mapping[str, pd.DataFrame], method: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lower and upper ends of every cell of a :func:`robustness_table` (same shape; NaN where a summary
    has no interval), from the summaries' ``<statistic>_lo`` / ``_hi`` columns (the share in percent)."""
    names = {name: column for column, name in {**STATISTICS, **BETWEEN_STATISTICS}.items()}
    bounds = []
    for bound in ("lo", "hi"):
        frame = pd.DataFrame(math.nan, index=table.index, columns=table.columns)
        for system, summary in summaries.items():
            selected = summary[summary["method"] == method].set_index("left_out")
            for label, name in table.columns:
                column = f"{names[name]}_{bound}"
                if column in selected.columns:
                    scale = 100.0 if names[name] == "between_share" else 1.0
                    frame.at[system, (label, name)] = _as_float(selected.at[label, column]) * scale
        bounds.append(frame)
    return bounds[0], bounds[1]


def interval_cells(table: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame, decimals: int) -> pd.DataFrame:
    """Every cell as printed text "value [lo, hi]" (the value alone where it has no interval; the share (%) at
    two decimals): what the Markdown, LaTeX and HTML tables show."""
    cells = pd.DataFrame("", index=table.index, columns=table.columns)
    for column in table.columns:
        places = _SHARE_DECIMALS if column[1] == _SHARE else decimals
        cells[column] = [_interval_text(value, lo, hi, places)
                         for value, lo, hi in zip(table[column], low[column], high[column], strict=True)]
    return cells


def _interval_text(value: float, low: float, high: float, decimals: int) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isnan(low) or math.isnan(high):
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals}f} [{low:.{decimals}f}, {high:.{decimals}f}]"


def _has_components(summaries: Iterable[pd.DataFrame]) -> bool:
    """Whether every summary has the decomposition's columns and some pool row of them holds a value."""
    frames = [summary[summary["method"] == "pool"] for summary in summaries]
    if not frames or not all(set(BETWEEN_STATISTICS) <= set(frame.columns) for frame in frames):
        return False
    return any(not math.isnan(_as_float(value)) for frame in frames for value in frame["between_sd"])


def _as_float(value: object) -> float:
    """A summary value as a float: an empty field is a COV with no value (0/0: no spread and a zero mean)."""
    return math.nan if value == "" else float(value)


def to_csv_text(table: pd.DataFrame, low: pd.DataFrame | None = None, high: pd.DataFrame | None = None) -> str:
    """CSV at full precision (shortest round-trip form) with flat headers ``<row label>, whole_pool_Mean,
    whole_pool_Var, whole_pool_COV, without_<left_out>_Mean, ...`` (then ``whole_pool_between_SD``,
    ``whole_pool_between_share_pct``, ... in a table with the Between domains part); with ``low`` and
    ``high`` (:func:`robustness_intervals`) every column is followed by its ``_lo`` and ``_hi`` columns."""
    names = [f"{csv_group(left_out)}_{_BETWEEN_CSV.get(statistic, statistic)}" for left_out, statistic in table.columns]
    if low is None or high is None:
        return csv_text(table.set_axis(names, axis=1), index=True)
    columns = {}
    for name, column in zip(names, table.columns, strict=True):
        columns[name], columns[f"{name}_lo"], columns[f"{name}_hi"] = table[column], low[column], high[column]
    flat = pd.DataFrame(columns, index=table.index)
    return csv_text(flat, index=True)


def _share_decimals(labels: Sequence[Hashable], statistics: Sequence[str]) -> dict[Hashable, int]:
    """The decimals of the share columns (``labels`` the printed labels, ``statistics`` their statistics)."""
    return {label: _SHARE_DECIMALS for label, statistic in zip(labels, statistics, strict=True) if statistic == _SHARE}


def to_markdown_text(table: pd.DataFrame, caption: str, decimals: int = 2) -> str:
    """GitHub Markdown: one header row naming the left-out set and statistic (Markdown has no column spans).

    Values are rounded to ``decimals`` places (2 as the paper prints BLEU; accuracies' COV needs 3), the
    between-domain share (%) to two.
    """
    flat = table.copy()
    flat.columns = [f"{statistic} ({pool_label(left_out)})" for left_out, statistic in table.columns]
    flat.index.name = str(table.index.name or "system")
    shares = _share_decimals(list(flat.columns), [statistic for _, statistic in table.columns])
    return markdown_table(flat, caption=caption, index=True, decimals=decimals, column_decimals=shares,
                          align="l" + "r" * flat.shape[1])


def _parts(table: pd.DataFrame) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """The table's columns as parts (Test pool, Between domains), each a list of pool groups with their statistics."""
    parts: list[tuple[str, list[tuple[str, list[str]]]]] = []
    for left_out, statistic in table.columns:
        part = BETWEEN_DOMAINS if statistic in _BETWEEN_SHORT else "Test pool"
        if not parts or parts[-1][0] != part:
            parts.append((part, []))
        groups = parts[-1][1]
        if not groups or groups[-1][0] != left_out:
            groups.append((left_out, []))
        groups[-1][1].append(_BETWEEN_SHORT.get(statistic, statistic))
    return parts


def _cmidrules(widths: Sequence[int]) -> str:
    """A rule under each of consecutive column groups of ``widths`` columns, after the row label's column."""
    rules, first = [], 2
    for width in widths:
        rules.append(rf"\cmidrule(lr){{{first}-{first + width - 1}}}")
        first += width
    return " ".join(rules)


def to_latex_text(table: pd.DataFrame, caption: str, label: str, decimals: int = 2) -> str:
    """A booktabs table with one multicolumn group per left-out test set (needs \\usepackage{booktabs});
    the Between domains part, when there is one, has its own header over its groups."""
    parts = _parts(table)
    groups = [group for _, part_groups in parts for group in part_groups]
    column_spec = "l" + "r" * table.shape[1]
    group_header = latex_row(
        ["Model"] + [rf"\multicolumn{{{len(names)}}}{{c}}{{{latex_escape(pool_label(left_out))}}}" for left_out, names in groups]
    )
    rules = _cmidrules([len(names) for _, names in groups])
    statistic_header = latex_row([""] + [latex_escape(name) for _, names in groups for name in names])
    body = [latex_row([latex_escape(str(system))] + [latex_cell(value, _SHARE_DECIMALS if statistic == _SHARE else decimals)
                                                    for (_, statistic), value in zip(table.columns, values, strict=True)])
            for system, values in table.iterrows()]
    part_widths = [sum(len(names) for _, names in part_groups) for _, part_groups in parts]
    part_header = "& " + " & ".join(rf"\multicolumn{{{width}}}{{c}}{{{part}}}" for (part, _), width in zip(parts, part_widths)) + r" \\"
    header = [part_header]
    if len(parts) > 1:  # rules under the parts too, as under the pools
        header.append(_cmidrules(part_widths))
    return latex_table(column_spec, [*header, group_header, rules, statistic_header], body, caption, label)


def to_html_text(table: pd.DataFrame, caption: str, decimals: int = 2) -> str:
    """A self-contained HTML document (:func:`.table_writer.html_table_document`): pools named as a reader
    names them (``whole pool``, ``without wmt14``); with the Between domains part, a first header row names
    the parts (Test pool, Between domains)."""
    if has_between_domains(table):
        columns = [(part, pool_label(left_out), name) for part, groups in _parts(table) for left_out, names in groups for name in names]
        frame = table.set_axis(pd.MultiIndex.from_tuples(columns, names=["part", "left_out", "statistic"]), axis=1)
    else:
        frame = table.rename(columns=pool_label, level="left_out")
    shares = _share_decimals(list(frame.columns), [statistic for _, statistic in table.columns])
    return html_table_document(frame, caption, decimals=decimals, column_decimals=shares, index=True)
