"""Rank statistics: ranks with ties, Kendall's tau-b with a permutation p-value, agreement of rankings and the
pairwise verdicts of paper Table 8.

* Ranks start at 1 (best); tied values share the best of their ranks.
* **Agreement** of a ranking with a reference ranking: position agreement (share of systems at the same
  rank; the paper's "75 % agrees"), pairwise agreement (share of system pairs ordered alike; the paper's
  Table 8) and Kendall's tau-b of the underlying values, with an exact permutation p-value when the
  systems are few (scipy.stats.permutation_test; Monte Carlo, seeded, beyond ``n_resamples``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["agreement_table", "kendall_tau", "rank_values"]


def rank_values(values: Mapping[str, float], higher_is_better: bool) -> dict[str, int]:
    """Rank 1 = best; ties share the smaller rank (``scipy.stats.rankdata(method="min")``)."""
    from scipy import stats  # scipy.stats is slow to import; only rankings need it
    names = list(values)
    keyed = np.array([values[name] for name in names], dtype=float)
    ranks = stats.rankdata(-keyed if higher_is_better else keyed, method="min")
    return {name: int(rank) for name, rank in zip(names, ranks)}


def kendall_tau(first: Sequence[float], second: Sequence[float], n_resamples: int, seed: int) -> tuple[float, float]:
    """Kendall's tau-b of two value lists (scipy.stats.kendalltau) and its two-sided permutation p-value.

    The p-value permutes the pairing of the values (scipy.stats.permutation_test, ``pairings``): exact
    when ``n!`` <= ``n_resamples``, else Monte Carlo with a generator seeded by ``seed``. Permuting one
    list keeps the ties within each list, hence tau-b's denominator, so the statistic is evaluated
    vectorised as the concordance sum over that fixed denominator.
    """
    from scipy import stats  # scipy.stats is slow to import; only rankings need it
    x, y = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    tau = float(stats.kendalltau(x, y).statistic)
    if len(x) < 3 or math.isnan(tau):
        return tau, math.nan
    left, right = np.triu_indices(len(x), k=1)
    sign_y = np.sign(y[left] - y[right])
    sign_x = np.sign(x[left] - x[right])
    denominator = math.sqrt(np.count_nonzero(sign_x) * np.count_nonzero(sign_y))

    def statistic(values: np.ndarray, axis: int = -1) -> np.ndarray:
        values = np.moveaxis(values, axis, -1)
        return (np.sign(values[..., left] - values[..., right]) @ sign_y) / denominator

    result = stats.permutation_test(
        (x,), statistic, permutation_type="pairings", n_resamples=n_resamples, alternative="two-sided",
        vectorized=True, rng=np.random.default_rng(seed),
    )
    return tau, float(result.pvalue)


def _ordered_pairs_agree(first: Mapping[str, float], second: Mapping[str, float], first_higher: bool, second_higher: bool) -> list[bool]:
    """For every system pair (config order), whether both value sets say the same system is better."""
    agreements = []
    for a, b in itertools.combinations(list(first), 2):
        left = np.sign(first[a] - first[b]) * (1 if first_higher else -1)
        right = np.sign(second[a] - second[b]) * (1 if second_higher else -1)
        agreements.append(bool(left == right))
    return agreements


def agreement_table(
    rankings: Mapping[str, tuple[Mapping[str, float], bool]],
    comparisons: Sequence[tuple[str, str]],
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Agreement of pairs of rankings: position and pairwise agreement (%), Kendall tau-b and its p-value.

    ``rankings`` maps a ranking's name to (system -> value, higher_is_better); ``comparisons`` lists
    (ranking, reference ranking) pairs.
    """
    rows = []
    for name, reference in comparisons:
        values, higher = rankings[name]
        reference_values, reference_higher = rankings[reference]
        systems = list(values)
        ranks, reference_ranks = rank_values(values, higher), rank_values(reference_values, reference_higher)
        same_position = np.mean([ranks[system] == reference_ranks[system] for system in systems])
        pairs = _ordered_pairs_agree(values, reference_values, higher, reference_higher)
        oriented = [values[system] * (1 if higher else -1) for system in systems]
        reference_oriented = [reference_values[system] * (1 if reference_higher else -1) for system in systems]
        tau, p_value = kendall_tau(oriented, reference_oriented, n_resamples, seed)
        rows.append({
            "ranking": name, "reference": reference, "systems": len(systems),
            "position_agreement": 100.0 * float(same_position), "pairwise_agreement": 100.0 * float(np.mean(pairs)),
            "kendall_tau": tau, "p_value": p_value,
        })
    return pd.DataFrame(rows)
