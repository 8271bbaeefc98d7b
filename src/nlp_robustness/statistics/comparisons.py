"""Paired comparisons of the rows of a study table: which consistency differences are real.

Two rows of a study measured on the same units (systems on the same segments, metric variants on the
same judgements) were resampled alike by the engine (:mod:`.pool_uncertainty`: the replicates are seeded by
the study and pool, never the row), so replicate b of one row and replicate b of the other saw the same
units: their difference is a paired bootstrap replicate of the difference of the statistic. Rows whose
units differ (each sentiment classifier is tested on its own held-out split) are compared as independent
samples: one row's replicates are put in a seeded random order first, which breaks the common resampling
they would otherwise share by construction; the table marks them ``paired = False``.

**Families.** Rows are compared within their *family*: a table that holds rows of different kinds (the Natural
Robustness table: MT systems and sentiment classifiers) compares MT systems with MT systems and classifiers with
classifiers, since a comparison across kinds answers no question a reader asks and only raises the Holm bar for
the pairs that do. A table without families is one family.

For every statistic, family and pair of rows: the difference ``a - b`` with its bootstrap SE, its unadjusted
interval and Wald p-value (:func:`.paired_tests.difference`: no 1 / (B + 1) floor; the few-cluster treatment from
the cluster counts the engine records in each pool row, :data:`.engine.CLUSTER_COLUMNS`, the smaller of the two rows'
where they differ; numerically identical rows are not distinguishable, p = 1), Holm's adjustment over the
pairs of the family (per statistic; the family's size ``pairs`` is in every row), the Holm-adjusted interval
``lo, hi`` that excludes 0 exactly when the verdict separates the pair (:func:`.paired_tests.adjusted_levels`),
a verdict, and where the pair is not distinguishable the units per domain that would detect the observed
difference at Holm's strictest level alpha / m (:func:`.power.units_to_detect`). Lower Var, COV,
gamma-area and between-domain SD is more consistent; for the mean, higher is better.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.sampling import rng_for
from nlp_robustness.statistics.holm_intervals import holm_family
from nlp_robustness.statistics.paired_tests import VERDICTS, Difference, difference, verdict
from nlp_robustness.statistics.percentile_intervals import ClusterCounts
from nlp_robustness.statistics.power import units_to_detect

__all__ = ["COMPARED_STATISTICS", "COMPARISON_COLUMNS", "compare_rows", "verdict_matrix"]

#: Statistic (summary column) -> name in the tables; every one but the mean is "lower = more consistent".
COMPARED_STATISTICS = {"variance": "Var", "cov": "COV", "gamma_area": "gamma-area", "between_sd": "Between SD", "mean": "Mean"}
#: The mean's verdicts (higher is better) in place of :data:`.paired_tests.VERDICTS`.
MEAN_VERDICTS = ("higher", "lower", "not distinguishable")
#: ``lo, hi``: the Holm-adjusted interval (consistent with the verdict); ``lo_unadjusted, hi_unadjusted``: the pair's
#: own interval at the table's confidence; ``level_adjusted``: the level alpha_i of the adjusted interval.
COMPARISON_COLUMNS = ("left_out", "statistic", "family", "pairs", "row_a", "row_b", "paired", "estimate_a", "estimate_b",
                      "difference", "standard_error", "lo", "hi", "p", "p_holm", "level_adjusted", "lo_unadjusted",
                      "hi_unadjusted", "verdict", "units_per_domain", "units_to_detect")
#: The family of a table without families.
ONE_FAMILY = "all rows"


def _pool_row(summary: pd.DataFrame, left_out: str) -> pd.Series:
    selected = summary[(summary["left_out"].astype(str) == left_out) & (summary["method"] == "pool")]
    return selected.iloc[0]


def _clusters(row: str, pool: pd.Series) -> ClusterCounts:
    """The cluster counts the engine recorded in a row's pool row.

    Raises:
        InputError: The summary has none (written before they were recorded, or without ``uncertainty``).
    """
    values = [pool.get(name, np.nan) for name in ("smallest_stratum_clusters", "cluster_degrees_of_freedom")]
    if not all(np.isfinite(float(value)) for value in values):
        raise InputError(f"summary of row {row!r}: no cluster counts (smallest_stratum_clusters, cluster_degrees_of_freedom) "
                         "in its pool row; rerun its robustness_statistics job")
    return ClusterCounts(int(values[0]), int(values[1]))


def _family_pairs(rows: list[str], families: Mapping[str, str] | None) -> dict[str, list[tuple[str, str]]]:
    """The pairs of rows of every family (table order; first appearance orders the families)."""
    family_of = {row: (families or {}).get(row, ONE_FAMILY) for row in rows}
    pairs: dict[str, list[tuple[str, str]]] = {}
    for row_a, row_b in itertools.combinations(rows, 2):
        if family_of[row_a] == family_of[row_b]:
            pairs.setdefault(family_of[row_a], []).append((row_a, row_b))
    return pairs


def compare_rows(
    summaries: Mapping[str, pd.DataFrame],
    replicates: Mapping[str, tuple[Mapping[str, Mapping[str, NDArray[np.float64]]], str]],
    left_out: str,
    confidence: float,
    power: float,
    seed: int,
    families: Mapping[str, str] | None = None,
    statistics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every pair of rows of a family (table order) on the pool ``left_out``, for each of :data:`COMPARED_STATISTICS`
    the rows have: columns :data:`COMPARISON_COLUMNS` (see the module docstring). ``replicates``: row ->
    (left-out label -> statistic -> replicates, units digest) as read by :func:`.pool_uncertainty.read_replicates`;
    ``families``: row -> family (None or a row absent: :data:`ONE_FAMILY`); ``statistics``: which of
    :data:`COMPARED_STATISTICS` to compare (None: all; a human score's table leaves out the COV, which means
    nothing for a score whose mean is near or below 0)."""
    level = 1 - confidence
    records = []
    pool_rows: dict[str, pd.Series] = {}

    def pool_row(row: str) -> pd.Series:  # once per row, not once per pair and statistic
        if row not in pool_rows:
            pool_rows[row] = _pool_row(summaries[row], left_out)
        return pool_rows[row]

    for statistic in [statistic for statistic in COMPARED_STATISTICS if statistics is None or statistic in statistics]:
        for family, pairs in _family_pairs(list(summaries), families).items():
            block = []
            for row_a, row_b in pairs:
                pool_a, pool_b = pool_row(row_a), pool_row(row_b)
                reps_a = replicates[row_a][0].get(left_out, {}).get(statistic)
                reps_b = replicates[row_b][0].get(left_out, {}).get(statistic)
                if reps_a is None or reps_b is None or not np.isfinite(pool_a[statistic]) or not np.isfinite(pool_b[statistic]):
                    continue
                paired = replicates[row_a][1] == replicates[row_b][1]
                if not paired:
                    reps_b = rng_for(seed, "unpaired", row_a, row_b, statistic).permutation(reps_b)
                clusters_a, clusters_b = _clusters(row_a, pool_a), _clusters(row_b, pool_b)
                clusters = ClusterCounts(min(clusters_a.smallest_stratum, clusters_b.smallest_stratum),
                                         min(clusters_a.degrees_of_freedom, clusters_b.degrees_of_freedom))
                compared = difference(float(pool_a[statistic]), float(pool_b[statistic]), reps_a, reps_b, confidence, clusters)
                block.append(({
                    "left_out": left_out, "statistic": statistic, "family": family, "row_a": row_a, "row_b": row_b,
                    "paired": paired, "estimate_a": float(pool_a[statistic]), "estimate_b": float(pool_b[statistic]),
                    "difference": compared.estimate, "standard_error": compared.standard_error,
                    "lo_unadjusted": compared.low, "hi_unadjusted": compared.high, "p": compared.p_value,
                    "units_per_domain": float(pool_a["units"]) / float(pool_a["domains"]),
                }, compared))
            records += _adjust(block, statistic, level, power)
    return pd.DataFrame(records, columns=list(COMPARISON_COLUMNS))


def _adjust(block: list[tuple[dict, Difference]], statistic: str, level: float, power: float) -> list[dict]:
    """Holm over one family's pairs (:func:`.holm_intervals.holm_family`): adjusted p, adjusted interval, verdict and
    units to detect (module docstring)."""
    adjusted = holm_family([compared for _, compared in block], level)
    m = int(np.isfinite(adjusted.p_holm).sum())
    words = MEAN_VERDICTS if statistic == "mean" else VERDICTS
    records = []
    for index, (record, _) in enumerate(block):
        p_holm = float(adjusted.p_holm[index])
        record |= {"pairs": m, "p_holm": p_holm, "level_adjusted": float(adjusted.level_adjusted[index]),
                   "lo": float(adjusted.low[index]), "hi": float(adjusted.high[index])}
        said = verdict(record["difference"], p_holm, level, lower_is_more_consistent=statistic != "mean")
        record["verdict"] = words[VERDICTS.index(said)]
        record["units_to_detect"] = (units_to_detect(record["units_per_domain"], record["difference"], record["standard_error"],
                                                     level / max(m, 1), power)
                                     if record["verdict"] == words[2] else np.nan)  # detected already: nothing to plan
        records.append(record)
    return records


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
