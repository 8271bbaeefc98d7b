"""Metrics I-III and the between/within-domain decomposition of every bootstrap replicate at once.

A resample is a weight per unit (:mod:`.resampling`), so every statistic of a replicate is a weighted statistic of
the same score vector (:func:`weighted_statistics`, :func:`weighted_between_domains`: a ``(B, n)`` weight matrix
times per-unit values), or, for designs whose clusters are their units, a statistic of the drawn values gathered per
stratum (:func:`block_statistics` of :func:`.resampling.resample_blocks`). The definitions are those of
:mod:`.robustness_metrics` and :mod:`.variance_components`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "block_statistics",
    "domain_indicator",
    "weighted_between_domains",
    "weighted_moments",
    "weighted_statistics",
]


def _grid_bins(grid: NDArray[np.float64], values: NDArray[np.float64]) -> NDArray[np.intp]:
    """``np.searchsorted(grid, values, side="right")`` (how many grid points are <= each value), the same integers
    about three times faster on the evenly spaced grids of epsilon, where a binary search per value is most of a
    bootstrap's time: each value's bin is guessed from the spacing and kept where the grid points on either side
    confirm it; the values the guess misses (NaN, an uneven grid) are searched as before."""
    size = grid.size
    spacing = (grid[-1] - grid[0]) / (size - 1) if size > 1 else math.nan
    if not (spacing > 0 and math.isfinite(spacing) and np.all(grid[1:] >= grid[:-1])):
        return np.searchsorted(grid, values, side="right")
    with np.errstate(over="ignore"):
        guess = np.subtract(values, grid[0])
        guess *= 1 / spacing
        guess += 1.0
    np.fmax(guess, 0.0, out=guess)  # NaN becomes 0 here and fails the check below
    np.fmin(guess, size, out=guess)
    bins = guess.astype(np.intp)  # truncation is the floor: the guess is >= 0
    below, above = np.concatenate(([-np.inf], grid)), np.concatenate((grid, [np.inf]))  # grid[b - 1], grid[b]
    missed = ~((below.take(bins) <= values) & (values < above.take(bins)))
    if missed.any():
        bins[missed] = np.searchsorted(grid, values[missed], side="right")
    return bins


def block_statistics(blocks: Sequence[NDArray[np.float64]], shift: float, epsilons: NDArray[np.float64] | None = None,
                     between: bool = False) -> dict[str, NDArray[np.float64]]:
    """Metrics I-III of every replicate from its gathered blocks (:func:`.resampling.resample_blocks`; one per
    stratum) of scores minus ``shift`` (centring before gathering keeps large scores from cancelling when squared and
    saves a pass), as :func:`weighted_statistics` defines them: ``mean, variance, cov`` always; with
    ``epsilons`` also ``gamma`` (B, G) and ``gamma_area``; with ``between`` the decomposition of
    :func:`weighted_between_domains` (strata = domains)."""
    sizes = np.array([block.shape[1] for block in blocks], dtype=np.float64)
    rows = blocks[0].shape[0]
    sums = np.empty((rows, len(blocks)))
    squares = np.empty((rows, len(blocks)))
    for index, centred in enumerate(blocks):
        sums[:, index] = centred.sum(axis=1)
        squares[:, index] = np.einsum("ij,ij->i", centred, centred)
    centred_blocks = blocks
    total = float(sizes.sum())
    means = sums.sum(axis=1) / total
    variances = np.maximum(squares.sum(axis=1) / total - means**2, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = {"mean": means + shift, "variance": variances, "cov": np.sqrt(variances) / (means + shift)}
    if epsilons is not None:
        grid = np.asarray(epsilons, dtype=np.float64)
        width = grid.size + 1
        histogram = np.zeros(rows * width)
        offsets = (np.arange(rows) * width)[:, None]
        for centred in centred_blocks:
            bins = _grid_bins(grid, np.abs(centred - means[:, None]))
            histogram += np.bincount((offsets + bins).reshape(-1), minlength=rows * width)
        within = np.cumsum(histogram.reshape(rows, width), axis=1)[:, :grid.size]
        sample_variances = variances * total / max(total - 1, 1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            gamma = (1 - within / total) * grid[None, :] ** 2 / sample_variances[:, None]
        gamma[sample_variances <= 0] = 0.0
        result |= {"gamma": gamma, "gamma_area": gamma.mean(axis=1)}
    if between:
        result |= _between_from_sums(np.broadcast_to(sizes, sums.shape), sums, squares)
    return result


def weighted_moments(values: NDArray[np.float64], weights: NDArray[np.float64] | None) -> dict[str, NDArray[np.float64]]:
    """Mean, population variance and COV of every replicate: ``values`` ``(n,)`` with ``weights`` ``(B, n)``
    (matrix-vector products, no (B, n) temporary), gathered ``values`` ``(B, n)`` with ``weights`` None, or
    per-replicate ``values`` ``(B, n)`` with ``weights`` ``(B, n)`` (domain means present or not). The values
    are centred first, so large scores lose no precision to cancellation."""
    if weights is not None and np.ndim(values) == 2:
        shift = float(np.nanmean(values))
        centred = values - shift
        totals = weights.sum(axis=1)
        means = (weights * centred).sum(axis=1) / totals
        squares = (weights * centred**2).sum(axis=1) / totals
    elif weights is None:
        matrix = np.atleast_2d(values)
        shift = float(np.nanmean(matrix))
        centred = matrix - shift
        totals = np.full(matrix.shape[0], float(matrix.shape[1]))
        means = centred.sum(axis=1) / totals
        squares = np.einsum("ij,ij->i", centred, centred) / totals
    else:
        shift = float(np.mean(values))
        centred = np.asarray(values, dtype=np.float64) - shift
        totals = weights.sum(axis=1)
        means = weights @ centred / totals
        squares = weights @ (centred * centred) / totals
    variances = np.maximum(squares - means**2, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = np.sqrt(variances) / (means + shift)
    return {"mean": means + shift, "variance": variances, "cov": cov, "_totals": totals, "_shift": np.array(shift)}


def weighted_statistics(values: NDArray[np.float64], weights: NDArray[np.float64] | None,
                        epsilons: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Metrics I-III of every replicate: ``values`` ``(n,)`` or ``(B, n)``, ``weights`` ``(B, n)`` (None: every
    value once, e.g. values gathered at :func:`resample_positions`).

    The same definitions as :mod:`.robustness_metrics`: the mean, the population variance, COV = sigma / mu,
    gamma(eps) = (1 - Pr_w[|t - mu| < eps]) eps^2 / s^2 with s^2 the sample variance (divisor N - 1, N the
    replicate's total weight), and the gamma-area (the mean of the curve over the grid). The counts of
    |t - mu| < eps come from one histogram over the grid per replicate (searchsorted + bincount), not a sort.
    Returns arrays ``mean, variance, cov, gamma_area`` of shape (B,) and ``gamma`` (B, G).
    """
    grid = np.asarray(epsilons, dtype=np.float64)
    matrix = np.atleast_2d(values)
    moments = weighted_moments(matrix[0] if weights is not None and matrix.shape[0] == 1 else matrix, weights)
    totals, means, variances = moments["_totals"], moments["mean"], moments["variance"]
    rows = max(matrix.shape[0], 1 if weights is None else weights.shape[0])
    shift = float(moments["_shift"])
    distances = np.abs((matrix - shift) - (means - shift)[:, None])  # on centred values: no cancellation
    bins = _grid_bins(grid, distances)  # eps_g counts a distance when g >= its bin
    width = grid.size + 1
    keys = (np.arange(rows)[:, None] * width + bins).reshape(-1)
    histogram = np.bincount(keys, weights=None if weights is None else np.broadcast_to(weights, bins.shape).reshape(-1),
                            minlength=rows * width)
    within = np.cumsum(histogram.reshape(rows, width), axis=1)[:, :grid.size]
    sample_variances = variances * totals / np.maximum(totals - 1, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = (1 - within / totals[:, None]) * grid[None, :] ** 2 / sample_variances[:, None]
    gamma[sample_variances <= 0] = 0.0
    return {"mean": means, "variance": variances, "cov": moments["cov"], "gamma": gamma, "gamma_area": gamma.mean(axis=1)}


def _between_from_sums(counts: NDArray[np.float64], sums: NDArray[np.float64], squares: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """The decomposition from per-replicate, per-domain unit counts, sums and sums of squares (B, D)."""
    n_domains = counts.shape[1]
    total = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = sums / counts
        grand = sums.sum(axis=1) / total
        between_square = np.nansum(counts * (means - grand[:, None]) ** 2, axis=1) / (n_domains - 1)
        within_square = np.nansum(squares - sums**2 / counts, axis=1) / (total - n_domains)
        n0 = (total - (counts**2).sum(axis=1) / total) / (n_domains - 1)
        between = np.maximum(0.0, (between_square - within_square) / n0)
        share = between / (between + within_square)
    return {
        "between_variance": between, "between_sd": np.sqrt(between), "within_sd": np.sqrt(np.maximum(within_square, 0)),
        "between_share": share, "domain_mean_sd": np.nanstd(means, axis=1, ddof=1),
    }


def domain_indicator(domain_codes: NDArray[np.int64], n_domains: int) -> NDArray[np.float64]:
    """The (n, D) 0/1 matrix of units by domain: weights @ it sums a replicate's weights per domain."""
    indicator = np.zeros((domain_codes.size, n_domains))
    indicator[np.arange(domain_codes.size), domain_codes] = 1.0
    return indicator


def weighted_between_domains(values: NDArray[np.float64], domain_codes: NDArray[np.int64], n_domains: int,
                             weights: NDArray[np.float64], *, indicator: NDArray[np.float64] | None = None,
                             counts: NDArray[np.float64] | None = None) -> dict[str, NDArray[np.float64]]:
    """The method-of-moments decomposition of :mod:`.variance_components` for every replicate (a unit drawn k
    times counts k times). Returns ``between_variance, between_sd, within_sd, between_share, domain_mean_sd``.

    A caller that has them may pass the :func:`domain_indicator` of the codes and the units per domain of every
    replicate (``weights @ indicator``; whole numbers, so any order of summing gives them), saving their work.
    """
    indicator = domain_indicator(domain_codes, n_domains) if indicator is None else indicator
    centred = values - values.mean()
    return _between_from_sums(weights @ indicator if counts is None else counts, (weights * centred) @ indicator,
                              (weights * centred**2) @ indicator)
