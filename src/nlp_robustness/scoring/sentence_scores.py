"""Sentence-level (and corpus-level) translation quality scores computed with sacrebleu.

Metrics (registry :data:`SENTENCE_METRICS`):

``bleu``
    Sentence level: ``sacrebleu.metrics.BLEU(effective_order=True).sentence_score`` -- sacrebleu's
    recommendation for sentence BLEU (n-gram orders without any match in a short sentence do not
    zero the score; exponential smoothing). Corpus level: the standard ``BLEU()``.
``chrf``
    ``sacrebleu.metrics.CHRF()`` (chrF2: character 6-grams, beta 2) at both levels.
``levenshtein``
    Normalised Levenshtein similarity of the two strings (characters, rapidfuzz):
    ``100 * (1 - distance / max(len(hypothesis), len(reference)))``, 100 for two empty strings. Corpus
    level: the same ratio over sums, ``100 * (1 - sum of distances / sum of the longer lengths)``. Paper
    004 uses it as one of its similarity functions kappa; on the same 0-100 scale as BLEU and chrF.

Scores are on sacrebleu's 0-100 scale. Sentence BLEU and chrF are computed in bulk by
:mod:`nlp_robustness.scoring.bulk_scores`, bit-identical to the metric objects above scoring one sentence at a
time; Levenshtein uses one metric object per call, reused for every sentence. :func:`metric_signature` gives
sacrebleu's reproducibility signature of the exact configuration, to be stored next to the scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np
import rapidfuzz
from rapidfuzz.distance import Levenshtein
from sacrebleu.metrics import BLEU, CHRF

from nlp_robustness.errors import InputError
from nlp_robustness.scoring.bulk_scores import check_pairs, sentence_bleu_many, sentence_chrf_many

__all__ = [
    "SENTENCE_METRICS",
    "MetricSpec",
    "corpus_score",
    "metric_signature",
    "sentence_scores",
]


class Metric(Protocol):
    """What the scoring code uses of a sacrebleu metric object."""

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> Any: ...

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Any: ...

    def get_signature(self) -> Any: ...


@dataclass(frozen=True)
class _Score:
    score: float


class NormalisedLevenshtein:
    """Normalised Levenshtein similarity (0-100) with sacrebleu's metric interface (one reference)."""

    def sentence_score(self, hypothesis: str, references: Sequence[str]) -> _Score:
        return _Score(100.0 * Levenshtein.normalized_similarity(hypothesis, references[0]))

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> _Score:
        distance = sum(Levenshtein.distance(h, r) for h, r in zip(hypotheses, references[0]))
        longest = sum(max(len(h), len(r)) for h, r in zip(hypotheses, references[0]))
        return _Score(100.0 if longest == 0 else 100.0 * (1.0 - distance / longest))

    def get_signature(self) -> str:
        return f"levenshtein:normalised|unit:char|rapidfuzz:{rapidfuzz.__version__}"


@dataclass(frozen=True)
class MetricSpec:
    """How to build the sacrebleu metric objects of one supported metric."""

    name: str
    description: str
    sentence: Callable[[], Metric]
    corpus: Callable[[], Metric]


#: Supported metric names -> their sacrebleu configuration (read-only).
SENTENCE_METRICS: Mapping[str, MetricSpec] = MappingProxyType(
    {
        "bleu": MetricSpec(
            name="bleu",
            description="sacrebleu BLEU; sentence level with effective_order=True, corpus level standard",
            sentence=lambda: BLEU(effective_order=True),
            corpus=BLEU,
        ),
        "chrf": MetricSpec(
            name="chrf",
            description="sacrebleu chrF2 (CHRF() defaults)",
            sentence=CHRF,
            corpus=CHRF,
        ),
        "levenshtein": MetricSpec(
            name="levenshtein",
            description="normalised Levenshtein similarity of the strings (characters, rapidfuzz), 0-100",
            sentence=NormalisedLevenshtein,
            corpus=NormalisedLevenshtein,
        ),
    }
)


def _spec(metric: str) -> MetricSpec:
    """Return the registry entry of ``metric`` or raise InputError naming it."""
    try:
        return SENTENCE_METRICS[metric]
    except (KeyError, TypeError):
        raise InputError(
            f"metrics: unknown metric {metric!r} (supported: {', '.join(sorted(SENTENCE_METRICS))})"
        ) from None


def _scorer(metric: str, corpus: bool, tokenize: str | None) -> Metric:
    """A metric object of ``metric``; ``tokenize`` (BLEU only) is sacrebleu's tokenizer (None: its default, 13a,
    the same as ``"13a"``: scores and signatures are equal)."""
    spec = _spec(metric)
    if tokenize is not None and metric == "bleu":
        return BLEU(tokenize=tokenize) if corpus else BLEU(effective_order=True, tokenize=tokenize)
    return spec.corpus() if corpus else spec.sentence()


def sentence_scores(
    hypotheses: Sequence[str], references: Sequence[str], metric: str, tokenize: str | None = None, *, processes: int = 1
) -> np.ndarray:
    """Score every hypothesis against its single reference.

    BLEU and chrF go through :mod:`nlp_robustness.scoring.bulk_scores` (bit-identical to the per-sentence
    sacrebleu metric objects of :data:`SENTENCE_METRICS`, several times faster); Levenshtein is a loop.

    Args:
        hypotheses: System outputs, one segment each.
        references: Reference translations, aligned 1:1 with ``hypotheses``.
        metric: A name from :data:`SENTENCE_METRICS` (``"bleu"``, ``"chrf"``, ``"levenshtein"``).
        tokenize: sacrebleu's BLEU tokenizer (ignored by the other metrics; None: 13a).
        processes: Worker processes for BLEU and chrF of large inputs (see ``bulk_scores``).

    Returns:
        A float64 array of scores in [0, 100], one per segment (empty hypotheses score 0).

    Raises:
        InputError: Unknown metric, length mismatch or a non-string segment.
    """
    scorer = _scorer(metric, False, tokenize)
    check_pairs(hypotheses, references)
    if metric == "bleu":
        return sentence_bleu_many(
            hypotheses, references, tokenize=BLEU.TOKENIZER_DEFAULT if tokenize is None else tokenize, processes=processes
        )
    if metric == "chrf":
        return sentence_chrf_many(hypotheses, references, processes=processes)
    return np.fromiter(
        (scorer.sentence_score(hypothesis, [reference]).score for hypothesis, reference in zip(hypotheses, references)),
        dtype=np.float64,
        count=len(hypotheses),
    )


def corpus_score(hypotheses: Sequence[str], references: Sequence[str], metric: str, tokenize: str | None = None) -> float:
    """Corpus-level score (standard sacrebleu ``BLEU()`` or ``CHRF()``, or pooled Levenshtein) of the whole list, 0-100.

    Raises:
        InputError: Unknown metric, length mismatch, a non-string segment or no segments at all.
    """
    scorer = _scorer(metric, True, tokenize)
    check_pairs(hypotheses, references)
    if not hypotheses:
        raise InputError("hypotheses: no segments to compute a corpus score on")
    return float(scorer.corpus_score(list(hypotheses), [list(references)]).score)


def metric_signature(metric: str, corpus: bool = False, tokenize: str | None = None) -> str:
    """sacrebleu's signature of the sentence-level (default) or corpus-level configuration of ``metric``.

    E.g. ``"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0"`` for sentence BLEU.
    """
    scorer = _scorer(metric, corpus, tokenize)
    # sacrebleu only knows the number of references once the metric has been used; score a dummy pair.
    scorer.corpus_score(["a"], [["a"]])
    return str(scorer.get_signature())
