"""A system's translation of a test set scored segment by segment (rule ``score_sentences``, and its family
form that scores every perturbed set of a family for a system in one job, one start-up).

The score table holds ``segment_id``, ``doc_id`` (the segment's document; "" without) and one column per metric (:func:`~nlp_robustness.studies.domains.write_score_table`);
the signatures file holds, per metric, sacrebleu's signature, the corpus score and the mean sentence score.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import pandas as pd

from nlp_robustness.data.testset_formats import read_plain_lines
from nlp_robustness.data.testsets import read_testset_table
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.scoring.sentence_scores import corpus_score, metric_signature, sentence_scores
from nlp_robustness.studies.domains import write_score_table

__all__ = ["score_translation_file"]


def score_translation_file(
    testset_file: str,
    translations_file: str,
    scores_file: str,
    signatures_file: str,
    *,
    system: str,
    testset: str,
    metrics: Sequence[str],
    tokenize: str | None,
) -> None:
    """Score every segment of ``translations_file`` against its test set's reference with ``metrics``.

    Args:
        tokenize: sacrebleu's BLEU tokenizer of the test set's language pair (None: 13a).

    Raises:
        InputError: The translation file does not have one line per segment of the test set.
    """
    table = read_testset_table(testset_file)
    hypotheses = read_plain_lines(translations_file)
    if len(hypotheses) != len(table):
        raise InputError(f"{translations_file}: {len(hypotheses)} lines, test set has {len(table)} segments")
    references = table["reference"].tolist()
    scores = pd.DataFrame({"segment_id": table["segment_id"], "doc_id": table["doc_id"]})  # documents: resampled whole
    record = {"system": system, "testset": testset, "segments": len(table)}
    for metric in metrics:
        scores[metric] = sentence_scores(hypotheses, references, metric, tokenize)
        record[metric] = {"signature": metric_signature(metric, tokenize=tokenize),
                          "corpus": corpus_score(hypotheses, references, metric, tokenize),
                          "sentence_mean": float(scores[metric].mean())}
        logging.info("%s: mean sentence %s %.2f", testset, metric, scores[metric].mean())
    write_score_table(scores, scores_file)
    with atomic_write(signatures_file) as handle:
        json.dump(record, handle, indent=2)
