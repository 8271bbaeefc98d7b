"""Benchmark the bootstrap of the uncertainty layer: 1,000 resamples of Var and COV of 1,000,000 unit scores.

Ways to get the same replicates, timed:

* **vectorised, gathered** (what the engine does for units nested in domains):
  :func:`~nlp_robustness.statistics.resampling.map_chunks` over the seeded chunks of
  :func:`~nlp_robustness.statistics.resampling.resample_blocks` (4 domains, stratified), each chunk's
  drawn scores gathered per domain and reduced by
  :func:`~nlp_robustness.statistics.replicate_statistics.block_statistics`, on 1 and on 2 threads -- the number
  held against the target;
* **vectorised, weights** (crossed or two-stage designs): the same draws as a dense weight matrix per chunk
  (:func:`~nlp_robustness.statistics.resampling.resample_weights`) times the scores; fewer resamples, scaled;
* a **Python loop** over resamples, numpy per resample (draw indices, gather, mean and variance), timed on
  fewer resamples and scaled to the full count;
* **scipy.stats.bootstrap** (``vectorized=True``, percentile method, batches of resamples), also timed on
  fewer resamples and scaled.

It also times the engine's full per-chunk statistics (gathered, with the gamma curve on the 1..100 grid),
scaled, to show what the gamma histogram costs beside the moments. Timings are the best of --repeats runs.
Exit status 1 if the gathered path on 2 threads exceeds the target.

    .venv/bin/python benchmarks/bench_bootstrap.py [--units N] [--resamples B] [--target S]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

import numpy as np
from numpy.typing import NDArray
from scipy import stats as scipy_stats
from timing import best_time

from nlp_robustness.statistics.replicate_statistics import block_statistics, weighted_moments
from nlp_robustness.statistics.resampling import CHUNK, cluster_design, map_chunks
from nlp_robustness.statistics.robustness_metrics import epsilon_grid

# The moments of sentence BLEU of WMT'14 (Table 1 of the paper: mean 32.52, variance 723.56), as in
# bench_bagging.py.
BLEU_LIKE_BETA = (0.66, 1.37)
DOMAINS = 4


def gathered(values: NDArray[np.float64], design, resamples: int, threads: int) -> NDArray[np.float64]:
    """The engine's path: positions drawn per chunk, scores gathered, moments per replicate; (B, 2) Var, COV."""
    shift = float(values.mean())

    def moments(blocks: list[NDArray[np.float64]]) -> NDArray[np.float64]:
        result = block_statistics(blocks, shift)
        return np.column_stack([result["variance"], result["cov"]])

    return np.concatenate(map_chunks(moments, design, resamples, 0, ["benchmark"], threads, values=values - shift))


def weighted(values: NDArray[np.float64], design, resamples: int) -> NDArray[np.float64]:
    """The weights path on the same draws: a dense (rows, N) weight matrix per chunk times the scores."""
    def moments(weights: NDArray[np.float64]) -> NDArray[np.float64]:
        result = weighted_moments(values, weights)
        return np.column_stack([result["variance"], result["cov"]])

    return np.concatenate(map_chunks(moments, design, resamples, 0, ["benchmark"], 1))


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
    parser.add_argument("--target", type=float, default=10.0, help="seconds allowed for the gathered path, 2 threads")
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
        seconds, replicates = best_time(lambda: gathered(values, design, resamples, threads), arguments.repeats)
        rows.append((f"vectorised, gathered, {threads} thread(s)", seconds, "measured (the engine's path)"))
    assert replicates.shape == (resamples, 2)
    chunk = min(CHUNK, resamples)  # a whole chunk: the same draws as the first chunk of the gathered path
    seconds, by_weights = best_time(lambda: weighted(values, design, chunk), 1)
    np.testing.assert_allclose(by_weights, replicates[:chunk], rtol=1e-9)  # the same resamples either way
    rows.append(("vectorised, dense weights, 1 thread", seconds * resamples / chunk, f"{chunk} resamples, scaled"))
    seconds, _ = best_time(lambda: python_loop(values, codes, few), arguments.repeats)
    rows.append(("Python loop, numpy per resample", seconds * resamples / few, f"{few} resamples, scaled"))
    seconds, _ = best_time(lambda: scipy_bootstrap(values, few, batch=10), arguments.repeats)
    rows.append(("scipy.stats.bootstrap, vectorized", seconds * resamples / few, f"{few} resamples, scaled"))
    epsilons = epsilon_grid(1, 100, 1)
    gamma_resamples = min(resamples, arguments.gamma_chunks * CHUNK)
    shift = float(values.mean())
    seconds, _ = best_time(lambda: map_chunks(lambda blocks: block_statistics(blocks, shift, epsilons), design,
                                              gamma_resamples, 0, ["benchmark"], 1, values=values - shift), 1)
    rows.append(("engine statistics (+gamma), 1 thread", seconds * resamples / gamma_resamples,
                 f"{gamma_resamples} resamples, scaled"))

    reference = rows[1][1]
    print(f"{'path':<42}{'seconds':>10}{'x gathered(2)':>17}  timed on")
    for name, seconds, how in rows:
        print(f"{name:<42}{seconds:>10.2f}{seconds / reference:>17.1f}  {how}")
    passed = reference <= arguments.target
    print()
    print(f"gathered bootstrap on 2 threads: {reference:.2f} s for {resamples:,} resamples of N = {n_units:,} "
          f"(target {arguments.target:g} s): {'PASS' if passed else 'FAIL'}")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is in KiB on Linux
    print(f"peak resident memory (ru_maxrss): {peak_mib:,.0f} MiB")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
