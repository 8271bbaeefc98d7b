"""Benchmark the meta-evaluation of metrics on cross-domain consistency (statistics/metric_consistency.py,
consistency_measures.py, issue 53).

The whole meta-evaluation of 14 systems x 1,875 segments, MQM plus 13 metrics, 3 consistency measures and quality,
1,000 document resamples (documents within domains), every metric's tau and pairwise accuracy with intervals,
every metric pair's Holm test per measure and the per-domain agreement:

* **vectorised**: :func:`~nlp_robustness.statistics.metric_consistency.meta_evaluate` (one set of document counts
  per chunk shared by every score and system; per-document sums; sign matrices over the system pairs);
* **straightforward**: per replicate, the resampled segments formed (each drawn document's segments, a document drawn
  twice counting as two), every score's and system's measures computed with the engine's scalar functions
  (variance_components, gamma_curve, means), then per measure scipy.stats.kendalltau of each metric's system values
  with people's; the pair tests from the replicate taus as in the vectorised path. It is timed on
  ``--straightforward`` replicates (same draws) and extrapolated linearly to the full count (said in the output).

Data: ``../shared/data/wmt22-zhen-mqm-metrics`` (MTME layout; the 14 MT systems MQM rates, refA and refB excluded;
the 12 WMT22 metrics all score these 14 systems on every segment; a 13th metric is COMET-22 plus independent
normal noise of a tenth of its SD, so that the count is 13) when present, otherwise synthetic scores of the same
shape (4 domains of 164, 29, 38, 25 documents). Epsilon grid of every score: 100 points from range / 100 to its
range (max - min of its scores). Prints the times and the ratio of one run; never asserts a timing (target: the
vectorised path within 60 s on 2 cores).

    python benchmarks/bench_metric_consistency.py [--resamples B] [--straightforward R] [--threads T]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from nlp_robustness.statistics.consistency_measures import MEASURES, interaction_sd
from nlp_robustness.statistics.metric_consistency import meta_evaluate
from nlp_robustness.statistics.paired_tests import difference
from nlp_robustness.statistics.percentile_intervals import cluster_counts
from nlp_robustness.statistics.pools import _universe
from nlp_robustness.statistics.resampling import cluster_design, map_chunks
from nlp_robustness.statistics.robustness_metrics import gamma_curve
from nlp_robustness.statistics.variance_components import variance_components

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "wmt22-zhen-mqm-metrics"
REFERENCES = ("refA", "refB")


def read_scores(path: Path) -> dict[str, np.ndarray]:
    """An MTME ``*.seg.score`` file: system -> its scores in segment order (``None`` -> NaN)."""
    table = pd.read_csv(path, sep="\t", header=None, names=["system", "score"], dtype={"system": str, "score": str},
                        keep_default_na=False)
    values = pd.to_numeric(table["score"].replace("None", np.nan))
    return {system: values[rows].to_numpy(dtype=np.float64) for system, rows in table.groupby("system", sort=False).groups.items()}


def real_data() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[str]]:
    documents = pd.read_csv(DATA / "documents" / "zh-en.docs", sep="\t", header=None, names=["domain", "document"], dtype=str)
    mqm = read_scores(DATA / "human-scores" / "zh-en.mqm.seg.score")
    systems = [system for system, values in mqm.items() if system not in REFERENCES and not np.isnan(values).all()]
    scores = {"MQM": np.stack([mqm[system] for system in systems])}
    for path in sorted((DATA / "metric-scores").glob("zh-en.*.seg.score")):
        metric = path.name[len("zh-en."):-len(".seg.score")]
        found = read_scores(path)
        if any(system not in found for system in systems):
            print(f"  skipped {metric}: it does not score every MQM system")
            continue
        scores[metric] = np.stack([found[system] for system in systems])
    base = scores["COMET-22-refA"]
    scores["COMET-22-refA+noise"] = base + np.random.default_rng(0).normal(0, 0.1 * np.nanstd(base), base.shape)
    return scores, documents["domain"].to_numpy(), documents["document"].to_numpy(), systems


def synthetic_data() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    sizes = {"conversation": (164, 349), "ecommerce": (29, 518), "news": (38, 505), "social": (25, 503)}
    domains, documents = [], []
    for domain, (count, segments) in sizes.items():
        labels = np.sort(rng.integers(0, count, segments))
        labels[:count] = np.arange(count)
        domains += [domain] * segments
        documents += [f"{domain}-{label}" for label in np.sort(labels)]
    systems = [f"system{index}" for index in range(14)]
    truth = rng.normal(size=(14, 1)) + rng.normal(scale=0.3, size=(14, 4))
    codes = pd.factorize(np.array(domains))[0]
    scores = {"MQM": truth[:, codes] + rng.normal(size=(14, len(domains)))}
    for index in range(13):
        scores[f"metric{index}"] = truth[:, codes] * rng.uniform(0.5, 2) + rng.normal(size=(14, len(domains)))
    return scores, np.array(domains), np.array(documents), systems


def straightforward(scores, human, domains, documents, systems, epsilons, resamples, seed, labels, replicates):
    """The first ``replicates`` of the same document draws, one replicate at a time with the engine's scalar
    functions and scipy's tau; returns the taus (measure -> (K, replicates)) and the seconds it took."""
    start = time.perf_counter()
    order = sorted(set(domains.tolist()))
    universe = _universe(pd.DataFrame({"domain": domains, "document": documents}), order)
    keys = np.array([f"{domain}\x1f{document}" for domain, document in zip(domains, documents)], dtype=object)
    codes = np.array([order.index(domain) for domain in domains])
    design = cluster_design(codes, keys, False, universe)
    counts = np.concatenate(map_chunks(lambda chunk: chunk, design, resamples, seed, labels, cluster_counts=True))[:replicates]
    segments_of = [np.flatnonzero(design.cluster_of_unit == cluster) for cluster in range(design.n_clusters)]
    metrics = [name for name in scores if name != human]
    taus = {measure: np.empty((len(metrics), replicates)) for measure in MEASURES}
    for replicate in range(replicates):
        drawn, labels_of = [], []
        for cluster, times in enumerate(counts[replicate].astype(int)):
            for copy in range(times):
                drawn.append(segments_of[cluster])
                labels_of += [f"{cluster}.{copy}"] * segments_of[cluster].size
        units = np.concatenate(drawn)
        labels_of = np.array(labels_of)
        values = {}
        for name, matrix in scores.items():
            found = {measure: np.empty(len(systems)) for measure in MEASURES}
            means = np.empty((len(systems), len(order)))
            for row in range(len(systems)):
                own = matrix[row, units]
                found["between_sd"][row] = variance_components(own, codes[units], name, labels_of).between_sd
                found["gamma_area"][row] = gamma_curve(own, epsilons[name]).mean()
                found["quality"][row] = own.mean()
                means[row] = [own[codes[units] == domain].mean() for domain in range(len(order))]
            found["interaction_sd"] = interaction_sd(means)
            values[name] = found
        for measure in MEASURES:
            for index, metric in enumerate(metrics):
                taus[measure][index, replicate] = stats.kendalltau(values[metric][measure], values[human][measure]).statistic
    return taus, time.perf_counter() - start, design


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--straightforward", type=int, default=10, help="replicates the straightforward path is timed on")
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1))
    arguments = parser.parse_args()
    if DATA.is_dir():
        print(f"data: {DATA.resolve()}")
        scores, domains, documents, systems = real_data()
    else:
        print("data: synthetic scores of the WMT22 zh-en shape (the shared data is absent)")
        scores, domains, documents, systems = synthetic_data()
    human = "MQM"
    epsilons = {name: np.linspace(np.ptp(values) / 100, np.ptp(values), 100) for name, values in scores.items()}
    higher = dict.fromkeys(scores, True)
    metrics = [name for name in scores if name != human]
    print(f"{len(systems)} systems x {domains.size} segments, {human} + {len(metrics)} metrics, {len(MEASURES)} measures, "
          f"{arguments.resamples} resamples, {arguments.threads} thread(s)")
    start = time.perf_counter()
    result = meta_evaluate(scores, human, domains, documents, systems, epsilons, higher, arguments.resamples, 53,
                           ("benchmark",), threads=arguments.threads)
    vectorised = time.perf_counter() - start
    print(f"vectorised meta_evaluate: {vectorised:.1f} s ({len(result.metric_pairs)} metric-pair tests)")

    taus, seconds, design = straightforward(scores, human, domains, documents, systems, epsilons, arguments.resamples, 53,
                                            ("benchmark",), arguments.straightforward)
    start = time.perf_counter()
    clusters = cluster_counts(np.bincount(design.stratum_of_cluster))
    for measure in MEASURES:  # the pair tests on the replicate taus, as the vectorised path does them
        for first, second in itertools.combinations(range(len(metrics)), 2):
            difference(0.0, 0.0, taus[measure][first], taus[measure][second], 0.95, clusters)
    tests = time.perf_counter() - start
    full = seconds * arguments.resamples / arguments.straightforward + tests
    print(f"straightforward: {seconds:.1f} s for {arguments.straightforward} replicates, extrapolated to "
          f"{arguments.resamples}: {full:.0f} s (measured on a subset of the same draws, scaled linearly)")
    print(f"ratio straightforward / vectorised: {full / vectorised:.0f}x")
    print(result.agreement.pivot(index="metric", columns="measure", values="tau").round(3).to_string())


if __name__ == "__main__":
    main()
