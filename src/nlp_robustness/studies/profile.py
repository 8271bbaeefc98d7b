"""One robustness profile per system: every branch's published numbers side by side, ranked, and compared.

The profile never recomputes a branch. It *reads* what the branches wrote -- their tables
(``results/tables/...``) and, for the gamma-area, their gamma curves (``results/.../<row>.gamma.tsv``, the
curves behind their gamma figures) -- and puts them on one scale: per column a rank (1 = most robust, or
best quality), per group of systems a Kendall tau between every two column rankings (do the axes agree?).

Its plan (the groups of systems and their measures, made from the config) is :mod:`.profile_plan`; the
measures are read from the branch outputs by :mod:`.profile_sources`. This module ranks every column,
computes the Kendall taus between columns and between axes with their uncertainty
(:mod:`.profile_uncertainty`), and gathers every number in ``results/profile.json``
(:func:`profile_document`).

Readings chosen where the sources leave room (documented in docs/profile.md, tested):

* *gamma-area* is the mean of gamma over the branch's epsilon grid (as ``human_studies.<study>.ranking.gamma: area``); lower
  = more consistent, like COV. It compares systems within a column only (the grid is the branch's).
* *mean beta1 (beta2)* of a family weights every function equally: the mean of the per-function means of
  the branch's means table (functions that kept no segment are skipped).
* *drop* is beta - beta1 in metric points (positive = worse under the attack); a weak system has less to
  lose, which the tau against mean quality shows.
* beta2 - beta1 is descriptive, not a robustness: its rank 1 is the system that leans most to faithfulness.
* *Pooled Var and COV of sentence scores* (MT, WMT'21) mostly restate quality: a better system's scores sit
  nearer the bound and vary less. They stay columns (ranked, shown, marked ``tracks_quality``) but are left
  out of the test-domains axis ranking, so that axis does not rank by quality a second time; the
  between-domain SD (``answers_evenness``) answers "is this system more even across these domains?".
  Sentiment's COV is of domain accuracies (spread across the domains) and counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.statistics.rankings import kendall_tau, rank_values
from nlp_robustness.studies.profile_sources import LONG_COLUMNS, read_profile
from nlp_robustness.studies.profile_uncertainty import axis_intervals, axis_rows, axis_tau_intervals, rank_intervals
from nlp_robustness.studies.profile_verdicts import Verdicts, profile_verdicts

__all__ = [
    "KENDALL_COLUMNS",
    "axis_kendall",
    "axis_rankings",
    "build_profile",
    "kendall_matrix",
    "kendall_square",
    "profile_document",
    "rank_profile",
    "wide_table",
]

#: Columns of the long Kendall table (one row per group and pair of measures).
KENDALL_COLUMNS = ("group", "first", "second", "systems", "tau", "p_value")


def rank_profile(profile: pd.DataFrame) -> pd.DataFrame:
    """``profile`` with its ``rank`` column: per group and measure, 1 = best (the most robust, the best
    quality; for beta2 - beta1 the most faithful); ties share the better rank; NaN values are not ranked."""
    ranked = profile.copy()
    ranked["rank"] = pd.array([pd.NA] * len(ranked), dtype="Int64")
    ranked["rank_lo"] = ranked["rank_hi"] = np.nan  # filled by profile_uncertainty.rank_intervals
    ranked["separated"] = pd.array([pd.NA] * len(ranked), dtype="boolean")
    ranked["letters"] = ""
    for _, rows in ranked.groupby(["group", "measure"], sort=False):
        finite = rows[np.isfinite(rows["value"].astype(float))]
        if finite.empty:
            continue
        ranks = rank_values(dict(zip(finite.index, finite["value"])), finite["orientation"].iloc[0] == "higher")
        for index, rank in ranks.items():
            ranked.loc[index, "rank"] = rank
    return ranked[list(LONG_COLUMNS)]


def _oriented(rows: pd.DataFrame) -> dict[str, float]:
    """Values of one measure with the better end up (lower-is-better values negated), NaN left out."""
    sign = 1.0 if rows["orientation"].iloc[0] == "higher" else -1.0
    return {system: sign * value for system, value in zip(rows["system"], rows["value"].astype(float)) if math.isfinite(value)}


def _pairwise_taus(group: str, rankings: Mapping[str, Mapping[str, float]], permutations: int | None,
                   seed: int) -> list[dict[str, Any]]:
    """Kendall's tau-b between every two of ``rankings`` (name -> system -> value, better up), on the systems
    both rank, as rows (group, first, second, systems, tau[, p_value]); NaN for fewer than two shared systems
    or a constant ranking. ``permutations``: the p-value's permutations (None: no p-value)."""
    from scipy import stats  # scipy.stats is slow to import; only the taus need it
    rows = []
    names = list(rankings)
    for index, first in enumerate(names):
        for second in names[index + 1:]:
            shared = [system for system in rankings[first] if system in rankings[second]]
            x = [rankings[first][system] for system in shared]
            y = [rankings[second][system] for system in shared]
            tau, p_value = (math.nan, math.nan)
            if len(shared) >= 2 and len(set(x)) > 1 and len(set(y)) > 1:
                if permutations is None:
                    tau = float(stats.kendalltau(x, y).statistic)
                else:
                    tau, p_value = kendall_tau(x, y, n_resamples=permutations, seed=seed)
            row = {"group": group, "first": first, "second": second, "systems": len(shared), "tau": tau}
            rows.append(row if permutations is None else {**row, "p_value": p_value})
    return rows


def kendall_matrix(profile: pd.DataFrame, permutations: int, seed: int) -> pd.DataFrame:
    """Kendall's tau-b between the rankings of every two measures of a group (:data:`KENDALL_COLUMNS`), on
    the systems both measure; tau = 1: the two columns order the systems alike (better with better). The
    p-value is a two-sided permutation test (exact for up to ``permutations``! orderings); fewer than three
    systems, or a constant column, give NaN."""
    rows = []
    for group, frame in profile.groupby("group", sort=False):
        oriented = {measure: _oriented(rows_) for measure, rows_ in frame.groupby("measure", sort=False)}
        rows += _pairwise_taus(group, oriented, permutations, seed)
    return pd.DataFrame(rows, columns=list(KENDALL_COLUMNS))


def axis_rankings(profile: pd.DataFrame) -> pd.DataFrame:
    """Per group, axis and system: the mean rank over the axis's columns (:func:`.profile_uncertainty.axis_rows`:
    its robustness columns but those that track quality; its quality columns for the quality axis) and the
    rank of that mean (1 = the most robust on the axis). Columns: group, axis, system, measures, mean_rank, rank."""
    ranked = axis_rows(profile)
    rows = []
    for (group, axis), frame in ranked.groupby(["group", "axis"], sort=False):
        means = frame.groupby("system", sort=False)["rank"].agg(lambda ranks: float(np.mean(ranks.astype(float))))
        counts = frame.groupby("system", sort=False)["rank"].size()
        ranks = rank_values(means.to_dict(), higher_is_better=False)
        for system, mean in means.items():
            rows.append({"group": group, "axis": axis, "system": system, "measures": int(counts[system]),
                         "mean_rank": mean, "rank": ranks[system]})
    return pd.DataFrame(rows, columns=["group", "axis", "system", "measures", "mean_rank", "rank"])


def _finite(value: Any) -> float | None:
    return None if value is None or value is pd.NA or (isinstance(value, float) and not math.isfinite(value)) else float(value)


def _flag(value: Any) -> bool | None:
    """A separated flag for JSON: None where untested (no replicates)."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) else bool(value)


def profile_document(plan: Mapping[str, Any], profile: pd.DataFrame, kendall: pd.DataFrame, axes: pd.DataFrame,
                     axes_kendall: pd.DataFrame, reading: Sequence[str], digest: str,
                     claims: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Every number of the profile as one JSON-ready document (``results/profile.json``): the config hash,
    the profile's metric, per group its systems, the axes left out (with their reason), measures (with
    source, orientation and per-system value, interval, rank, separated flag and significance letters),
    axis rankings, the Kendall taus between measures and between axes, the generated reading and its claims
    (:mod:`nlp_robustness.outputs.profile_claims`)."""
    groups = []
    for group in plan["groups"]:
        frame = profile[profile["group"] == group["name"]]
        measures = []
        for measure in group["measures"]:
            rows = frame[frame["measure"] == measure["key"]]
            measures.append({
                **{key: measure[key] for key in ("key", "axis", "label", "metric", "role", "orientation")},
                "tracks_quality": bool(measure.get("tracks_quality", False)),
                "answers_evenness": bool(measure.get("answers_evenness", False)),
                "source": rows["source"].iloc[0] if not rows.empty else None,
                "systems": {
                    row.system: {"value": _finite(row.value), "ci_low": _finite(row.ci_low), "ci_high": _finite(row.ci_high),
                                 "rank": None if row.rank is pd.NA else int(row.rank),
                                 "rank_lo": _finite(row.rank_lo), "rank_hi": _finite(row.rank_hi),
                                 "separated": _flag(getattr(row, "separated", pd.NA)),
                                 "letters": getattr(row, "letters", "") or None}
                    for row in rows.itertuples()
                },
            })
        group_axes = axes[axes["group"] == group["name"]]
        groups.append({
            "name": group["name"], "label": group["label"], "systems": list(group["systems"]),
            "left_out": list(group.get("left_out", [])), "measures": measures,
            "axes": [{"axis": row.axis, "system": row.system, "measures": int(row.measures), "mean_rank": float(row.mean_rank),
                      "rank": int(row.rank), "rank_lo": _finite(getattr(row, "rank_lo", None)),
                      "rank_hi": _finite(getattr(row, "rank_hi", None)), "tested": int(getattr(row, "tested", 0)),
                      "separated": _flag(getattr(row, "separated", pd.NA)), "letters": getattr(row, "letters", "") or None}
                     for row in group_axes.itertuples()],
            "kendall": [{"first": row.first, "second": row.second, "systems": int(row.systems), "tau": _finite(row.tau),
                         "p_value": _finite(row.p_value)} for row in kendall[kendall["group"] == group["name"]].itertuples()],
            "axes_kendall": [{"first": row.first, "second": row.second, "systems": int(row.systems), "tau": _finite(row.tau),
                              "p_value": _finite(getattr(row, "p_value", None)),
                              "tau_lo": _finite(getattr(row, "tau_lo", None)), "tau_hi": _finite(getattr(row, "tau_hi", None))}
                             for row in axes_kendall[axes_kendall["group"] == group["name"]].itertuples()],
        })
    return {"config_hash": digest, "metric": plan["metric"], "groups": groups, "reading": list(reading),
            "claims": [_json_ready(item) for item in claims]}


def _json_ready(item: Mapping[str, Any]) -> dict[str, Any]:
    """A claim with its numbers as plain floats (NaN as None) for strict JSON."""
    return {key: (_finite(value) if isinstance(value, (float, np.floating)) else value) for key, value in item.items()}


def wide_table(profile: pd.DataFrame, group: str) -> pd.DataFrame:
    """One group's profile as a wide table: a row per system, per measure its value and its rank (and for
    Natural Robustness its interval), columns in plan order."""
    frame = profile[profile["group"] == group]
    systems = list(dict.fromkeys(frame["system"]))
    table = pd.DataFrame({"system": systems})
    for measure, rows in frame.groupby("measure", sort=False):
        by_system = rows.set_index("system")
        label = rows["label"].iloc[0]
        table[label] = [by_system["value"].get(system, math.nan) for system in systems]
        if by_system["ci_low"].notna().any():
            table[f"{label} CI low"] = [by_system["ci_low"].get(system, math.nan) for system in systems]
            table[f"{label} CI high"] = [by_system["ci_high"].get(system, math.nan) for system in systems]
        table[f"{label} rank"] = pd.array([by_system["rank"].get(system, pd.NA) for system in systems], dtype="Int64")
    return table


def axis_kendall(axes: pd.DataFrame, permutations: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Kendall's tau-b between the axis rankings of every two axes of a group (:func:`axis_rankings`), on
    the systems both rank: do the axes agree? Columns: group, first, second, systems, tau (NaN for fewer
    than two shared systems or a constant ranking) and, given ``permutations``, the two-sided permutation
    ``p_value`` (:func:`kendall_matrix`): with few systems it cannot be small (2 of 3! orderings are as
    extreme as a full reversal of three), which the reading says."""
    rows = []
    for group, frame in axes.groupby("group", sort=False):
        # the better end up: a lower mean rank is better
        ranking = {axis: dict(zip(rows_.system, -rows_.mean_rank)) for axis, rows_ in frame.groupby("axis", sort=False)}
        rows += _pairwise_taus(group, ranking, permutations=permutations, seed=seed)
    return pd.DataFrame(rows, columns=["group", "first", "second", "systems", "tau", *(["p_value"] if permutations else [])])


def build_profile(plan: Mapping[str, Any], permutations: int, seed: int, uncertainty: Mapping[str, Any] | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[tuple[str, str], Verdicts]]:
    """The whole profile from the branch outputs the plan names: the ranked long table with rank intervals,
    separated places and significance letters, the Kendall taus between measures, the axis rankings with the
    same, the Kendall taus between axes with their permutation p-values and intervals
    (:mod:`.profile_uncertainty`), and the verdict rows behind every separated place by (group, measure key
    or axis key) (:mod:`.profile_verdicts`). ``uncertainty``: the run's confidence, power and seed of the
    paired comparisons (default 0.95, 0.8, 0)."""
    settings = {"confidence": 0.95, "power": 0.8, "seed": 0, **(uncertainty or {})}
    confidence = settings["confidence"]
    profile = rank_profile(read_profile(plan))
    axes = axis_rankings(profile)
    profile, draws = rank_intervals(plan, profile, confidence)
    axes = axis_intervals(profile, axes, draws, confidence)
    profile, axes, verdicts = profile_verdicts(plan, profile, axes, draws, settings)
    return (profile[list(LONG_COLUMNS)], kendall_matrix(profile, permutations, seed), axes,
            axis_tau_intervals(profile, axis_kendall(axes[["group", "axis", "system", "measures", "mean_rank", "rank"]], permutations, seed),
                               draws, confidence), verdicts)


def kendall_square(kendall: pd.DataFrame, profile: pd.DataFrame, group: str) -> pd.DataFrame:
    """One group's Kendall taus as a symmetric matrix labelled by the measures' labels (diagonal 1)."""
    frame = profile[profile["group"] == group]
    labels = dict(zip(frame["measure"], frame["label"]))
    measures = list(labels)
    matrix = pd.DataFrame(np.eye(len(measures)), index=measures, columns=measures)
    for row in kendall[kendall["group"] == group].itertuples():
        matrix.loc[row.first, row.second] = matrix.loc[row.second, row.first] = row.tau
    matrix.index = matrix.columns = [labels[measure] for measure in measures]
    return matrix.rename_axis("measure").reset_index()
