"""The uncertainty layer: bootstrap intervals for every robustness number and paired tests between rows.

Every study of the engine measures *rows* (systems, classifiers, metric variants) on the same *units*
(segments, reviews, judgements, records) grouped by *domain*. How sure a number is depends on which units
happened to be in the test set, so the intervals here come from resampling units.

**Resampling scheme.** A *cluster* is what is drawn: the unit itself when units are nested in domains (a
segment belongs to one test set; a review to one product domain) -- then clusters are drawn with
replacement *within each domain* (stratified: every replicate keeps each domain's size, the domains are
treated as fixed, which is what a table of given test domains claims); or one id shared by the units of
several domains (a segment appears under every perturbation function, a DARR judgement under every attack
condition, a record under every perturbation type) -- then ids are drawn with replacement over the whole
study and each brings its units in every domain, so the correlation across domains is kept. What this
captures: the noise of the scores *given the domains*, i.e. "would another draw of segments from the same
test domains give the same numbers?". It does not capture the choice of domains; with the option to
resample domains too (two-stage: domains with replacement, then units within them) it does, but only a
study with many domains supports that (with four domains the domain draw dominates and is itself poorly
estimated), so it is off by default.

A resample is a *weight* per unit (how often it was drawn), so every statistic of a replicate is a
weighted statistic of the same score vector: a ``(B, n)`` weight matrix times per-unit values. The weights
come in chunks of :data:`CHUNK` replicates, each from its own generator seeded by (seed, labels, chunk), so
the replicates are identical whatever the chunking across threads and whichever rows are measured: two rows
of a study measured on the same units get the *same* resamples, which is what makes their replicates
paired.

**Intervals.** Percentile intervals at ``(1 -/+ confidence) / 2`` of the replicates, with two corrections
measured on simulated data (tests/unit/test_uncertainty_coverage.py):

* *Few clusters* (:func:`expansion`): the bootstrap distribution is too narrow for small n (it has
  divisor n, and z where t is due); the replicates are widened around the estimate by
  sqrt(n / (n - 1)) t_{n-1} / z (Hesterberg's expanded percentile interval; 1.075 at 25 clusters, 1.017 at
  100), n the clusters drawn in the smallest stratum.
* *Domain-level samples* (``reflect``): when the sample is one value per domain (accuracies of review
  domains, tau of attack conditions), every domain value carries its own sampling noise, which inflates
  Var and COV of the domain values; the replicates add that noise a second time, so their percentile
  interval sits above the truth (it can miss its own estimate). The *basic* interval reflects the
  replicates about the estimate, [2 t - q_hi, 2 t - q_lo], which removes that bias to first order;
  non-negative statistics are clipped at 0.

**Paired differences**
of two rows: the replicate differences (same resamples) give the standard error SE of the difference d; the
test is the Wald test with that bootstrap SE, t = d / SE, its p from Student's t with B - 1 degrees of freedom
(:func:`difference`): B replicates know the SE only to about 1 / sqrt(2 (B - 1)), and at B = 100 the normal's
far tail (Holm's first step over 190 pairs reads z = 3.65) let the family-wise error reach 0.06; the t reference
holds it (0.03-0.05) and changes nothing at B = 1,000. Why not
the count of replicates beyond |d| (Hall and Wilson 1991)? That p is (1 + #) / (B + 1), so it cannot fall
below 1 / (B + 1), and Holm's first step multiplies it by the m pairs of a table: from m = 50 (11 systems) at
B = 1,000 no pair could ever be told apart, whatever the difference. The normal approximation has no floor; what
B limits is how well SE is known (relative error about 1 / sqrt(2 (B - 1)): 2 % at 1,000, 7 % at 100), which
the comparisons tables state when B is small (:func:`se_precision`). Its error rate and power are checked on
simulated data with 20 systems (tests/unit/test_comparison_error_rates.py). The interval of d is d +/- t SE.

Over the pairs of a family the p-values are adjusted by Holm's step-down method, and each pair's interval is
*adjusted alike* (:func:`adjusted_levels`): at level 1 - alpha_i with alpha_i = alpha p_i / p_Holm,i, the level
at which this pair's unadjusted test is held by Holm's procedure. That interval excludes 0 exactly when the
Holm-adjusted p is below alpha, so an interval and a verdict never disagree on the page; it lies between the
unadjusted interval (alpha_i <= alpha) and Bonferroni's simultaneous one (alpha_i >= alpha / m). Where two rows
are not told apart, :func:`units_to_detect` says how many units per domain the observed difference would need at
Holm's strictest step, alpha / m (normal approximation, SE ~ 1/sqrt(n)): enough whatever the other pairs show.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.sampling import rng_for
from nlp_robustness.statistics.quantiles import normal_quantile, student_t_quantile

__all__ = [
    "CHUNK",
    "Difference",
    "ResamplingDesign",
    "adjusted_levels",
    "critical_value",
    "VERDICTS",
    "cluster_design",
    "difference",
    "domain_indicator",
    "expansion",
    "holm",
    "interval",
    "label_codes",
    "resample_weights",
    "se_precision",
    "two_sided_p",
    "units_to_detect",
    "verdict",
    "weighted_moments",
    "weighted_statistics",
    "block_statistics",
    "gathers",
    "resample_blocks",
    "stratum_sizes",
    "weighted_between_domains",
]

#: Replicates drawn per generator: the unit of work of a thread and of the chunked weights.
CHUNK = 50

#: What a paired comparison of a consistency statistic (lower = more consistent) concludes.
VERDICTS = ("more consistent", "less consistent", "not distinguishable")


@dataclass(frozen=True)
class ResamplingDesign:
    """What a bootstrap replicate draws: ``cluster_of_unit[i]`` is unit i's cluster (0..C-1); clusters are
    drawn with replacement within each stratum (``stratum_of_cluster``, 0..S-1; one stratum: no
    stratification). ``resample_strata``: draw the strata with replacement first (two-stage)."""

    cluster_of_unit: NDArray[np.int64]
    stratum_of_cluster: NDArray[np.int64]
    resample_strata: bool = False

    @property
    def n_units(self) -> int:
        return int(self.cluster_of_unit.size)

    @property
    def n_clusters(self) -> int:
        return int(self.stratum_of_cluster.size)


def label_codes(labels: ArrayLike) -> NDArray[np.int64]:
    """The codes ``np.unique(labels, return_inverse=True)`` gives one label per unit (its rank among the distinct
    labels in sorted order). String labels are factorised by hashing and only the distinct ones sorted: sorting
    some 25,000 string ids in every pool was a noticeable part of a metric row; the codes are the same."""
    values = np.asarray(labels)
    if values.ndim == 1 and values.dtype == object:
        import pandas as pd  # only for object arrays, whose callers hold pandas tables already

        if pd.api.types.infer_dtype(values, skipna=False) == "string":
            codes, distinct = pd.factorize(values)
            ranks = np.empty(len(distinct), dtype=np.int64)
            ranks[np.argsort(distinct)] = np.arange(len(distinct))
            return ranks[codes]
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)


def cluster_design(domains: ArrayLike, clusters: ArrayLike | None = None, resample_domains: bool = False,
                   universe: tuple[ArrayLike, ArrayLike] | None = None) -> ResamplingDesign:
    """The design of a study's units: ``domains`` one label per unit; ``clusters`` one id per unit shared by
    the units that are resampled together (None: every unit its own cluster, stratified by domain).

    With ``clusters`` given, a cluster whose units all lie in one domain is stratified by that domain; ids
    spanning domains are drawn over the whole study (one stratum), as described in the module docstring.

    ``universe`` (cluster ids, the domain code of each; clusters nested in domains): the clusters drawn from,
    in this order, including clusters none of these units lie in. Rows of a study measured on different units
    of the same clusters (systems each rated on its own segments of the same documents) then draw the same
    clusters in every replicate, so their replicates stay paired; an empty cluster drawn adds no unit.

    Raises:
        ValueError: lengths differ, ids span domains while ``resample_domains`` asks for domain strata, or a
            unit's cluster is not in ``universe`` or lies in another domain there.
    """
    domain_labels = np.asarray(domains)
    domain_codes = label_codes(domain_labels)
    if clusters is None:
        return ResamplingDesign(np.arange(domain_codes.size, dtype=np.int64), domain_codes, resample_domains)
    cluster_labels = np.asarray(clusters)
    if cluster_labels.shape != domain_labels.shape:
        raise ValueError(f"{cluster_labels.size} cluster ids for {domain_labels.size} units")
    if universe is not None:
        keys, strata = np.asarray(universe[0]), np.asarray(universe[1], dtype=np.int64)
        position = {key: index for index, key in enumerate(keys.tolist())}
        missing = [key for key in dict.fromkeys(cluster_labels.tolist()) if key not in position]
        if missing:
            raise ValueError(f"cluster {missing[0]!r} of a unit is not in the universe of clusters")
        cluster_codes = np.fromiter((position[key] for key in cluster_labels.tolist()), dtype=np.int64, count=cluster_labels.size)
        if not np.array_equal(strata[cluster_codes], domain_codes):
            raise ValueError("a unit's cluster lies in another domain in the universe of clusters")
        return ResamplingDesign(cluster_codes, strata, resample_domains)
    cluster_codes = label_codes(cluster_labels)
    n_clusters = int(cluster_codes.max()) + 1 if cluster_codes.size else 0
    first_domain = np.full(n_clusters, -1, dtype=np.int64)
    first_domain[cluster_codes[::-1]] = domain_codes[::-1]
    nested = bool(np.all(first_domain[cluster_codes] == domain_codes))
    if not nested and resample_domains:
        raise ValueError("clusters span domains: the domains cannot be resampled as strata")
    strata = first_domain if nested else np.zeros(n_clusters, dtype=np.int64)
    return ResamplingDesign(cluster_codes, strata, resample_domains)


def _strata_members(design: ResamplingDesign) -> list[NDArray[np.int64]]:
    """The clusters of every stratum, in stratum order."""
    strata = design.stratum_of_cluster
    order = np.argsort(strata, kind="stable")
    return np.split(order, np.cumsum(np.bincount(strata))[:-1])


def _draws(members: list[NDArray[np.int64]], rows: int, rng: np.random.Generator) -> list[NDArray[np.int32]]:
    """One replicate draw per stratum: ``rows`` x (its size) uniform picks among its clusters, int32 (the draws
    every path derives its replicates from, so weights and positions describe the same resamples)."""
    return [rng.integers(0, ids.size, size=(rows, ids.size), dtype=np.int32) for ids in members]


def _chunk_counts(design: ResamplingDesign, rows: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``rows`` replicates of cluster counts (rows, C): within each stratum as many draws as it has clusters."""
    members = _strata_members(design)
    n_strata = len(members)
    offsets = (np.arange(rows, dtype=np.int64) * design.n_clusters)[:, None]
    if design.resample_strata:
        counts = np.zeros((rows, design.n_clusters), dtype=np.float64)
        flat = counts.reshape(-1)
        drawn_strata = rng.integers(0, n_strata, size=(rows, n_strata))
        for index, cluster_ids in enumerate(members):
            # a stratum drawn k times in a replicate contributes k independent within-stratum draws
            times = (drawn_strata == index).sum(axis=1)
            draws = rng.integers(0, cluster_ids.size, size=(rows, cluster_ids.size * max(1, int(times.max()))))
            keep = np.arange(draws.shape[1])[None, :] < (times * cluster_ids.size)[:, None]
            picked = np.where(keep, offsets + cluster_ids[draws], -1)
            flat += np.bincount(picked[picked >= 0], minlength=flat.size)
        return counts
    picked = np.concatenate([(offsets + ids[draws]).reshape(-1) for ids, draws in zip(members, _draws(members, rows, rng))])
    return np.bincount(picked, minlength=rows * design.n_clusters).astype(np.float64).reshape(rows, design.n_clusters)


def _chunks(n_resamples: int) -> Iterator[tuple[int, int]]:
    if n_resamples < 1:
        raise ValueError(f"need at least one resample, got {n_resamples}")
    for chunk, start in enumerate(range(0, n_resamples, CHUNK)):
        yield chunk, min(CHUNK, n_resamples - start)


def _weights_chunk(design: ResamplingDesign, rows: int, rng: np.random.Generator) -> NDArray[np.float64]:
    return _chunk_counts(design, rows, rng)[:, design.cluster_of_unit]


def _chunk_rng(seed: int, labels: Sequence[str], chunk: int) -> np.random.Generator:
    """The generator of replicate chunk ``chunk``: every path (weights, gathered blocks, threads) draws from it."""
    return rng_for(seed, *labels, "bootstrap", str(chunk))


def resample_weights(design: ResamplingDesign, n_resamples: int, seed: int, *labels: str) -> Iterator[NDArray[np.float64]]:
    """The unit weights of ``n_resamples`` replicates, in chunks of at most :data:`CHUNK` rows ``(rows, n_units)``.

    Chunk k is drawn by ``rng_for(seed, *labels, "bootstrap", k)``: the same (seed, labels, design) gives the
    same weights in any process, whatever else is computed.

    Raises:
        ValueError: ``n_resamples`` < 1 or a design without units.
    """
    if design.n_units == 0:
        raise ValueError("no units to resample")
    for chunk, rows in _chunks(n_resamples):
        yield _weights_chunk(design, rows, _chunk_rng(seed, labels, chunk))


def gathers(design: ResamplingDesign) -> bool:
    """Whether :func:`resample_positions` serves ``design``: every unit its own cluster, one stage."""
    return not design.resample_strata and bool(np.array_equal(design.cluster_of_unit, np.arange(design.n_units)))


def _block_drawer(design: ResamplingDesign, values: NDArray[np.float64]):
    """A function (rows, generator) -> the gathered blocks of one chunk (see :func:`resample_blocks`)."""
    if not gathers(design) or design.n_units == 0:
        raise ValueError("gathered resamples need a one-stage design whose clusters are its units")
    members = _strata_members(design)
    by_stratum = [np.ascontiguousarray(np.asarray(values, dtype=np.float64)[ids]) for ids in members]

    def draw(rows: int, rng: np.random.Generator) -> list[NDArray[np.float64]]:
        # int32 draws (half the random bits), widened before the read: take is fastest on native indices
        return [np.take(stratum_values, drawn.astype(np.intp)) for stratum_values, drawn in zip(by_stratum, _draws(members, rows, rng))]

    return draw


def resample_blocks(design: ResamplingDesign, values: NDArray[np.float64], n_resamples: int, seed: int,
                    *labels: str) -> Iterator[list[NDArray[np.float64]]]:
    """The same resamples as :func:`resample_weights`, as the drawn ``values`` themselves: per chunk, one
    ``(rows, n_s)`` block of gathered values per stratum (stratum order), for designs where :func:`gathers`.
    No weight matrix and no positions are formed: every draw costs one random integer and one read, which
    is what makes a million-unit bootstrap fast (benchmarks/bench_bootstrap.py).

    Raises:
        ValueError: a design it does not serve, ``n_resamples`` < 1, or no units.
    """
    draw = _block_drawer(design, values)
    for chunk, rows in _chunks(n_resamples):
        yield draw(rows, _chunk_rng(seed, labels, chunk))


def stratum_sizes(design: ResamplingDesign) -> NDArray[np.int64]:
    """Units per stratum, in stratum order (the blocks of :func:`resample_blocks`)."""
    return np.bincount(design.stratum_of_cluster)


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
    """Metrics I-III of every replicate from its gathered blocks (:func:`resample_blocks`; one per stratum) of
    scores minus ``shift`` (centring before gathering keeps large scores from cancelling when squared and
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


def map_chunks(function, design: ResamplingDesign, n_resamples: int, seed: int, labels: Sequence[str], threads: int = 1,
               values: NDArray[np.float64] | None = None, cluster_counts: bool = False) -> list:
    """``function(chunk)`` of every chunk of :func:`resample_weights` (with ``values``: of :func:`resample_blocks`;
    with ``cluster_counts``: the weights per cluster, ``(rows, n_clusters)``, that the unit weights repeat), in
    chunk order, on ``threads`` threads: each thread draws its chunks itself (numpy releases the GIL in the
    draws, the reads and the reductions); results do not depend on ``threads``."""
    if design.n_units == 0:
        raise ValueError("no units to resample")
    if values is not None:
        draw = _block_drawer(design, values)
    elif cluster_counts:
        draw = lambda rows, rng: _chunk_counts(design, rows, rng)  # noqa: E731
    else:
        draw = lambda rows, rng: _weights_chunk(design, rows, rng)  # noqa: E731

    def work(chunk_rows: tuple[int, int]) -> Any:
        chunk, rows = chunk_rows
        return function(draw(rows, _chunk_rng(seed, labels, chunk)))

    chunks = list(_chunks(n_resamples))
    if threads <= 1:
        return [work(chunk) for chunk in chunks]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(work, chunks))


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


@dataclass(frozen=True)
class Difference:
    """A paired difference ``a - b`` of one statistic: estimate, symmetric bootstrap interval, SE, p-value and the
    degrees of freedom of its t reference (B - 1)."""

    estimate: float
    low: float
    high: float
    standard_error: float
    p_value: float
    degrees_of_freedom: float = math.inf


def two_sided_p(estimate: float, standard_error: float, degrees_of_freedom: float = math.inf) -> float:
    """The two-sided p of t = estimate / standard_error against Student's t with ``degrees_of_freedom`` (the
    bootstrap SE from B replicates: B - 1) or, for infinitely many, the normal (as erfc, so that tiny p-values keep
    their digits); 1 for no difference, 0 for a difference with no spread at all (every replicate gives it), NaN
    without a finite SE."""
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


def difference(estimate_a: float, estimate_b: float, replicates_a: ArrayLike, replicates_b: ArrayLike,
               confidence: float) -> Difference:
    """The paired comparison of two rows measured on the same resamples: the difference ``a - b``, its bootstrap
    SE (the SD of the replicate differences), the unadjusted interval d +/- t SE and the p-value of d / SE against
    Student's t with B - 1 degrees of freedom (module docstring).

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
    standard_error = float(np.std(deltas, ddof=1))
    degrees_of_freedom = float(deltas.size - 1)
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


def se_precision(resamples: int, confidence: float = 0.95) -> float:
    """The relative half-width of the ``confidence`` interval of a bootstrap SE from ``resamples`` replicates,
    z / sqrt(2 (B - 1)) (the SE of a normal SD): how well the B replicates know the SE behind each p-value."""
    if resamples < 2:
        return math.inf
    return float(normal_quantile((1 + confidence) / 2)) / math.sqrt(2 * (resamples - 1))


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


def units_to_detect(units_per_domain: float, estimate: float, standard_error: float, level: float,
                    power: float = 0.8) -> float:
    """Units per domain at which a two-sided test at ``level`` would detect ``estimate`` with ``power``:
    n * ((z_{1-level/2} + z_power) * SE / |estimate|)^2, the SE shrinking as 1/sqrt(n) (inf for no difference).
    The comparisons pass Holm's strictest level, alpha / m (module docstring)."""
    if not (math.isfinite(estimate) and math.isfinite(standard_error)) or standard_error <= 0:
        return math.nan
    if estimate == 0:
        return math.inf
    z = normal_quantile(1 - level / 2) + normal_quantile(power)
    return float(math.ceil(units_per_domain * (z * standard_error / abs(estimate)) ** 2))


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
