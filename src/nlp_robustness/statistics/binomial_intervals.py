"""Intervals of a share of binary outcomes: the binomial intervals, held at a floor of coverage, and the design
effect of outcomes clustered in records, for paper 001's Natural Robustness score
(:mod:`nlp_robustness.statistics.natural_robustness`, whose module docstring says why each was chosen and how
they cover).

* :func:`binomial_interval`: Wilson's score interval, Jeffreys' or Clopper-Pearson's (:data:`BINOMIAL_INTERVALS`),
  elementwise, on a possibly fractional (effective) number of trials;
* :func:`type_interval`: the interval of one perturbation type's share, widened to contain the Clopper-Pearson
  interval at ``confidence - FLOOR_MARGIN``;
* :func:`design_effect`: the cluster-robust variance of a ratio of sums over records over the binomial variance,
  which gives the pooled share its effective number of perturbations (Kish).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.errors import InputError

__all__ = ["BINOMIAL_INTERVALS", "FLOOR_MARGIN", "binomial_interval", "design_effect", "type_interval"]

#: Binomial intervals (:func:`binomial_interval`), by name.
BINOMIAL_INTERVALS: tuple[str, ...] = ("wilson", "jeffreys", "clopper-pearson")
#: A type's interval contains the Clopper-Pearson interval at ``confidence - FLOOR_MARGIN`` (:func:`type_interval`).
FLOOR_MARGIN = 0.02


def binomial_interval(
    share: ArrayLike, trials: ArrayLike, confidence: float, method: str = "wilson"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two-sided interval of a binomial share at ``confidence``, elementwise over arrays.

    ``trials`` may be fractional (an effective number of perturbations); the count of successes is
    ``share * trials``. ``wilson``: the score interval; ``jeffreys``: the Beta(x + 1/2, n - x + 1/2)
    quantiles at (1 -+ confidence)/2, with 0 as the lower end at x = 0 and 1 as the upper end at x = n
    (Brown, Cai and DasGupta 2001); ``clopper-pearson``: the exact Beta(x, n - x + 1) and Beta(x + 1, n - x)
    quantiles. Every interval has a positive width for finite trials > 0; trials <= 0 or a NaN share: NaN.

    Raises InputError for an unknown method.
    """
    from scipy import stats  # scipy.stats is slow to import; only intervals need it
    if method not in BINOMIAL_INTERVALS:
        raise InputError(f"interval method must be one of {', '.join(BINOMIAL_INTERVALS)}, got {method!r}")
    share, trials = np.broadcast_arrays(np.asarray(share, dtype=np.float64), np.asarray(trials, dtype=np.float64))
    valid = (trials > 0) & np.isfinite(share)
    p = np.where(valid, np.clip(share, 0.0, 1.0), 0.5)
    n = np.where(valid, trials, 1.0)
    alpha = 1.0 - confidence
    if method == "wilson":
        z2 = stats.norm.ppf(1 - alpha / 2) ** 2
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = np.sqrt(z2) / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
        low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
        low, high = np.where(p <= 0, 0.0, low), np.where(p >= 1, 1.0, high)
    else:
        successes, failures = p * n, (1 - p) * n
        if method == "jeffreys":
            lower_a, lower_b, upper_a, upper_b = successes + 0.5, failures + 0.5, successes + 0.5, failures + 0.5
        else:  # clopper-pearson; the beta parameters at the ends are placeholders (the end is 0 or 1)
            lower_a, lower_b = np.maximum(successes, 1e-300), failures + 1
            upper_a, upper_b = successes + 1, np.maximum(failures, 1e-300)
        low = np.where(p <= 0, 0.0, stats.beta.ppf(alpha / 2, lower_a, lower_b))
        high = np.where(p >= 1, 1.0, stats.beta.ppf(1 - alpha / 2, upper_a, upper_b))
    return np.where(valid, low, np.nan), np.where(valid, high, np.nan)


def type_interval(
    share: ArrayLike, trials: ArrayLike, confidence: float, method: str = "wilson"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The interval of one type's share: :func:`binomial_interval` by ``method``, widened to contain the
    Clopper-Pearson interval at ``confidence - FLOOR_MARGIN``, so it covers at least that at every share
    (:mod:`.natural_robustness`' module docstring). Elementwise, NaN where :func:`binomial_interval` is."""
    low, high = binomial_interval(share, trials, confidence, method)
    if confidence - FLOOR_MARGIN <= 0:
        return low, high
    floor_low, floor_high = binomial_interval(share, trials, confidence - FLOOR_MARGIN, "clopper-pearson")
    return np.fmin(low, floor_low), np.fmax(high, floor_high)


def design_effect(perturbations: ArrayLike, unchanged: ArrayLike) -> float | NDArray[np.float64]:
    """The design effect of the pooled share of records' perturbations: the cluster-robust (linearised)
    variance of the ratio of sums over records over the binomial variance ``p(1-p)/M``, clipped to [1, M/n].

    ``perturbations`` and ``unchanged`` hold one count per record (last axis; leading axes: independent
    samples, one design effect each); records without a perturbation are left out (n: records with one;
    M: perturbations). 1 without variance to estimate: fewer than two records, a share of 0 or 1, or no
    perturbation. A float for one sample.
    """
    m = np.asarray(perturbations, dtype=np.float64)
    y = np.asarray(unchanged, dtype=np.float64)
    n, total = (m > 0).sum(axis=-1), m.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = y.sum(axis=-1) / total
        robust = n / (n - 1) * ((y - share[..., None] * m) ** 2).sum(axis=-1) / total**2  # a record without: 0
        effect = np.clip(robust / (share * (1 - share) / total), 1.0, total / n)
    effect = np.where((n < 2) | ~(share > 0) | ~(share < 1), 1.0, effect)
    return float(effect) if effect.ndim == 0 else effect
