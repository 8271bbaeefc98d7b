"""The corpus-score and corpus-comparison tables of an MT study (CSV, Markdown, HTML)."""

from __future__ import annotations

import os

import pandas as pd

from nlp_robustness.outputs.comparisons import FIRM_RESAMPLES
from nlp_robustness.outputs.table_writer import csv_text, markdown_table, p_value_text, write_html_table, write_text
from nlp_robustness.statistics.corpus_uncertainty import POOL
from nlp_robustness.statistics.power import se_precision

PathLike = str | os.PathLike[str]


def _pool_name(pool: str) -> str:
    return "whole pool" if pool == POOL else pool


def scores_caption(study: str, scores: pd.DataFrame, metrics: list[str], confidence: float, resamples: int) -> str:
    """What the corpus-score table holds, with each metric's sacrebleu signature."""
    signatures = "; ".join(f"{metric}: {scores[f'{metric}_signature'].iloc[0]}" for metric in metrics)
    return (
        f"Study {study}: corpus-level scores (sacrebleu, the numbers WMT findings and leaderboards report), per test set and "
        f"on the whole pool, with {confidence:.0%} intervals from {resamples} bootstrap resamples of whole documents within "
        f"each test set (segments where a test set has no document ids). Signatures: {signatures}."
    )


def comparisons_caption(study: str, confidence: float, resamples: int) -> str:
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
    )


def _write_table(table: pd.DataFrame, shown: pd.DataFrame, caption: str, paths: dict[str, PathLike], decimals: int) -> None:
    """``table`` as CSV, ``shown`` (its printed form) as Markdown and HTML, each file atomically."""
    write_text(csv_text(table), paths["csv"])
    write_text(markdown_table(shown, caption=caption, decimals=decimals), paths["md"])
    write_html_table(shown, paths["html"], caption, decimals=decimals)


def write_corpus_tables(scores: pd.DataFrame, comparisons: pd.DataFrame, study: str, metrics: list[str], confidence: float,
                        resamples: int, scores_paths: dict[str, PathLike], comparisons_paths: dict[str, PathLike]) -> None:
    """Write both tables as csv/md/html (paths keyed by extension), each file atomically."""
    shown = scores.drop(columns=[f"{metric}_signature" for metric in metrics]).assign(pool=scores["pool"].map(_pool_name))
    _write_table(scores, shown, scores_caption(study, scores, metrics, confidence, resamples), scores_paths, 2)
    shown = comparisons.assign(pool=comparisons["pool"].map(_pool_name),  # p as every table prints it: "< 0.001", not 0.000
                               p_value=comparisons["p_value"].map(p_value_text), p_holm=comparisons["p_holm"].map(p_value_text))
    _write_table(comparisons, shown, comparisons_caption(study, confidence, resamples), comparisons_paths, 3)
