"""Robustness metrics I-III of the paper: variance, coefficient of variation, (epsilon, gamma)-Robustness.

Robustness is read as the *consistency* of a quality score (e.g. sentence BLEU in [0, 100]) over the samples
of a test pool: the less the scores spread around their mean, the more robust the system. Every function here
is pure numpy on a one-dimensional array of finite scores; nothing reads or writes files.

Readings of the paper (Sections 2-3, Algorithms 1-4, Tables 1, 3, 5) chosen here:

* Metric I (Algorithm 2) is the *population* variance, normalised by 1/I (numpy ``ddof=0``).
* Metric II (Algorithm 3) is sigma / mu with sigma the square root of Metric I. Algorithm 3 prints the variance
  over the mean, without the square root, but every table reports sigma / mu (Table 1, WMT'14: mean 32.52,
  variance 723.56, COR 0.83 = sqrt(723.56) / 32.52, whereas 723.56 / 32.52 would be 22.25); the tables win.
* Metric III (Algorithms 1 and 4) is gamma(eps) = (1 - Pr[|t - mu| < eps]) * eps^2 / sigma^2 with sigma^2 the
  *sample* variance (divisor I - 1), as Algorithm 4 writes it. The algorithms print ``Pr[|X - mu| = eps]`` and
  ``|{t_j | t_j - mu < eps}|``; both are typesetting slips for the two-sided, strict ``|t - mu| < eps`` of
  Equation (1), which is what is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "RobustnessSummary",
    "cov_from_moments",
    "coefficient_of_variation",
    "epsilon_grid",
    "gamma_curve",
    "population_variance",
    "summarize",
]


def _validated_scores(scores: ArrayLike) -> NDArray[np.float64]:
    """Return ``scores`` as a non-empty one-dimensional float64 array of finite values, or raise ValueError."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be a one-dimensional array, got shape {values.shape}")
    if values.size == 0:
        raise ValueError("scores must not be empty: a metric of no scores is undefined")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"scores must be finite; found {int(np.count_nonzero(~np.isfinite(values)))} NaN/inf value(s)")
    return values


def _validated_epsilons(epsilons: ArrayLike) -> NDArray[np.float64]:
    """Return ``epsilons`` as a non-empty one-dimensional float64 array of finite values >= 0, or raise ValueError."""
    grid = np.asarray(epsilons, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"epsilons must be a non-empty one-dimensional array, got shape {grid.shape}")
    if not np.all(np.isfinite(grid)) or np.any(grid < 0):
        raise ValueError("epsilons must be finite and >= 0")
    return grid


def _population_variance(values: NDArray[np.float64]) -> float:
    """Metric I of already validated scores: mean squared deviation from the mean (divisor I)."""
    deviations = values - values.mean()
    return float(np.dot(deviations, deviations) / values.size)


def _gamma_curve(values: NDArray[np.float64], epsilons: NDArray[np.float64]) -> NDArray[np.float64]:
    """Metric III of already validated scores on an already validated epsilon grid (see :func:`gamma_curve`).

    The absolute deviations are sorted once; ``searchsorted(..., side="left")`` then gives, for every epsilon
    at once, the number of deviations strictly below it. The sample variance is computed from the same
    deviations, so the Chebyshev bound behind gamma <= 1 holds for the numbers actually used. Deviations and
    epsilons are divided by the largest deviation before squaring, so that tiny or huge scores neither
    underflow nor overflow; where no deviation reaches eps (so gamma = 0) eps is clipped to the largest deviation,
    which keeps 0 * eps^2 / sigma^2 from turning into 0 * inf.
    """
    if values.size == 1 or np.ptp(values) == 0.0:
        # All mass sits at mu: Pr[|t - mu| < eps] = 1 for every eps > 0, so 1 - Pr = 0; at eps = 0 the factor
        # eps^2 is 0. Either way gamma is 0 (the formula itself would be 0 * eps^2 / 0). I = 1 is the same case.
        return np.zeros(epsilons.shape, dtype=np.float64)
    distances = np.abs(values - values.mean())
    scale = distances.max()  # > 0, since the scores are not all equal
    relative = distances / scale
    relative_sample_variance = np.dot(relative, relative) / (values.size - 1)  # sigma^2 / scale^2, >= 1/(I-1)
    within = np.searchsorted(np.sort(distances), epsilons, side="left")  # count of |t - mu| < eps (strict)
    outside = 1.0 - within / values.size
    relative_epsilons = np.minimum(epsilons, scale) / scale  # clipping only touches eps > scale, where outside = 0
    return outside * relative_epsilons**2 / relative_sample_variance


def population_variance(scores: ArrayLike) -> float:
    """Metric I (Algorithm 2): V(T) = 1/I * sum_i (t_i - mean)^2, the population variance (ddof=0).

    Raises ValueError for empty or non-finite input.
    """
    return _population_variance(_validated_scores(scores))


def cov_from_moments(mean: float, variance: float) -> float:
    """Coefficient of variation sqrt(variance) / mean from a mean and a (population) variance.

    Used directly by bagging, where the paper averages the block means and block variances first and only
    then forms the coefficient (Tables 3 and 5). The sign follows the mean (quality scores are >= 0 anyway).
    A zero mean has no finite coefficient: the result is ``math.inf`` when variance > 0 and ``nan`` when the
    variance is 0 too (0/0: no spread and no scale), so callers can tell the two cases apart.

    Raises ValueError for a non-finite mean or variance, or a negative variance.
    """
    if not (math.isfinite(mean) and math.isfinite(variance)):
        raise ValueError(f"mean and variance must be finite, got mean={mean!r}, variance={variance!r}")
    if variance < 0:
        raise ValueError(f"variance must be >= 0, got {variance!r}")
    if mean == 0:
        return math.inf if variance > 0 else math.nan
    return math.sqrt(variance) / mean


def coefficient_of_variation(scores: ArrayLike) -> float:
    """Metric II: sqrt(population variance) / mean, i.e. sigma / mu as the paper's tables report it.

    Algorithm 3 omits the square root, but Table 1 (WMT'14: 32.52, 723.56 -> 0.83 = sqrt(723.56) / 32.52)
    and all other tables use sigma / mu, which is followed here. Zero mean: see :func:`cov_from_moments`.
    Raises ValueError for empty or non-finite input.
    """
    values = _validated_scores(scores)
    return cov_from_moments(float(values.mean()), _population_variance(values))


def gamma_curve(scores: ArrayLike, epsilons: ArrayLike) -> NDArray[np.float64]:
    """Metric III (Algorithms 1 and 4): gamma(eps) = (1 - Pr[|t - mu| < eps]) * eps^2 / sigma^2 per epsilon.

    mu is the mean of the scores, Pr the empirical fraction with |t - mu| *strictly* below eps (the paper's
    ``= eps`` and one-sided ``t - mu < eps`` are read as the |t - mu| < eps of Equation (1)), and sigma^2 the
    sample variance with divisor I - 1 as in Algorithm 4. Lower gamma = tighter than Chebyshev = more robust.

    gamma <= (I - 1)/I < 1 always: Chebyshev holds exactly for the empirical distribution with its population
    variance, Pr[|t - mu| >= eps] <= var_pop / eps^2, and the sample variance is larger by I / (I - 1).
    When all scores are equal (or there is a single score) gamma is 0 for every eps: all mass is at mu.

    Returns an array of the same length as ``epsilons``. Raises ValueError for empty or non-finite scores
    and for an empty, non-finite or negative epsilon grid.
    """
    return _gamma_curve(_validated_scores(scores), _validated_epsilons(epsilons))


def epsilon_grid(start: float = 1.0, stop: float = 100.0, step: float = 1.0) -> NDArray[np.float64]:
    """The epsilon values start, start + step, ..., up to and *including* stop (paper: 1..100 step 1).

    The number of points is floor((stop - start) / step) + 1, with a 1e-9 tolerance so that a stop that is
    a whole number of steps away is kept despite floating-point rounding of the quotient.
    Raises ValueError unless all are finite, 0 <= start <= stop and step > 0.
    """
    if not all(math.isfinite(value) for value in (start, stop, step)):
        raise ValueError(f"epsilon grid bounds must be finite, got {start!r}, {stop!r}, {step!r}")
    if step <= 0 or start < 0 or stop < start:
        raise ValueError(f"epsilon grid needs 0 <= start <= stop and step > 0, got {start!r}, {stop!r}, {step!r}")
    count = math.floor((stop - start) / step + 1e-9) + 1
    return start + step * np.arange(count, dtype=np.float64)


@dataclass(frozen=True)
class RobustnessSummary:
    """Mean, Metric I (population variance) and Metric II (sigma / mu) of one set of scores."""

    mean: float
    variance: float
    cov: float


def summarize(scores: ArrayLike) -> RobustnessSummary:
    """Mean, population variance and coefficient of variation of ``scores`` (one row of the paper's Table 1).

    Raises ValueError for empty or non-finite input.
    """
    values = _validated_scores(scores)
    mean = float(values.mean())
    variance = _population_variance(values)
    return RobustnessSummary(mean=mean, variance=variance, cov=cov_from_moments(mean, variance))
