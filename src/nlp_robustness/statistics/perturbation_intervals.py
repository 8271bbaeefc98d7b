"""Intervals and paired tests for a perturbation family's means (paper 004: beta, beta1, beta2, alpha).

A family scores the same sampled segments under every function: segment s of test set t appears once per
function that kept it, for every system. The noise of a mean is therefore the noise of *which segments were
sampled*, and a segment's rows under different functions are correlated (a hard sentence is hard under
every permutation). The bootstrap here resamples **segments over the whole study** -- a cluster is the
(test set, segment id) pair, drawn with replacement, bringing its row under every function
(:func:`~nlp_robustness.statistics.resampling.cluster_design` with the functions as domains and the
segment as the shared cluster id). Every system of the family is resampled with the same weights (same
design, seed and labels), so the systems' replicates are paired, and so are beta1 and beta2 of a system.

For each system and function a replicate mean is the weighted mean ``weights @ scores / weights.sum()``
over the function's kept segments; over the functions, the replicate is the mean of the per-function
replicate means (each function weighs the same, as the profile's family mean does). Intervals are
percentile intervals of the replicates. The test of beta2 - beta1 = 0 is the paired bootstrap test of
:func:`~nlp_robustness.statistics.paired_tests.difference` on the replicates of the beta2 mean and the
beta1 mean (the same as a test on the mean of beta2 - beta1: both come from the same rows); Holm's
correction runs over the functions of a system (``p_holm`` of the per-function rows) and, for the
over-functions rows, over the systems. The interval of beta2 - beta1 printed beside ``p_holm``
(``beta2_minus_beta1_lo``, ``_hi``) is the Holm-adjusted interval of that test
(:func:`.holm_intervals.holm_family`: symmetric, d +/- t SE at the level Holm holds the test to), so it
excludes 0 exactly when ``p_holm`` < 1 - confidence; the test's own interval at the table's confidence
(d +/- t SE, which excludes 0 exactly when ``p`` < 1 - confidence and ignores the other tests of the family)
is kept as ``beta2_minus_beta1_lo_unadjusted``, ``_hi_unadjusted``. Both are symmetric intervals of the test,
not percentile intervals as the other statistics' are, so that each agrees with its p.

**Small samples.** Plain percentile intervals of a mean undercover at small n (the bootstrap variance has
divisor n, and z stands where t_{n-1} belongs): simulated with 25 segments x 16 functions, 0.91-0.92 and a
null rejection rate of 0.07-0.08 at 0.05. The replicates are therefore expanded about the estimate by
c(n) = sqrt(n / (n - 1)) * t_{n-1, (1+confidence)/2} / z_{(1+confidence)/2} before the interval and the test
(the "expanded percentile interval", Hesterberg 2015, The American Statistician 69(4)), with n the number
of segments behind the statistic (a function's kept segments; every segment for the over-functions
mean). c is 1.075 at n = 25 and 1.017 at n = 100 (the default: 25 per test set, four test sets); with it the
coverage is 0.93-0.95 and the null rejection rate 0.05-0.065 at both sizes
(tests/unit/test_perturbation_uncertainty.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.holm_intervals import holm_family
from nlp_robustness.statistics.paired_tests import Difference, difference
from nlp_robustness.statistics.percentile_intervals import expansion, interval
from nlp_robustness.statistics.resampling import cluster_design, resample_weights

__all__ = ["INTERVAL_STATISTICS", "TESTED_STATISTIC", "UNADJUSTED_BOUNDS", "FamilyIntervals", "family_intervals",
           "replicate_means"]

#: The statistics that get an interval, in table order (beta2_minus_beta1 = the mean of beta2 - beta1).
INTERVAL_STATISTICS = ("beta", "beta1", "beta2", "alpha", "beta2_minus_beta1")
#: The statistic whose test (beta2 = beta1) has a Holm p: its ``_lo``, ``_hi`` are Holm-adjusted.
TESTED_STATISTIC = "beta2_minus_beta1"
#: The columns of the tested statistic's unadjusted interval (its test's own), after its Holm-adjusted ``_lo``, ``_hi``.
UNADJUSTED_BOUNDS = (f"{TESTED_STATISTIC}_lo_unadjusted", f"{TESTED_STATISTIC}_hi_unadjusted")


@dataclass(frozen=True)
class FamilyIntervals:
    """``by_function``: system, function, then ``<stat>``, ``<stat>_lo``, ``<stat>_hi`` for every
    :data:`INTERVAL_STATISTICS` (for beta2_minus_beta1 the Holm-adjusted interval, followed by
    :data:`UNADJUSTED_BOUNDS`), ``p`` and ``p_holm`` (Holm over the functions of the system).
    ``over_functions``: system, functions (how many had scored segments), the same columns, with
    ``p_holm`` and the adjusted interval over the systems."""

    by_function: pd.DataFrame
    over_functions: pd.DataFrame


def replicate_means(values: np.ndarray, weights: np.ndarray, columns_of_function: Sequence[np.ndarray]) -> np.ndarray:
    """Weighted means per function of every replicate: ``values`` (k, n) with NaN where a row was not
    scored, ``weights`` (B, n), ``columns_of_function[f]`` the unit columns of function f. Returns
    (B, F, k); NaN where a replicate drew none of the function's scored rows."""
    present = np.isfinite(values)
    filled = np.where(present, values, 0.0)
    result = np.empty((weights.shape[0], len(columns_of_function), values.shape[0]))
    for index, columns in enumerate(columns_of_function):
        block = weights[:, columns]
        with np.errstate(divide="ignore", invalid="ignore"):
            result[:, index, :] = (block @ filled[:, columns].T) / (block @ present[:, columns].T)
    return result


def family_intervals(
    scores: pd.DataFrame,
    functions: Sequence[str],
    systems: Sequence[str],
    metric: str,
    *,
    resamples: int,
    confidence: float,
    seed: int,
    labels: Sequence[str] = (),
) -> FamilyIntervals:
    """Means of beta, beta1, beta2, alpha and beta2 - beta1 per system x function and per system over the
    functions, each with its cluster-bootstrap interval, and the paired test of beta2 - beta1 = 0.

    ``scores`` is the long table of :func:`~nlp_robustness.perturbations.collect.read_family_scores`
    (system, function, testset, segment_id, metric, beta, beta1, beta2, alpha). ``labels`` name the
    family in the resampling seed (:func:`~nlp_robustness.statistics.resampling.resample_weights`): the
    same labels and seed give the same resamples for every system and metric.

    Raises:
        InputError: A missing column or a (system, function, segment) given twice.
        ValueError: ``resamples`` < 1 or ``confidence`` outside (0, 1).
    """
    needed = ("system", "function", "testset", "segment_id", "metric", "beta", "beta1", "beta2", "alpha")
    missing = [column for column in needed if column not in scores.columns]
    if missing:
        raise InputError(f"scores lack column(s) {', '.join(missing)}")
    selected = scores[(scores["metric"] == metric) & scores["function"].isin(functions) & scores["system"].isin(systems)]
    selected = selected.assign(segment_id=selected["segment_id"].astype(str), testset=selected["testset"].astype(str))
    keys = ["function", "testset", "segment_id"]
    if selected.duplicated(["system", *keys]).any():
        first = selected[selected.duplicated(["system", *keys], keep=False)].iloc[0]
        raise InputError(f"scores ({metric}) give system {first['system']}, function {first['function']}, "
                         f"segment {first['testset']}/{first['segment_id']} twice")
    units = selected[keys].drop_duplicates()
    units = units.assign(_order=units["function"].map(list(functions).index)).sort_values(["_order", "testset", "segment_id"], kind="mergesort")
    units = units.drop(columns="_order").reset_index(drop=True)
    n_stats, n_systems = len(INTERVAL_STATISTICS), len(systems)
    values = np.full((n_systems * n_stats, len(units)), np.nan)
    position = pd.MultiIndex.from_frame(units)
    for system_index, system in enumerate(systems):
        rows = selected[selected["system"] == system]
        columns = position.get_indexer(pd.MultiIndex.from_frame(rows[keys]))
        for stat_index, stat in enumerate(INTERVAL_STATISTICS):
            column = rows["beta2"] - rows["beta1"] if stat == "beta2_minus_beta1" else rows[stat]
            values[system_index * n_stats + stat_index, columns] = column.to_numpy(dtype=np.float64)
    columns_of_function = [np.flatnonzero(units["function"].to_numpy() == function) for function in functions]

    with np.errstate(invalid="ignore"):
        estimates = replicate_means(values, np.ones((1, len(units))), columns_of_function)[0]  # (F, k)
    if len(units):
        design = cluster_design(units["function"].to_numpy(), (units["testset"] + "\x1f" + units["segment_id"]).to_numpy())
        replicates = np.concatenate([replicate_means(values, weights, columns_of_function)
                                     for weights in resample_weights(design, resamples, seed, *labels)])
    else:
        replicates = np.full((resamples, len(functions), values.shape[0]), np.nan)

    # segments behind each (function, row) and behind each row over the functions
    present = np.isfinite(values)
    segment_codes = pd.factorize(units["testset"] + "\x1f" + units["segment_id"])[0]
    n_by_function = np.array([[np.unique(segment_codes[columns][present[row, columns]]).size for row in range(values.shape[0])]
                              for columns in columns_of_function]).reshape(len(functions), -1)
    n_over = np.array([np.unique(segment_codes[present[row]]).size for row in range(values.shape[0])])
    by_function, tests = _rows(estimates, replicates, n_by_function,
                               [(system, function) for system in systems for function in functions],
                               ["system", "function"], confidence, n_systems, n_stats)
    for system in systems:  # Holm over the functions of each system
        _adjust(by_function, tests, np.flatnonzero(by_function["system"].to_numpy() == system), confidence)

    # over the functions a system has scored segments for, each weighing the same
    finite = np.isfinite(estimates)
    with np.errstate(invalid="ignore"):
        counts = finite.sum(axis=0)
        over_estimates = np.where(finite, estimates, 0.0).sum(axis=0) / np.where(counts, counts, np.nan)
        over_replicates = np.where(finite[None], replicates, 0.0).sum(axis=1) / np.where(counts, counts, np.nan)
        over_replicates[np.isnan(np.where(finite[None], replicates, 0.0)).any(axis=1)] = np.nan
    over, over_tests = _rows(over_estimates[None], over_replicates[:, None], n_over[None], [(system,) for system in systems],
                             ["system"], confidence, n_systems, n_stats)
    over.insert(1, "functions", [int(counts[index * n_stats]) for index in range(n_systems)])
    _adjust(over, over_tests, np.arange(len(over)), confidence)  # Holm over the systems
    return FamilyIntervals(by_function.reset_index(drop=True), over)


def _adjust(table: pd.DataFrame, tests: Sequence[Difference], rows: np.ndarray, confidence: float) -> None:
    """Holm over the tests of ``rows`` (positions in ``table``, one family): their ``p_holm`` and the
    Holm-adjusted interval of beta2 - beta1, in place."""
    adjusted = holm_family([tests[row] for row in rows], 1 - confidence)
    table.loc[table.index[rows], "p_holm"] = adjusted.p_holm
    table.loc[table.index[rows], f"{TESTED_STATISTIC}_lo"] = adjusted.low
    table.loc[table.index[rows], f"{TESTED_STATISTIC}_hi"] = adjusted.high


def _rows(estimates: np.ndarray, replicates: np.ndarray, n_segments: np.ndarray, keys: list[tuple], key_names: list[str],
          confidence: float, n_systems: int, n_stats: int) -> tuple[pd.DataFrame, list[Difference]]:
    """One row per key: estimates (F, k), replicates (B, F, k) and segments behind each (F, k), k = systems x
    statistics, systems outer; rows run systems outer, functions inner. Replicates are expanded by c(n). The
    test of beta2 = beta1 gives the unadjusted interval of beta2 - beta1 (:data:`UNADJUSTED_BOUNDS`; its
    ``_lo``, ``_hi`` are left NaN for :func:`_adjust`); returned with the rows, one test per row."""
    n_functions = estimates.shape[0]
    with np.errstate(invalid="ignore"):
        factors = np.vectorize(lambda n: expansion(int(n), confidence))(n_segments) if n_segments.size else n_segments
        replicates = estimates[None] + factors[None] * (replicates - estimates[None])
    beta1, beta2 = INTERVAL_STATISTICS.index("beta1"), INTERVAL_STATISTICS.index("beta2")
    rows, tests = [], []
    for system_index in range(n_systems):
        for function_index in range(n_functions):
            row: dict[str, object] = dict(zip(key_names, keys[system_index * n_functions + function_index]))
            for stat_index, stat in enumerate(INTERVAL_STATISTICS):
                column = system_index * n_stats + stat_index
                estimate = float(estimates[function_index, column])
                low, high = interval(replicates[:, function_index, column], confidence) if np.isfinite(estimate) else (np.nan, np.nan)
                row.update({stat: estimate, f"{stat}_lo": low, f"{stat}_hi": high})
            base = system_index * n_stats
            test = difference(estimates[function_index, base + beta2], estimates[function_index, base + beta1],
                              replicates[:, function_index, base + beta2], replicates[:, function_index, base + beta1], confidence)
            row.update({f"{TESTED_STATISTIC}_lo": np.nan, f"{TESTED_STATISTIC}_hi": np.nan,  # Holm's, set by _adjust
                        UNADJUSTED_BOUNDS[0]: test.low, UNADJUSTED_BOUNDS[1]: test.high, "p": test.p_value, "p_holm": np.nan})
            rows.append(row)
            tests.append(test)
    return pd.DataFrame(rows), tests
