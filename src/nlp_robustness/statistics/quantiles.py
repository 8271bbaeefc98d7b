"""Quantiles of Student's t and the standard normal, bit for bit those of ``scipy.stats``, without importing it.

``scipy.stats`` takes most of a statistics job's start-up (it loads scipy.optimize, scipy.integrate and every
distribution) while the engine needs one quantile from it. For a probability strictly between 0 and 1 (and, for t,
positive degrees of freedom) ``scipy.stats.t.ppf(q, df)`` is ``scipy.special.stdtrit(df, q) * 1.0 + 0.0`` (its
``_ppf`` scaled by scale 1 and shifted by loc 0) and ``scipy.stats.norm.ppf(q)`` is ``scipy.special.ndtri(q) * 1.0 +
0.0``; these functions compute exactly that. Any other input (0, 1, NaN, out of range) goes to ``scipy.stats`` itself,
so its conventions for the edges hold too. tests/unit/test_quantiles.py checks the equality bit for bit on many values.
scipy.special itself is imported on the first quantile, so jobs that compute no interval start without scipy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["normal_quantile", "student_t_quantile"]


def student_t_quantile(probability: float, degrees_of_freedom: float) -> np.float64:
    """``scipy.stats.t.ppf(probability, degrees_of_freedom)`` for scalars, bit for bit."""
    if 0 < probability < 1 and degrees_of_freedom > 0:
        from scipy import special  # here only: jobs that compute no interval start without scipy

        # + 0.0 as scipy's "+ loc": it turns a -0.0 into 0.0.
        return np.float64(special.stdtrit(degrees_of_freedom, probability) * 1.0 + 0.0)
    from scipy import stats  # the edges: rare, and scipy's own conventions

    return stats.t.ppf(probability, degrees_of_freedom)


def normal_quantile(probability: float) -> np.float64:
    """``scipy.stats.norm.ppf(probability)`` for a scalar, bit for bit."""
    if 0 < probability < 1:
        from scipy import special  # here only: jobs that compute no interval start without scipy

        return np.float64(special.ndtri(probability) * 1.0 + 0.0)
    from scipy import stats  # the edges: rare, and scipy's own conventions

    return stats.norm.ppf(probability)

