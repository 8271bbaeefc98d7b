"""Bootstrap resampling of a study's units: the design of a replicate (stratified or cluster draws) and the
seeded chunks of replicates that the intervals and paired tests are computed from.

Every study of the engine measures *rows* (systems, classifiers, metric variants) on the same *units*
(segments, reviews, judgements, records) grouped by *domain*. How sure a number is depends on which units
happened to be in the test set, so the intervals come from resampling units
(:mod:`.percentile_intervals`, :mod:`.paired_tests`).

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
weighted statistic of the same score vector: a ``(B, n)`` weight matrix times per-unit values
(:mod:`.replicate_statistics`). The weights
come in chunks of :data:`CHUNK` replicates, each from its own generator seeded by (seed, labels, chunk), so
the replicates are identical whatever the chunking across threads and whichever rows are measured: two rows
of a study measured on the same units get the *same* resamples, which is what makes their replicates
paired.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.sampling import rng_for

__all__ = [
    "CHUNK",
    "ResamplingDesign",
    "cluster_design",
    "gathers",
    "label_codes",
    "map_chunks",
    "resample_blocks",
    "resample_weights",
    "stratum_sizes",
]

#: Replicates drawn per generator: the unit of work of a thread and of the chunked weights.
CHUNK = 50


@dataclass(frozen=True)
class ResamplingDesign:
    """What a bootstrap replicate draws: ``cluster_of_unit[i]`` is unit i's cluster (0..C-1); clusters are
    drawn with replacement within each stratum (``stratum_of_cluster``, 0..S-1; one stratum: no
    stratification). ``resample_strata``: draw the strata with replacement first (two-stage). The engine's is
    a study's design made concrete for one pool (:meth:`.study_design.StudyDesign.resampling`)."""

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
