"""Benchmark the Natural Robustness score's cluster bootstrap (paper 001) against a resample-by-resample loop.

Synthetic outcomes: --records records, each perturbed by --types types (a type skips a record with
probability 0.2; outcomes share a per-record effect, as responses to one input do). The workflow's
``natural_robustness_scores`` draws every resample's record weights at once and gets every type's
replicate scores by two matrix products; the baseline draws the records of one resample, sums their
counts per type and divides, --resamples times in a Python loop (every type and all types pooled, on
every record, as the workflow's whole-sample rows). The bootstrap is the optional interval
(``interval.bootstrap_from_records``; the default binomial interval draws nothing), asked for here.
Printed: both times (best of --repeats) and the speed-up. No time is asserted.

    .venv/bin/python benchmarks/bench_natural_robustness.py [--records N] [--types T] [--resamples R] [--repeats K]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from timing import best_time

from nlp_robustness.statistics.natural_robustness import natural_robustness_scores


def synthetic(records: int, types: int, seed: int = 0) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Outcomes (record, type, same) with a per-record share drawn from Beta(0.7, 0.3)."""
    rng = np.random.default_rng(seed)
    names = [f"r{index}" for index in range(records)]
    kinds = [f"type{index}" for index in range(types)]
    share = rng.beta(0.7, 0.3, size=records)
    rows = [(name, kind, bool(rng.random() < share[index]))
            for index, name in enumerate(names) for kind in kinds if rng.random() >= 0.2]
    return pd.DataFrame(rows, columns=["record", "type", "same"]), names, kinds


def loop_bootstrap(outcomes: pd.DataFrame, order: list[str], kinds: list[str], resamples: int, seed: int) -> np.ndarray:
    """Replicate scores of every type and of all types pooled (columns), one resample at a time (the baseline)."""
    position = {name: index for index, name in enumerate(order)}
    rows, columns = outcomes["record"].map(position).to_numpy(), outcomes["type"].map(kinds.index).to_numpy()
    unchanged = np.zeros((len(order), len(kinds)))
    counts = np.zeros((len(order), len(kinds)))
    np.add.at(unchanged, (rows, columns), outcomes["same"].to_numpy(dtype=float))
    np.add.at(counts, (rows, columns), 1.0)
    rng = np.random.default_rng(seed)
    scores = np.empty((resamples, len(kinds) + 1))
    for replicate in range(resamples):
        drawn = rng.integers(0, len(order), len(order))
        same, total = unchanged[drawn].sum(axis=0), counts[drawn].sum(axis=0)
        scores[replicate] = np.append(same / total, same.sum() / total.sum())
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=6279, help="records (default: the four default test sets' segments)")
    parser.add_argument("--types", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    outcomes, order, kinds = synthetic(arguments.records, arguments.types)
    vectorised, table = best_time(lambda: natural_robustness_scores(
        outcomes, order, [None], kinds, resamples=arguments.resamples, confidence=0.95, seed=0, labels=["bench"],
        bootstrap_from_records=1,
    ), arguments.repeats)
    looped, _ = best_time(lambda: loop_bootstrap(outcomes, order, kinds, arguments.resamples, 0), arguments.repeats)
    pooled = table[(table["type"] == "all") & (table["sample"] == "all")].iloc[0]
    print(f"{len(outcomes)} perturbations of {arguments.records} records, {arguments.types} types, {arguments.resamples} resamples")
    print(f"workflow (matrix products, every type and all pooled): {vectorised:.3f} s; "
          f"pooled score {pooled['score']:.3f} [{pooled['ci_low']:.3f}, {pooled['ci_high']:.3f}]")
    print(f"loop baseline (one resample at a time, the same scores):  {looped:.3f} s")
    print(f"speed-up: {looped / vectorised:.1f}x")


if __name__ == "__main__":
    main()
