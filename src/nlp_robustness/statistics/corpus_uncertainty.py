"""Corpus BLEU and chrF of an MT study's systems, per test set and on the pool, with intervals and paired tests.

Every system of a study translated the same segments, so one bootstrap serves them all: a replicate draws whole
documents with replacement within each test set (a test set without document ids draws segments), and every
system's corpus score of that replicate is computed from its re-summed segment statistics
(:mod:`nlp_robustness.scoring.corpus_scores`). A test set's replicate is its part of the pool's replicate, so the
per-test-set and pooled numbers describe the same resamples. The weights come from the engine's resampling
(:func:`nlp_robustness.statistics.resampling.resample_weights`, seeded by ``uncertainty.seed``, the study and
``corpus``), so the same config gives the same numbers in any process.

Intervals: the percentile interval of the replicates, widened for few documents as every interval of the workflow
is, by the one rule of :func:`~nlp_robustness.statistics.percentile_intervals.cluster_counts`: for the documents of the
smallest test set in the pool (a test set's own documents; on the whole pool the fewest of any test set: 23 of 181
documents, factor 1.082, not their sum, 1.010), and clipped to the score's range 0-100 (with three documents the
widening alone would reach past it).

Paired tests (the comparisons tables' method, :func:`~nlp_robustness.statistics.paired_tests.difference`): for two
systems on one pool and metric, d = score(a) - score(b), SE = the SD of the paired replicate differences widened for
few documents as the intervals are, t = d / SE against Student's t with min(B - 1, documents - test sets) degrees of
freedom (the pool's :class:`~nlp_robustness.statistics.percentile_intervals.ClusterCounts`); numerically identical
scores give p = 1; Holm over the pairs of the study on that pool and metric; the printed interval is Holm-adjusted
(it excludes 0 exactly when the verdict separates the pair), the unadjusted one beside it.

How this relates to sacrebleu's own paired bootstrap (``sacrebleu --paired-bs``, Koehn 2004): sacrebleu resamples
*segments*, compares every system with one baseline, and reports the share of resamples in which the difference
changes sign (its "p-value", uncorrected for the number of systems). Here whole documents are resampled, because
the segments of a document are not independent (the intervals of a document-level design are wider: issue 40's
1.4-1.7x on WMT22), every pair is compared, and the family is Holm-corrected. With documents of one segment each
the replicates are sacrebleu's segment resamples (tests/unit/test_corpus_scores.py checks that the SE of a
difference then agrees with the spread of sacrebleu's own paired-bootstrap differences).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.scoring.corpus_scores import corpus_signature, scores_of_totals
from nlp_robustness.statistics.holm_intervals import holm_family
from nlp_robustness.statistics.paired_tests import difference
from nlp_robustness.statistics.percentile_intervals import ClusterCounts, cluster_counts, interval
from nlp_robustness.statistics.resampling import cluster_design, resample_weights, stratum_sizes

#: The pool label of a study's whole pool (every test set) in the corpus tables.
POOL = "all"

#: The range of a corpus BLEU or chrF: an interval widened for few documents is clipped to it.
SCORE_RANGE: tuple[float, float] = (0.0, 100.0)

#: Columns of the corpus comparisons table, in order.
COMPARISON_COLUMNS: tuple[str, ...] = (
    "pool", "metric", "system_a", "system_b", "difference", "standard_error", "p_value", "p_holm", "pairs",
    "lo", "hi", "lo_unadjusted", "hi_unadjusted", "separated",
)


@dataclass(frozen=True)
class StudyCorpus:
    """The segments of an MT study and every system's statistics on them.

    Attributes:
        testsets: The study's test sets, in order.
        doc_ids: Per test set, one document id per segment ("" where the test set has none).
        statistics: system -> metric -> test set -> the segments' sacrebleu statistics ``(segments, k)``.
        tokenize: The study's BLEU tokenizer (for the scores' signatures).
    """

    testsets: Sequence[str]
    doc_ids: Mapping[str, Sequence[str]]
    statistics: Mapping[str, Mapping[str, Mapping[str, NDArray[np.float64]]]]
    tokenize: str | None = None

    @property
    def systems(self) -> list[str]:
        return list(self.statistics)

    @property
    def metrics(self) -> list[str]:
        return list(next(iter(self.statistics.values())))


def _clusters(testset: str, doc_ids: Sequence[str]) -> list[str]:
    """The resampling cluster of every segment: its document, or the segment itself where it has none."""
    return [f"{testset}\x1f{doc}" if doc else f"{testset}\x1f#{position}" for position, doc in enumerate(doc_ids)]


def corpus_bootstrap(study: StudyCorpus, *, resamples: int, seed: int, confidence: float, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The corpus-score table and the paired-comparison table of one MT study.

    Args:
        study: Its segments and every system's statistics.
        resamples: Bootstrap replicates B.
        seed: ``uncertainty.seed``.
        confidence: The intervals' level; tests are made at 1 - confidence.
        name: The study's name (seeds its replicates).

    Returns:
        Scores: one row per (pool, system), pools in study order then :data:`POOL`; columns ``pool``, ``system``,
        ``segments``, ``documents``, then per metric its score, ``_lo``, ``_hi`` and ``_signature``.
        Comparisons: :data:`COMPARISON_COLUMNS`, one row per (pool, metric, pair of systems).
    """
    testsets, systems, metrics = list(study.testsets), study.systems, study.metrics
    sizes = [len(study.doc_ids[testset]) for testset in testsets]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    domains = np.repeat(np.arange(len(testsets)), sizes)
    clusters = [cluster for testset in testsets for cluster in _clusters(testset, study.doc_ids[testset])]
    design = cluster_design(domains, np.asarray(clusters, dtype=object))
    pools = [*testsets, POOL]
    slices = {testset: slice(int(bounds[index]), int(bounds[index + 1])) for index, testset in enumerate(testsets)}
    slices[POOL] = slice(0, int(bounds[-1]))
    stacked = {(system, metric): np.concatenate([study.statistics[system][metric][testset] for testset in testsets])
               for system in systems for metric in metrics}
    replicate_totals: dict[tuple[str, str, str], list[NDArray[np.float64]]] = {
        (pool, system, metric): [] for pool in pools for system in systems for metric in metrics
    }
    for weights in resample_weights(design, resamples, seed, "corpus", name):
        for (system, metric), values in stacked.items():
            for pool in pools:
                part = slices[pool]
                replicate_totals[(pool, system, metric)].append(weights[:, part] @ values[part])
    estimates, replicates = {}, {}
    for key, chunks in replicate_totals.items():
        pool, system, metric = key
        values = stacked[(system, metric)][slices[pool]]
        estimates[key] = float(scores_of_totals(values.sum(axis=0), metric, study.tokenize)[0])
        replicates[key] = scores_of_totals(np.concatenate(chunks), metric, study.tokenize)
    # the clusters of each test set (its documents, a segment without one counting as one): the design's strata
    documents = dict(zip(testsets, (int(size) for size in stratum_sizes(design)), strict=True))
    documents[POOL] = sum(documents.values())
    clusters = {testset: cluster_counts([documents[testset]]) for testset in testsets}
    clusters[POOL] = cluster_counts([documents[testset] for testset in testsets])
    signatures = {metric: corpus_signature(metric, study.tokenize) for metric in metrics}
    rows = []
    for pool in pools:
        for system in systems:
            row: dict[str, object] = {"pool": pool, "system": system, "segments": slices[pool].stop - slices[pool].start,
                                      "documents": documents[pool]}
            for metric in metrics:
                estimate = estimates[(pool, system, metric)]
                low, high = interval(replicates[(pool, system, metric)], confidence, estimate=estimate,
                                     clusters=clusters[pool].smallest_stratum)
                low, high = max(low, SCORE_RANGE[0]), min(high, SCORE_RANGE[1])  # widening must not leave the scale
                row |= {metric: estimate, f"{metric}_lo": low, f"{metric}_hi": high, f"{metric}_signature": signatures[metric]}
            rows.append(row)
    return pd.DataFrame(rows), _comparisons(pools, systems, metrics, estimates, replicates, confidence, clusters)


def _comparisons(pools: Sequence[str], systems: Sequence[str], metrics: Sequence[str], estimates: Mapping, replicates: Mapping,
                 confidence: float, clusters: Mapping[str, ClusterCounts]) -> pd.DataFrame:
    """Paired tests of every pair of systems on every pool and metric, Holm over the pairs of each (pool, metric); the
    few-cluster treatment from each pool's ``clusters``."""
    level = 1 - confidence
    rows = []
    for pool, metric in itertools.product(pools, metrics):
        family = []
        for first, second in itertools.combinations(systems, 2):
            found = difference(estimates[(pool, first, metric)], estimates[(pool, second, metric)],
                               replicates[(pool, first, metric)], replicates[(pool, second, metric)], confidence,
                               clusters[pool])
            family.append((first, second, found))
        if not family:
            continue
        adjusted = holm_family([found for _, _, found in family], level)
        for index, (first, second, found) in enumerate(family):
            p_holm = float(adjusted.p_holm[index])
            rows.append({
                "pool": pool, "metric": metric, "system_a": first, "system_b": second, "difference": found.estimate,
                "standard_error": found.standard_error, "p_value": found.p_value, "p_holm": p_holm, "pairs": len(family),
                "lo": float(adjusted.low[index]), "hi": float(adjusted.high[index]), "lo_unadjusted": found.low,
                "hi_unadjusted": found.high, "separated": bool(p_holm < level),
            })
    return pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
