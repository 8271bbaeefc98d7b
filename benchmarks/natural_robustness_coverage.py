"""Coverage of the Natural Robustness intervals on a finished run's records (not part of CI).

Draws ``--records`` of the run's records (default 5 of the 100 of the default run) ``--draws`` times without
replacement (seeded) and counts how often each interval of a draw covers the share on every record: per
perturbation type (every cell with a perturbation) and pooled, for each binomial interval
(:data:`~nlp_robustness.statistics.binomial_intervals.BINOMIAL_INTERVALS`; pooled on the perturbations over
the design effect) and the percentile cluster bootstrap over records. Then the exact coverage of each
binomial interval for one type at fixed shares (binomial probabilities, no simulation).

    PYTHONPATH=src python benchmarks/natural_robustness_coverage.py --results ../run-clone/results
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from nlp_robustness.statistics.binomial_intervals import BINOMIAL_INTERVALS, binomial_interval, design_effect, type_interval

CONFIDENCE = 0.95


def _matrices(path: Path, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Per record (rows) and type (columns): whether it has a perturbation, and whether it left the response unchanged."""
    table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    records, types = pd.Index(sorted(set(table["record"]))), pd.Index(sorted(set(table["type"])))
    perturbed, unchanged = np.zeros((len(records), len(types))), np.zeros((len(records), len(types)))
    rows, columns = records.get_indexer(table["record"]), types.get_indexer(table["type"])
    perturbed[rows, columns] = 1.0
    unchanged[rows, columns] = (table[column] == "True").to_numpy(dtype=float)
    return perturbed, unchanged


def _bootstrap(perturbed: np.ndarray, unchanged: np.ndarray, resamples: int, rng: np.random.Generator):
    """Percentile cluster-bootstrap interval of the pooled share of each draw (draws, records, types)."""
    draws, n = perturbed.shape[:2]
    counts, same = perturbed.sum(axis=2), unchanged.sum(axis=2)
    picks = rng.integers(0, n, size=(resamples, n))
    weights = np.stack([np.bincount(row, minlength=n) for row in picks]).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = (same @ weights.T) / (counts @ weights.T)
    return np.nanquantile(replicates, (1 - CONFIDENCE) / 2, axis=1), np.nanquantile(replicates, (1 + CONFIDENCE) / 2, axis=1)


def draw_coverage(results: Path, records: int, draws: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for path in sorted((results / "natural_robustness" / "responses").glob("*/*.tsv")):
        header = pd.read_csv(path, sep="\t", nrows=0).columns
        for column in [name for name in header if name.startswith("same_")]:
            perturbed, unchanged = _matrices(path, column)
            type_truth = unchanged.sum(axis=0) / perturbed.sum(axis=0)
            pooled_truth = unchanged.sum() / perturbed.sum()
            chosen = np.argsort(rng.random((draws, len(perturbed))), axis=1)[:, :records]
            drawn_perturbed, drawn_unchanged = perturbed[chosen], unchanged[chosen]
            totals, kept = drawn_perturbed.sum(axis=1), drawn_unchanged.sum(axis=1)
            present = totals > 0
            counts, same = drawn_perturbed.sum(axis=2), drawn_unchanged.sum(axis=2)
            effects = np.array([design_effect(m, y) for m, y in zip(counts, same)])
            row = {"responses": f"{path.stem} ({column.removeprefix('same_')})", "pooled_share": pooled_truth}
            for method in BINOMIAL_INTERVALS:
                with np.errstate(invalid="ignore", divide="ignore"):
                    # per type: the workflow's interval (widened to Clopper-Pearson at level - 0.02)
                    low, high = type_interval(kept / totals, totals, CONFIDENCE, method)
                row[f"type_{method}"] = ((low <= type_truth) & (type_truth <= high))[present].mean()
                low, high = binomial_interval(same.sum(axis=1) / counts.sum(axis=1), counts.sum(axis=1) / effects, CONFIDENCE, method)
                row[f"pooled_{method}"] = ((low <= pooled_truth) & (pooled_truth <= high)).mean()
            low, high = _bootstrap(drawn_perturbed, drawn_unchanged, 1000, rng)
            row["pooled_bootstrap"] = ((low <= pooled_truth) & (pooled_truth <= high)).mean()
            row["pooled_bootstrap_zero_width"] = (high == low).mean()
            rows.append(row)
    return pd.DataFrame(rows)


def fixed_share_coverage(sizes=(5, 25, 100), shares=(0.02, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95)) -> pd.DataFrame:
    """Exact coverage of each binomial interval of one type's share on n perturbations at fixed shares."""
    rows = []
    for n in sizes:
        successes = np.arange(n + 1)
        for method in BINOMIAL_INTERVALS:
            low, high = binomial_interval(successes / n, n, CONFIDENCE, method)
            row = {"records": n, "method": method}
            for share in shares:
                row[f"p={share:g}"] = stats.binom.pmf(successes, n, share)[(low <= share) & (share <= high)].sum()
            rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--records", type=int, default=5)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    table = draw_coverage(arguments.results, arguments.records, arguments.draws, arguments.seed)
    pd.set_option("display.width", 200)
    print(f"Coverage of the share on every record, {arguments.draws} draws of {arguments.records} records:")
    print(table.round(3).to_string(index=False))
    print("overall:", table.drop(columns=["responses", "pooled_share"]).mean().round(3).to_dict())
    print("\nExact coverage of one type's interval at fixed shares:")
    print(fixed_share_coverage().round(3).to_string(index=False))


if __name__ == "__main__":
    main()
