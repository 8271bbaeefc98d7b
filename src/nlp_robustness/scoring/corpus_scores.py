"""Corpus-level BLEU and chrF from per-segment sufficient statistics, exactly as sacrebleu computes them.

A corpus score is not a mean of sentence scores: sacrebleu sums every segment's statistics (BLEU: hypothesis and
reference lengths, matching and total n-grams of orders 1-4; chrF: matching, hypothesis and reference character
n-grams of orders 1-6) and computes the score once from the sums. Keeping the per-segment statistics
(:func:`segment_statistics`) lets a bootstrap re-sum them for any resample of documents and score each resample
(:func:`scores_of_totals`) without re-tokenising a segment; they are extracted by
:func:`nlp_robustness.scoring.bulk_scores.corpus_statistics_many` (the same integers as sacrebleu's
``_extract_corpus_statistics``, several times faster), and the score of the full sums equals
``sacrebleu.corpus_bleu``/``corpus_chrf`` exactly (tested). The metric objects are the workflow's corpus-level ones
(:func:`nlp_robustness.scoring.sentence_scores.metric_signature` with ``corpus=True`` gives their signatures):
BLEU with the test set's tokenizer, sacrebleu's defaults otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.scoring.bulk_scores import corpus_statistics_many
from nlp_robustness.scoring.bulk_scores import check_pairs
from nlp_robustness.scoring.sentence_scores import _scorer, metric_signature

#: The metrics with a corpus-level score made of summed segment statistics.
CORPUS_METRICS: tuple[str, ...] = ("bleu", "chrf")


def _corpus_metric(metric: str, tokenize: str | None):  # noqa: ANN202 (sacrebleu's Metric)
    if metric not in CORPUS_METRICS:
        raise InputError(f"metric {metric!r} has no corpus score from summed statistics (corpus metrics: {', '.join(CORPUS_METRICS)})")
    return _scorer(metric, True, tokenize)


def segment_statistics(hypotheses: Sequence[str], references: Sequence[str], metric: str, tokenize: str | None = None) -> NDArray[np.float64]:
    """Every segment's sacrebleu sufficient statistics ``(segments, k)`` for the corpus score of ``metric``.

    Raises:
        InputError: Not a corpus metric, a length mismatch, or no segment.
    """
    check_pairs(hypotheses, references)
    if not hypotheses:
        raise InputError("hypotheses: no segments to compute a corpus score on")
    scorer = _corpus_metric(metric, tokenize)
    # the bulk path (several times faster; equal to sacrebleu's extraction, tested), else sacrebleu's own
    statistics = corpus_statistics_many(hypotheses, references, scorer)
    if statistics is None:
        statistics = scorer._extract_corpus_statistics(list(hypotheses), [list(references)])
    return np.asarray(statistics, dtype=np.float64)


def scores_of_totals(totals: NDArray[np.float64], metric: str, tokenize: str | None = None) -> NDArray[np.float64]:
    """The corpus score of every row of summed statistics ``(rows, k)`` (or of one row ``(k,)``), by sacrebleu's
    own formula (its smoothing, brevity penalty and beta included)."""
    scorer = _corpus_metric(metric, tokenize)
    rows = np.atleast_2d(np.asarray(totals, dtype=np.float64))
    # sacrebleu's formulas take Python numbers (counts are whole: the sums of integer counts with integer weights)
    scores = np.array([scorer._compute_score_from_stats([int(round(value)) for value in row]).score for row in rows])
    return scores if np.ndim(totals) > 1 else scores[:1]


def corpus_signature(metric: str, tokenize: str | None = None) -> str:
    """sacrebleu's signature of the corpus-level ``metric`` (with the BLEU tokenizer)."""
    _corpus_metric(metric, tokenize)
    return metric_signature(metric, corpus=True, tokenize=tokenize)
