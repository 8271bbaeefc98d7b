"""Benchmark one MT domain study at the scale of real evaluation data: 20 systems x 8 domains x 2,000 segments.

The workload is what the workflow runs for one study: every system's statistics on every pool (the whole pool
and each domain left out), plain and bagged, with the bootstrap intervals (``uncertainty.resamples``
replicates; one job per system, ``--workers`` processes side by side as Snakemake runs them on 2 cores), then
the paired comparisons of all 190 pairs of systems (:func:`~nlp_robustness.statistics.comparisons.compare_rows`).
The segments come in documents of about ``--document-size`` (as WMT test sets do), so the current code resamples
whole documents and nests the between-domain decomposition; the baseline (the code at ``--baseline``, by default
the commit before issue 40) resamples segments.

Scores are simulated like sentence BLEU (clipped to 0..100): a segment difficulty shared by every system, a
document effect, a domain effect per system and system noise. The baseline runs ``--baseline-systems``
systems and its time is scaled to ``--systems`` (the statistics are one job per system: linear in systems; its
comparisons are timed at the full size). Both are timed in this one run, in fresh processes, so the ratio
compares like with like on this machine.

    .venv/bin/python benchmarks/bench_study_scale.py [--systems 20] [--domains 8] [--segments 2000] [--target 60]

Exit status 1 if the current code exceeds ``--target`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
#: The last commit before issue 40 (segments resampled one by one; the count p-value of the paired test).
BASELINE = "6d0be65"


def simulated_units(systems: int, domains: int, segments: int, document_size: int, seed: int) -> dict[str, pd.DataFrame]:
    """Every system's unit table (``domain, unit_id, score, document``) on the same segments."""
    rng = np.random.default_rng(seed)
    n = domains * segments
    domain_labels = np.repeat([f"domain{index}" for index in range(domains)], segments)
    documents = np.arange(n) // document_size
    difficulty = rng.normal(0, 12, n) + rng.normal(0, 6, documents.max() + 1)[documents]
    tables = {}
    for system in range(systems):
        domain_effect = rng.normal(0, 2, domains).repeat(segments)
        score = np.clip(30 + system * 0.3 + difficulty + domain_effect + rng.normal(0, 10, n), 0, 100)
        tables[f"system{system:02d}"] = pd.DataFrame({
            "domain": domain_labels, "unit_id": [str(index) for index in range(n)], "score": score,
            "document": [f"d{document}" for document in documents]})
    return tables


def _evaluate(arguments: tuple) -> tuple[str, pd.DataFrame, dict]:
    from nlp_robustness.statistics.engine import evaluate_study
    from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions
    from nlp_robustness.statistics.study_design import documents_in_domains

    system, units, domains, pools, blocks, resamples = arguments
    evaluation = evaluate_study(units, domains, pools, blocks, np.arange(1.0, 101.0), documents_in_domains(),
                                variance_components=True, uncertainty=UncertaintyOptions(resamples=resamples),
                                seed_labels=["benchmark"])
    return system, evaluation.summary, evaluation.replicates


def workload(options: argparse.Namespace) -> dict[str, float]:
    """Time the study in this process's code (whatever ``nlp_robustness`` resolves to)."""
    import nlp_robustness
    from nlp_robustness.statistics.blocks import draw_study_blocks
    from nlp_robustness.statistics.comparisons import compare_rows
    from nlp_robustness.statistics.pool_uncertainty import units_digest
    from nlp_robustness.statistics.pools import leave_out_labels

    tables = simulated_units(options.systems, options.domains, options.segments, options.document_size, 0)
    domains = [f"domain{index}" for index in range(options.domains)]
    pools = leave_out_labels(domains if options.leave_out else [])
    first = next(iter(tables.values()))
    blocks = draw_study_blocks(first[["domain", "unit_id"]], domains, pools, seed=0, namespace=[], n_blocks=10, fraction=0.5)
    start = time.perf_counter()
    jobs = [(system, units, domains, pools, blocks, options.resamples) for system, units in tables.items()]
    with ProcessPoolExecutor(max_workers=options.workers) as pool:
        results = list(pool.map(_evaluate, jobs))
    statistics = time.perf_counter() - start
    digest = units_digest(first)
    summaries = {system: summary for system, summary, _ in results}
    replicates = {system: (drawn, digest) for system, _, drawn in results}
    start = time.perf_counter()
    comparisons = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0)
    compared = time.perf_counter() - start
    told = int((comparisons[comparisons["statistic"] == "mean"]["verdict"] != "not distinguishable").sum())
    return {"statistics": statistics, "comparisons": compared, "pairs": int((comparisons["statistic"] == "mean").sum()),
            "mean_pairs_told_apart": told, "code": str(Path(nlp_robustness.__file__).parent)}


def run_in(source: Path, options: argparse.Namespace, systems: int) -> dict[str, float]:
    """Run :func:`workload` in a fresh interpreter whose ``nlp_robustness`` is the one under ``source``."""
    environment = dict(os.environ, PYTHONPATH=str(source))
    command = [sys.executable, __file__, "--workload", "--systems", str(systems), "--domains", str(options.domains),
               "--segments", str(options.segments), "--document-size", str(options.document_size),
               "--resamples", str(options.resamples), "--workers", str(options.workers)]
    command += [] if options.leave_out else ["--whole-pool-only"]
    output = subprocess.run(command, env=environment, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def baseline_source(revision: str, directory: Path) -> Path:
    """The package at ``revision`` (``git archive`` of src/, extracted under ``directory``)."""
    archive = directory / "baseline.tar"
    with open(archive, "wb") as handle:
        subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"], stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(directory, filter="data")
    return directory / "src"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--domains", type=int, default=8)
    parser.add_argument("--segments", type=int, default=2000, help="segments per domain")
    parser.add_argument("--document-size", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--whole-pool-only", dest="leave_out", action="store_false",
                        help="no domain left out (the comparisons read the whole pool only)")
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--baseline-systems", type=int, default=4)
    parser.add_argument("--target", type=float, default=60.0)
    parser.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.workload:
        print(json.dumps(workload(options)))
        return 0
    current = run_in(ROOT / "src", options, options.systems)
    with tempfile.TemporaryDirectory() as directory:
        old = run_in(baseline_source(options.baseline, Path(directory)), options, options.baseline_systems)
    old_total = old["statistics"] * options.systems / options.baseline_systems + old["comparisons"]
    total = current["statistics"] + current["comparisons"]
    pools = f"{options.domains + 1} pools each" if options.leave_out else "the whole pool only"
    print(f"one study: {options.systems} systems x {options.domains} domains x {options.segments} segments "
          f"(documents of {options.document_size}), {pools}, {options.resamples} replicates, {options.workers} workers")
    print(f"current code ({current['code']}): statistics {current['statistics']:.1f} s + {current['pairs']} comparisons "
          f"{current['comparisons']:.2f} s = {total:.1f} s; mean pairs told apart: {current['mean_pairs_told_apart']}")
    print(f"baseline {options.baseline} ({old['code']}): {options.baseline_systems} systems {old['statistics']:.1f} s, "
          f"scaled to {options.systems}: {old_total:.1f} s")
    print(f"ratio baseline / current: {old_total / total:.2f}; target {options.target:.0f} s: "
          f"{'met' if total <= options.target else 'NOT met'}")
    return 0 if total <= options.target else 1


if __name__ == "__main__":
    sys.exit(main())
