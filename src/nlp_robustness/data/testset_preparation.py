"""A test set's segments as translated and scored: empty segments refused, source = reference dropped, cut.

:func:`prepare_testset` takes the table of a manifest dataset or of a configured pair of files
(:mod:`nlp_robustness.data.testsets`) and applies the test-set options of the config
(``allow_empty_segments``, ``drop_source_equals_reference``) and ``max_segments``; it returns the
counts that the test set's provenance file records. :func:`segment_lines` finds the line of a file
where each segment starts, so that an error names it. :func:`check_text_files` runs the same checks when
the workflow is planned, on every configured text file, so that a bad file fails before any job runs.
"""

from __future__ import annotations

import os
import xml.parsers.expat
from collections.abc import Mapping
from typing import Any

import pandas as pd

from nlp_robustness.data.testset_selection import select_rows
from nlp_robustness.data.testset_formats import read_iwslt_xml, read_plain_lines, read_wmt_sgml
from nlp_robustness.data.testsets import TABLE_COLUMNS, build_parallel_table, limit_segments
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines

PathLike = str | os.PathLike[str]


def _xml_segment_lines(path: PathLike) -> list[int]:
    """Line of every ``<seg>`` start tag of an XML file, in document order (ElementTree keeps no positions)."""
    lines: list[int] = []
    parser = xml.parsers.expat.ParserCreate()

    def start(name: str, attributes: dict[str, str]) -> None:
        if name == "seg":
            lines.append(parser.CurrentLineNumber)

    parser.StartElementHandler = start
    with open(path, "rb") as handle:
        parser.ParseFile(handle)
    return lines


def segment_lines(path: PathLike, file_format: str) -> list[int] | None:
    """The line of ``path`` on which each segment starts, in segment order (``None``: not known for the format).

    ``plain``: segment *i* is line *i*; ``wmt-sgml``: the ``<seg>`` line; ``iwslt-xml``: the line of the
    ``<seg>`` start tag. Call it on a file its parser accepted (errors are not caught here).
    """
    if file_format == "plain":
        return list(range(1, len(read_text_lines(path, segments=True)) + 1))
    if file_format == "wmt-sgml":
        return [segment.line for segment in read_wmt_sgml(path)]
    if file_format == "iwslt-xml":
        return _xml_segment_lines(path)
    return None


def _is_empty(texts: pd.Series) -> pd.Series:
    # The parsers strip every segment; strip again so that a table written by hand counts the same.
    return texts.str.strip() == ""


def _first_empty_segment(
    empty_source: pd.Series, empty_reference: pd.Series, files: tuple[PathLike, PathLike, str], segment_ids: pd.Series | None = None
) -> tuple[str, PathLike, str, int] | None:
    """Side, file, place (``line N``; ``segment N`` of the file where lines are not known) and position of the first
    empty segment of a file pair; None: none is empty. ``segment_ids``: the segments' ids, their 1-based positions in
    the files (a selection's rows are not the files' first ones); default: the rows are the files' segments."""
    source_path, reference_path, file_format = files
    empty = empty_source | empty_reference
    if not empty.any():
        return None
    position = int(empty.to_numpy().argmax())
    in_file = int(segment_ids.iloc[position]) - 1 if segment_ids is not None else position
    side, path = ("source", source_path) if empty_source.iloc[position] else ("reference", reference_path)
    lines = segment_lines(path, file_format)
    where = f"line {lines[in_file]}" if lines is not None else f"segment {in_file + 1}"
    return side, path, where, position


def _refuse_empty_segments(
    empty_source: pd.Series, empty_reference: pd.Series, files: tuple[PathLike, PathLike, str], segment_ids: pd.Series
) -> None:
    """Raise :class:`InputError` naming the file and line of the first empty segment of a file pair
    (``empty_source``, ``empty_reference``: which segments are empty on each side; ``segment_ids``: their ids)."""
    first = _first_empty_segment(empty_source, empty_reference, files, segment_ids)
    if first is None:
        return
    side, path, where, position = first
    raise InputError(
        f"{path}: {where}: empty {side} segment (segment {position + 1} of the test set; {int((empty_source | empty_reference).sum())} "
        f"segment(s) have an empty source or reference). An empty segment would be scored like any other "
        f"(BLEU 0); fix the file, or set the test set's option allow_empty_segments: true to keep them"
    )


def prepare_testset(
    table: pd.DataFrame,
    *,
    max_segments: int | None,
    allow_empty_segments: bool,
    drop_source_equals_reference: bool,
    files: tuple[PathLike, PathLike, str] | None = None,
    select: Mapping[str, str] | None = None,
    where: str = "test set",
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The segments of a test set that are translated and scored, and counts for its provenance file.

    In this order:

    0. With ``select`` (``{column: value}``, a test set of a manifest dataset or of a user's file with
       domains, :mod:`nlp_robustness.data.local_testsets`), only the rows holding those
       values are kept, with their ids (:func:`~nlp_robustness.data.testset_selection.select_rows`;
       ``where`` names the table in its errors); everything below counts and acts on them.

    1. Empty segments (an empty source or reference after stripping) are counted. For a pair of
       files given in the config, or a WMT XML file (``files`` = source path, reference path, format), one is an error
       naming the file and line, unless ``allow_empty_segments``: an empty line is far more often a
       misaligned or truncated file than a segment worth scoring, and it would score BLEU 0. A
       manifest dataset (``files`` ``None``) was verified by checksum and count: its empty segments
       are kept and counted.
    2. Segments whose source equals their reference (e.g. the 49 headings "Abstract" of Medline'18)
       are counted and, with ``drop_source_equals_reference``, removed; the comparison is exact, on
       the stripped texts. The segments left keep their ids (their positions in the files), so the
       ids may have gaps.
    3. The first ``max_segments`` segments are kept (``None``: all), after the drop.

    Returns:
        The table (the columns of :data:`TABLE_COLUMNS` only: a dataset's other columns, such as
        ``domain`` or ``hypothesis:<system>``, are dropped; rows renumbered from 0, ``segment_id`` kept) and
        a dict of counts: ``segments_read``, ``segments_selected`` (with ``select`` only), ``empty_source``, ``empty_reference``,
        ``empty_segments`` (either side), ``source_equals_reference`` (all counted on the segments
        read), ``dropped_source_equals_reference``, ``segments_before_cut`` (the whole test set, before
        ``max_segments``: the lines a hypotheses file of it has), ``segments``, ``documents`` and ``document_ids`` (of the
        result; :func:`document_counts`).

    Raises:
        InputError: An empty segment of a file pair (not allowed), no segment selected, or no segment
            left after the drop.
    """
    segments_read = len(table)
    selected: dict[str, int] = {}
    if select:
        table = select_rows(table, select, where)
        selected["segments_selected"] = len(table)
    empty_source, empty_reference = _is_empty(table["source"]), _is_empty(table["reference"])
    if files is not None and not allow_empty_segments:
        _refuse_empty_segments(empty_source, empty_reference, files, table["segment_id"])
    identical = table["source"] == table["reference"]
    counts: dict[str, Any] = {
        "segments_read": segments_read,
        **selected,
        "empty_source": int(empty_source.sum()),
        "empty_reference": int(empty_reference.sum()),
        "empty_segments": int((empty_source | empty_reference).sum()),
        "source_equals_reference": int(identical.sum()),
        "dropped_source_equals_reference": 0,
    }
    if drop_source_equals_reference and identical.any():
        if identical.all():
            raise InputError(
                f"every one of the {len(table)} segments has a source equal to its reference: "
                "drop_source_equals_reference leaves no segment"
            )
        table = table.loc[~identical].reset_index(drop=True)
        counts["dropped_source_equals_reference"] = int(identical.sum())
    counts["segments_before_cut"] = len(table)
    table = limit_segments(table[list(TABLE_COLUMNS)], max_segments)
    counts["segments"] = len(table)
    counts |= document_counts(table["doc_id"])
    return table, counts


def document_counts(doc_ids: pd.Series) -> dict[str, Any]:
    """What a provenance file records of a test set's documents: ``documents``, the distinct document ids (0 for a
    test set without any: plain text and TSV have none, so "" is no document), and ``document_ids``, whether any
    segment has one; without, the bootstrap resamples the segments as independent units
    (:mod:`nlp_robustness.data.document_ids`)."""
    named = doc_ids.fillna("").astype(str)
    named = named[named != ""]
    return {"documents": int(named.nunique()), "document_ids": bool(len(named))}


#: Why a hypotheses file is compared whole when ``max_segments`` is set (one wording for the planning check and the job).
_CUT_NOTE = ", compared before max_segments cuts it (a missing or inserted line would shift every later one)"

_SIDE_READERS = {"plain": read_plain_lines, "wmt-sgml": read_wmt_sgml, "iwslt-xml": read_iwslt_xml}


def _one_line(key: str, error: InputError) -> InputError:
    """The error prefixed with the config key, its whitespace (line breaks included) folded to one line."""
    return InputError(f"{key}: {' '.join(str(error).split())}")


def _checked_pair(name: str, spec: Mapping[str, Any]) -> int:
    """Check a configured file pair as its prepare job will; return how many segments the whole test set has
    (before ``max_segments``: a hypotheses file translates all of them, and is checked against all of them)."""
    file_format = spec.get("format", "plain")
    for side in ("source", "reference"):
        try:
            _SIDE_READERS.get(file_format, read_plain_lines)(spec[side])
        except InputError as error:
            raise _one_line(f"testsets.{name}.{side}", error) from None
    try:
        table = build_parallel_table(spec["source"], spec["reference"], file_format)
    except InputError as error:
        raise _one_line(f"testsets.{name}", error) from None
    empty_source, empty_reference = _is_empty(table["source"]), _is_empty(table["reference"])
    first = _first_empty_segment(empty_source, empty_reference, (spec["source"], spec["reference"], file_format))
    if first is not None and not spec.get("allow_empty_segments", False):
        side, path, where, position = first
        raise InputError(
            f"testsets.{name}.{side}: {path} {where}: empty line (segment {position + 1}; "
            f"fix the file, or set testsets.{name}.allow_empty_segments: true to keep empty segments)"
        )
    try:
        _, counts = prepare_testset(
            table, max_segments=None, allow_empty_segments=True,
            drop_source_equals_reference=spec.get("drop_source_equals_reference", False),
        )
    except InputError as error:
        raise _one_line(f"testsets.{name}", error) from None
    return counts["segments"]


def _dataset_size(spec: Mapping[str, Any] | None, dataset_segments: Mapping[str, int | None]) -> int | None:
    """The segments of a test set that is a whole manifest dataset, as the manifest states them (None: not known
    before it is prepared: another kind of test set, a dataset of unknown size, a selection or a drop)."""
    if spec is None or "dataset" not in spec or spec.get("select") or spec.get("drop_source_equals_reference"):
        return None
    return dataset_segments.get(spec["dataset"])


def check_text_files(
    testsets: Mapping[str, Mapping[str, Any]],
    systems: Mapping[str, Mapping[str, Any]],
    max_segments: int | None,
    dataset_segments: Mapping[str, int | None] | None = None,
    whole_files: Mapping[str, int] | None = None,
) -> None:
    """Check the configured text files when the workflow is planned, as their jobs will check them.

    * A test set given as a file pair (``testsets.<name>.source``/``reference``, ``format``): each file
      readable (UTF-8 for plain text) and well formed, both of the same length (and aligned ids for
      SGML/XML), no empty segment unless ``allow_empty_segments``, a segment left after
      ``drop_source_equals_reference`` (the checks of :func:`prepare_testset`). A test set of a user's file with
      domains (a WMT XML file, a domain file) is checked by :func:`nlp_robustness.data.local_testsets.check_local_testsets`,
      which counts the segments of its whole file (``whole_files``: test set -> segments).
    * A file of a ``hypotheses`` system (``systems.<name>.files.<test set>``): valid UTF-8, and, for a
      test set given as a file pair, as many lines as the whole test set has segments (the
      ``import_hypotheses`` check), and for a test set that is a whole manifest dataset, as many lines as
      the manifest says it has (``dataset_segments``: dataset -> segments), and for a test set of ``whole_files``, as
      many lines as its whole file has segments (its lines are picked by segment id); the size of a selection, a drop
      or a perturbed test set is known only once prepared.

    Lengths are compared on the whole files, never after ``max_segments`` cuts them: a file one line short,
    or with a line inserted, would otherwise pass and shift every later hypothesis onto the wrong reference.

    A file that does not exist is left to Snakemake, which reports a missing input (or makes it).

    Raises:
        InputError: The first bad file, in one line naming the config key, the file, and the line (and
            byte offset for invalid UTF-8) or both files and their counts.
    """
    prepared: dict[str, int] = {}
    for name, spec in testsets.items():
        if "source" in spec and "domain_file" not in spec and os.path.isfile(spec["source"]) and os.path.isfile(spec["reference"]):
            prepared[name] = _checked_pair(name, spec)
    for system, spec in systems.items():
        if spec.get("kind") != "hypotheses":
            continue
        for testset, path in spec.get("files", {}).items():  # a submission (no files) is checked by check_submissions
            if not os.path.isfile(path):
                continue
            key = f"systems.{system}.files.{testset}"
            try:
                lines = read_plain_lines(path)
            except InputError as error:
                raise _one_line(key, error) from None
            expected = _dataset_size(testsets.get(testset), dataset_segments or {})
            if expected is not None and len(lines) != expected:
                raise InputError(
                    f"{key}: {path} has {len(lines)} lines, but test set {testset} (dataset {testsets[testset]['dataset']}) "
                    f"has {expected} segments: a hypotheses file translates the whole test set, one line per segment"
                    f"{_CUT_NOTE if max_segments is not None else ''}"
                )
            whole = (whole_files or {}).get(testset)
            if whole is not None and len(lines) != whole:
                local = testsets[testset]
                origin = local["file"] if "file" in local else f"{local['source']} (domain file {local['domain_file']})"
                raise InputError(
                    f"{key}: {path} has {len(lines)} lines, but {origin} has {whole} segments: a hypotheses file of a test set "
                    f"read from a WMT XML file or with a domain file translates the whole file, one line per segment "
                    f"(test set {testset} takes its own by segment id)"
                )
            if testset in prepared and len(lines) != prepared[testset]:
                raise InputError(
                    f"{key}: {path} has {len(lines)} lines, test set {testset} has {prepared[testset]} segments "
                    f"({testsets[testset]['source']}, {testsets[testset]['reference']}): a hypotheses file translates "
                    f"the whole test set, one line per segment{_CUT_NOTE if max_segments is not None else ''}"
                )
