"""Benchmark the bootstrap of the uncertainty layer: 1,000 resamples of Var and COV of 1,000,000 unit scores.

Three ways to get the same replicates are timed:

* **vectorised weights** (what the engine does): :func:`~nlp_robustness.statistics.uncertainty.map_chunks`
  over the seeded chunks of :func:`~nlp_robustness.statistics.uncertainty.resample_weights` (4 domains,
  stratified), each chunk's weighted moments as two matrix-vector products (:func:`weighted_moments`, below),
  on 1 and on 2 threads -- the number to hold against the target; and the same with the cluster counts
  accumulated by one bincount per chunk (:func:`one_bincount_counts`, a proposed change of the core that
  gives the same weights);
* a **Python loop** over resamples, numpy per resample (draw indices, gather, mean and variance), timed on
  fewer resamples and scaled to the full count;
* **scipy.stats.bootstrap** (``vectorized=True``, percentile method, batches of resamples), also timed on
  fewer resamples and scaled.

It also times the engine's full per-chunk statistics (:func:`~nlp_robustness.statistics.uncertainty.weighted_statistics`,
which computes the gamma curve on the 1..100 grid of every replicate as well) on a few chunks, scaled, to
show what the gamma histogram costs beside the moments. Timings are the best of --repeats runs.
Exit status 1 if the vectorised path on 2 threads exceeds the target.

    .venv/bin/python benchmarks/bench_bootstrap.py [--units N] [--resamples B] [--target S]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray
from scipy import stats as scipy_stats
from timing import best_time

from nlp_robustness.sampling import rng_for
from nlp_robustness.statistics.robustness_metrics import epsilon_grid
from nlp_robustness.statistics.uncertainty import CHUNK, cluster_design, map_chunks, weighted_statistics

# The moments of sentence BLEU of WMT'14 (Table 1 of the paper: mean 32.52, variance 723.56), as in
# bench_bagging.py.
BLEU_LIKE_BETA = (0.66, 1.37)
DOMAINS = 4


def weighted_moments(values: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """Var (population) and COV of every replicate of a chunk ``(rows, n)``: two matrix-vector products on
    the centred values, no (rows, n) temporary. Returns ``(rows, 2)``. The core has no moments-only path:
    :func:`weighted_statistics` always builds the gamma histogram too."""
    shift = float(values.mean())
    centred = values - shift
    totals = weights.sum(axis=1)
    means = weights @ centred / totals
    variances = np.maximum(weights @ (centred * centred) / totals - means**2, 0.0)
    return np.column_stack([variances, np.sqrt(variances) / (means + shift)])


def vectorised(values: NDArray[np.float64], design, resamples: int, threads: int) -> NDArray[np.float64]:
    chunks = map_chunks(lambda weights: weighted_moments(values, weights), design, resamples, 0, ["benchmark"], threads)
    return np.concatenate(chunks)


def one_bincount_counts(design, rows: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """The cluster counts of ``uncertainty._chunk_counts`` (one-stage designs), from the same draws in the
    same order, accumulated by ONE bincount over all strata instead of one full-length (rows x C) bincount
    and addition per stratum: the same weights, cost independent of the number of strata."""
    strata = design.stratum_of_cluster
    offsets = (np.arange(rows, dtype=np.int64) * design.n_clusters)[:, None]
    picked = []
    for stratum in range(int(strata.max()) + 1):
        cluster_ids = np.flatnonzero(strata == stratum)
        picked.append((offsets + cluster_ids[rng.integers(0, cluster_ids.size, size=(rows, cluster_ids.size))]).reshape(-1))
    counts = np.bincount(np.concatenate(picked), minlength=rows * design.n_clusters)
    return counts.reshape(rows, design.n_clusters).astype(np.float64)


def vectorised_one_bincount(values: NDArray[np.float64], design, resamples: int, threads: int) -> NDArray[np.float64]:
    """:func:`vectorised` with :func:`one_bincount_counts` in place of the core's counts (the weights are
    checked equal to the core's in :func:`main`); units are their own clusters, so no gather either."""

    def chunk(number: int) -> NDArray[np.float64]:
        rows = min(CHUNK, resamples - number * CHUNK)
        return weighted_moments(values, one_bincount_counts(design, rows, rng_for(0, "benchmark", "bootstrap", str(number))))

    numbers = range(-(-resamples // CHUNK))
    if threads <= 1:
        return np.concatenate([chunk(number) for number in numbers])
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return np.concatenate(list(pool.map(chunk, numbers)))


def python_loop(values: NDArray[np.float64], codes: NDArray[np.int64], resamples: int) -> NDArray[np.float64]:
    """Resample within each domain, one replicate at a time."""
    rng = np.random.default_rng(1)
    members = [np.flatnonzero(codes == domain) for domain in range(DOMAINS)]
    results = np.empty((resamples, 2))
    for replicate in range(resamples):
        drawn = np.concatenate([values[positions[rng.integers(0, positions.size, positions.size)]] for positions in members])
        variance = drawn.var()
        results[replicate] = variance, np.sqrt(variance) / drawn.mean()
    return results


def scipy_bootstrap(values: NDArray[np.float64], resamples: int, batch: int) -> tuple:
    """scipy's bootstrap of (Var, COV) at once, unstratified (scipy has no strata)."""

    def statistic(sample: NDArray[np.float64], axis: int) -> NDArray[np.float64]:
        variance = sample.var(axis=axis)
        return np.stack([variance, np.sqrt(variance) / sample.mean(axis=axis)])

    return scipy_stats.bootstrap((values,), statistic, vectorized=True, method="percentile", n_resamples=resamples,
                                 batch=batch, rng=np.random.default_rng(2)).confidence_interval


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=1_000_000, help="unit scores N (default 1,000,000)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples B (default 1,000)")
    parser.add_argument("--loop-resamples", type=int, default=50, help="resamples timed for the loop and scipy")
    parser.add_argument("--gamma-chunks", type=int, default=2, help="chunks timed for weighted_statistics")
    parser.add_argument("--target", type=float, default=10.0, help="seconds allowed for the vectorised path, 2 threads")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per measurement, best kept (default 2)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    n_units, resamples, few = arguments.units, arguments.resamples, min(arguments.loop_resamples, arguments.resamples)
    values = np.random.default_rng(0).beta(*BLEU_LIKE_BETA, n_units) * 100
    codes = np.repeat(np.arange(DOMAINS), -(-n_units // DOMAINS))[:n_units]
    design = cluster_design(codes)
    print(f"N = {n_units:,} scores in {DOMAINS} domains (stratified), B = {resamples:,} resamples of Var and COV, "
          f"chunks of {CHUNK}; numpy {np.__version__}, {os.cpu_count()} CPUs, best of {arguments.repeats}")
    print()
    rows: list[tuple[str, float, str]] = []
    for threads in (1, 2):
        seconds, replicates = best_time(lambda: vectorised(values, design, resamples, threads), arguments.repeats)
        rows.append((f"vectorised weights, {threads} thread(s)", seconds, "measured"))
    assert replicates.shape == (resamples, 2)
    for threads in (1, 2):
        seconds, faster = best_time(lambda: vectorised_one_bincount(values, design, resamples, threads), arguments.repeats)
        rows.append((f"same, one bincount per chunk, {threads} thread(s)", seconds, "measured (proposed core change)"))
    np.testing.assert_allclose(faster, replicates, rtol=1e-12)  # the same replicates
    seconds, _ = best_time(lambda: python_loop(values, codes, few), arguments.repeats)
    rows.append(("Python loop, numpy per resample", seconds * resamples / few, f"{few} resamples, scaled"))
    seconds, _ = best_time(lambda: scipy_bootstrap(values, few, batch=10), arguments.repeats)
    rows.append(("scipy.stats.bootstrap, vectorized", seconds * resamples / few, f"{few} resamples, scaled"))
    epsilons = epsilon_grid(1, 100, 1)
    gamma_resamples = min(resamples, arguments.gamma_chunks * CHUNK)
    seconds, _ = best_time(lambda: map_chunks(lambda weights: weighted_statistics(values, weights, epsilons), design,
                                              gamma_resamples, 0, ["benchmark"], 1), 1)
    rows.append(("weighted_statistics (+gamma), 1 thread", seconds * resamples / gamma_resamples,
                 f"{gamma_resamples} resamples, scaled"))

    reference = rows[1][1]
    print(f"{'path':<42}{'seconds':>10}{'x vectorised(2)':>17}  timed on")
    for name, seconds, how in rows:
        print(f"{name:<42}{seconds:>10.2f}{seconds / reference:>17.1f}  {how}")
    passed = reference <= arguments.target
    print()
    print(f"vectorised weights on 2 threads: {reference:.2f} s for {resamples:,} resamples of N = {n_units:,} "
          f"(target {arguments.target:g} s): {'PASS' if passed else 'FAIL'}")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is in KiB on Linux
    print(f"peak resident memory (ru_maxrss): {peak_mib:,.0f} MiB")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
