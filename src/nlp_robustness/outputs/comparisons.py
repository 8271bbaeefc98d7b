"""The paired comparisons of a study table as CSV and Markdown: verdict matrices, then every difference.

The Markdown opens each statistic with its verdict matrix (row against column at the table's level, after
Holm's correction over the pairs) and a count of the pairs told apart, then lists every pair's difference
"value [lo, hi]", its adjusted p-value and, where it is not distinguishable, the units per domain that
would detect it. The CSV keeps every number at full precision.
"""

from __future__ import annotations

import math

import pandas as pd

from nlp_robustness.outputs.table_writer import csv_text, markdown_table
from nlp_robustness.statistics.comparisons import COMPARED_STATISTICS, verdict_matrix

__all__ = ["comparisons_markdown", "interval_text", "to_csv_text"]


def interval_text(value: float, low: float, high: float, decimals: int) -> str:
    """``value [low, high]`` at ``decimals`` places; the value alone without an interval; ``n/a`` without a value."""
    if not math.isfinite(value):
        return "n/a"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals}f} [{low:.{decimals}f}, {high:.{decimals}f}]"


def to_csv_text(comparisons: pd.DataFrame) -> str:
    """Every comparison at full precision."""
    return csv_text(comparisons)


def _p_text(p: float) -> str:
    return "n/a" if not math.isfinite(p) else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def _units_text(units: float) -> str:
    return "" if not math.isfinite(units) else f"{int(units):,}"


def comparisons_markdown(comparisons: pd.DataFrame, rows: list[str], title: str, confidence: float, decimals: int) -> str:
    """The Markdown report of one table's comparisons (module docstring)."""
    level = 1 - confidence
    parts = [f"# Paired comparisons: {title}\n",
             f"Whole pool. Differences row a - row b with {confidence:.0%} intervals from the paired bootstrap; "
             f"p-values Holm-adjusted over the pairs of each statistic; verdicts at level {level:g}. "
             "Lower Var, COV, gamma-area and between-domain SD = more consistent; for the mean, higher is better. "
             "'Units to detect': units per domain at which the observed difference would be detected with the configured power.\n"]
    if comparisons.empty:
        return "\n".join([*parts, "No pair of rows has replicates to compare.\n"])
    for statistic, name in COMPARED_STATISTICS.items():
        selected = comparisons[comparisons["statistic"] == statistic]
        if selected.empty:
            continue
        told = int((selected["verdict"] != "not distinguishable").sum())
        unpaired = int((~selected["paired"].astype(bool)).sum())
        note = f" ({unpaired} compared as independent samples: different units)" if unpaired else ""
        parts.append(f"## {name}: {told} of {len(selected)} pairs told apart{note}\n")
        present = [row for row in rows if row in set(selected["row_a"]) | set(selected["row_b"])]
        parts.append(markdown_table(verdict_matrix(selected, statistic, present), index=True))
        listing = pd.DataFrame({
            "row a": selected["row_a"], "row b": selected["row_b"],
            "difference [interval]": [interval_text(value, low, high, decimals)
                                      for value, low, high in zip(selected["difference"], selected["lo"], selected["hi"])],
            "p (Holm)": [_p_text(p) for p in selected["p_holm"]],
            "verdict": selected["verdict"],
            "units to detect": [_units_text(units) for units in selected["units_to_detect"]],
        })
        parts.append(markdown_table(listing, align="llrrlr"))
    return "\n".join(parts)
