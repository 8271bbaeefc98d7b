"""Segment-level agreement of a metric with WMT19 DARR judgements: the WMT19 Kendall's tau-like formulation.

Ma et al. (2019, WMT19 metrics task, segment-level evaluation) turn direct-assessment scores into
*DARR* pairs: two systems' translations of one segment whose DA scores differ by more than 25 points,
the better one first (:func:`nlp_robustness.data.wmt19.read_darr`). A metric agrees with a pair when it
scores the better translation higher:

* **Concordant**: ``metric(better) > metric(worse)``;
* **Discordant**: ``metric(better) <= metric(worse)``. WMT19 counts a metric *tie* as Discordant (unlike
  WMT17 and unlike Kendall's tau-b), penalising metrics that cannot tell two translations apart; so
  does this module, and so does paper 002, which reports this tau.

``tau = (|Concordant| - |Discordant|) / (|Concordant| + |Discordant|)``, in [-1, 1].

:func:`pair_agreement` gives each DARR row +1 (concordant) or -1 (discordant), so tau is their mean and
a row can serve as a unit of the robustness engine (its bagging averages units). Scores are looked up
by (system, SID), and also by pair when both tables have a ``pair`` column (system names such as
``online-B.0`` recur across pairs); a missing, duplicated or NaN score is an error, never a silent
Discordant.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError

__all__ = [
    "TAU_SIGNATURE",
    "darr_tau",
    "pair_agreement",
    "tau_table",
]

#: How the taus of this module are computed, to be stored next to them.
TAU_SIGNATURE = "wmt19-darr-kendall-like|concordant:better>worse|ties:discordant"


def _keys(scores: pd.DataFrame, darr: pd.DataFrame) -> list[str]:
    """The columns scores are looked up by: (pair,) system, sid."""
    missing = [column for column in ("system", "sid", "score") if column not in scores.columns]
    if missing:
        raise ValueError(f"scores lack column(s) {', '.join(missing)}")
    if "pair" in scores.columns and "pair" in darr.columns:
        return ["pair", "system", "sid"]
    if "pair" in darr.columns and darr["pair"].nunique() > 1:
        raise ValueError("DARR rows of several pairs need scores with a pair column")
    return ["system", "sid"]


def _describe(key: tuple, names: list[str]) -> str:
    return ", ".join(f"{name} {value}" for name, value in zip(names, key))


def _side_scores(darr: pd.DataFrame, table: pd.Series, keys: list[str], side: str) -> np.ndarray:
    """The scores of the ``side`` (better/worse) system of every DARR row."""
    arrays = [darr[key] if key != "system" else darr[side] for key in keys]
    arrays = [array.astype("int64") if key == "sid" else array.astype(str) for key, array in zip(keys, arrays)]
    index = pd.MultiIndex.from_arrays([array.to_numpy() for array in arrays], names=keys)
    values = table.reindex(index).to_numpy(dtype=float)
    absent = np.flatnonzero(np.isnan(values))
    if len(absent):
        key = tuple(array.iloc[absent[0]] for array in arrays)
        where = f" (DARR line {darr['line'].iloc[absent[0]]})" if "line" in darr.columns else ""
        raise InputError(f"no score for {_describe(key, keys)}{where}")
    return values


def pair_agreement(darr: pd.DataFrame, scores: pd.DataFrame) -> np.ndarray:
    """+1 (concordant) or -1 (discordant, ties included) for every row of ``darr``, in its order.

    ``darr`` has columns ``sid``, ``better``, ``worse`` (and ``pair``, ``line``: see
    :func:`nlp_robustness.data.wmt19.read_darr`); ``scores`` has ``system``, ``sid``, ``score`` (and
    ``pair``), one row per (pair,) system and SID. Returned as floats, so the mean is tau.

    Raises:
        InputError: A score is missing, NaN or given twice (the message names the system and SID).
        ValueError: ``scores`` lacks a column, or DARR rows of several pairs meet scores without a pair.
    """
    keys = _keys(scores, darr)
    frame = scores[keys + ["score"]].reset_index(drop=True)
    frame["sid"] = frame["sid"].astype("int64")
    frame["system"] = frame["system"].astype(str)
    duplicated = frame.duplicated(keys)
    if duplicated.any():
        key = tuple(frame.loc[duplicated.idxmax(), keys])
        raise InputError(f"two scores for {_describe(key, keys)}")
    undefined = frame["score"].isna()
    if undefined.any():
        key = tuple(frame.loc[undefined.idxmax(), keys])
        raise InputError(f"score of {_describe(key, keys)} is not a number")
    table = frame.set_index(keys)["score"].astype(float)
    better = _side_scores(darr, table, keys, "better")
    worse = _side_scores(darr, table, keys, "worse")
    return np.where(better > worse, 1.0, -1.0)


def darr_tau(darr: pd.DataFrame, scores: pd.DataFrame) -> float:
    """The WMT19 DARR Kendall's tau-like correlation of ``scores`` with the pairs of ``darr``.

    Raises:
        ValueError: ``darr`` has no rows (tau is undefined).
        InputError: As :func:`pair_agreement`.
    """
    if len(darr) == 0:
        raise ValueError("tau of no DARR pairs is undefined")
    return float(pair_agreement(darr, scores).mean())


def tau_table(darr: pd.DataFrame, scores_by_metric: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Tau of every metric on every pair of ``darr`` (pairs in their order of appearance).

    ``scores_by_metric`` maps a metric name to its scores (as :func:`pair_agreement`; with a ``pair``
    column when ``darr`` holds several pairs). Columns: pair, metric, tau, concordant, discordant, pairs.
    """
    rows = []
    for pair, group in darr.groupby("pair", sort=False):
        for metric, scores in scores_by_metric.items():
            agreement = pair_agreement(group, scores)
            concordant = int((agreement > 0).sum())
            rows.append({"pair": pair, "metric": metric, "tau": float(agreement.mean()),
                         "concordant": concordant, "discordant": len(agreement) - concordant,
                         "pairs": len(agreement)})
    return pd.DataFrame(rows, columns=["pair", "metric", "tau", "concordant", "discordant", "pairs"])
