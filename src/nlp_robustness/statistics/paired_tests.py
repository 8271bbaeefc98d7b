"""Paired tests between rows measured on the same resamples (:mod:`.resampling`): the difference and its Wald
test, Holm's adjustment over a family, the Holm-adjusted intervals and the verdicts.

**Paired differences**
of two rows: the replicate differences (same resamples) give the standard error SE of the difference d; the
test is the Wald test with that bootstrap SE, t = d / SE, its p from Student's t (:func:`difference`). Why not
the count of replicates beyond |d| (Hall and Wilson 1991)? That p is (1 + #) / (B + 1), so it cannot fall
below 1 / (B + 1), and Holm's first step multiplies it by the m pairs of a table: from m = 50 (11 systems) at
B = 1,000 no pair could ever be told apart, whatever the difference. The normal approximation has no floor; what
B limits is how well SE is known (relative error about 1 / sqrt(2 (B - 1)): 2 % at 1,000, 7 % at 100), which
the comparisons tables state when B is small (:func:`.power.se_precision`). The interval of d is d +/- t SE.

**Degrees of freedom.** The SE is known only as well as its two sources allow: B replicates (B - 1 degrees of
freedom: at B = 100 the normal's far tail, which Holm's first step over 190 pairs reads at z = 3.65, let the
family-wise error reach 0.06; the t reference holds it) and the clusters drawn (documents, segments, unit ids):
with 10 documents per domain the bootstrap SE rests on 10 documents a domain whatever B is, and its divisor is n,
not n - 1. Given the design's :class:`.percentile_intervals.ClusterCounts` (the engine records them in every pool
row of a summary), the test gets the few-cluster treatment the row intervals get (:func:`.percentile_intervals.expansion`):
the SE widened by sqrt(n / (n - 1)), n the clusters of the smallest stratum, and Student's t with
min(B - 1, clusters - strata) degrees of freedom (why the pooled count and not n - 1: the module docstring of
:mod:`.percentile_intervals`). Simulated under the global null with 12 systems and 10 documents in each of four
domains, the per-pair rejection and Holm's family-wise error at level 0.05 were 0.071 and 0.116 (mean), 0.061 and
0.077 (between-domain SD) with t_{B-1}; with the treatment 0.050 and 0.039, 0.042 and 0.022
(tests/unit/test_comparison_error_rates.py).

**Identical rows.** Two rows that are the same numbers computed in another order (beta2 and beta1 of a system whose
faithful and plain scores coincide, two columns of one matrix product) differ by floating-point rounding alone: every
replicate difference about 1e-15 and SE about 1e-16, so p between 1e-71 and 1e-12 on the default run's character
attacks (issue 52): a zero difference "separated".
Such a pair is *numerically identical* (:func:`numerically_identical`): |d| and every |replicate difference| within
:data:`IDENTICAL_ULPS` units in the last place of the scale of the numbers compared (the largest |estimate| or
|replicate| of the two rows). Its difference, SE and interval are 0 and its p is 1, so it is never separated and,
ranked last by Holm, never loosens the adjustment of the other pairs (it still counts as one of the family's m).
The tolerance: rounding a sum of n terms in another order moves it by about sqrt(n) ulps of its scale (pairwise
and blocked summation: numpy, BLAS; measured 8 ulps at 2,000 terms, 89 at 200,000); 4,096 ulps (9.1e-13 of the
scale) leaves room for statistics formed by cancellation (a between-domain variance as a difference of mean
squares), and a real difference that small is below what float64 resolves of a statistic of thousands of values.

**Zero spread, nonzero difference.** When every replicate gives exactly the same difference d != 0 (a row that is
another plus a constant on every unit, for the mean), d does not depend on which units were drawn: it is not
sampling noise, and :func:`two_sided_p` gives p = 0 (the limit of t = d / SE as SE -> 0; an SE that is merely
tiny gives a p that is as good as 0 through the same formula). A pair with no difference at all, exact or
numerical, gives p = 1; that case is decided first.

Over the pairs of a family the p-values are adjusted by Holm's step-down method, and each pair's interval is
*adjusted alike* (:func:`adjusted_levels`): at level 1 - alpha_i with alpha_i = alpha p_i / p_Holm,i, the level
at which this pair's unadjusted test is held by Holm's procedure. That interval excludes 0 exactly when the
Holm-adjusted p is below alpha, so an interval and a verdict never disagree on the page; it lies between the
unadjusted interval (alpha_i <= alpha) and Bonferroni's simultaneous one (alpha_i >= alpha / m). Where two rows
are not told apart, :func:`.power.units_to_detect` says how many units per domain the observed difference would need at
Holm's strictest step, alpha / m (normal approximation, SE ~ 1/sqrt(n)): enough whatever the other pairs show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.statistics.percentile_intervals import ClusterCounts, _check_confidence
from nlp_robustness.statistics.quantiles import normal_quantile, student_t_quantile

__all__ = [
    "Difference",
    "IDENTICAL_ULPS",
    "VERDICTS",
    "adjusted_levels",
    "critical_value",
    "difference",
    "holm",
    "numerically_identical",
    "two_sided_p",
    "verdict",
]

#: Two rows are numerically identical when their difference and every replicate difference lie within this many
#: units in the last place of the scale of the numbers compared (module docstring: 9.1e-13 of the scale).
IDENTICAL_ULPS = 4096

#: What a paired comparison of a consistency statistic (lower = more consistent) concludes.
VERDICTS = ("more consistent", "less consistent", "not distinguishable")


@dataclass(frozen=True)
class Difference:
    """A paired difference ``a - b`` of one statistic: estimate, symmetric bootstrap interval, SE (widened for few
    clusters where they are known), p-value and the degrees of freedom of its t reference (module docstring)."""

    estimate: float
    low: float
    high: float
    standard_error: float
    p_value: float
    degrees_of_freedom: float = math.inf


def two_sided_p(estimate: float, standard_error: float, degrees_of_freedom: float = math.inf) -> float:
    """The two-sided p of t = estimate / standard_error against Student's t with ``degrees_of_freedom`` (the
    bootstrap SE: :func:`difference`) or, for infinitely many, the normal (as erfc, so that tiny p-values keep
    their digits); 1 for no difference, 0 for a difference with no spread at all (every replicate gives it: the
    module docstring), NaN without a finite SE."""
    if not (math.isfinite(estimate) and math.isfinite(standard_error)) or standard_error < 0:
        return math.nan
    if estimate == 0:
        return 1.0
    if standard_error == 0:
        return 0.0
    statistic = abs(estimate) / standard_error
    if not math.isfinite(degrees_of_freedom):
        return float(math.erfc(statistic / math.sqrt(2.0)))
    from scipy import special  # here only: jobs that compare nothing start without scipy

    return float(2 * special.stdtr(degrees_of_freedom, -statistic))


def critical_value(level: float, degrees_of_freedom: float = math.inf) -> float:
    """The two-sided critical value of :func:`two_sided_p` at ``level``: |t| above it gives p below ``level``."""
    if not math.isfinite(degrees_of_freedom):
        return float(normal_quantile(1 - level / 2))
    return float(student_t_quantile(1 - level / 2, degrees_of_freedom))


def numerically_identical(estimate_a: float, estimate_b: float, replicates_a: NDArray[np.float64],
                          replicates_b: NDArray[np.float64]) -> bool:
    """Whether two rows differ by floating-point rounding alone: ``|a - b|`` and every finite ``|replicate a -
    replicate b|`` within :data:`IDENTICAL_ULPS` ulps of the largest finite |estimate| or |replicate| of the two
    (module docstring)."""
    deltas = replicates_a - replicates_b
    finite = np.isfinite(deltas)
    magnitudes = [abs(estimate_a), abs(estimate_b)]
    magnitudes += [float(np.abs(values[np.isfinite(values)]).max(initial=0.0)) for values in (replicates_a, replicates_b)]
    tolerance = IDENTICAL_ULPS * np.finfo(np.float64).eps * max(magnitudes)
    return abs(estimate_a - estimate_b) <= tolerance and bool(np.all(np.abs(deltas[finite]) <= tolerance))


def difference(estimate_a: float, estimate_b: float, replicates_a: ArrayLike, replicates_b: ArrayLike,
               confidence: float, clusters: ClusterCounts | None = None) -> Difference:
    """The paired comparison of two rows measured on the same resamples: the difference ``a - b``, its bootstrap
    SE (the SD of the replicate differences), the unadjusted interval d +/- t SE and the p-value of d / SE against
    Student's t with B - 1 degrees of freedom. ``clusters``: the design's cluster counts, for the few-cluster
    treatment (the SE widened by sqrt(n / (n - 1)), min(B - 1, clusters - strata) degrees of freedom). Numerically
    identical rows give 0 [0, 0] with SE 0 and p 1 (module docstring).

    Raises:
        ValueError: replicate arrays of different lengths, or ``confidence`` outside (0, 1).
    """
    _check_confidence(confidence)
    first, second = np.asarray(replicates_a, dtype=np.float64), np.asarray(replicates_b, dtype=np.float64)
    if first.shape != second.shape:
        raise ValueError(f"paired replicates differ in length: {first.size} and {second.size}")
    observed = float(estimate_a - estimate_b)
    deltas = first - second
    deltas = deltas[np.isfinite(deltas)]
    if deltas.size < 2 or not math.isfinite(observed):
        return Difference(observed, math.nan, math.nan, math.nan, math.nan, math.nan)
    degrees_of_freedom = float(deltas.size - 1)
    widening = 1.0
    if clusters is not None:
        if clusters.smallest_stratum < 2 or clusters.degrees_of_freedom < 1:  # no spread to estimate an SE from
            return Difference(observed, math.nan, math.nan, math.nan, math.nan, math.nan)
        widening = math.sqrt(clusters.smallest_stratum / (clusters.smallest_stratum - 1))
        degrees_of_freedom = min(degrees_of_freedom, float(clusters.degrees_of_freedom))
    if numerically_identical(float(estimate_a), float(estimate_b), first, second):
        return Difference(0.0, 0.0, 0.0, 0.0, 1.0, degrees_of_freedom)
    standard_error = widening * float(np.std(deltas, ddof=1))
    half_width = critical_value(1 - confidence, degrees_of_freedom) * standard_error
    return Difference(observed, observed - half_width, observed + half_width, standard_error,
                      two_sided_p(observed, standard_error, degrees_of_freedom), degrees_of_freedom)


def adjusted_levels(p_values: ArrayLike, adjusted: ArrayLike, level: float) -> NDArray[np.float64]:
    """The level alpha_i = ``level`` p_i / p_Holm,i of every pair's Holm-adjusted interval (module docstring): its
    interval at 1 - alpha_i excludes 0 exactly when p_Holm,i < ``level``. A p of 0 (no spread) takes Holm's
    multiplier for its rank, level / (m - rank + 1); NaN stays NaN."""
    raw, holm_p = np.asarray(p_values, dtype=np.float64), np.asarray(adjusted, dtype=np.float64)
    levels = np.full(raw.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(raw) & np.isfinite(holm_p))
    order = finite[np.argsort(raw[finite], kind="stable")]
    m = order.size
    for rank, index in enumerate(order):
        if raw[index] > 0 and holm_p[index] > 0:
            levels[index] = level * raw[index] / holm_p[index]
        else:
            levels[index] = level / (m - rank)
    return levels


def holm(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm's step-down adjustment of a family of p-values (NaN stays NaN and is not counted)."""
    values = np.asarray(p_values, dtype=np.float64)
    adjusted = np.full(values.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(values))
    order = finite[np.argsort(values[finite], kind="stable")]
    m = order.size
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[index]))
        adjusted[index] = running
    return adjusted


def verdict(estimate: float, adjusted_p: float, level: float, lower_is_more_consistent: bool = True) -> str:
    """:data:`VERDICTS` for row a against row b from the difference ``a - b`` of a consistency statistic."""
    if not (math.isfinite(adjusted_p) and adjusted_p < level) or estimate == 0:
        return VERDICTS[2]
    a_lower = estimate < 0
    return VERDICTS[0] if a_lower == lower_is_more_consistent else VERDICTS[1]
