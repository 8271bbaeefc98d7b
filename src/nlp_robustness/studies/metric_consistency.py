"""A human study's meta-evaluation of metrics on cross-domain consistency (issue 53): its segment tables as the score
arrays of :func:`nlp_robustness.statistics.metric_consistency.meta_evaluate`, and how many documents would decide a
metric pair the data leave open.

Every human study's domains have segment tables (``results/human/<study>/segments/<domain>.tsv``, one row per system
and rated segment, the human score and every metric as columns; :mod:`.human`). Here they become one
(systems, segments) array per score: a segment is a (domain, segment id) pair, so domains that number their
segments from 1 each (WMT'21 MQM) stay apart; a system without a row for a segment is NaN there (sparse DA: each
system its own rated segments). A segment table without documents (MQM of WMT'21) makes every segment its own
document: segments are then resampled one by one, as the engine does for that study.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.metric_agreement import kendall_tau_b
from nlp_robustness.statistics.metric_consistency import MetaEvaluation, meta_evaluate
from nlp_robustness.statistics.power import units_to_detect
from nlp_robustness.statistics.robustness_metrics import epsilon_grid
from nlp_robustness.studies.human import read_segments

__all__ = ["SegmentArrays", "meta_evaluation", "segment_arrays", "with_documents_to_detect", "with_quality_tracking"]


@dataclass(frozen=True)
class SegmentArrays:
    """The scores of a study as arrays: ``scores[name]`` (rows, segments), each segment's ``domains`` and
    ``documents``, the ``rows`` (systems) in order."""

    scores: dict[str, NDArray[np.float64]]
    domains: NDArray
    documents: NDArray
    rows: list[str]

    @property
    def n_documents(self) -> int:
        """The study's documents ((domain, document) pairs)."""
        return len(set(zip(self.domains, self.documents)))


def segment_arrays(segment_files: Mapping[str, str], scores: Sequence[str], rows: Sequence[str]) -> SegmentArrays:
    """Read the domains' segment tables (domain -> path, in table order) into one array per score.

    Raises:
        InputError: A table lacks a score column or a row (system), or a (system, segment) appears twice.
    """
    frames = []
    for domain, path in segment_files.items():
        table = read_segments(path)
        missing = [score for score in scores if score not in table.columns]
        if missing:
            raise InputError(f"{path}: no column {missing[0]!r} (the segment table's scores: "
                             f"{', '.join(c for c in table.columns if c not in ('system', 'segment_id', 'document', 'source', 'reference', 'hypothesis'))})")
        absent = [row for row in rows if row not in set(table["system"])]
        if absent:
            raise InputError(f"{path}: system {absent[0]!r} has no rated segment in domain {domain}")
        table = table[table["system"].isin(list(rows))][["system", "segment_id", "document", *scores]].copy()
        table.insert(0, "domain", domain)
        frames.append(table)
    every = pd.concat(frames, ignore_index=True)
    duplicated = every.duplicated(["domain", "segment_id", "system"])
    if duplicated.any():
        first = every[duplicated].iloc[0]
        raise InputError(f"{segment_files[first['domain']]}: system {first['system']!r} has segment {first['segment_id']} twice")
    keys = every[["domain", "segment_id", "document"]].drop_duplicates(["domain", "segment_id"]).reset_index(drop=True)
    position = pd.Series(np.arange(len(keys)), index=pd.MultiIndex.from_frame(keys[["domain", "segment_id"]]))
    columns = position.loc[pd.MultiIndex.from_frame(every[["domain", "segment_id"]])].to_numpy()
    row_index = {row: index for index, row in enumerate(rows)}
    row_of = every["system"].map(row_index).to_numpy()
    arrays = {}
    for score in scores:
        values = np.full((len(rows), len(keys)), np.nan)
        values[row_of, columns] = pd.to_numeric(every[score]).to_numpy(dtype=np.float64)
        arrays[score] = values
    documents = keys["document"].astype(str).to_numpy()
    if (documents == "").all():  # no documents: every segment is its own
        documents = (keys["domain"] + "\x1f" + keys["segment_id"]).to_numpy()
    return SegmentArrays(arrays, keys["domain"].to_numpy(), documents, list(rows))


def with_documents_to_detect(pairs: pd.DataFrame, documents: int, confidence: float, power: float) -> pd.DataFrame:
    """``pairs`` with ``documents_to_detect``: for a metric pair the tests leave open, how many documents (the study's
    ``documents`` scaled alike in every domain) would detect the observed tau difference with ``power`` at Holm's
    strictest level (alpha / number of pairs of its measure; :func:`.statistics.power.units_to_detect`); NaN where
    the pair is separated."""
    table = pairs.copy()
    alpha = 1 - confidence
    tests = table.groupby("measure")["metric_a"].transform("size")
    table["documents_to_detect"] = [
        np.nan if separated else units_to_detect(documents, difference, error, alpha / count, power)
        for separated, difference, error, count in zip(table["separated"], table["difference"], table["standard_error"], tests)]
    return table


def with_quality_tracking(agreement: pd.DataFrame, consistency: pd.DataFrame, higher_is_better: Mapping[str, bool]) -> pd.DataFrame:
    """``agreement`` with ``metric_tau_with_quality`` and ``human_tau_with_quality``: Kendall tau-b of each consistency
    measure with the quality ranking of the same score (higher = better), over the systems. A consistency measure that
    only restates quality shows a tau near +-1 here; then agreeing with people on it is agreeing on quality."""
    def tracking(score: str, measure: str) -> float:
        if measure == "quality":
            return np.nan
        frame = consistency[consistency["score"] == score].pivot(index="system", columns="measure", values="value")
        quality = frame["quality"] * (1.0 if higher_is_better.get(score, True) else -1.0)
        return float(kendall_tau_b(frame[measure].to_numpy(), quality.to_numpy()))

    table = agreement.copy()
    table["metric_tau_with_quality"] = [tracking(metric, measure) for metric, measure in zip(table["metric"], table["measure"])]
    table["human_tau_with_quality"] = [tracking("human", measure) for measure in table["measure"]]
    return table


def meta_evaluation(segment_files: Mapping[str, str], scores: Sequence[str], rows: Sequence[str],
                    epsilons: Mapping[str, Mapping[str, float]], higher_is_better: Mapping[str, bool],
                    measures: Sequence[str], uncertainty: Mapping[str, Any], labels: Sequence[str],
                    threads: int = 1) -> tuple[MetaEvaluation, SegmentArrays]:
    """The meta-evaluation of a human study from its segment tables; ``scores`` start with ``human``; ``epsilons``: each
    score's grid (start, stop, step); ``uncertainty``: the run's (resamples, seed, confidence, power)."""
    arrays = segment_arrays(segment_files, scores, rows)
    grids = {score: epsilon_grid(grid["start"], grid["stop"], grid["step"]) for score, grid in epsilons.items()}
    found = meta_evaluate(arrays.scores, "human", arrays.domains, arrays.documents, arrays.rows, grids,
                          higher_is_better, int(uncertainty["resamples"]), int(uncertainty["seed"]), labels,
                          float(uncertainty["confidence"]), measures, threads, list(segment_files))
    pairs = with_documents_to_detect(found.metric_pairs, arrays.n_documents, float(uncertainty["confidence"]),
                                     float(uncertainty.get("power", 0.8)))
    agreement = with_quality_tracking(found.agreement, found.consistency, higher_is_better) \
        if "quality" in measures else found.agreement
    return MetaEvaluation(found.consistency, agreement, pairs, found.per_domain), arrays
