"""Benchmark bagging and design bagging at the paper's scale against the 10 s target.

For N synthetic sentence scores (default 1,000,000), M blocks (30) of a fraction (0.6) of the pool, it times
drawing the blocks and computing the bagged statistics (mean, variance, COV, gamma on the 1..100 epsilon grid),
separately for bagging (Algorithm 5) and design bagging (Algorithm 6), and compares blocks + statistics with
the target. It also reports the speed-up of the fast design bagging over the literal transcription of
Algorithm 6 on a small pool (default N = 2,000) and the peak resident memory of the process.

Timings are the best of --repeats runs (the literal algorithm runs once), which filters out noise from other
processes on the machine. Exit status 1 if any total exceeds the target.

    .venv/bin/python benchmarks/bench_bagging.py [--items N] [--blocks M] [--fraction F] [--target S]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

import numpy as np
from timing import best_time

from nlp_robustness.sampling import block_size, rng_for
from nlp_robustness.statistics.bagging import (
    bagged_statistics,
    bagging_blocks,
    design_bagging_blocks,
    design_bagging_blocks_literal,
)
from nlp_robustness.statistics.robustness_metrics import epsilon_grid

# Beta(0.66, 1.37) * 100 has mean 32.5 and variance about 720, the moments of sentence BLEU of WMT'14 in
# Table 1 of the paper (32.52, 723.56), with many scores near 0 as sentence BLEU has.
BLEU_LIKE_BETA = (0.66, 1.37)



def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000, help="pool size N (default 1,000,000)")
    parser.add_argument("--blocks", type=int, default=30, help="number of blocks M (default 30)")
    parser.add_argument("--fraction", type=float, default=0.6, help="block size as a fraction of N (default 0.6)")
    parser.add_argument("--target", type=float, default=10.0, help="seconds allowed for blocks + statistics")
    parser.add_argument("--literal-items", type=int, default=2_000, help="pool size of the speed-up comparison")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement, best kept (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of scores and blocks (default 0)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    n_items, n_blocks, repeats = arguments.items, arguments.blocks, arguments.repeats
    size = block_size(n_items, arguments.fraction)
    scores = np.random.default_rng(arguments.seed).beta(*BLEU_LIKE_BETA, n_items) * 100
    epsilons = epsilon_grid(1, 100, 1)
    print(f"N = {n_items:,} scores (beta{BLEU_LIKE_BETA} x 100: mean {scores.mean():.2f}, "
          f"variance {scores.var():.2f}), M = {n_blocks}, b = {size:,}, {epsilons.size} epsilons; "
          f"numpy {np.__version__}, {os.cpu_count()} CPUs, best of {repeats}")
    print()
    print(f"{'method':<16}{'blocks s':>10}{'stats s':>10}{'total s':>10}{'target s':>10}{'ratio':>8}  result")

    all_pass = True
    for name, draw in (("bagging", bagging_blocks), ("design_bagging", design_bagging_blocks)):
        block_seconds, blocks = best_time(
            lambda: draw(n_items, size, n_blocks, rng_for(arguments.seed, "benchmark", name)), repeats
        )
        statistics_seconds, _ = best_time(lambda: bagged_statistics(scores, blocks, epsilons), repeats)
        total = block_seconds + statistics_seconds
        passed = total <= arguments.target
        all_pass &= passed
        print(f"{name:<16}{block_seconds:>10.3f}{statistics_seconds:>10.3f}{total:>10.3f}"
              f"{arguments.target:>10g}{total / arguments.target:>8.3f}  {'PASS' if passed else 'FAIL'}")

    small = arguments.literal_items
    small_size = block_size(small, arguments.fraction)
    literal_seconds, _ = best_time(
        lambda: design_bagging_blocks_literal(small, small_size, n_blocks, rng_for(arguments.seed, "literal")), 1
    )
    fast_seconds, _ = best_time(
        lambda: design_bagging_blocks(small, small_size, n_blocks, rng_for(arguments.seed, "fast")), 10 * repeats
    )
    print()
    print(f"design bagging blocks at N = {small:,}, b = {small_size:,}, M = {n_blocks}: literal Algorithm 6 "
          f"{literal_seconds:.3f} s, fast {fast_seconds:.4f} s, speed-up literal/fast = "
          f"{literal_seconds / fast_seconds:.0f}x")
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # ru_maxrss is in KiB on Linux
    print(f"peak resident memory (ru_maxrss): {peak_mib:,.0f} MiB")
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
