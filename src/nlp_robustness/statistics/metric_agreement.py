"""How well a metric's system values agree with people's, on paired bootstrap replicates: Kendall tau-b, pairwise
accuracy, their intervals, the paired tests between metrics and the WMT-style significance clusters.

Used by :mod:`.metric_consistency` (the meta-evaluation of metrics on cross-domain consistency;
:mod:`.consistency_measures` states the study); everything here is pure numpy on arrays of system values whose last axis is the systems.

**Kendall tau-b** (:func:`kendall_tau_b`), vectorised over any leading axes (metrics, replicates): with the
signs s_x, s_y of the P = n (n - 1) / 2 system pairs' differences, tau-b = sum(s_x s_y) / sqrt((P - ties_x)
(P - ties_y)), as ``scipy.stats.kendalltau`` computes it (tested on vectors with ties); NaN where one side has
every pair tied or a value is not finite.

**Pairwise accuracy** (:func:`pairwise_accuracy`): the share of the system pairs people order (human values not
tied) that the metric orders the same way. A metric tie on such a pair counts as a disagreement (it does not
order what people order); pairs people tie are left out (nobody can be right about them). NaN where people tie
every pair or a value is not finite.

**Intervals** (:func:`agreement_interval`): the Wald interval of the engine's paired tests, tau +/- t SE
(:func:`.paired_tests.difference` of the tau against 0: SE the SD of the replicate taus widened by sqrt(n / (n - 1))
for the n documents of the smallest domain, Student's t with min(B - 1, documents - domains) degrees of freedom),
clipped to the statistic's range ([-1, 1] for tau, [0, 1] for accuracy). Why not a percentile interval: tau is a
step function of the system values, and a replicate's tau is pulled towards the taus of nearby orderings (a pair of
close systems flips in some replicates), so the replicates are not centred on the estimate in a study: where the
sample tau is high by chance they sit lower, and the reverse. The percentile interval then leans towards the truth
(over-covers where little bias; 0.97-0.99 for the interaction SD on the simulation) but cannot follow the
attenuation of a between-SD tau (0.90), and the *basic* (reflected) interval, which assumes the replicates are
centred like the estimate, leans the other way (0.73-0.88). The Wald interval uses only the replicates' spread,
which matched the spread of the sample taus across simulated studies (0.080-0.095 against 0.082-0.088), and covers
(tests/unit/test_metric_consistency_simulation.py; numbers in :mod:`.metric_consistency`). Attenuation remains: a
noisy metric's tau is biased towards 0 by roughly half an SE on the simulation's between SD.

**Paired tests** (:func:`pair_tests`): metrics A and B were resampled alike (one set of document counts for every
score), so d_b = tau_A,b - tau_B,b is a paired replicate of d = tau_A - tau_B; the test is the engine's
(:func:`.paired_tests.difference`: Wald with the bootstrap SE, Student's t, the few-cluster widening and degrees
of freedom of the design's :class:`.percentile_intervals.ClusterCounts`; numerically identical taus give p = 1),
Holm over the metric pairs of one measure with Holm-adjusted intervals (:func:`.holm_intervals.holm_family`), so
the interval excludes 0 exactly when ``separated``. The attenuation bias of both taus cancels in d to first order
when both metrics are equally noisy (the null simulated); the test asks whether one metric's ranking agrees with
people's better than another's, on these systems and domains.

**Significance clusters** (:func:`significance_clusters`), as the WMT metrics task prints them (mt-metrics-eval's
rank assignment): the metrics sorted by tau, best first (ties: input order); the first opens cluster 1; each next
metric joins the current cluster unless the Holm test separates it from that cluster's *first* (best) metric, in
which case it opens the next cluster with itself as first. A cluster is thus not a set of mutually
indistinguishable metrics: a metric is compared with its cluster's head only. A metric whose tau is NaN (people or
the metric tie every system pair, or a value is not finite) has no cluster (NaN): its paired tests are NaN, so
"not separated" would have put it into the last cluster of the finite taus, beside metrics it was never compared
with. :func:`.metric_consistency.meta_evaluate` passes NaN too for a tau without two finite replicate taus (no
interval and no test).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from nlp_robustness.statistics.holm_intervals import holm_family, separated
from nlp_robustness.statistics.paired_tests import difference
from nlp_robustness.statistics.percentile_intervals import ClusterCounts

__all__ = ["PAIR_COLUMNS", "agreement_interval", "kendall_tau_b", "pair_signs", "pair_tests", "pairwise_accuracy",
           "significance_clusters"]

#: Columns of :func:`pair_tests`' records (names of :data:`.comparisons.COMPARISON_COLUMNS` where they exist).
PAIR_COLUMNS = ("measure", "pairs", "metric_a", "metric_b", "tau_a", "tau_b", "difference", "standard_error", "lo", "hi",
                "p", "p_holm", "level_adjusted", "lo_unadjusted", "hi_unadjusted", "separated")


def pair_signs(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """The signs of ``values[..., i] - values[..., j]`` over the system pairs i < j (``np.triu_indices`` order),
    shape (..., P); NaN where a value is not finite."""
    left, right = np.triu_indices(values.shape[-1], k=1)
    with np.errstate(invalid="ignore"):
        return np.sign(values[..., left] - values[..., right])


def _finite_rows(*signs: NDArray[np.float64]) -> NDArray[np.bool_]:
    return np.logical_and.reduce([np.isfinite(side).all(axis=-1) for side in signs])


def kendall_tau_b(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Kendall's tau-b between ``x`` and ``y`` along the last axis (broadcast over the leading axes); module docstring."""
    sign_x, sign_y = pair_signs(np.asarray(x, dtype=np.float64)), pair_signs(np.asarray(y, dtype=np.float64))
    sign_x, sign_y = np.broadcast_arrays(sign_x, sign_y)
    finite = _finite_rows(sign_x, sign_y)
    untied = np.count_nonzero(np.nan_to_num(sign_x), axis=-1) * np.count_nonzero(np.nan_to_num(sign_y), axis=-1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.sum(sign_x * sign_y, axis=-1) / np.sqrt(untied)
    return np.where(finite & (untied > 0), tau, np.nan)


def pairwise_accuracy(metric: NDArray[np.float64], human: NDArray[np.float64]) -> NDArray[np.float64]:
    """The share of the system pairs people order that the metric orders alike, along the last axis (module docstring)."""
    sign_m, sign_h = pair_signs(np.asarray(metric, dtype=np.float64)), pair_signs(np.asarray(human, dtype=np.float64))
    sign_m, sign_h = np.broadcast_arrays(sign_m, sign_h)
    finite = _finite_rows(sign_m, sign_h)
    ordered = (sign_h != 0) & np.isfinite(sign_h)
    people = np.count_nonzero(ordered, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.count_nonzero(ordered & (sign_m == sign_h), axis=-1) / people
    return np.where(finite & (people > 0), share, np.nan)


def agreement_interval(estimate: float, replicates: NDArray[np.float64], confidence: float, clusters: ClusterCounts,
                       bounds: tuple[float, float]) -> tuple[float, float]:
    """The interval of a tau or an accuracy (module docstring): the engine's Wald interval of the estimate against 0
    (:func:`.paired_tests.difference`), clipped to ``bounds``; NaN without a finite estimate or two finite replicates."""
    values = np.asarray(replicates, dtype=np.float64)
    if not math.isfinite(estimate) or np.count_nonzero(np.isfinite(values)) < 2:
        return math.nan, math.nan
    found = difference(float(estimate), 0.0, values, np.zeros_like(values), confidence, clusters)
    if not (math.isfinite(found.low) and math.isfinite(found.high)):
        return math.nan, math.nan
    return float(np.clip(found.low, *bounds)), float(np.clip(found.high, *bounds))


def pair_tests(measure: str, metrics: Sequence[str], taus: NDArray[np.float64], replicates: NDArray[np.float64],
               confidence: float, clusters: ClusterCounts) -> list[dict]:
    """Every pair (a, b) of ``metrics`` (input order, a before b) on one measure: ``taus`` (K,) and their paired
    ``replicates`` (K, B); records with :data:`PAIR_COLUMNS` (module docstring: the engine's paired test, Holm over
    the pairs of the measure)."""
    level = 1 - confidence
    records, found = [], []
    for first, second in itertools.combinations(range(len(metrics)), 2):
        compared = difference(float(taus[first]), float(taus[second]), replicates[first], replicates[second], confidence, clusters)
        found.append(compared)
        records.append({"measure": measure, "metric_a": metrics[first], "metric_b": metrics[second],
                        "tau_a": float(taus[first]), "tau_b": float(taus[second]), "difference": compared.estimate,
                        "standard_error": compared.standard_error, "p": compared.p_value,
                        "lo_unadjusted": compared.low, "hi_unadjusted": compared.high})
    if not found:
        return []
    family = holm_family(found, level)
    tested = int(np.isfinite(family.p_holm).sum())
    for index, record in enumerate(records):
        p_holm = float(family.p_holm[index])
        record |= {"pairs": tested, "p_holm": p_holm, "level_adjusted": float(family.level_adjusted[index]),
                   "lo": float(family.low[index]), "hi": float(family.high[index]),
                   "separated": separated(p_holm, level) and record["difference"] != 0}
    return [{name: record[name] for name in PAIR_COLUMNS} for record in records]


def significance_clusters(metrics: Sequence[str], taus: Sequence[float],
                          separated_pairs: Mapping[tuple[str, str], bool]) -> dict[str, float]:
    """Each metric's significance cluster (1 = best; NaN for a NaN tau) from its tau and the Holm verdicts
    ``separated_pairs`` ((a, b) -> separated, either order), by the WMT rank assignment of the module docstring."""
    values = np.asarray(taus, dtype=np.float64)
    finite = np.flatnonzero(np.isfinite(values))
    order = [metrics[index] for index in finite[np.argsort(-values[finite], kind="stable")]]
    clusters: dict[str, float] = {metrics[index]: math.nan for index in np.flatnonzero(~np.isfinite(values))}
    head, current = None, 0
    for metric in order:
        if head is None or separated_pairs.get((head, metric), separated_pairs.get((metric, head), False)):
            head, current = metric, current + 1
        clusters[metric] = current
    return clusters
