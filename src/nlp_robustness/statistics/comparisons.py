"""Paired comparisons of the rows of a study table: which consistency differences are real.

Two rows of a study measured on the same units (systems on the same segments, metric variants on the
same judgements) were resampled alike by the engine (:mod:`.pool_uncertainty`: the replicates are seeded by
the study and pool, never the row), so replicate b of one row and replicate b of the other saw the same
units: their difference is a paired bootstrap replicate of the difference of the statistic. Rows whose
units differ (each sentiment classifier is tested on its own held-out split) are compared as independent
samples: one row's replicates are put in a seeded random order first, which breaks the common resampling
they would otherwise share by construction; the table marks them ``paired = False``.

For every statistic and pair of rows: the difference ``a - b`` with its interval and p-value
(:func:`.uncertainty.difference`), Holm's adjustment over the pairs of the table (per statistic), a
verdict, and where the pair is not distinguishable the units per domain that would detect the observed
difference (:func:`.uncertainty.units_to_detect`). Lower Var, COV, gamma-area and between-domain SD is more
consistent; for the mean, higher is better.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.sampling import rng_for
from nlp_robustness.statistics.uncertainty import VERDICTS, difference, holm, units_to_detect, verdict

__all__ = ["COMPARED_STATISTICS", "COMPARISON_COLUMNS", "compare_rows", "verdict_matrix"]

#: Statistic (summary column) -> name in the tables; every one but the mean is "lower = more consistent".
COMPARED_STATISTICS = {"variance": "Var", "cov": "COV", "gamma_area": "gamma-area", "between_sd": "Between SD", "mean": "Mean"}
#: The mean's verdicts (higher is better) in place of :data:`.uncertainty.VERDICTS`.
MEAN_VERDICTS = ("higher", "lower", "not distinguishable")
COMPARISON_COLUMNS = ("left_out", "statistic", "row_a", "row_b", "paired", "estimate_a", "estimate_b", "difference",
                      "lo", "hi", "p", "p_holm", "verdict", "units_per_domain", "units_to_detect")


def _pool_row(summary: pd.DataFrame, left_out: str) -> pd.Series:
    selected = summary[(summary["left_out"].astype(str) == left_out) & (summary["method"] == "pool")]
    return selected.iloc[0]


def compare_rows(
    summaries: Mapping[str, pd.DataFrame],
    replicates: Mapping[str, tuple[Mapping[str, Mapping[str, NDArray[np.float64]]], str]],
    left_out: str,
    confidence: float,
    power: float,
    seed: int,
) -> pd.DataFrame:
    """Every pair of rows (table order) on the pool ``left_out``, for each of :data:`COMPARED_STATISTICS` the
    rows have: columns :data:`COMPARISON_COLUMNS` (see the module docstring). ``replicates``: row ->
    (left-out label -> statistic -> replicates, units digest) as read by
    :func:`.pool_uncertainty.read_replicates`."""
    level = 1 - confidence
    records = []
    pool_rows: dict[str, pd.Series] = {}

    def pool_row(row: str) -> pd.Series:  # once per row, not once per pair and statistic
        if row not in pool_rows:
            pool_rows[row] = _pool_row(summaries[row], left_out)
        return pool_rows[row]

    for statistic in COMPARED_STATISTICS:
        block = []
        for row_a, row_b in itertools.combinations(summaries, 2):
            pool_a, pool_b = pool_row(row_a), pool_row(row_b)
            reps_a = replicates[row_a][0].get(left_out, {}).get(statistic)
            reps_b = replicates[row_b][0].get(left_out, {}).get(statistic)
            if reps_a is None or reps_b is None or not np.isfinite(pool_a[statistic]) or not np.isfinite(pool_b[statistic]):
                continue
            paired = replicates[row_a][1] == replicates[row_b][1]
            if not paired:
                reps_b = rng_for(seed, "unpaired", row_a, row_b, statistic).permutation(reps_b)
            compared = difference(float(pool_a[statistic]), float(pool_b[statistic]), reps_a, reps_b, confidence)
            per_domain = float(pool_a["units"]) / float(pool_a["domains"])
            block.append({
                "left_out": left_out, "statistic": statistic, "row_a": row_a, "row_b": row_b, "paired": paired,
                "estimate_a": float(pool_a[statistic]), "estimate_b": float(pool_b[statistic]),
                "difference": compared.estimate, "lo": compared.low, "hi": compared.high, "p": compared.p_value,
                "units_per_domain": per_domain,
                "units_to_detect": units_to_detect(per_domain, compared.estimate, compared.standard_error, level, power),
            })
        adjusted = holm([record["p"] for record in block])
        for record, p_holm in zip(block, adjusted):
            record["p_holm"] = float(p_holm)
            words = MEAN_VERDICTS if statistic == "mean" else VERDICTS
            said = verdict(record["difference"], p_holm, level, lower_is_more_consistent=statistic != "mean")
            record["verdict"] = words[VERDICTS.index(said)]
            if record["verdict"] != words[2]:
                record["units_to_detect"] = np.nan  # detected already
        records += block
    return pd.DataFrame(records, columns=list(COMPARISON_COLUMNS))


def verdict_matrix(comparisons: pd.DataFrame, statistic: str, rows: list[str]) -> pd.DataFrame:
    """Rows x rows: the verdict of the row against the column for one statistic ("" on the diagonal)."""
    matrix = pd.DataFrame("", index=rows, columns=rows)
    words = MEAN_VERDICTS if statistic == "mean" else VERDICTS
    opposite = {words[0]: words[1], words[1]: words[0], words[2]: words[2]}
    for record in comparisons[comparisons["statistic"] == statistic].itertuples():
        matrix.at[record.row_a, record.row_b] = record.verdict
        matrix.at[record.row_b, record.row_a] = opposite[record.verdict]
    matrix.index.name = "row vs column"
    return matrix
