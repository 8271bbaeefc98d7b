"""Percentile intervals of bootstrap replicates (:mod:`.resampling`), widened for few clusters and reflected for
domain-level samples.

**Intervals.** Percentile intervals at ``(1 -/+ confidence) / 2`` of the replicates, with two corrections
measured on simulated data (tests/unit/test_uncertainty_coverage.py):

* *Few clusters* (:func:`expansion`): the bootstrap distribution is too narrow for small n (it has
  divisor n, and z where t is due); the replicates are widened around the estimate by
  sqrt(n / (n - 1)) t_{n-1} / z (Hesterberg's expanded percentile interval; 1.075 at 25 clusters, 1.017 at
  100), n the clusters drawn in the smallest stratum (:func:`cluster_counts`, the one rule for every interval
  of the workflow: the engine's and the corpus scores'; a pool of 181 documents whose smallest test set has 23
  is widened by 1.082 for 23, not by 1.010 for 181).
* *Domain-level samples* (``reflect``): when the sample is one value per domain (accuracies of review
  domains, tau of attack conditions), every domain value carries its own sampling noise, which inflates
  Var and COV of the domain values; the replicates add that noise a second time, so their percentile
  interval sits above the truth (it can miss its own estimate). The *basic* interval reflects the
  replicates about the estimate, [2 t - q_hi, 2 t - q_lo], which removes that bias to first order;
  non-negative statistics are clipped at 0.

**Cluster counts** (:func:`cluster_counts`, recorded in every pool row of the engine's summary): the clusters drawn
in the smallest stratum (the n of :func:`expansion`) and the degrees of freedom of a bootstrap SE, the clusters
minus the strata (each stratum's mean costs one; a two-stage design that resamples its strata has strata - 1).
The paired tests (:mod:`.paired_tests`) read both: the SE widened by the same sqrt(n / (n - 1)) and Student's t
with those degrees of freedom. Why not t_{n-1} of the smallest stratum there too? For a pooled statistic the SE
pools the within-stratum spread of every stratum, so it is known to sum(n_s - 1) degrees of freedom; t_{n-1} of
the smallest stratum read at Holm's far tail (alpha / 66 for 12 systems) was so conservative that at 10
documents per domain the family-wise error of the mean fell to 0.000 and its per-pair rejection to 0.030, against
0.039 and 0.050 with the pooled degrees of freedom (tests/unit/test_comparison_error_rates.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.statistics.quantiles import normal_quantile, student_t_quantile

__all__ = [
    "ClusterCounts",
    "cluster_counts",
    "expansion",
    "interval",
]


@dataclass(frozen=True)
class ClusterCounts:
    """How many independent clusters a bootstrap drew (module docstring): ``smallest_stratum`` the clusters of its
    smallest stratum (the n of :func:`expansion`), ``degrees_of_freedom`` those of a bootstrap SE."""

    smallest_stratum: int
    degrees_of_freedom: int


def cluster_counts(stratum_sizes: ArrayLike, resample_strata: bool = False) -> ClusterCounts:
    """The :class:`ClusterCounts` of a design whose strata hold ``stratum_sizes`` clusters: the smallest stratum, and
    the clusters minus the strata (``resample_strata``, a two-stage design: the strata minus one).

    Raises:
        ValueError: No stratum, or a stratum without clusters.
    """
    sizes = np.asarray(stratum_sizes, dtype=np.int64).reshape(-1)
    if sizes.size == 0 or sizes.min() < 1:
        raise ValueError(f"every stratum needs a cluster, got stratum sizes {sizes.tolist()}")
    freedom = sizes.size - 1 if resample_strata else int(sizes.sum()) - sizes.size
    return ClusterCounts(int(sizes.min()), int(freedom))


def expansion(clusters: int, confidence: float) -> float:
    """The small-sample widening factor sqrt(n / (n - 1)) t_{n-1} / z of the expanded percentile interval
    (module docstring); NaN below 2 clusters."""
    if clusters < 2:
        return math.nan
    tail = (1 + confidence) / 2
    return float(math.sqrt(clusters / (clusters - 1)) * student_t_quantile(tail, clusters - 1) / normal_quantile(tail))


def interval(replicates: ArrayLike, confidence: float, *, estimate: float | None = None, clusters: int | None = None,
             reflect: bool = False, non_negative: bool = False) -> tuple[float, float]:
    """The percentile interval of ``replicates`` (NaN replicates ignored; NaN when fewer than two are finite).

    With ``estimate``: ``clusters`` widens the replicates around it by :func:`expansion`; ``reflect`` gives the
    basic interval (the percentile interval reflected about the estimate) (module docstring).
    ``non_negative``: the statistic cannot be negative (a variance, an SD), so the ends are clipped at 0.

    Raises:
        ValueError: ``confidence`` outside (0, 1).
    """
    _check_confidence(confidence)
    values = np.asarray(replicates, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return math.nan, math.nan
    if estimate is not None and math.isfinite(estimate):
        if clusters is not None:
            values = estimate + expansion(clusters, confidence) * (values - estimate)
    elif reflect:
        return math.nan, math.nan
    low, high = np.quantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])
    if reflect:
        # the basic interval; where the replicates' bias exceeds their spread it would exclude the estimate
        # itself (a domain-level Var made mostly of noise): it is extended to reach the estimate (wider only)
        low, high = min(2 * estimate - high, estimate), max(2 * estimate - low, estimate)
    if non_negative:  # widening or reflecting must not leave the statistic's range
        low, high = max(low, 0.0), max(high, 0.0)
    return float(low), float(high)


def intervals(replicates: NDArray[np.float64], confidence: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile intervals of every column of ``replicates`` ``(B, k)`` (a curve's pointwise band)."""
    _check_confidence(confidence)
    low, high = np.nanquantile(replicates, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return low, high


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
