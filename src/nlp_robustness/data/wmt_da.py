"""The WMT'22 to-English human direct assessment (DA) files, and the per-line domain of a test set.

The organisers' DA scores of a pair (``humaneval/DA/newstest2022-toen/``) are space-separated tables with a
header and a trailing space on every line:

- ``ad-seg-scores-<pair>.csv``: ``SYS SID RAW.SCR Z.SCR N``, one row per rated (system, segment)
  (:func:`read_da_segment_scores`);
- ``ad-sys-scores-<pair>.csv``: ``RAW.SCR Z.SCR N SYS N.ALL``, one row per system
  (:func:`read_da_system_scores`).

A DA system name is ``<name>.<k>``, where ``<name>`` is the system's file name and ``.k`` a meaningless
per-pair index (:func:`da_base_name` strips it; ``HUMAN-B`` has none). Rows with RAW.SCR and Z.SCR both
exactly 0 are placeholders, not ratings: the organisers' system means include them, segment- and domain-level
work should drop them.

The DA ``SID`` is not the line number of the txt/ files: it is the 1-based position of the segment in the
concatenation of the test set's documents sorted by doc id (plain string order, segment order inside a
document kept). :func:`read_line_domains` gives each line of a txt source its domain, document, position in
the document and SID, from either a derived 4-column TSV (whose every SID is checked against that order) or a
WMT XML file whose documents tile the source (placed by :mod:`nlp_robustness.data.document_placement`);
:func:`rated_segments` joins the segment scores to those lines.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence

import pandas as pd

from nlp_robustness.data.document_placement import placed_document_rows
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import finite_number, read_text_lines

__all__ = [
    "DA_SEGMENT_COLUMNS",
    "DA_SYSTEM_COLUMNS",
    "LINE_DOMAIN_COLUMNS",
    "da_base_name",
    "rated_segments",
    "read_da_segment_scores",
    "read_da_system_scores",
    "read_line_domains",
]

#: The header of an ``ad-seg-scores-*.csv`` file.
DA_SEGMENT_COLUMNS = ("SYS", "SID", "RAW.SCR", "Z.SCR", "N")

#: The header of an ``ad-sys-scores-*.csv`` file.
DA_SYSTEM_COLUMNS = ("RAW.SCR", "Z.SCR", "N", "SYS", "N.ALL")

#: The columns of :func:`read_line_domains`.
LINE_DOMAIN_COLUMNS = ("line", "domain", "document", "position", "sid")

_INDEX_SUFFIX = re.compile(r"\.\d+$")


def da_base_name(name: str) -> str:
    """The system name of a DA name: ``name`` without a trailing ``.<digits>`` (the per-pair index).

    Args:
        name: A DA system name (``Online-B.0``, ``HUMAN-B``, ``HUMAN-B.12``).

    Returns:
        ``Online-B``, ``HUMAN-B``, ``HUMAN-B``: the name of the system's output file.
    """
    return _INDEX_SUFFIX.sub("", name)


def _read_rows(path: str, header: Sequence[str]) -> tuple[dict[str, int], list[tuple[int, list[str]]]]:
    """The header positions and (1-based line, fields) of every non-blank row of a whitespace-separated table.

    Raises:
        InputError: The file is missing or empty, its header lacks a column of ``header``, it has no row,
            or a row has another number of fields than the header (each names the file and line).
    """
    lines = read_text_lines(path, segments=False)
    if not lines or not lines[0].strip():
        raise InputError(f"{path}: line 1: empty file or header (expected the header {' '.join(header)})")
    names = lines[0].split()
    missing = [name for name in header if name not in names]
    if missing:
        raise InputError(f"{path}: line 1: has no column {', '.join(missing)} (header: {' '.join(names)})")
    positions = {name: names.index(name) for name in header}
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != len(names):
            raise InputError(f"{path}: line {number}: expected {len(names)} fields like the header, found {len(fields)}")
        rows.append((number, fields))
    if not rows:
        raise InputError(f"{path}: no row after the header")
    return positions, rows


def _integer(path: str, number: int, column: str, text: str, minimum: int = 0) -> int:
    """``text`` as an integer of at least ``minimum``, else an InputError naming the file, line and column."""
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{path}: line {number}: {column} {text!r} is not an integer") from None
    if value < minimum:
        raise InputError(f"{path}: line {number}: {column} {value} is below {minimum}")
    return value


def _first_time(seen: dict[Hashable, tuple[int, str]], key: Hashable, number: int, system: str, path: str, what: str) -> None:
    """Record that line ``number`` scores ``key`` (written as DA name ``system``), or raise if an earlier line did.

    Raises:
        InputError: ``what`` is scored twice; names both lines (and the earlier DA name where it differs).
    """
    if key in seen:
        earlier, written = seen[key]
        also = "" if written == system else f" (as {written})"
        raise InputError(f"{path}: line {number}: {what} is scored twice (also on line {earlier}{also})")
    seen[key] = (number, system)


def read_da_segment_scores(path: str) -> pd.DataFrame:
    """Read an ``ad-seg-scores-<pair>.csv`` file (header :data:`DA_SEGMENT_COLUMNS`, space-separated).

    Fields may be separated by any whitespace, and trailing whitespace (every line of the organisers' files
    ends in a space) is ignored, as are blank lines. The header's columns may come in any order.

    Args:
        path: The file.

    Returns:
        One row per file row, in file order, with the columns ``system`` (the DA name as written), ``name``
        (:func:`da_base_name`), ``sid`` (int), ``raw`` (float, RAW.SCR), ``z`` (float, Z.SCR), ``ratings``
        (int, N), ``placeholder`` (bool: ``raw`` and ``z`` both exactly 0) and ``line`` (the 1-based line in
        the file).

    Raises:
        InputError: The file is missing or empty, its header lacks a column, has no row, or a row has another
            number of fields than the header, a value is not a number (SID and N: a non-negative integer),
            or a (system, SID) occurs twice (also when two DA names with the same :func:`da_base_name` share a SID).
            Each names the file and line.
    """
    positions, rows = _read_rows(path, DA_SEGMENT_COLUMNS)
    records = []
    seen: dict[Hashable, tuple[int, str]] = {}
    for number, fields in rows:
        system = fields[positions["SYS"]]
        sid = _integer(path, number, "SID", fields[positions["SID"]])
        raw = finite_number(path, number, "RAW.SCR", fields[positions["RAW.SCR"]])
        z = finite_number(path, number, "Z.SCR", fields[positions["Z.SCR"]])
        ratings = _integer(path, number, "N", fields[positions["N"]])
        name = da_base_name(system)
        _first_time(seen, (name, sid), number, system, path, f"system {system} SID {sid}")
        records.append((system, name, sid, raw, z, ratings, raw == 0.0 and z == 0.0, number))
    table = pd.DataFrame(records, columns=["system", "name", "sid", "raw", "z", "ratings", "placeholder", "line"])
    return table.astype({"sid": "int64", "raw": "float64", "z": "float64", "ratings": "int64", "placeholder": bool, "line": "int64"})


def read_da_system_scores(path: str) -> pd.DataFrame:
    """Read an ``ad-sys-scores-<pair>.csv`` file (header :data:`DA_SYSTEM_COLUMNS`, space-separated).

    Whitespace is handled as by :func:`read_da_segment_scores`.

    Args:
        path: The file.

    Returns:
        One row per system, in file order, with the columns ``system`` (the DA name), ``name``
        (:func:`da_base_name`), ``raw`` and ``z`` (float: the system's mean RAW.SCR and Z.SCR over its segment
        rows), ``segments`` (int, N: its segment rows) and ``ratings`` (int, N.ALL: the sum of their N).

    Raises:
        InputError: The file is missing or empty, its header lacks a column, has no row, or a row has another
            number of fields than the header, a value is not a number (N and N.ALL: a non-negative integer), or
            a system (or its :func:`da_base_name`) occurs twice. Each names the file and line.
    """
    positions, rows = _read_rows(path, DA_SYSTEM_COLUMNS)
    records = []
    seen: dict[Hashable, tuple[int, str]] = {}
    for number, fields in rows:
        system = fields[positions["SYS"]]
        raw = finite_number(path, number, "RAW.SCR", fields[positions["RAW.SCR"]])
        z = finite_number(path, number, "Z.SCR", fields[positions["Z.SCR"]])
        segments = _integer(path, number, "N", fields[positions["N"]])
        ratings = _integer(path, number, "N.ALL", fields[positions["N.ALL"]])
        name = da_base_name(system)
        _first_time(seen, name, number, system, path, f"system {system}")
        records.append((system, name, raw, z, segments, ratings))
    table = pd.DataFrame(records, columns=["system", "name", "raw", "z", "segments", "ratings"])
    return table.astype({"raw": "float64", "z": "float64", "segments": "int64", "ratings": "int64"})


def _is_xml(path: str) -> bool:
    """Whether ``path`` starts (after a byte-order mark and whitespace) with ``<?xml`` or ``<dataset``.

    Raises:
        InputError: The file is missing or cannot be read.
    """
    try:
        with open(path, "rb") as handle:
            start = handle.read(256)
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    start = start.removeprefix(b"\xef\xbb\xbf").lstrip()
    return start.startswith((b"<?xml", b"<dataset"))


def _line_domain_table(rows: list[tuple[int, str, str, int, int]]) -> pd.DataFrame:
    """The :data:`LINE_DOMAIN_COLUMNS` table of (line, domain, document, position, sid) rows, by line."""
    table = pd.DataFrame(sorted(rows), columns=list(LINE_DOMAIN_COLUMNS))
    return table.astype({"line": "int64", "domain": object, "document": object, "position": "int64", "sid": "int64"})


def _read_domain_tsv(path: str, source_lines: Sequence[str]) -> pd.DataFrame:
    """The line domains of a derived TSV (``domain``, ``doc_id``, position, SID; no header); see :func:`read_line_domains`.

    Every SID must be the one the documented order gives its line (:func:`_check_sid_order`): a permutation alone
    would let a file numbered in another order (line numbers, say) join every score to another segment silently.
    """
    lines = read_text_lines(path, segments=False)
    if len(lines) != len(source_lines):
        raise InputError(
            f"{path} has {len(lines)} lines, but the source has {len(source_lines)}: a domain file has one line per source line"
        )
    rows = []
    for index, line in enumerate(lines):
        number = index + 1
        fields = line.split("\t")
        if len(fields) != 4:
            raise InputError(
                f"{path}: line {number}: expected 4 tab-separated fields (domain, document, position, SID), found {len(fields)}"
            )
        domain, document, position_text, sid_text = fields
        if not domain or not document:
            raise InputError(f"{path}: line {number}: empty {'domain' if not domain else 'document'}")
        position = _integer(path, number, "position", position_text, minimum=1)
        sid = _integer(path, number, "SID", sid_text, minimum=1)
        rows.append((index, domain, document, position, sid))
    _check_sid_order(path, rows)
    return _line_domain_table(rows)


def _check_sid_order(path: str, rows: Sequence[tuple[int, str, str, int, int]]) -> None:
    """Check that every (line index, domain, document, position, SID) row has the SID of the documented order.

    The DA SID of a segment is its 1-based position in the concatenation of the documents sorted by id (plain string
    order), segments in their order inside each (the module docstring): a document's SIDs start after the segments
    of every document whose id sorts before its own. So each document's positions must be 1..n, once each.

    Raises:
        InputError: The first line (in file order) whose position repeats another line's of its document or lies
            beyond the document's lines, or whose SID is not the expected one; names the file, the line, and the
            SID found and expected.
    """
    lengths: dict[str, int] = {}
    for _, _, document, _, _ in rows:
        lengths[document] = lengths.get(document, 0) + 1
    seen: dict[tuple[str, int], int] = {}
    for index, _, document, position, _ in rows:
        if position > lengths[document]:
            raise InputError(
                f"{path}: line {index + 1}: position {position} of document {document!r}, which has {lengths[document]} lines"
            )
        if (document, position) in seen:
            raise InputError(
                f"{path}: line {index + 1}: position {position} of document {document!r} is also on line {seen[document, position]}"
            )
        seen[document, position] = index + 1
    starts: dict[str, int] = {}
    before = 0
    for document in sorted(lengths):
        starts[document], before = before, before + lengths[document]
    for index, _, document, position, sid in rows:
        expected = starts[document] + position
        if sid != expected:
            raise InputError(
                f"{path}: line {index + 1}: SID {sid}, expected {expected} (document {document!r}, position {position}): "
                "the SIDs number the segments of the documents sorted by id (plain string order), by position inside "
                "each, not the lines of the file"
            )


def read_line_domains(path: str, source_lines: Sequence[str]) -> pd.DataFrame:
    """The domain, document and DA SID of every line of a test set's txt source.

    Two kinds of file are accepted, told apart by their content:

    - a WMT XML file (it starts with ``<?xml`` or ``<dataset``): the source segments of its documents must
      tile ``source_lines`` as contiguous blocks in some order, each document exactly once (the documents may
      be in another order than in the txt file; a line that occurs more than once is placed by matching whole
      documents). Each line gets its document's ``domain`` attribute and id. The SID of a line is its 1-based
      position in the concatenation of the documents sorted by doc id (plain string order), segment order
      inside a document kept. Lines are compared stripped of leading and trailing whitespace, as
      :func:`~nlp_robustness.data.wmt_xml.read_wmt_xml` strips segments. The reference (not used here) is chosen
      as for every WMT XML file (:func:`~nlp_robustness.data.wmt_xml.reference_translator`): the only one, else ``A``,
      else (unlike a test set, where the choice matters) the first.
    - otherwise a derived TSV without header, one line per source line: ``domain``, ``doc_id``, the 1-based
      position in the document, the DA SID. Each SID must be the one that order gives the line (the documents
      sorted by id, each document's segments by position), which the file's own documents and positions decide.

    Args:
        path: The XML or TSV file.
        source_lines: The test set's source, one segment per line (only the number of lines is used for a TSV).

    Returns:
        One row per source line, in line order, with the columns ``line`` (0-based), ``domain``, ``document``,
        ``position`` (1-based in its document) and ``sid`` (int).

    Raises:
        InputError: TSV: it has another number of lines than the source, a line has not 4 fields, an empty
            domain or document, a position or SID that is not a positive integer, a document whose positions are
            not 1..n, or a SID other than the one the documented order gives the line (each names the file and
            line; the last the SID found and expected). XML: the file is malformed
            (:func:`~nlp_robustness.data.wmt_xml.read_wmt_xml`), a document has no domain or the id of another,
            its documents hold another number of segments than the source has lines, or they do not tile the
            source (names the first document that cannot be placed).
    """
    if _is_xml(path):
        return _line_domain_table(placed_document_rows(path, source_lines))
    return _read_domain_tsv(path, source_lines)


def rated_segments(scores: pd.DataFrame, domains: pd.DataFrame, where: str) -> pd.DataFrame:
    """Join DA segment scores to the lines of the test set by SID.

    Args:
        scores: From :func:`read_da_segment_scores`.
        domains: From :func:`read_line_domains` (one row per line, SIDs 1..N).
        where: What the scores are (a file, a dataset), the start of every error message.

    Returns:
        ``scores`` in its order, with ``line`` (0-based line of the test set), ``domain`` and ``document`` added;
        the score file's own ``line`` column is renamed ``score_line``.

    Raises:
        InputError: A SID outside 1..N (names the SID, the system and the line of the score file).
    """
    count = len(domains)
    outside = scores[(scores["sid"] < 1) | (scores["sid"] > count)]
    if len(outside):
        row = outside.iloc[0]
        raise InputError(
            f"{where}: SID {int(row['sid'])} of system {row['system']} (score file line {int(row['line'])}) is outside "
            f"1..{count}, the segments of the test set"
        )
    by_sid = domains.set_index("sid")[["line", "domain", "document"]]
    joined = scores.rename(columns={"line": "score_line"}).reset_index(drop=True)
    found = by_sid.loc[joined["sid"].to_numpy()].reset_index(drop=True)
    for column in ("line", "domain", "document"):
        joined[column] = found[column].to_numpy()
    return joined
