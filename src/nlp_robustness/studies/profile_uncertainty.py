"""How sure the profile's ranks and axis agreements are: rank intervals, tested axis scores, Kendall tau intervals.

A profile column read from a study table (mean, Var, COV, the between-domain SD and share, the
gamma-area on the whole pool) has the engine's bootstrap replicates for every system
(``results/<stem>.replicates.npz``), all drawn on the same resamples of the study's units
(:mod:`nlp_robustness.statistics.pool_uncertainty`): they are *paired*. Ranking the systems in every
replicate gives the bootstrap distribution of each system's rank; its percentile interval is the *rank
interval* (ties share the better rank, as the point ranks).

**Separated** places are not decided here: the paired-comparison rows are the profile's one verdict
source (:mod:`.profile_verdicts`: the study's comparisons tables, and the same code for the axis scores).
This module gives those rows the *tested score* of an axis (:func:`_axis_draws`): the mean rank over its
columns that have replicates, recomputed in every replicate. A rank interval is descriptive (how far a
system's rank moves over the resamples), never a verdict.

Columns without replicates (perturbation families, Natural Robustness, bagged columns) keep their point rank
in every replicate: an axis's rank interval and the taus reflect the columns that have replicates only, and
they do not enter the tested score (a constant would pass for certainty). An axis with no such column has
no interval and no separated place.

An axis's ranking is the mean rank over its columns (:func:`axis_rows`); Kendall's tau between two axes is
computed per replicate from the replicate mean ranks: its percentile interval says whether "the axes
disagree" survives the noise of the test sets. Replicates of different studies are independent resamples
(different units), which is what they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.statistics.pool_uncertainty import read_replicates
from nlp_robustness.statistics.pools import WHOLE_POOL

__all__ = ["axis_intervals", "axis_rows", "axis_tau_intervals", "rank_intervals", "rank_interval", "replicate_ranks", "replicate_taus",
           "tau_interval"]

Draws = Mapping[tuple[str, str], Mapping[str, NDArray[np.float64]]]


def replicate_ranks(values: NDArray[np.float64], higher_is_better: bool) -> NDArray[np.float64]:
    """Ranks (1 = best; ties share the better rank) of the columns of ``values`` (B, S) in every row; NaN
    values are ranked last."""
    from scipy import stats  # scipy.stats is slow to import; only ranks and taus need it
    oriented = -values if higher_is_better else values
    oriented = np.where(np.isfinite(oriented), oriented, np.inf)
    return stats.rankdata(oriented, method="min", axis=1).astype(np.float64)


def _measure_replicates(source: Mapping[str, Any], systems: Sequence[str],
                        cache: dict[str, dict[str, dict[str, NDArray[np.float64]]]]) -> dict[str, NDArray[np.float64]] | None:
    """Each system's whole-pool replicates of one measure (scaled as the column is), or None without them (a
    source without replicates, or a replicates file absent: branch outputs written before the engine kept them)."""
    paths = source.get("replicates")
    if not paths or not all(Path(paths[system]).exists() for system in systems if system in paths):
        return None
    found = {}
    for system in systems:
        if system not in paths:
            continue
        if paths[system] not in cache:
            cache[paths[system]] = read_replicates(paths[system])[0]
        values = cache[paths[system]].get(WHOLE_POOL, {}).get(source["statistic"])
        if values is None:
            return None
        found[system] = values * float(source.get("scale", 1.0))
    return found or None


def rank_interval(ranks: NDArray[np.float64], confidence: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The ``confidence`` interval of every column's rank from its replicate ranks (B, S): ranks that occur."""
    tail = (1 - confidence) / 2
    low, high = np.quantile(ranks, [tail, 1 - tail], axis=0, method="inverted_cdf")
    return low, high


def rank_intervals(plan: Mapping[str, Any], profile: pd.DataFrame, confidence: float) -> tuple[pd.DataFrame, dict]:
    """``profile`` (ranked) with ``rank_lo`` and ``rank_hi`` per cell (NaN for columns without replicates), and the replicate ranks per (group, measure) ->
    system -> (B,) array for :func:`axis_intervals` and :func:`axis_tau_intervals`."""
    ranked = profile.copy()
    ranked["rank_lo"] = np.nan
    ranked["rank_hi"] = np.nan
    cache: dict[str, dict[str, dict[str, NDArray[np.float64]]]] = {}
    draws: dict[tuple[str, str], dict[str, NDArray[np.float64]]] = {}
    for group in plan["groups"]:
        for measure in group["measures"]:
            rows = ranked[(ranked["group"] == group["name"]) & (ranked["measure"] == measure["key"])]
            rows = rows[rows["rank"].notna()]
            systems = rows["system"].tolist()
            replicates = _measure_replicates(measure["source"], systems, cache)
            if replicates is None or len(replicates) != len(systems) or len(systems) < 2:
                continue
            if len({values.size for values in replicates.values()}) != 1:
                continue
            higher = measure["orientation"] == "higher"
            matrix = np.column_stack([replicates[system] for system in systems])
            ranks = replicate_ranks(matrix, higher)
            low, high = rank_interval(ranks, confidence)
            ranked.loc[rows.index, "rank_lo"] = low
            ranked.loc[rows.index, "rank_hi"] = high
            draws[(group["name"], measure["key"])] = {system: ranks[:, position] for position, system in enumerate(systems)}
    return ranked, draws


def axis_rows(profile: pd.DataFrame) -> pd.DataFrame:
    """The ranked rows that make the axes' rankings: an axis's robustness columns (its quality columns for the
    quality axis). beta2 and beta2 - beta1 describe faithfulness, not robustness; the pooled Var and COV of
    sentence scores (``tracks_quality``) mostly restate quality (a better system's scores sit nearer the
    bound), so counting them would rank a test-domains axis by quality again: both are left out."""
    ranked = profile.dropna(subset=["rank"])
    tracks = ranked["tracks_quality"].fillna(False).astype(bool) if "tracks_quality" in ranked else False
    return ranked[((ranked["role"] == "robustness") & ~tracks) | (ranked["axis"] == "quality")]


def _axis_draws(rows: pd.DataFrame, group: str, draws: Draws) -> tuple[int, dict[str, dict[str, NDArray]], dict[str, dict[str, NDArray]]]:
    """One group's axes in every replicate: (B, per axis and system the mean rank over all its columns --
    point ranks for the columns without replicates -- and per axis and system the tested score, the mean
    rank over its columns with replicates only, absent for an axis without them). B is 0 without replicates."""
    keys = [key for key in draws if key[0] == group]
    if not keys:
        return 0, {}, {}
    n_draws = len(next(iter(draws[keys[0]].values())))
    full: dict[str, dict[str, NDArray]] = {}
    tested: dict[str, dict[str, NDArray]] = {}
    for axis, frame in rows.groupby("axis", sort=False):
        every: dict[str, list[NDArray]] = {}
        backed: dict[str, list[NDArray]] = {}
        for row in frame.itertuples():
            drawn = draws.get((group, row.measure), {}).get(row.system)
            if drawn is not None:
                drawn = drawn if drawn.size == n_draws else np.resize(drawn, n_draws)
                backed.setdefault(row.system, []).append(drawn)
            every.setdefault(row.system, []).append(drawn if drawn is not None else np.full(n_draws, float(row.rank)))
        full[axis] = {system: np.mean(values, axis=0) for system, values in every.items()}
        if backed:
            tested[axis] = {system: np.mean(values, axis=0) for system, values in backed.items()}
    return n_draws, full, tested


def axis_intervals(profile: pd.DataFrame, axes: pd.DataFrame, draws: Draws, confidence: float) -> pd.DataFrame:
    """``axes`` (:func:`nlp_robustness.studies.profile.axis_rankings`) with per system and axis ``rank_lo`` and
    ``rank_hi`` (the rank of the axis's mean rank in every replicate), ``tested`` (the axis's columns with
    replicates); NaN / 0 for an axis without replicates. Its separated places come from the axis score's
    verdict rows (:mod:`.profile_verdicts`)."""
    result = axes.copy()
    result["rank_lo"] = np.nan
    result["rank_hi"] = np.nan
    result["tested"] = 0
    rows = axis_rows(profile)
    for group, frame in rows.groupby("group", sort=False):
        n_draws, full, tested = _axis_draws(frame, group, draws)
        for axis, scores in tested.items():
            selected = result[(result["group"] == group) & (result["axis"] == axis)]
            systems = [system for system in selected["system"] if system in scores]
            if len(systems) < 2 or len(systems) != len(selected):
                continue
            ranks = replicate_ranks(np.column_stack([full[axis][system] for system in systems]), higher_is_better=False)
            low, high = rank_interval(ranks, confidence)
            backed = frame[(frame["axis"] == axis) & frame["measure"].isin([key[1] for key in draws if key[0] == group])]
            index = result.index[(result["group"] == group) & (result["axis"] == axis)]
            position = {system: place for place, system in enumerate(systems)}
            for row_index in index:
                place = position[result.at[row_index, "system"]]
                result.loc[row_index, ["rank_lo", "rank_hi"]] = [low[place], high[place]]
                result.at[row_index, "tested"] = int(backed["measure"].nunique())
    return result


def axis_tau_intervals(profile: pd.DataFrame, axes_kendall: pd.DataFrame, draws: Draws, confidence: float) -> pd.DataFrame:
    """``axes_kendall`` with ``tau_lo`` and ``tau_hi``: Kendall's tau between two axes' mean-rank rankings in
    every replicate (module docstring); NaN where neither axis has a column with replicates."""
    result = axes_kendall.copy()
    result["tau_lo"] = np.nan
    result["tau_hi"] = np.nan
    for group, frame in axis_rows(profile).groupby("group", sort=False):
        n_draws, axis_ranks, tested = _axis_draws(frame, group, draws)
        for index in result.index[result["group"] == group]:
            first, second = result.at[index, "first"], result.at[index, "second"]
            if not ({first, second} & set(tested)) or first not in axis_ranks or second not in axis_ranks:
                continue
            shared = [system for system in axis_ranks[first] if system in axis_ranks[second]]
            if len(shared) < 2:
                continue
            x = np.column_stack([axis_ranks[first][system] for system in shared])
            y = np.column_stack([axis_ranks[second][system] for system in shared])
            result.loc[index, ["tau_lo", "tau_hi"]] = tau_interval(x, y, confidence)
    return result


def tau_interval(x: NDArray[np.float64], y: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """The ``confidence`` percentile interval of Kendall's tau-b between the rows of ``x`` and ``y`` (B, n: paired
    replicates of two rankings' values, each oriented better-up); NaN with fewer than two finite replicate taus."""
    taus = replicate_taus(x, y)
    taus = taus[np.isfinite(taus)]
    if taus.size < 2:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    low, high = np.quantile(taus, [tail, 1 - tail])
    return float(low), float(high)


def replicate_taus(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Kendall's tau-b of every row of ``x`` and ``y`` (B, n), as scipy.stats.kendalltau computes it: the
    concordance sum over sqrt(pairs untied in x * pairs untied in y); NaN for a constant row."""
    left, right = np.triu_indices(x.shape[1], k=1)
    sign_x, sign_y = np.sign(x[:, left] - x[:, right]), np.sign(y[:, left] - y[:, right])
    denominator = np.sqrt(np.count_nonzero(sign_x, axis=1) * np.count_nonzero(sign_y, axis=1).astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, np.sum(sign_x * sign_y, axis=1) / denominator, np.nan)
