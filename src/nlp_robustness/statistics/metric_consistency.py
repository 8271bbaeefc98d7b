"""Meta-evaluation of metrics on cross-domain consistency (issue 53): which metric ranks systems by *consistency*
across test domains as people do?

Every score's measures (``between_sd``, ``gamma_area``, ``interaction_sd``, ``quality``) with their point values
and paired document-bootstrap replicates come from :func:`.consistency_measures.consistency_replicates` (its module
docstring: the input, the one set of resamples, the engine's decisions and each measure); this module turns them
into the tables of :func:`meta_evaluate`.

The per-system intervals (``value_lo``, ``value_hi``) are the engine's: percentile, widened for the clusters of the
smallest domain (:func:`.percentile_intervals.interval`), clipped at 0 for the SDs and gamma.

**Agreement with people** (:mod:`.metric_agreement`): per metric and measure, Kendall tau-b and pairwise accuracy
of the metric's system values against people's, in the data and in every replicate; the engine's Wald intervals
(tau +/- t SE_boot, few-cluster widening), Holm-tested metric pairs and WMT significance clusters; ``per_domain``: the same
for the systems' domain means (quality in each domain).

**Simulation** (tests/unit/test_metric_consistency_simulation.py; 14 systems, 4 domains x 30 documents x 5
segments, 300 simulated studies, 200 resamples, seeds 53 and 2053). Coverage of the 95 % tau interval of the
population tau (Kendall tau between the measure on the generating domain means of the metric and of people):
metric A (tracks people: monotone transform of the truth plus noise; population tau 0.63 between SD, 0.67
interaction SD) 0.940 (between SD) and 0.957 (interaction SD); metric B (own unrelated domain profile, population tau
0.03) 0.963 and 0.920. Percentile intervals gave 0.90 / 0.97 and basic ones 0.87 / 0.73 for A on 150 studies (why:
:mod:`.metric_agreement`). Per-pair rejection of the paired test at 0.05 under the null (two metrics with the same
transform and independent equal noise): 0.033 (between SD), 0.023 (interaction SD), unadjusted p; Holm-separated
0.033, 0.023. Power (A separated from B, Holm over 3 pairs): 0.937 and 0.997. The mean sample tau of A is
attenuated: 0.588 against 0.626 (between SD), 0.659 against 0.670 (interaction SD).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.consistency_measures import MEASURES, consistency_replicates
from nlp_robustness.statistics.metric_agreement import (
    PAIR_COLUMNS, agreement_interval, kendall_tau_b, pair_tests, pairwise_accuracy, significance_clusters)
from nlp_robustness.statistics.percentile_intervals import ClusterCounts, interval

__all__ = ["AGREEMENT_COLUMNS", "CONSISTENCY_COLUMNS", "PER_DOMAIN_COLUMNS", "MetaEvaluation", "meta_evaluate"]

#: ``value``: the measure's point value on the score's own scale (quality: the raw mean, not oriented); ``value_lo,
#: value_hi``: the engine's percentile interval widened for few clusters.
CONSISTENCY_COLUMNS = ("score", "system", "measure", "value", "value_lo", "value_hi")
#: ``tau_lo, tau_hi`` and ``accuracy_lo, accuracy_hi``: Wald intervals (:func:`.metric_agreement.agreement_interval`);
#: ``cluster``: the WMT significance cluster (1 = best); ``systems``: systems ranked; ``pairs``: system pairs people
#: order (human values not tied: the accuracy's denominator). ``per_domain`` has the same columns per domain.
#: Where ``pairs`` is 0 (people tie every system on the measure) tau and accuracy are NaN (nothing to agree with),
#: tau too where the metric ties every system; their intervals are then NaN. A row with a NaN tau, or with fewer
#: than two finite replicate taus, has no interval and cluster NaN (never put beside the metrics that were tested).
AGREEMENT_COLUMNS = ("metric", "measure", "tau", "tau_lo", "tau_hi", "pairwise_accuracy", "accuracy_lo", "accuracy_hi",
                     "cluster", "systems", "pairs")
PER_DOMAIN_COLUMNS = ("metric", "domain", "tau", "tau_lo", "tau_hi", "pairwise_accuracy", "accuracy_lo", "accuracy_hi",
                      "systems", "pairs")


@dataclass(frozen=True)
class MetaEvaluation:
    """The tables of :func:`meta_evaluate`: ``consistency`` (:data:`CONSISTENCY_COLUMNS`), ``agreement``
    (:data:`AGREEMENT_COLUMNS`), ``metric_pairs`` (:data:`.metric_agreement.PAIR_COLUMNS`), ``per_domain``
    (:data:`PER_DOMAIN_COLUMNS`)."""

    consistency: pd.DataFrame
    agreement: pd.DataFrame
    metric_pairs: pd.DataFrame
    per_domain: pd.DataFrame


def _agreement(metric_values: NDArray[np.float64], metric_replicates: NDArray[np.float64], human_values: NDArray[np.float64],
               human_replicates: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """tau-b and accuracy of K metrics (K, S) with their replicates (K, B, S) against people's: (K,), (K, B), (K,), (K, B)."""
    return (kendall_tau_b(metric_values, human_values), kendall_tau_b(metric_replicates, human_replicates[None]),
            pairwise_accuracy(metric_values, human_values), pairwise_accuracy(metric_replicates, human_replicates[None]))


def _intervals(estimate: float, replicates: NDArray[np.float64], accuracy: float, accuracy_replicates: NDArray[np.float64],
               confidence: float, clusters: ClusterCounts) -> dict[str, float]:
    tau_lo, tau_hi = agreement_interval(estimate, replicates, confidence, clusters, (-1.0, 1.0))
    accuracy_lo, accuracy_hi = agreement_interval(accuracy, accuracy_replicates, confidence, clusters, (0.0, 1.0))
    return {"tau": float(estimate), "tau_lo": tau_lo, "tau_hi": tau_hi, "pairwise_accuracy": float(accuracy),
            "accuracy_lo": accuracy_lo, "accuracy_hi": accuracy_hi}


def meta_evaluate(scores: Mapping[str, ArrayLike], human: str, domains: ArrayLike, documents: ArrayLike, systems: Sequence[str],
                  epsilons: Mapping[str, ArrayLike] | None, higher_is_better: Mapping[str, bool], resamples: int, seed: int,
                  labels: Sequence[str], confidence: float = 0.95, measures: Sequence[str] = MEASURES, threads: int = 1,
                  domain_order: Sequence[str] | None = None) -> MetaEvaluation:
    """The meta-evaluation of every metric (each score but ``human``) on cross-domain consistency (module docstring):
    the consistency, agreement, metric-pair and per-domain tables. Deterministic given ``seed`` and ``labels``.

    Raises:
        InputError: as :func:`.consistency_measures.consistency_replicates`; a score without ``higher_is_better``;
            no metric besides ``human``.
    """
    metrics = [name for name in scores if name != human]
    if not metrics:
        raise InputError(f"no metric besides the human score {human!r}")
    missing = [name for name in scores if name not in higher_is_better]
    if missing:
        raise InputError(f"score {missing[0]!r}: higher_is_better not given")
    found = consistency_replicates(scores, human, domains, documents, systems, epsilons, resamples, seed, labels, measures,
                                   threads, domain_order)
    clusters, n_systems = found.clusters, len(systems)
    sign = {name: 1.0 if higher_is_better[name] else -1.0 for name in scores}
    consistency = []
    for name in scores:
        for measure in measures:
            for row, system in enumerate(systems):
                value = float(found.estimates[name][measure][row])
                low, high = interval(found.replicates[name][measure][:, row], confidence, estimate=value,
                                     clusters=clusters.smallest_stratum, non_negative=measure != "quality")
                consistency.append({"score": name, "system": system, "measure": measure, "value": value,
                                    "value_lo": low, "value_hi": high})
    agreement, pairs = [], []
    for measure in measures:
        def oriented(name: str, values: NDArray[np.float64]) -> NDArray[np.float64]:
            return values * sign[name] if measure == "quality" else values

        taus, tau_reps, accuracy, accuracy_reps = _agreement(
            np.stack([oriented(name, found.estimates[name][measure]) for name in metrics]),
            np.stack([oriented(name, found.replicates[name][measure]) for name in metrics]),
            oriented(human, found.estimates[human][measure]), oriented(human, found.replicates[human][measure]))
        tests = pair_tests(measure, metrics, taus, tau_reps, confidence, clusters)
        pairs += tests
        # a tau without two finite replicate taus has no interval and no test: no cluster either (metric_agreement)
        rankable = np.where(np.count_nonzero(np.isfinite(tau_reps), axis=1) >= 2, taus, np.nan)
        ranks = significance_clusters(metrics, rankable, {(test["metric_a"], test["metric_b"]): test["separated"] for test in tests})
        for index, metric in enumerate(metrics):
            agreement.append({"metric": metric, "measure": measure,
                              **_intervals(taus[index], tau_reps[index], accuracy[index], accuracy_reps[index], confidence, clusters),
                              "cluster": ranks[metric], "systems": n_systems, "pairs": _ordered_pairs(found.estimates[human][measure])})
    per_domain = []
    for code, domain in enumerate(found.domains):
        taus, tau_reps, accuracy, accuracy_reps = _agreement(
            np.stack([found.domain_means[name][:, code] * sign[name] for name in metrics]),
            np.stack([found.domain_replicates[name][:, :, code] * sign[name] for name in metrics]),
            found.domain_means[human][:, code] * sign[human], found.domain_replicates[human][:, :, code] * sign[human])
        for index, metric in enumerate(metrics):
            per_domain.append({"metric": metric, "domain": domain,
                               **_intervals(taus[index], tau_reps[index], accuracy[index], accuracy_reps[index], confidence, clusters),
                               "systems": n_systems, "pairs": _ordered_pairs(found.domain_means[human][:, code])})
    return MetaEvaluation(pd.DataFrame(consistency, columns=list(CONSISTENCY_COLUMNS)),
                          pd.DataFrame(agreement, columns=list(AGREEMENT_COLUMNS)),
                          pd.DataFrame(pairs, columns=list(PAIR_COLUMNS)),
                          pd.DataFrame(per_domain, columns=list(PER_DOMAIN_COLUMNS)))


def _ordered_pairs(values: NDArray[np.float64]) -> int:
    """The system pairs people order: pairs whose human values are not tied (the accuracy's denominator)."""
    left, right = np.triu_indices(values.size, k=1)
    return int(np.count_nonzero(values[left] != values[right]))
