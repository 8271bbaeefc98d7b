"""Holm-adjusted intervals beside Holm-adjusted p-values: one family of paired differences, one call.

Every table that prints a Holm p or a verdict prints, beside it, the interval that agrees with it: the
interval of each difference at the level Holm's procedure holds that difference to
(:func:`.paired_tests.adjusted_levels`: alpha_i = alpha p_i / p_Holm,i), d +/- t(alpha_i, df) SE with the
SE and the degrees of freedom of the difference's own test (:func:`.paired_tests.difference`). It excludes 0
exactly when p_Holm < alpha, so an interval and a verdict never disagree on the page: the comparisons tables
(:mod:`.comparisons`, :mod:`.corpus_uncertainty`), the tau differences and the perturbation means all call it. A
difference's *unadjusted* interval (at the table's confidence, ignoring the other tests of the family) may be
printed too, but only under a name that says so (``..._unadjusted``).

A difference whose test reports no evidence at all (p = 1: no difference, or one within floating-point noise)
gets an interval that contains 0 whatever its SE says, so that even a difference of ~1e-15 with an SE of
~1e-16 is not printed as an interval beside 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from nlp_robustness.statistics.paired_tests import Difference, adjusted_levels, critical_value, holm

__all__ = ["HolmFamily", "holm_family", "separated"]


@dataclass(frozen=True)
class HolmFamily:
    """Holm over one family of differences, one entry per difference (their order): the adjusted p ``p_holm``,
    the level ``level_adjusted`` of the adjusted interval and its ends ``low``, ``high`` (NaN where the test has
    no p)."""

    p_holm: NDArray[np.float64]
    level_adjusted: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]


def holm_family(differences: Sequence[Difference], level: float) -> HolmFamily:
    """Holm's adjustment of the p-values of ``differences`` (one family) at ``level`` = 1 - confidence, and
    each difference's Holm-adjusted interval (module docstring)."""
    p_values = np.array([found.p_value for found in differences], dtype=np.float64)
    adjusted = holm(p_values)
    levels = adjusted_levels(p_values, adjusted, level)
    low, high = np.full(len(differences), np.nan), np.full(len(differences), np.nan)
    for index, (found, alpha_i) in enumerate(zip(differences, levels)):
        if not (math.isfinite(alpha_i) and math.isfinite(found.standard_error)):
            continue
        half_width = critical_value(float(alpha_i), found.degrees_of_freedom) * found.standard_error
        low[index], high[index] = found.estimate - half_width, found.estimate + half_width
        if found.p_value >= 1.0:  # no evidence at all: the interval holds 0 (module docstring)
            low[index], high[index] = min(low[index], 0.0), max(high[index], 0.0)
    return HolmFamily(adjusted, levels, low, high)


def separated(p_holm: float, level: float) -> bool:
    """Whether a Holm-adjusted p separates a difference from 0 at ``level`` (what the interval says too)."""
    return math.isfinite(p_holm) and p_holm < level
