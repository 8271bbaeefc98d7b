"""An MT study's corpus-level scores: its test sets and every system's translations read into one
:class:`~nlp_robustness.statistics.corpus_uncertainty.StudyCorpus` (rules/corpus.smk)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from nlp_robustness.data.testset_formats import read_plain_lines
from nlp_robustness.data.testsets import read_testset_table
from nlp_robustness.errors import InputError
from nlp_robustness.scoring.corpus_scores import segment_statistics
from nlp_robustness.statistics.corpus_uncertainty import StudyCorpus

PathLike = str | os.PathLike[str]


def read_study_corpus(
    testset_files: Mapping[str, PathLike],
    translation_files: Mapping[str, Mapping[str, PathLike]],
    metrics: Sequence[str],
    tokenize: str | None,
) -> StudyCorpus:
    """Every system's sacrebleu statistics on every test set of a study.

    Args:
        testset_files: Test set -> its prepared table (results/testsets/<name>.tsv), in the study's order.
        translation_files: System -> test set -> its translation (one line per segment of the table).
        metrics: Corpus metrics (bleu, chrf).
        tokenize: The study's BLEU tokenizer.

    Raises:
        InputError: A translation whose line count differs from its test set's segments (names both files).
    """
    tables = {testset: read_testset_table(path) for testset, path in testset_files.items()}
    statistics: dict[str, dict[str, dict]] = {}
    for system, files in translation_files.items():
        statistics[system] = {metric: {} for metric in metrics}
        for testset, table in tables.items():
            hypotheses = read_plain_lines(files[testset])
            if len(hypotheses) != len(table):
                raise InputError(f"{files[testset]}: {len(hypotheses)} lines, but test set {testset} ({testset_files[testset]}) "
                                 f"has {len(table)} segments")
            for metric in metrics:
                statistics[system][metric][testset] = segment_statistics(hypotheses, table["reference"].tolist(), metric, tokenize)
    doc_ids = {testset: table["doc_id"].fillna("").astype(str).tolist() for testset, table in tables.items()}
    return StudyCorpus(list(testset_files), doc_ids, statistics, tokenize)
