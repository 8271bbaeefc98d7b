"""Human studies read from files: the ``mtme`` format, and metric scores from files in any human study.

* **Format ``mtme``** (the layout of Google's mt-metrics-eval, e.g. WMT22 zh-en with expert MQM): one human
  ``*.seg.score`` file of every system (``system<TAB>score`` per system and segment, ``None`` = not rated), a
  documents file (``domain<TAB>document`` per segment), the source, the reference and each system's output, one
  segment per line. A segment id is its line number (1-based). Each system keeps its own rated segments, as in the
  ``wmt-da`` format: a fully crossed study (MQM: every system on every segment) gives every system every segment,
  paired; a sparse one (DA z: each system its own segments) gives each its own, and the documents (from the
  documents file) let the engine's document bootstrap pair them.
* **Metric files** (``metric_files`` of a study, any format): a metric computed elsewhere, as one MTME file of every
  system or one plain file per system (one score per line). A metric must score every segment people rated; the
  scores of the segments no one rated are not read. Its system names are those of the study's human scores
  (:func:`score_file_name`). In an ``mqm`` study, whose domains are separate test sets, each domain has its files.

Everything that reads a file names the file and line of a bad value and the config key that names the file; the
planning check (:func:`check_mtme_study`, :func:`check_metric_files`) and the segment jobs share these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.data.mtme import read_mtme_documents, read_mtme_segment_scores, read_plain_scores, system_scores
from nlp_robustness.errors import InputError
from nlp_robustness.studies.human import SEGMENT_COLUMNS
from nlp_robustness.studies.study_settings import metric_file_values

__all__ = ["MetricScores", "check_metric_files", "check_mtme_study", "file_metric_columns",
           "mtme_domain_segments", "read_metric_scores", "score_file_name"]


def score_file_name(spec: Mapping[str, Any], row: str) -> str:
    """A row's system name in the study's score files (human and metric): ``mqm`` its MQM name (``systems``),
    ``mtme`` its ``score_names`` entry or its own name, ``wmt-da`` its own name (the DA name without ``.k``)."""
    if spec["format"] == "mqm":
        return spec["systems"][row]
    return spec.get("score_names", {}).get(row, row)


def file_metric_columns(spec: Mapping[str, Any]) -> list[str]:
    """The file metrics of a study (columns of its segment tables), in config order."""
    return list(spec.get("metric_files", {}))


@dataclass(frozen=True)
class MetricScores:
    """One file metric's scores of every row on one test set (row -> scores by line, NaN = not scored), with where
    each came from: row -> (file, the file line of the test set's first segment - 1, config key)."""

    name: str
    scores: dict[str, NDArray[np.float64]]
    origin: dict[str, tuple[str, int, str]]

    def values(self, row: str, segment_ids: Sequence[str]) -> NDArray[np.float64]:
        """The row's scores of the segments (1-based line numbers as strings); every one must be scored.

        Raises:
            InputError: A segment beyond the file or without a score (file, line, system and config key named).
        """
        scores = self.scores[row]
        path, offset, key = self.origin[row]
        index = np.asarray([int(segment) - 1 for segment in segment_ids], dtype=np.int64)
        beyond = index[index >= len(scores)]
        if beyond.size:
            raise InputError(f"{path} ({key}): system {row} has {len(scores)} scores, but people rated its segment "
                             f"{int(beyond[0]) + 1}")
        values = scores[index]
        missing = np.flatnonzero(~np.isfinite(values))
        if missing.size:
            segment = int(index[missing[0]]) + 1
            raise InputError(f"{path}: line {offset + segment}: no score (None) for system {row}, segment {segment}, which "
                             f"people rated ({key}; {missing.size} such segments): a metric must score every rated segment")
        return values


def read_metric_scores(spec: Mapping[str, Any], name: str, rows: Sequence[str], path_of: Callable[[str], str],
                       where: str, segments: int | None, domain: str = "") -> MetricScores:
    """One file metric's scores of ``rows`` (on ``domain``'s test set in an ``mqm`` study).

    ``path_of``: a file value (download key or path) -> the file to read; ``segments``: the test set's number of
    segments when known (every system's lines are checked against it).

    Raises:
        InputError: A row missing from the file (or without a file), the wrong number of lines, a non-number (file,
            line or system, and the config key named).
    """
    metric = spec["metric_files"][name]
    key = f"{where}.metric_files.{name}"
    entry = metric
    if "domains" in metric:
        if domain not in metric["domains"]:
            raise InputError(f"{key}.domains: no files for domain {domain!r} (an mqm study's domains are separate test sets)")
        entry, key = metric["domains"][domain], f"{key}.domains.{domain}"
    elif spec["format"] == "mqm" and len(spec["domains"]) > 1:
        raise InputError(f"{key}: an mqm study's domains are separate test sets: give the files per domain ({key}.domains)")
    origin = {}
    if metric["format"] == "mtme":
        if "file" not in entry:
            raise InputError(f"{key}: format mtme reads one score file of every system (file)")
        path = path_of(entry["file"])
        every = read_mtme_segment_scores(path, segments)
        names = {row: score_file_name(spec, row) for row in rows}
        scores = system_scores(every, names, path, f"{key}.file")
        length = len(next(iter(every.values())))
        order = list(every)
        origin = {row: (path, order.index(names[row]) * length, f"{key}.file") for row in rows}
    else:
        files = entry.get("files", {})
        missing = [row for row in rows if row not in files]
        if missing:
            raise InputError(f"{key}.files: no score file for system {missing[0]} (format plain: one file per system)")
        scores, origin = {}, {}
        for row in rows:
            path = path_of(files[row])
            scores[row] = read_plain_scores(path, segments)
            origin[row] = (path, 0, f"{key}.files.{row}")
    return MetricScores(name, scores, origin)


def mtme_domain_segments(human: Mapping[str, NDArray[np.float64]], documents: pd.DataFrame, source: Sequence[str],
                         reference: Sequence[str], outputs: Mapping[str, Sequence[str]], domain: str,
                         where: str) -> pd.DataFrame:
    """One domain of an ``mtme`` study: every row's own rated segments of the domain (:data:`SEGMENT_COLUMNS`).

    ``human``: row -> its human scores by line (NaN = not rated; :func:`.data.mtme.system_scores`); ``documents``:
    :func:`.data.mtme.read_mtme_documents`; ``outputs``: row -> its output lines.

    Raises:
        InputError: ``domain`` is not a domain of the documents file, a text has another number of lines than the
            documents file, or a row has no rated segment in the domain.
    """
    known = list(dict.fromkeys(documents["domain"]))
    if domain not in known:
        raise InputError(f"{where}.domains: {domain!r} is not a domain of the documents file (its domains: {', '.join(known)})")
    lines = len(documents)
    for what, texts in (("source", source), ("reference", reference), *((f"output of {row}", text) for row, text in outputs.items())):
        if len(texts) != lines:
            raise InputError(f"{where}: the {what} has {len(texts)} lines, the documents file {lines}")
    in_domain = (documents["domain"] == domain).to_numpy()
    frames = []
    for row, hypotheses in outputs.items():
        scores = human[row]
        index = np.flatnonzero(in_domain & np.isfinite(scores))
        if not index.size:
            raise InputError(f"{where}: system {row} has no rated segment in domain {domain}")
        frames.append(pd.DataFrame({
            "system": row, "segment_id": (index + 1).astype(str), "document": documents["document"].to_numpy()[index],
            "source": [source[i] for i in index], "reference": [reference[i] for i in index],
            "hypothesis": [hypotheses[i] for i in index], "human": scores[index],
        }))
    return pd.concat(frames, ignore_index=True)[list(SEGMENT_COLUMNS)]


def _rated_lines(human: Mapping[str, NDArray[np.float64]], documents: pd.DataFrame, domains: Sequence[str]) -> dict[str, list[str]]:
    """Row -> its rated segment ids (1-based lines) in the study's domains."""
    in_domains = documents["domain"].isin(list(domains)).to_numpy()
    return {row: [str(i + 1) for i in np.flatnonzero(in_domains & np.isfinite(scores))] for row, scores in human.items()}


def check_mtme_study(spec: Mapping[str, Any], where: str, path_of: Mapping[str, str | None]) -> None:
    """Check an ``mtme`` study's files before any job, where they are readable now (``path_of``: file value ->
    readable path or None): the documents file and its domains, every row in the human scores with a score per
    segment, every text as long as the documents file, and every metric file (:func:`check_metric_files`) on the
    rated segments.

    Raises:
        InputError: Naming the file (and line) and the config key.
    """
    rows = list(spec["systems"])
    documents_path = path_of.get(spec["documents"])
    documents = read_mtme_documents(documents_path) if documents_path is not None else None
    segments = None if documents is None else len(documents)
    if documents is not None:
        known = list(dict.fromkeys(documents["domain"]))
        unknown = [domain for domain in spec["domains"] if domain not in known]
        if unknown:
            raise InputError(f"{where}.domains: {unknown[0]!r} is not a domain of {documents_path} (its domains: {', '.join(known)})")
    for key, value in [("source", spec["source"]), ("reference", spec["reference"]),
                       *((f"systems.{row}", spec["systems"][row]) for row in rows)]:
        path = path_of.get(value)
        if path is not None and segments is not None:
            from nlp_robustness.fileio.text_files import read_text_lines

            if len(lines := read_text_lines(path, segments=True)) != segments:
                raise InputError(f"{where}.{key}: {path} has {len(lines)} lines, but the documents file {documents_path} "
                                 f"has {segments} (one line per segment)")
    scores_path = path_of.get(spec["scores"])
    rated = None
    if scores_path is not None:
        every = read_mtme_segment_scores(scores_path, segments)
        human = system_scores(every, {row: score_file_name(spec, row) for row in rows}, scores_path, f"{where}.scores")
        if documents is not None:
            rated = _rated_lines(human, documents, spec["domains"])
            empty = [row for row, ids in rated.items() if not ids]
            if empty:
                raise InputError(f"{where}.scores: system {empty[0]} has no rated segment in the study's domains in {scores_path}")
    check_metric_files(spec, where, path_of, segments, rated)


def check_metric_files(spec: Mapping[str, Any], where: str, path_of: Mapping[str, str | None], segments: int | None,
                       rated: Mapping[str, Sequence[str]] | None, domain: str = "") -> None:
    """Check a study's metric files that are readable now: every row in the file, the right number of lines, numbers,
    and (when ``rated``, row -> rated segment ids, is known) a score on every rated segment.

    Raises:
        InputError: As :func:`read_metric_scores` and :meth:`MetricScores.values` name them.
    """
    rows = [*spec["systems"], *spec.get("rated_references", {})] if spec["format"] == "wmt-da" else list(spec["systems"])
    for name, metric in spec.get("metric_files", {}).items():
        entry = metric["domains"].get(domain, {}) if "domains" in metric else metric
        values = [entry["file"]] if "file" in entry else list(entry.get("files", {}).values())
        if not values or any(path_of.get(value) is None for value in values):
            continue  # a download still to fetch: its segment job makes the same checks
        scores = read_metric_scores(spec, name, rows, lambda value: path_of[value], where, segments, domain)
        if rated is not None:
            for row in rows:
                scores.values(row, rated[row])


def add_file_metrics(segments: pd.DataFrame, spec: Mapping[str, Any], paths: Mapping[str, str], where: str,
                     length: int | None, domain: str = "") -> list[str]:
    """Add a column per file metric of ``spec`` to a domain's segment table (in place), each row's scores of its
    rated segments; returns the columns added. ``paths``: file value -> the file the job reads; ``length``: the test
    set's number of segments when known; ``domain``: the domain (an ``mqm`` study's metric files are per domain).

    Raises:
        InputError: As :func:`read_metric_scores` and :meth:`MetricScores.values` name them.
    """
    rows = list(dict.fromkeys(segments["system"]))
    for name in file_metric_columns(spec):
        scores = read_metric_scores(spec, name, rows, lambda value: paths[value], where, length, domain)
        column = np.full(len(segments), np.nan)
        for row in rows:
            mask = (segments["system"] == row).to_numpy()
            column[mask] = scores.values(row, segments.loc[mask, "segment_id"].tolist())
        segments[name] = column
    return file_metric_columns(spec)
