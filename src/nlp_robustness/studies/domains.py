"""The MT domain study (paper Section 4.1, Tables 1, 3, 5, Figure 4): consistency of sentence scores across test sets.

Its domains are the configured test sets (news, discussion, TED, biomedical, ...), its units their
segments, each scored by a sentence metric (BLEU, chrF) of one system's translation; every segment
score is one value of the sample (engine aggregation ``unit``). The units, hence the blocks, depend on
the test sets only: every system and metric is measured on the same blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.data.testsets import read_testset_table
from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.statistics.pools import units_from_tables
from nlp_robustness.statistics.study_design import StudyDesign, documents_in_domains

__all__ = ["has_variance_components", "read_score_table", "resampling_design", "testset_means", "unit_keys", "units", "write_score_table"]


def write_score_table(scores: pd.DataFrame, path: str) -> None:
    """Write a sentence score table (``segment_id``, ``doc_id`` and one column per metric) as TSV, atomically.

    Scores are written at full precision (shortest round-trip repr) and :func:`read_score_table` reads
    them back bit for bit, so a score read from a table equals the same score computed again: beta1 (read)
    and beta2 (computed) of a segment whose reference is not perturbed are exactly equal.
    """
    with atomic_write(path) as handle:
        scores.to_csv(handle, sep="\t", index=False, lineterminator="\n")


def read_score_table(path: str) -> pd.DataFrame:
    """A sentence score table (written by :func:`write_score_table`), its floats parsed round-trip exact."""
    return pd.read_csv(path, sep="\t", dtype={"segment_id": str, "doc_id": str}, keep_default_na=False,
                       float_precision="round_trip")


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a system's segments: a segment belongs to one test set, so whole documents
    (``doc_id``) are drawn within their test set (segments one by one in a test set without documents)."""
    return documents_in_domains()


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    Segment scores decompose by test set: the between-domain part is the spread of the test sets' true means.
    """
    return True


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """Unit keys ``domain, unit_id`` of the study: the segments of every test set (test set -> test-set table)."""
    return units_from_tables({name: read_testset_table(path) for name, path in files.items()}, "segment_id")


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """One system's units (``row``: the system, whose score tables ``files`` maps by test set) scored by the
    sentence metric ``score``, with each segment's document (``doc_id``; "" for a test set without documents):
    the engine resamples whole documents within their test set."""
    return units_from_tables({name: read_score_table(path) for name, path in files.items()}, "segment_id", score, "doc_id")


def testset_means(score_tables: Mapping[str, Mapping[str, str]], metric: str) -> pd.DataFrame:
    """Mean sentence ``metric`` of every system (rows) on every test set (columns); ``score_tables`` maps
    system -> test set -> score table path, in config order."""
    means = {
        system: {testset: read_score_table(path)[metric].mean() for testset, path in tables.items()}
        for system, tables in score_tables.items()
    }
    table = pd.DataFrame.from_dict(means, orient="index", dtype=float)
    table.index.name = "system"
    return table
