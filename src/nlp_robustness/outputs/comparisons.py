"""The paired comparisons of a study table as CSV and Markdown: verdict matrices, then every difference.

The Markdown leads with the statistic that answers "is this row more even across these domains?" (the
between-domain SD, where the study has it), and says in one line what each statistic measures: on a sample of
unit scores (sentence BLEU of segments) pooled Var and COV mostly restate quality, since a better system's
scores sit nearer the bound. Each statistic, within each family of rows, opens with its verdict matrix (row
against column at the table's level, after Holm's correction over the family's pairs, whose number is stated)
and a count of the pairs told apart, then lists every pair's difference with its *Holm-adjusted* interval (it
excludes 0 exactly when the verdict separates the pair), its unadjusted interval, the adjusted p-value (printed
"< 0.001" below a thousandth, as every table prints p: :func:`.table_writer.p_value_text`) and,
where the pair is not distinguishable, the units per domain that would detect it at Holm's strictest level.
Few bootstrap replicates make the SEs behind the p-values imprecise: below :data:`FIRM_RESAMPLES` the report
says so in a named warning. The CSV keeps every number at full precision.
"""

from __future__ import annotations

import math

import pandas as pd

from nlp_robustness.outputs.table_writer import csv_text, markdown_table, p_value_text
from nlp_robustness.statistics.comparisons import COMPARED_STATISTICS, ONE_FAMILY, verdict_matrix
from nlp_robustness.statistics.power import se_precision

__all__ = ["FIRM_RESAMPLES", "READING_ORDER", "comparisons_markdown", "interval_text", "statistic_meaning", "to_csv_text"]

#: Below this many bootstrap replicates the report warns that the p-values rest on imprecise SEs (+/- 6 % at
#: 95 % from 500 replicates; 100 gives +/- 14 %, enough to move a p of 0.01 to 0.002 or 0.04).
FIRM_RESAMPLES = 500
#: The order the report reads the statistics in: the between-domain SD answers the question first.
READING_ORDER = ("between_sd", "gamma_area", "variance", "cov", "mean")


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


def _units_text(units: float) -> str:
    return "" if not math.isfinite(units) else f"{int(units):,}"


def statistic_meaning(statistic: str, aggregation: str, higher_is_better: bool = True) -> str:
    """One line: what ``statistic`` measures in a study whose sample is ``aggregation`` (``unit`` scores or
    ``domain`` values); ``higher_is_better``: the score's direction (False: a metric read from files where lower is better)."""
    if statistic == "between_sd":
        return ("the spread of the domains' true mean scores, with the noise of units (and documents) taken out: "
                "the answer to 'is this row more even across these domains?'")
    if statistic == "mean":
        return f"quality, not consistency ({'higher' if higher_is_better else 'lower'} is better)"
    if aggregation == "domain":
        return {"variance": "the variance of the domain values (their noise included): spread across the domains",
                "cov": "sigma/mu of the domain values: spread across the domains relative to their mean",
                "gamma_area": "(epsilon, gamma)-robustness averaged over the epsilon grid, over the domain values"}[statistic]
    return {"variance": "the variance of the pooled unit scores, mostly within-domain spread: on real systems it "
                        "mostly restates quality (scores near the bound vary less), not evenness across domains",
            "cov": "sigma/mu of the pooled unit scores: it falls as the mean rises, so it mostly restates quality",
            "gamma_area": "(epsilon, gamma)-robustness averaged over the epsilon grid: the tails of the pooled unit "
                          "scores around their mean"}[statistic]


def comparisons_markdown(comparisons: pd.DataFrame, rows: list[str], title: str, confidence: float, decimals: int,
                         resamples: int = FIRM_RESAMPLES, aggregation: str = "unit", note: str = "",
                         higher_is_better: bool = True) -> str:
    """The Markdown report of one table's comparisons (module docstring): ``resamples`` the bootstrap replicates
    behind them, ``aggregation`` the study's sample (``unit`` or ``domain``), ``note`` a paragraph after the opening
    one (e.g. that some test sets' segments were resampled as independent units), ``higher_is_better`` the score's
    direction (what the mean's verdicts mean)."""
    level = 1 - confidence
    parts = [f"# Paired comparisons: {title}\n",
             f"Whole pool. Differences row a - row b from the paired bootstrap ({resamples:,} replicates): the Wald "
             f"test with the bootstrap SE (widened for few documents or units, as the intervals are; Student's t with the "
             f"fewer of B - 1 and the clusters drawn less the domains as degrees of freedom; rows equal up to rounding: "
             f"difference 0, p 1); p-values Holm-adjusted over the pairs of each statistic within each family "
             f"of rows; verdicts at level {level:g}. 'Holm-adjusted interval': the interval at the level Holm holds the "
             f"pair to, so it excludes 0 exactly when the verdict separates the pair; 'unadjusted': the pair's own "
             f"{confidence:.0%} interval, which ignores the other pairs of the family. "
             "Lower Var, COV, gamma-area and between-domain SD = more consistent; for the mean, "
             f"{'higher' if higher_is_better else 'lower'} is better. "
             "'Units to detect': units per domain at which the observed difference would be detected with the "
             "configured power at Holm's strictest level (alpha / pairs), for pairs not yet told apart.\n"]
    if note:
        parts.append(f"{note}\n")
    if resamples < FIRM_RESAMPLES:
        parts.append(f"**Warning (uncertainty.resamples = {resamples}):** the SEs behind these p-values are known to "
                     f"+/- {se_precision(resamples):.0%} only; verdicts near the level may flip. Use at least "
                     f"{FIRM_RESAMPLES} replicates for firm verdicts.\n")
    if comparisons.empty:
        return "\n".join([*parts, "No pair of rows has replicates to compare.\n"])
    for statistic in READING_ORDER:
        name = COMPARED_STATISTICS[statistic]
        of_statistic = comparisons[comparisons["statistic"] == statistic]
        if of_statistic.empty:
            continue
        parts.append(f"## {name}\n\n{name}: {statistic_meaning(statistic, aggregation, higher_is_better)}.\n")
        families = list(dict.fromkeys(of_statistic["family"]))
        for family in families:
            selected = of_statistic[of_statistic["family"] == family]
            told = int((selected["verdict"] != "not distinguishable").sum())
            unpaired = int((~selected["paired"].astype(bool)).sum())
            note = f" ({unpaired} compared as independent samples: different units)" if unpaired else ""
            where = "" if family == ONE_FAMILY and len(families) == 1 else f"{family}: "
            parts.append(f"### {where}{name}: {told} of {len(selected)} pairs told apart (Holm over "
                         f"{int(selected['pairs'].iloc[0])} pairs){note}\n")
            present = [row for row in rows if row in set(selected["row_a"]) | set(selected["row_b"])]
            parts.append(markdown_table(verdict_matrix(selected, statistic, present), index=True))
            listing = pd.DataFrame({
                "row a": selected["row_a"], "row b": selected["row_b"],
                "difference [Holm-adjusted interval]": [interval_text(value, low, high, decimals) for value, low, high
                                                         in zip(selected["difference"], selected["lo"], selected["hi"])],
                "unadjusted interval": [interval_text(value, low, high, decimals).partition(" ")[2] for value, low, high
                                        in zip(selected["difference"], selected["lo_unadjusted"], selected["hi_unadjusted"])],
                "p (Holm)": [p_value_text(p) for p in selected["p_holm"]],
                "verdict": selected["verdict"],
                "units to detect": [_units_text(units) for units in selected["units_to_detect"]],
            })
            parts.append(markdown_table(listing, align="llrrrlr"))
    return "\n".join(parts)
