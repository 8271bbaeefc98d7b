"""Tables 7 and 8 of a human study (paper Section 4.2): rankings by each measure, pairwise verdicts, agreement.

Choices (documented in docs/human-judgements.md, tested in tests/unit/test_human.py):

* **People's consistency** is gamma on the human score (paper Figure 5, Table 7); the between-domain SD of the
  human score is reported beside it. Table 8's pairs agree or disagree only where both paired verdicts (Holm)
  separate them; otherwise they are undetermined.
* **Rankings by gamma.** A gamma curve is summarised by its mean over the epsilon grid of the score
  (``area``: the normalised area under the curve, threshold-free) or by gamma at one epsilon per score
  (``at``). Lower = more robust = rank 1. Ranks start at 1; tied systems share the best of their ranks.
* **Agreement** of a ranking with a human ranking: position agreement (share of systems at the same
  rank; the paper's "75 % agrees"), pairwise agreement (share of system pairs ordered alike; the paper's
  Table 8) and Kendall's tau-b of the underlying values, with an exact permutation p-value when the
  systems are few (scipy.stats.permutation_test; Monte Carlo, seeded, beyond ``n_resamples``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.statistics.comparisons import verdict_matrix
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.statistics.rankings import agreement_table, rank_values
from nlp_robustness.studies.profile_uncertainty import rank_interval, replicate_ranks, tau_interval

__all__ = [
    "PAIR_OUTCOMES",
    "Measure",
    "gamma_name",
    "gamma_summary",
    "measure_replicates",
    "measure_values",
    "measures",
    "ranking_tables",
]


def gamma_summary(curve: pd.DataFrame, summary: str, epsilon: float | None = None) -> float:
    """One number of a gamma curve (columns ``epsilon, gamma``): its mean over the grid (``area``) or
    gamma at ``epsilon`` (``at``; the grid point nearest to it)."""
    if summary == "area":
        return float(curve["gamma"].mean())
    if summary == "at":
        if epsilon is None:
            raise ValueError("gamma summary 'at' needs an epsilon")
        position = int(np.argmin(np.abs(curve["epsilon"].to_numpy() - epsilon)))
        return float(curve["gamma"].iloc[position])
    raise ValueError(f"unknown gamma summary {summary!r} (area or at)")


def gamma_name(score: str, summary: str) -> str:
    """Name of a gamma ranking for what it holds: ``mean_gamma_<score>`` (the mean of the curve over the
    epsilon grid, ``area``) or ``gamma_at_<score>`` (gamma at the configured epsilon, ``at``)."""
    if summary not in ("area", "at"):
        raise ValueError(f"unknown gamma summary {summary!r} (area or at)")
    return f"mean_gamma_{score}" if summary == "area" else f"gamma_at_{score}"


#: Table 8's pair outcomes: both sides distinguishable and alike, both distinguishable and opposite, otherwise.
PAIR_OUTCOMES = ("agree", "disagree", "undetermined")


@dataclass(frozen=True)
class Measure:
    """One ranking of Table 7: ``score`` (``human`` or a metric), ``statistic`` (a summary column), its name and
    whether higher values rank first."""

    name: str
    score: str
    statistic: str
    higher_is_better: bool


def measures(metrics: Sequence[str], ranking: Mapping[str, Any], directions: Mapping[str, bool] | None = None) -> list[Measure]:
    """Table 7's rankings: mean, COV (metrics only: a human mean near or below 0 makes COV meaningless), gamma
    (:func:`gamma_name`) and between-domain SD of every score; the human ones last. ``directions``: whether a higher
    score is better, by score (default: yes; a file metric says, e.g. an error count), which orders the means."""
    listed = []
    for score in [*metrics, "human"]:
        listed.append(Measure(f"mean_{score}", score, "mean", (directions or {}).get(score, True)))
        if score != "human":
            listed.append(Measure(f"cov_{score}", score, "cov", False))
        listed.append(Measure(gamma_name(score, ranking["gamma"]), score, "gamma_area", False))
        listed.append(Measure(f"between_sd_{score}", score, "between_sd", False))
    return listed


def _whole_pool(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["left_out"].astype(str) == WHOLE_POOL) & (frame["method"] == "pool")]


def measure_values(measure: Measure, summaries: Mapping[str, Mapping[str, pd.DataFrame]],
                   gammas: Mapping[str, Mapping[str, pd.DataFrame]], ranking: Mapping[str, Any]) -> dict[str, float]:
    """Every system's whole-pool value of one measure (gamma "at": read off its gamma curve)."""
    systems = list(summaries[measure.score])
    if measure.statistic == "gamma_area" and ranking["gamma"] == "at":
        return {s: gamma_summary(_whole_pool(gammas[measure.score][s]), "at", ranking["gamma_at"][measure.score]) for s in systems}
    return {s: float(_whole_pool(summaries[measure.score][s])[measure.statistic].iloc[0]) for s in systems}


def measure_replicates(measure: Measure, replicates: Mapping[str, Mapping[str, Mapping[str, NDArray[np.float64]]]],
                       systems: Sequence[str], ranking: Mapping[str, Any]) -> NDArray[np.float64] | None:
    """The whole-pool bootstrap replicates of one measure, (B, systems), paired across systems and scores (the
    engine draws the same documents for every row of a study); None for gamma "at" (no replicates of it)."""
    if measure.statistic == "gamma_area" and ranking["gamma"] == "at":
        return None
    return np.column_stack([replicates[measure.score][s][WHOLE_POOL][measure.statistic] for s in systems])


def ranking_tables(
    summaries: Mapping[str, Mapping[str, pd.DataFrame]],
    gammas: Mapping[str, Mapping[str, pd.DataFrame]],
    replicates: Mapping[str, Mapping[str, Mapping[str, Mapping[str, NDArray[np.float64]]]]],
    comparisons: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    ranking: Mapping[str, Any],
    seed: int,
    confidence: float,
    directions: Mapping[str, bool] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 7 and 8 and the agreement table of one human study.

    ``summaries[score][system]``, ``gammas[score][system]``: the engine's whole-pool tables; ``replicates[score][system]``:
    its replicates (left-out label -> statistic -> array); ``comparisons[score]``: the paired comparisons of the
    score's table (:mod:`.statistics.comparisons`, Holm over the pairs).

    * **Table 7** (``rankings``): every system's value, rank (1 = best or most consistent; ties share the better
      rank) and ``confidence`` rank interval (percentiles of its rank in the paired replicates) by each measure.
    * **Table 8** (``pairwise``): for every pair, the more consistent system by COV and gamma of each metric and by
      gamma of the human score (the paper's people), each as a point order and as the paired verdict (Holm); a
      metric side *agrees* or *disagrees* with people only where both verdicts separate the pair, else the pair
      is *undetermined* for it.
    * **Agreement** (``agreement``): each automatic ranking against a human one: position and pairwise agreement,
      Kendall tau-b with its permutation p-value and a ``confidence`` bootstrap interval (tau in every paired
      replicate: documents resampled within domains, the same resamples for every system and score).

    ``directions``: score -> whether higher is better (:func:`measures`; default: every score).
    """
    systems = list(summaries["human"])
    listed = measures(metrics, ranking, directions)
    values = {m.name: measure_values(m, summaries, gammas, ranking) for m in listed}
    draws = {m.name: measure_replicates(m, replicates, systems, ranking) for m in listed}

    table = pd.DataFrame({"system": systems})
    for m in listed:
        ranks = rank_values(values[m.name], m.higher_is_better)
        table[m.name] = [values[m.name][s] for s in systems]
        table[f"{m.name}_rank"] = [ranks[s] for s in systems]
        if draws[m.name] is None:
            table[f"{m.name}_rank_lo"] = table[f"{m.name}_rank_hi"] = np.nan
            continue
        table[f"{m.name}_rank_lo"], table[f"{m.name}_rank_hi"] = rank_interval(
            replicate_ranks(draws[m.name], m.higher_is_better), confidence)

    human_gamma = gamma_name("human", ranking["gamma"])
    pairs = []
    sides = [(f"cov_{metric}", metric, "cov") for metric in metrics] + [
        (gamma_name(metric, ranking["gamma"]), metric, "gamma_area") for metric in metrics] + [(human_gamma, "human", "gamma_area")]
    verdicts = {name: verdict_matrix(_whole_pool_comparisons(comparisons[score]), statistic, systems)
                for name, score, statistic in sides}
    for a, b in itertools.combinations(systems, 2):
        row: dict[str, Any] = {"system_a": a, "system_b": b}
        said = {}
        for name, score, statistic in sides:
            point = values[name]
            row[f"{name}_more_consistent"] = "tie" if point[a] == point[b] else (a if point[a] < point[b] else b)
            verdict_text = verdicts[name].at[a, b]  # "" where the pair was not compared
            said[name] = a if verdict_text == "more consistent" else b if verdict_text == "less consistent" else None
            row[f"{name}_verdict"] = said[name] or "not distinguishable"
        for name, _score, _statistic in sides[:-1]:
            row[f"{name}_point_agrees"] = row[f"{name}_more_consistent"] == row[f"{human_gamma}_more_consistent"]
            if said[name] is None or said[human_gamma] is None:
                row[f"{name}_vs_people"] = PAIR_OUTCOMES[2]
            else:
                row[f"{name}_vs_people"] = PAIR_OUTCOMES[0] if said[name] == said[human_gamma] else PAIR_OUTCOMES[1]
        pairs.append(row)
    pairwise = pd.DataFrame(pairs)

    comparisons_list = []
    for metric in metrics:
        comparisons_list += [(f"cov_{metric}", human_gamma), (gamma_name(metric, ranking["gamma"]), human_gamma),
                             (f"between_sd_{metric}", "between_sd_human"), (f"mean_{metric}", "mean_human")]
    comparisons_list.append(("mean_human", human_gamma))
    rankings_by_name = {m.name: (values[m.name], m.higher_is_better) for m in listed}
    agreement = agreement_table(rankings_by_name, comparisons_list, n_resamples=int(ranking["permutations"]), seed=seed)
    orientation = {m.name: (1.0 if m.higher_is_better else -1.0) for m in listed}
    intervals = [(np.nan, np.nan) if draws[name] is None or draws[reference] is None
                 else tau_interval(orientation[name] * draws[name], orientation[reference] * draws[reference], confidence)
                 for name, reference in comparisons_list]
    agreement["tau_lo"], agreement["tau_hi"] = [low for low, _ in intervals], [high for _, high in intervals]
    if len(pairwise):
        outcome_columns = [column for column in pairwise.columns if column.endswith("_vs_people")]
        counts = {column[: -len("_vs_people")]: pairwise[column].value_counts() for column in outcome_columns}
        for outcome in PAIR_OUTCOMES:
            agreement[f"pairs_{outcome}"] = [int(counts[name].get(outcome, 0)) if name in counts and reference == human_gamma else np.nan
                                             for name, reference in comparisons_list]
    return table, pairwise, agreement


def _whole_pool_comparisons(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The paired comparisons of the whole pool (a comparisons table holds every pool's)."""
    return comparisons[comparisons["left_out"].astype(str) == WHOLE_POOL]
