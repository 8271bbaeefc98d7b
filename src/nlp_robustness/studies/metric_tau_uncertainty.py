"""Intervals for the metric-robustness taus and paired tests between metric variants (issue 27, paper 002).

Which comparisons and which condition sets the tests cover is the branch's choice, made here; the bootstrap
itself is :mod:`nlp_robustness.statistics.darr_bootstrap` (segments resampled within pairs, every judgement
of a segment in every condition together).

* **Comparisons** (:func:`tau_comparisons`): the first against the last BERTScore layer (paper 002's
  "First > Default"), and every BERTScore variant against chrF (the character-level n-gram metric).
* **Families** (:func:`tau_families`): every condition alone, each attack averaged over its levels, and every
  attacked condition averaged; a family's tests (its comparisons x the pairs and their average) are
  Holm-adjusted together. A family is kept small on purpose: with B resamples no bootstrap p-value is below
  1 / (B + 1), so Holm over m tests needs m / (B + 1) < the level to ever reject.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from nlp_robustness.statistics.darr_bootstrap import tau_bootstrap, tau_differences, tau_intervals
from nlp_robustness.studies.metric_attack_conditions import CLEAN, condition_attack_level

__all__ = ["ATTACKED_MEAN", "tau_comparisons", "tau_families", "tau_uncertainty_tables"]

#: The family of every attacked condition averaged.
ATTACKED_MEAN = "attacked (mean)"


def tau_comparisons(variants: Sequence[str]) -> list[tuple[str, str]]:
    """``(a, b)`` pairs tested as tau(a) - tau(b): first vs last layer, then each BERTScore variant vs chrF
    (only those whose variants are configured)."""
    comparisons = []
    if "bertscore_first" in variants and "bertscore_last" in variants:
        comparisons.append(("bertscore_first", "bertscore_last"))
    if "chrf" in variants:
        comparisons += [(variant, "chrf") for variant in variants if variant.startswith("bertscore_")]
    return comparisons


def tau_families(condition_names: Sequence[str]) -> dict[str, list[str]]:
    """Family label -> its conditions: each condition, ``<attack> (mean over p)`` for an attack with several
    levels, and :data:`ATTACKED_MEAN` (every condition but the clean one) when there are attacked conditions."""
    families = {condition: [condition] for condition in condition_names}
    by_attack: dict[str, list[str]] = {}
    for condition in condition_names:
        if condition != CLEAN:
            by_attack.setdefault(condition_attack_level(condition)[0], []).append(condition)
    for attack, members in by_attack.items():
        if len(members) > 1:
            families[f"{attack} (mean over p)"] = members
    attacked = [condition for condition in condition_names if condition != CLEAN]
    if attacked:
        families[ATTACKED_MEAN] = attacked
    return families


def tau_uncertainty_tables(agreement: pd.DataFrame, variants: Sequence[str], condition_names: Sequence[str],
                           resamples: int, confidence: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tau intervals (``condition, attack, p, pair, metric, tau, tau_lo, tau_hi, judgements, segments``)
    and the paired differences (:data:`~nlp_robustness.statistics.darr_bootstrap.DIFFERENCE_COLUMNS`) of an
    agreement table (:func:`nlp_robustness.studies.metric_attack_scoring.tau_tables`), conditions in the given order.
    """
    selected = agreement[agreement["condition"].isin(list(condition_names))]
    order = {condition: index for index, condition in enumerate(condition_names)}
    selected = selected.iloc[selected["condition"].map(order).argsort(kind="stable")]
    result = tau_bootstrap(selected, variants, resamples, seed)
    intervals = tau_intervals(result, confidence)
    levels = intervals["condition"].map(condition_attack_level)
    intervals.insert(1, "attack", [attack for attack, _ in levels])
    intervals.insert(2, "p", [p for _, p in levels])
    differences = tau_differences(result, tau_comparisons(variants), tau_families(result.conditions), confidence)
    return intervals, differences
