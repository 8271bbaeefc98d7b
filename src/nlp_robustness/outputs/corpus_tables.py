"""The corpus-score and corpus-comparison tables of an MT study (CSV, Markdown, HTML).

The bootstrap draws whole documents within each test set; a test set without document ids has none, and its
segments are drawn as independent units (:mod:`nlp_robustness.data.document_ids`). The score table says which:
``documents`` counts the documents (0 where a test set has no ids, never its segments), ``resampled_units`` what the
bootstrap drew (documents, or segments where there are none), and the printed table reads "none: segments
resampled" for such a test set; both captions end with the note of :func:`~nlp_robustness.data.document_ids.segments_as_units_note`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

from nlp_robustness.data.document_ids import segments_as_units_note
from nlp_robustness.outputs.comparisons import FIRM_RESAMPLES
from nlp_robustness.outputs.table_writer import csv_text, markdown_table, p_value_text, write_html_table, write_text
from nlp_robustness.statistics.corpus_uncertainty import POOL
from nlp_robustness.statistics.power import se_precision

PathLike = str | os.PathLike[str]


def _pool_name(pool: str) -> str:
    return "whole pool" if pool == POOL else pool


def lacking_document_ids(doc_ids: dict[str, Sequence[str]]) -> list[str]:
    """The test sets of ``doc_ids`` (test set -> one document id per segment) none of whose segments has a document id."""
    return [testset for testset, ids in doc_ids.items() if not any(ids)]


def document_columns(scores: pd.DataFrame, without: Sequence[str]) -> pd.DataFrame:
    """``scores`` with ``documents`` counting documents only (0 for a test set of ``without``; the pool: those of the
    other test sets) and ``resampled_units`` (the old ``documents``: the clusters the bootstrap drew, a segment of a
    test set without documents counting as one), after ``documents``."""
    units = scores["documents"].astype(int)
    testset_rows = scores["pool"] != POOL
    documents = units.where(~scores["pool"].isin(list(without)), 0)
    per_testset = documents[testset_rows].groupby(scores.loc[testset_rows, "pool"]).first()
    documents = documents.where(testset_rows, int(per_testset.sum()))
    table = scores.assign(documents=documents)
    table.insert(table.columns.get_loc("documents") + 1, "resampled_units", units)
    return table


def _shown_documents(table: pd.DataFrame, without: Sequence[str]) -> pd.Series:
    """The printed ``documents`` cell: the count, "none: segments resampled" for a test set without document ids, and
    for the pool the documents plus the segments drawn alone."""
    loose = int(table.loc[table["pool"].isin(list(without)), ["pool", "segments"]].drop_duplicates("pool")["segments"].sum())
    def cell(row: pd.Series) -> str:
        if row["pool"] in without:
            return "none: segments resampled"
        if row["pool"] == POOL and loose:
            return f"{row['documents']} + {loose} segments resampled alone"
        return str(row["documents"])
    return table.apply(cell, axis=1)


def scores_caption(study: str, scores: pd.DataFrame, metrics: list[str], confidence: float, resamples: int,
                   without: Sequence[str] = ()) -> str:
    """What the corpus-score table holds, with each metric's sacrebleu signature (``without``: its test sets without
    document ids, named at the end)."""
    signatures = "; ".join(f"{metric}: {scores[f'{metric}_signature'].iloc[0]}" for metric in metrics)
    caption = (
        f"Study {study}: corpus-level scores (sacrebleu, the numbers WMT findings and leaderboards report), per test set and "
        f"on the whole pool, with {confidence:.0%} intervals from {resamples} bootstrap resamples of whole documents within "
        f"each test set (segments where a test set has no document ids). Signatures: {signatures}."
    )
    return " ".join(part for part in (caption, segments_as_units_note(without)) if part)


def comparisons_caption(study: str, confidence: float, resamples: int, without: Sequence[str] = ()) -> str:
    """How to read the corpus-comparison table; below :data:`~nlp_robustness.outputs.comparisons.FIRM_RESAMPLES`
    replicates it warns, as the study comparisons do, that the SEs behind the p-values are imprecise."""
    warning = (f" Warning (uncertainty.resamples = {resamples}): the SEs behind these p-values are known to "
               f"+/- {se_precision(resamples):.0%} only; verdicts near the level may flip. Use at least {FIRM_RESAMPLES} "
               "replicates for firm verdicts." if resamples < FIRM_RESAMPLES else "")
    return (
        f"Study {study}: paired bootstrap tests of corpus scores, every pair of systems on every pool and metric "
        f"(d = a - b; SE widened for few documents; t = d / SE against Student's t with min(B - 1, documents - test sets) "
        f"df; identical scores p = 1); p_holm is Holm-adjusted over the pairs of one pool and "
        f"metric; lo/hi is the Holm-adjusted {confidence:.0%} interval (it excludes 0 exactly when the pair is separated), "
        f"lo_unadjusted/hi_unadjusted the interval of the pair alone ({resamples} paired resamples).{warning}"
        + (f" {segments_as_units_note(without)}" if without else "")
    )


def _write_table(table: pd.DataFrame, shown: pd.DataFrame, caption: str, paths: dict[str, PathLike], decimals: int) -> None:
    """``table`` as CSV, ``shown`` (its printed form) as Markdown and HTML, each file atomically."""
    write_text(csv_text(table), paths["csv"])
    write_text(markdown_table(shown, caption=caption, decimals=decimals), paths["md"])
    write_html_table(shown, paths["html"], caption, decimals=decimals)


def write_corpus_tables(scores: pd.DataFrame, comparisons: pd.DataFrame, study: str, metrics: list[str], confidence: float,
                        resamples: int, scores_paths: dict[str, PathLike], comparisons_paths: dict[str, PathLike],
                        without: Sequence[str] = ()) -> None:
    """Write both tables as csv/md/html (paths keyed by extension), each file atomically (``without``: the study's test
    sets without document ids, :func:`lacking_document_ids`)."""
    table = document_columns(scores, without)
    shown = table.drop(columns=[f"{metric}_signature" for metric in metrics]).assign(
        documents=_shown_documents(table, without), pool=table["pool"].map(_pool_name))
    _write_table(table, shown, scores_caption(study, scores, metrics, confidence, resamples, without), scores_paths, 2)
    shown = comparisons.assign(pool=comparisons["pool"].map(_pool_name),  # p as every table prints it: "< 0.001", not 0.000
                               p_value=comparisons["p_value"].map(p_value_text), p_holm=comparisons["p_holm"].map(p_value_text))
    _write_table(comparisons, shown, comparisons_caption(study, confidence, resamples, without), comparisons_paths, 3)
