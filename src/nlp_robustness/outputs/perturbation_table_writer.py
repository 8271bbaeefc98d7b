"""Paper 004's word-order tables (:mod:`nlp_robustness.outputs.perturbation_tables`) printed and written: the means
table as CSV, Markdown and LaTeX, the means over the functions and the flip examples as CSV and Markdown.

CSV keeps full precision with ``<stat>_lo`` / ``<stat>_hi`` columns (for beta2 - beta1 the Holm-adjusted
interval, then ``beta2_minus_beta1_lo_unadjusted`` / ``_hi_unadjusted``); Markdown and LaTeX print
"value [lo, hi]" with scores to 2 decimals, fractions and p-values to 3, and the unadjusted interval of
beta2 - beta1 as "[lo, hi]" in a column of its own headed so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from nlp_robustness.outputs.perturbation_tables import SCORE_NAMES
from nlp_robustness.outputs.table_writer import (csv_text, format_value, latex_cell, latex_escape, latex_row, latex_table, markdown_table,
                                                 p_value_text, write_text)
from nlp_robustness.statistics.perturbation_intervals import INTERVAL_STATISTICS, UNADJUSTED_BOUNDS

__all__ = [
    "FLIP_HEADERS",
    "FRACTION_COLUMNS",
    "LATEX_HEADERS",
    "MARKDOWN_HEADERS",
    "NUMERIC_COLUMNS",
    "PRINTED_DECIMALS",
    "SCORE_COLUMNS",
    "UNADJUSTED_INTERVAL",
    "means_latex_text",
    "means_markdown_text",
    "over_functions_markdown_text",
    "write_flip_examples",
    "write_means_tables",
    "write_over_functions_tables",
]

#: The printed column of the unadjusted interval ("[lo, hi]") that replaces :data:`UNADJUSTED_BOUNDS` in Markdown and LaTeX.
UNADJUSTED_INTERVAL = "beta2_minus_beta1_unadjusted"
#: Columns of the means table that are scores (2 decimals) or fractions (3 decimals) when printed.
SCORE_COLUMNS = (*SCORE_NAMES, "beta2_minus_beta1", *UNADJUSTED_BOUNDS)
FRACTION_COLUMNS = ("kept_fraction", "flip_fraction", "p", "p_holm")
#: Decimals of the printed scores (2, as the paper prints BLEU) and fractions and p-values (3); counts print as integers.
PRINTED_DECIMALS = {**dict.fromkeys(SCORE_COLUMNS, 2), **dict.fromkeys(FRACTION_COLUMNS, 3), "flip_margin": 2}
#: Columns right-aligned when printed (numbers).
NUMERIC_COLUMNS = (*SCORE_COLUMNS, UNADJUSTED_INTERVAL, *FRACTION_COLUMNS, "sampled", "kept", "flips", "functions", "flip_margin")

#: How the means table's columns are headed in Markdown and LaTeX.
MARKDOWN_HEADERS = {"system": "system", "function": "function", "category": "category", "sampled": "sampled",
                    "kept": "kept", "kept_fraction": "kept fraction", "beta": "β", "beta1": "β1 (robust)",
                    "beta2": "β2 (faithful)", "alpha": "α", "beta2_minus_beta1": "β2 − β1 [Holm-adjusted interval]",
                    UNADJUSTED_INTERVAL: "β2 − β1 unadjusted interval", "p": "p (β2 = β1)",
                    "p_holm": "p Holm", "flips": "flips (β1 > β + margin)", "flip_fraction": "flip fraction",
                    "functions": "functions"}
LATEX_HEADERS = {"system": "System", "function": "Function", "category": "Category", "sampled": "Sampled",
                 "kept": "Kept", "kept_fraction": "Kept frac.", "beta": r"$\beta$", "beta1": r"$\beta_1$",
                 "beta2": r"$\beta_2$", "alpha": r"$\alpha$", "beta2_minus_beta1": r"$\beta_2-\beta_1$ [Holm-adj.]",
                 UNADJUSTED_INTERVAL: r"$\beta_2-\beta_1$ unadj. interval",
                 "p": "$p$", "p_holm": r"$p_{\mathrm{Holm}}$", "flips": "Flips", "flip_fraction": "Flip frac."}
FLIP_HEADERS = {"system": "system", "function": "function", "testset": "test set", "segment_id": "segment",
                "source": "source", "perturbed_source": "perturbed source", "beta": "β", "beta1": "β1",
                "translation": "translation of source", "perturbed_translation": "translation of perturbed source",
                "reference": "reference"}


def _printed(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its scores and fractions as floats, so that a whole-number score prints with its
    decimals, each statistic with bounds as one "value [lo, hi]" text (its bound columns dropped), and the
    unadjusted interval of beta2 - beta1 as "[lo, hi]" in its own column after it, p-values as every table prints
    them (:func:`.table_writer.p_value_text`: "< 0.001", never "0.000")."""
    table = table.astype({column: float for column in PRINTED_DECIMALS if column in table.columns})
    for column in ("p", "p_holm"):
        if column in table.columns:
            table[column] = [p_value_text(value) for value in table[column]]
    table = table.drop(columns=[column for column in ("flip_margin",) if column in table.columns])
    if all(column in table.columns for column in UNADJUSTED_BOUNDS):
        decimals = PRINTED_DECIMALS["beta2_minus_beta1"]
        texts = [format_value(low, decimals) if pd.isna(low) or pd.isna(high) else f"[{format_value(low, decimals)}, {format_value(high, decimals)}]"
                 for low, high in zip(*(table[column] for column in UNADJUSTED_BOUNDS))]
        table.insert(table.columns.get_loc(UNADJUSTED_BOUNDS[0]), UNADJUSTED_INTERVAL, texts)
        table = table.drop(columns=list(UNADJUSTED_BOUNDS))
    for stat in INTERVAL_STATISTICS:
        if f"{stat}_lo" not in table.columns:
            continue
        decimals = PRINTED_DECIMALS[stat]
        table[stat] = [
            format_value(value, decimals) if pd.isna(value) or pd.isna(low)
            else f"{format_value(value, decimals)} [{format_value(low, decimals)}, {format_value(high, decimals)}]"
            for value, low, high in zip(table[stat], table[f"{stat}_lo"], table[f"{stat}_hi"])
        ]
        table = table.drop(columns=[f"{stat}_lo", f"{stat}_hi"])
    return table


def _markdown_text(table: pd.DataFrame, headers: Mapping[str, str], caption: str) -> str:
    table = _printed(table)
    align = "".join("r" if column in NUMERIC_COLUMNS else "l" for column in table.columns)
    return markdown_table(table, caption=caption, headers=headers, align=align, column_decimals=PRINTED_DECIMALS)


def means_markdown_text(table: pd.DataFrame, caption: str) -> str:
    """The means table as GitHub Markdown followed by ``caption``."""
    return _markdown_text(table, MARKDOWN_HEADERS, caption)


def over_functions_markdown_text(table: pd.DataFrame, caption: str) -> str:
    """The over-functions table as GitHub Markdown followed by ``caption``."""
    return _markdown_text(table, MARKDOWN_HEADERS, caption)


def write_over_functions_tables(table: pd.DataFrame, csv_path: str | os.PathLike[str],
                                markdown_path: str | os.PathLike[str], caption: str) -> None:
    """Write the over-functions table as CSV (full precision) and Markdown ("value [lo, hi]")."""
    write_text(csv_text(table), csv_path)
    write_text(over_functions_markdown_text(table, caption), markdown_path)


def means_latex_text(table: pd.DataFrame, caption: str, label: str) -> str:
    """The means table as a booktabs table (system printed once per block, a rule between systems)."""
    table = _printed(table)
    columns = list(table.columns)
    column_spec = "".join("r" if column in NUMERIC_COLUMNS else "l" for column in columns)
    body: list[str] = []
    previous_system = None
    for _, row in table.iterrows():
        system = row["system"]
        if previous_system is not None and system != previous_system:
            body.append(r"\midrule")
        cells = []
        for column in columns:
            if column == "system":
                cells.append(latex_escape(str(system)) if system != previous_system else "")
            else:
                cells.append(latex_cell(row[column], PRINTED_DECIMALS.get(column)))
        body.append(latex_row(cells))
        previous_system = system
    header = [latex_row(LATEX_HEADERS.get(column, latex_escape(column)) for column in columns)]
    return latex_table(column_spec, header, body, caption, label)


def write_means_tables(
    table: pd.DataFrame,
    csv_path: str | os.PathLike[str],
    markdown_path: str | os.PathLike[str],
    latex_path: str | os.PathLike[str],
    caption: str,
    label: str,
) -> None:
    """Write the means table as CSV (full precision, NaN as an empty field), Markdown and LaTeX, each atomically."""
    write_text(csv_text(table), csv_path)
    write_text(means_markdown_text(table, caption), markdown_path)
    write_text(means_latex_text(table, caption, label), latex_path)

def write_flip_examples(
    frame: pd.DataFrame,
    csv_path: str | os.PathLike[str],
    markdown_path: str | os.PathLike[str],
    caption: str,
) -> None:
    """Write flip examples as CSV (full precision) and Markdown (scores with 2 decimals, ``|`` escaped)."""
    write_text(csv_text(frame), csv_path)
    write_text(_markdown_text(frame, FLIP_HEADERS, caption), markdown_path)
