"""How sure the profile's ranks and axis agreements are: rank intervals and Kendall tau intervals.

A profile column read from a study table (mean, Var, COV, the between-domain SD and share, the
gamma-area on the whole pool) has the engine's bootstrap replicates for every system
(``results/<stem>.replicates.npz``), all drawn on the same resamples of the study's units
(:mod:`nlp_robustness.statistics.pool_uncertainty`). Ranking the systems in every replicate gives the
bootstrap distribution of each system's rank; its percentile interval is the *rank interval* (ties share
the better rank, as the point ranks). Columns without replicates (perturbation families, Natural
Robustness, bagged columns) keep their point rank in every replicate, so an interval reflects the columns
that have replicates only.

An axis's ranking is the mean rank over its robustness columns; in every replicate it is recomputed from
the replicate ranks, and Kendall's tau between two axes is computed per replicate: its percentile interval
says whether "the axes disagree" survives the noise of the test sets. Replicates of different studies are
independent resamples (different units), which is what they are.
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
from nlp_robustness.statistics.engine import WHOLE_POOL

__all__ = ["axis_tau_intervals", "rank_intervals", "replicate_ranks"]


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


def rank_intervals(plan: Mapping[str, Any], profile: pd.DataFrame, confidence: float) -> tuple[pd.DataFrame, dict]:
    """``profile`` (ranked) with ``rank_lo`` and ``rank_hi`` per cell (NaN for columns without replicates), and
    the replicate ranks per (group, measure) -> system -> (B,) array for :func:`axis_tau_intervals`."""
    ranked = profile.copy()
    ranked["rank_lo"] = np.nan
    ranked["rank_hi"] = np.nan
    cache: dict[str, dict[str, dict[str, NDArray[np.float64]]]] = {}
    draws: dict[tuple[str, str], dict[str, NDArray[np.float64]]] = {}
    tail = (1 - confidence) / 2
    for group in plan["groups"]:
        for measure in group["measures"]:
            rows = ranked[(ranked["group"] == group["name"]) & (ranked["measure"] == measure["key"])]
            systems = [system for system in rows["system"] if pd.notna(rows.set_index("system").at[system, "rank"])]
            replicates = _measure_replicates(measure["source"], systems, cache)
            if replicates is None or len(replicates) != len(systems) or len(systems) < 2:
                continue
            lengths = {values.size for values in replicates.values()}
            if len(lengths) != 1:
                continue
            matrix = np.column_stack([replicates[system] for system in systems])
            ranks = replicate_ranks(matrix, measure["orientation"] == "higher")
            low, high = np.quantile(ranks, [tail, 1 - tail], axis=0, method="inverted_cdf")
            for position, system in enumerate(systems):
                index = rows.index[rows["system"] == system][0]
                ranked.loc[index, ["rank_lo", "rank_hi"]] = [low[position], high[position]]
            draws[(group["name"], measure["key"])] = {system: ranks[:, position] for position, system in enumerate(systems)}
    return ranked, draws


def axis_tau_intervals(profile: pd.DataFrame, axes_kendall: pd.DataFrame, draws: Mapping[tuple[str, str], Mapping[str, NDArray]],
                       confidence: float) -> pd.DataFrame:
    """``axes_kendall`` with ``tau_lo`` and ``tau_hi``: Kendall's tau between two axes' mean-rank rankings in
    every replicate (module docstring); NaN where neither axis has a column with replicates."""
    result = axes_kendall.copy()
    result["tau_lo"] = np.nan
    result["tau_hi"] = np.nan
    ranked = profile.dropna(subset=["rank"])
    ranked = ranked[(ranked["role"] == "robustness") | (ranked["axis"] == "quality")]
    tail = (1 - confidence) / 2
    for group, frame in ranked.groupby("group", sort=False):
        keys = [key for key in draws if key[0] == group]
        if not keys:
            continue
        n_draws = len(next(iter(draws[keys[0]].values())))
        axis_ranks: dict[str, dict[str, NDArray[np.float64]]] = {}
        with_replicates: set[str] = set()
        for axis, rows in frame.groupby("axis", sort=False):
            per_system: dict[str, list[NDArray[np.float64]]] = {}
            for row in rows.itertuples():
                drawn = draws.get((group, row.measure), {}).get(row.system)
                if drawn is not None:
                    with_replicates.add(axis)
                    if drawn.size != n_draws:
                        drawn = np.resize(drawn, n_draws)
                per_system.setdefault(row.system, []).append(drawn if drawn is not None else np.full(n_draws, float(row.rank)))
            axis_ranks[axis] = {system: np.mean(values, axis=0) for system, values in per_system.items()}
        for index in result.index[result["group"] == group]:
            first, second = result.at[index, "first"], result.at[index, "second"]
            if not ({first, second} & with_replicates) or first not in axis_ranks or second not in axis_ranks:
                continue
            shared = [system for system in axis_ranks[first] if system in axis_ranks[second]]
            if len(shared) < 2:
                continue
            x = np.column_stack([axis_ranks[first][system] for system in shared])
            y = np.column_stack([axis_ranks[second][system] for system in shared])
            taus = np.array([_tau(x[b], y[b]) for b in range(n_draws)])
            taus = taus[np.isfinite(taus)]
            if taus.size >= 2:
                result.loc[index, ["tau_lo", "tau_hi"]] = np.quantile(taus, [tail, 1 - tail])
    return result


def _tau(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    from scipy import stats  # scipy.stats is slow to import; only ranks and taus need it
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.kendalltau(x, y).statistic)
