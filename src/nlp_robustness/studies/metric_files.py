"""Metrics of an MT study whose segment scores are read from files, not computed (``mt_studies.<study>.metric_files``).

A metric computed elsewhere (COMET on a GPU, MetricX, a WMT metrics task submission) joins an MT study as one more
score: its scores of every (system, test set) are aligned to the prepared test set's segments and written as a
sentence score table (``segment_id``, ``doc_id``, one column named after the metric;
:func:`~nlp_robustness.studies.domains.write_score_table`), which the robustness engine reads like a computed metric's.
The files are read by :mod:`nlp_robustness.data.mtme` (MTME ``system<TAB>score`` files and plain one-score-per-line
files).

Alignment (chosen so that one file serves every domain selected from a file or dataset, and ``max_segments``): a
prepared test set's ``segment_id`` is the 1-based position of its segment in the file or dataset it is made from
(:func:`~nlp_robustness.data.testset_preparation.prepare_testset` keeps the ids through ``select``,
``drop_source_equals_reference`` and ``max_segments``). A system's scores are either

* one per segment of that whole file or dataset (the provenance's ``segments_read``): segment id *i* takes line *i*;
* or one per segment of the prepared test set, in its order (scores computed on ``results/translations/...``).

Where both counts are equal the test set is the whole file in order, so the two readings agree. Any other count is
an error, as is a missing score (``None``, an empty line) for a segment of the test set: every segment the study
measures needs a score; a missing score of a segment the test set does not keep is allowed.

Checked when the workflow is planned (:func:`check_metric_files`) wherever the counts are known then (a file pair,
a user's file with domains, a whole manifest dataset of known size); a selection from a manifest dataset is known
only once prepared, and its scores are checked by the job that aligns them (:func:`aligned_score_table`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.data.local_testsets import LocalFiles, is_local_testset
from nlp_robustness.data.mtme import read_mtme_segment_scores, read_plain_scores
from nlp_robustness.data.testset_preparation import prepare_testset
from nlp_robustness.data.testsets import build_parallel_table
from nlp_robustness.errors import InputError

__all__ = ["COMPUTED_METRICS", "PlannedSegments", "aligned_score_table", "check_metric_files", "check_study_metric_files", "complete_metric_files",
           "file_metrics", "metric_file_score_files", "planned_segments", "read_system_scores", "score_file_key"]

#: The sentence metrics the workflow computes (nlp_robustness.scoring.sentence_scores): a file metric takes another name.
COMPUTED_METRICS = ("bleu", "chrf", "levenshtein")

#: The aligned score table of one system, test set and file metric of a study (rule ``metric_file_scores``).
SCORE_TABLE = "results/metric_files/{study}/{metric}/{system}/{testset}.tsv"


def _error(key: str, message: str) -> InputError:
    return InputError(f"invalid configuration at key '{key}': {message}")


def file_metrics(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """MT study -> the names of its file metrics (config order; studies without any left out)."""
    return {name: list(study["metric_files"]) for name, study in config["mt_studies"].items() if study.get("metric_files")}


def metric_file_score_files(study: str, metric: str, system: str, testsets: Sequence[str]) -> dict[str, str]:
    """The aligned score tables of one system under a file metric of a study, by test set (the study's units)."""
    return {testset: SCORE_TABLE.format(study=study, metric=metric, system=system, testset=testset) for testset in testsets}


def score_file_key(study: str, metric: str, testset: str, entry: Mapping[str, Any], system: str) -> str:
    """The config key of a system's score file: ``...testsets.<t>.file`` (mtme) or ``...testsets.<t>.files.<system>``."""
    base = f"mt_studies.{study}.metric_files.{metric}.testsets.{testset}"
    return f"{base}.file" if entry["format"] == "mtme" else f"{base}.files.{system}"


def complete_metric_files(config: MutableMapping[str, Any]) -> None:
    """Fill and check every MT study's ``metric_files`` in place (after :func:`.mt_studies.complete_mt_studies`).

    Fills ``description`` (the name), ``epsilon`` (``robustness.epsilon``) and, for an ``mtme`` file, ``systems``
    (every system of the study -> its name in the file, by default its own).

    Raises:
        InputError: A computed metric's name, an epsilon grid whose stop is below its start, a test set of the study
            without score files or one not in the study, a system of the study without a score file or one not in the
            study, keys of the other format (each named with its config key).
    """
    for name, study in config["mt_studies"].items():
        for metric, spec in study.get("metric_files", {}).items():
            key = f"mt_studies.{name}.metric_files.{metric}"
            if metric in COMPUTED_METRICS:
                raise _error(key, f"'{metric}' is a metric the workflow computes; a metric read from files takes another name")
            spec.setdefault("description", metric)
            spec.setdefault("epsilon", dict(config["robustness"]["epsilon"]))
            if spec["epsilon"]["stop"] < spec["epsilon"]["start"]:
                raise _error(f"{key}.epsilon.stop", "must be >= start")
            missing = [testset for testset in study["testsets"] if testset not in spec["testsets"]]
            if missing:
                raise _error(f"{key}.testsets", f"no score file for test set(s) {', '.join(missing)} of the study "
                                                "(a file metric scores every test set of its study)")
            extra = [testset for testset in spec["testsets"] if testset not in study["testsets"]]
            if extra:
                raise _error(f"{key}.testsets.{extra[0]}", f"not a test set of study {name} "
                                                            f"(its test sets: {', '.join(study['testsets'])})")
            for testset, entry in spec["testsets"].items():
                _complete_entry(entry, f"{key}.testsets.{testset}", name, study["systems"])


def _complete_entry(entry: MutableMapping[str, Any], key: str, study: str, systems: Sequence[str]) -> None:
    """One test set's score files: the keys of its format only, every system of the study, no other."""
    wrong = [other for other in (("files",) if entry["format"] == "mtme" else ("file", "systems")) if other in entry]
    if wrong:
        raise _error(f"{key}.{wrong[0]}", f"not a key of format {entry['format']} (mtme: file and systems; plain: files)")
    named = entry.get("systems", {}) if entry["format"] == "mtme" else entry["files"]
    unknown = [system for system in named if system not in systems]
    if unknown:
        field = "systems" if entry["format"] == "mtme" else "files"
        raise _error(f"{key}.{field}.{unknown[0]}", f"not a system of study {study} (its systems: {', '.join(systems)})")
    if entry["format"] == "mtme":
        entry["systems"] = {system: named.get(system, system) for system in systems}
        return
    missing = [system for system in systems if system not in named]
    if missing:
        raise _error(f"{key}.files", f"no score file for system(s) {', '.join(missing)} of study {study}")


def read_system_scores(entry: Mapping[str, Any], system: str, where: str) -> tuple[str, NDArray[np.float64], int]:
    """One system's scores from a test set's score file(s): (path, scores in file order, NaN = missing; line of the
    file of its first score).

    Raises:
        InputError: A file that does not exist, a line that is not a score, an MTME file without the system (its
            systems listed), each naming ``where`` (the config key), the file and the line.
    """
    path = entry["file"] if entry["format"] == "mtme" else entry["files"][system]
    if not os.path.isfile(path):
        raise InputError(f"{where}: {path} does not exist")
    try:
        if entry["format"] == "plain":
            return path, read_plain_scores(path), 1
        scores = read_mtme_segment_scores(path)
    except InputError as error:
        raise InputError(f"{where}: {' '.join(str(error).split())}") from None
    name = entry["systems"][system]
    if name not in scores:
        called = f" (called {name!r} in the file)" if name != system else ""
        raise InputError(f"{where}: system {system!r}{called} has no scores in {path} (its systems: "
                         f"{', '.join(scores)}); map our name to the file's with the test set's systems key")
    first = 1  # the file's line of the system's first score: its block follows the blocks before it
    for other, values in scores.items():
        if other == name:
            break
        first += len(values)
    return path, scores[name], first


def _aligned(scores: NDArray[np.float64], path: str, first: int, whole: int | None, segment_ids: Sequence[str] | None,
             testset: str, system: str, where: str) -> NDArray[np.float64] | None:
    """The scores of the prepared test set's segments (None: not known yet). See the module doc for the two layouts.

    Raises:
        InputError: Another number of scores than both counts (where both are known), or a missing score for a segment
            of the test set (the file's line and the segment id named).
    """
    count = len(scores)
    if whole is not None and count == whole:
        if segment_ids is None:
            return None  # the test set's segments are known once it is prepared: the job checks them
        lines = [int(segment) - 1 for segment in segment_ids]
    elif segment_ids is not None and count == len(segment_ids):
        lines = list(range(count))
    elif segment_ids is not None and whole is not None:
        kept = f", or {len(segment_ids)}: one per segment the prepared test set keeps" if len(segment_ids) != whole else ""
        raise InputError(f"{where}: {path}: system {system!r} has {count} scores, but test set {testset} is made from "
                         f"{whole} segments (one score per segment, picked by segment id{kept})")
    else:
        return None
    picked = scores[lines]
    missing = np.flatnonzero(~np.isfinite(picked))
    if missing.size:
        position = int(missing[0])
        segment = segment_ids[position]
        more = f" and {missing.size - 1} more" if missing.size > 1 else ""
        raise InputError(f"{where}: {path}: line {first + lines[position]}: no score (None or empty) for system {system!r} "
                         f"on segment {segment} of test set {testset}{more}; every segment of the study needs one")
    return picked


@dataclass(frozen=True)
class PlannedSegments:
    """What planning knows of a test set: the segments of the file or dataset it is made from, and its prepared
    segments' ids (None: known once prepared)."""

    whole: int | None
    segment_ids: list[str] | None


def planned_segments(testsets: Mapping[str, Mapping[str, Any]], names: Sequence[str], max_segments: int | None,
                     dataset_segments: Mapping[str, int | None], local_files: LocalFiles) -> dict[str, PlannedSegments]:
    """What planning knows of the test sets ``names``: a file pair or a user's file with domains is prepared now, as its
    job will prepare it (files checked before: :func:`~nlp_robustness.data.testset_preparation.check_text_files`); a
    manifest dataset gives its size, and its segment ids when the test set is the whole dataset (cut to
    ``max_segments``); a file that does not exist yet gives nothing."""
    found = {}
    for name in names:
        spec = testsets[name]
        if "dataset" in spec:
            whole = dataset_segments.get(spec["dataset"])
            whole_set = whole is not None and not spec.get("select") and not spec.get("drop_source_equals_reference")
            kept = min(whole, max_segments) if whole is not None and max_segments is not None else whole
            found[name] = PlannedSegments(whole, [str(i) for i in range(1, kept + 1)] if whole_set and kept else None)
            continue
        paths = [spec["file"]] if "file" in spec else [spec["source"], spec["reference"], *([spec["domain_file"]] if "domain_file" in spec else [])]
        if not all(os.path.isfile(path) for path in paths):
            found[name] = PlannedSegments(None, None)
            continue
        table = local_files.table(spec) if is_local_testset(spec) else build_parallel_table(spec["source"], spec["reference"],
                                                                                            spec.get("format", "plain"))
        prepared, _ = prepare_testset(table, max_segments=max_segments, allow_empty_segments=True,
                                      drop_source_equals_reference=spec.get("drop_source_equals_reference", False),
                                      select=spec.get("select"), where=f"test set {name}")
        found[name] = PlannedSegments(len(table), [str(segment) for segment in prepared["segment_id"]])
    return found


def check_metric_files(config: Mapping[str, Any], segments: Mapping[str, PlannedSegments]) -> None:
    """Read every score file of every study's file metrics now, so bad input fails before any job (a completed config).

    Checks each file exists and reads as its format, each system of the study is in it, and, where ``segments``
    knows a test set's counts, the number of scores and a score for every segment the test set keeps.

    Raises:
        InputError: The first problem, naming the config key, the file and the line or system.
    """
    for name, study in config["mt_studies"].items():
        for metric, spec in study.get("metric_files", {}).items():
            for testset, entry in spec["testsets"].items():
                planned = segments.get(testset, PlannedSegments(None, None))
                for system in study["systems"]:
                    where = score_file_key(name, metric, testset, entry, system)
                    path, scores, first = read_system_scores(entry, system, where)
                    _aligned(scores, path, first, planned.whole, planned.segment_ids, testset, system, where)


def check_study_metric_files(config: Mapping[str, Any], dataset_segments: Mapping[str, int | None],
                             local_files: LocalFiles) -> None:
    """:func:`check_metric_files` of a completed config, with what planning knows of its studies' test sets (a no-op
    without file metrics: no test set is read again)."""
    names = list(dict.fromkeys(testset for study in config["mt_studies"].values() if study.get("metric_files")
                               for testset in study["testsets"]))
    if names:
        check_metric_files(config, planned_segments(config["testsets"], names, config["max_segments"], dataset_segments,
                                                    local_files))


def aligned_score_table(testset_table: pd.DataFrame, whole: int, entry: Mapping[str, Any], system: str, metric: str,
                        testset: str, where: str) -> pd.DataFrame:
    """A system's score table of a prepared test set under a file metric (``segment_id``, ``doc_id``, ``metric``).

    Args:
        testset_table: The prepared test set (:func:`~nlp_robustness.data.testsets.read_testset_table`).
        whole: The segments of the file or dataset it is made from (its provenance's ``segments_read``).
        entry: The test set's completed ``metric_files.<metric>.testsets.<testset>`` entry.
        where: The config key of the score file, for errors.

    Raises:
        InputError: As :func:`read_system_scores`, or a count that fits neither layout, or a missing score.
    """
    path, scores, first = read_system_scores(entry, system, where)
    segment_ids = [str(segment) for segment in testset_table["segment_id"]]
    picked = _aligned(scores, path, first, whole, segment_ids, testset, system, where)
    if picked is None:  # not reached: with both counts known, a count fits a layout or is an error
        raise InputError(f"{where}: {path}: the scores of system {system!r} cannot be aligned with test set {testset}")
    return pd.DataFrame({"segment_id": testset_table["segment_id"], "doc_id": testset_table["doc_id"], metric: picked})
