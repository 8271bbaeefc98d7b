"""WMT19 to-English data: newstest2019 segment files, system-output file names and DARR judgements.

The WMT19 metrics task (Ma et al. 2019) ships, per language pair, one reference, one source and one
output file per system (``newstest2019.<SYSTEM>.<pair>``, e.g. ``newstest2019.online-A.0.lt-en``), and
the segment-level human judgements as *DARR* (relative-ranking) pairs in ``RR-seglevel.csv``: one pair
of systems per row, the one whose translation of segment ``SID`` humans scored clearly higher first.
Paper 002 (Sections 3-4) measures metrics by their Kendall-like tau with these pairs
(:mod:`nlp_robustness.statistics.darr`).

Choices (tested in tests/unit/test_wmt19_darr.py):

* **Segment files.** One segment per line, UTF-8. Lines are split on ``\\n`` only and only the line
  break is removed (``\\n`` or ``\\r\\n``); nothing else (spaces, a lone ``\\r``, a Unicode line
  separator inside a line, a U+FEFF, even one opening the file: sacrebleu keeps it, see
  :mod:`nlp_robustness.fileio.text_files`) is touched, so line ``k`` of the file is segment ``k``. A final line
  without a line break is a segment; an empty file has none.
* **DARR file.** The WMT format: a header ``LP DATA SID BETTER WORSE`` and five fields a row, split
  on runs of white space (the published file uses single spaces). ``DATA`` must be the test set the
  SIDs point into (``newstest2019``); ``SID`` is the 1-based line number of the segment in it. Every
  row is checked, also rows of pairs not asked for (one bad line makes the file suspect); an empty or
  blank line is an error. Duplicate rows are kept (they are judgements, not keys).
* **System names.** A DARR system is the ``<SYSTEM>`` part of its output file name. The official
  WMT19 file writes zh-en systems with the pair appended (``online-A.0.zh-en``; long21wt's scripts
  open such files as ``newstest2019.<name>``), the other pairs without; :func:`darr_system_name`
  strips a trailing ``.<pair>`` from every DARR name, so every pair is handled alike.
* **Consistency.** :func:`check_darr_systems` requires, for every row of a pair, an output file of
  both systems and an SID within the reference's line count; the error names the DARR file, the line
  of the first offending row and what is missing.
* **Sampling** of the judged SIDs of a pair is :func:`nlp_robustness.sampling.sample_sids` (a hash
  rank of (seed, pair, SID), like every nested sample of the package).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines

__all__ = [
    "DARR_COLUMNS",
    "DARR_HEADER",
    "TESTSET",
    "check_darr_systems",
    "darr_system_name",
    "read_darr",
    "read_lines",
    "system_of_output_file",
]

#: The test set of WMT19's to-English DARR judgements; output files start with it.
TESTSET = "newstest2019"
#: The header of a DARR file (WMT format).
DARR_HEADER = ("LP", "DATA", "SID", "BETTER", "WORSE")
#: Columns of :func:`read_darr`'s frame; ``line`` is the row's line number in the DARR file.
DARR_COLUMNS = ("pair", "sid", "better", "worse", "line")


def system_of_output_file(path: str | os.PathLike[str], pair: str, testset: str = TESTSET) -> str:
    """The ``<SYSTEM>`` part of a system-output file name ``<testset>.<SYSTEM>.<pair>``.

    ``newstest2019.MSRA.MASS.6945.lt-en`` gives ``MSRA.MASS.6945`` (system names may hold dots).

    Raises:
        InputError: The file name does not have that form (the message names the file).
    """
    name = os.path.basename(os.fspath(path))
    prefix, suffix = f"{testset}.", f".{pair}"
    if not (name.startswith(prefix) and name.endswith(suffix)) or len(name) <= len(prefix) + len(suffix):
        raise InputError(f"{os.fspath(path)}: not a {pair} system output file name "
                         f"(expected {prefix}<SYSTEM>{suffix})")
    return name[len(prefix):-len(suffix)]


def darr_system_name(name: str, pair: str) -> str:
    """A DARR system name as the ``<SYSTEM>`` of its output file: a trailing ``.<pair>`` removed.

    The official WMT19 DARR file names zh-en systems ``online-A.0.zh-en``, other pairs ``online-A.0``.
    """
    suffix = f".{pair}"
    return name[:-len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name


def read_lines(path: str | os.PathLike[str], expected: int | None = None) -> list[str]:
    """The segments of a one-segment-per-line UTF-8 file, only the line break (``\\n`` or ``\\r\\n``) removed.

    Read by :func:`nlp_robustness.fileio.text_files.read_text_lines` (the project's one line reader) as segments: a
    U+FEFF is kept wherever it stands, the first line's included.

    Raises:
        InputError: The file cannot be read, a line is not valid UTF-8 (the message names the file and
            line), or the file has other than ``expected`` lines (None: any number).
    """
    lines = read_text_lines(path, segments=True)
    if expected is not None and len(lines) != expected:
        raise InputError(f"{os.fspath(path)}: {len(lines)} lines, expected {expected}")
    return lines


def _darr_row(fields: list[str], path: str, number: int, testset: str) -> tuple[str, int, str, str]:
    """One validated DARR row (pair, SID, better, worse), system names as output-file names."""
    if len(fields) != len(DARR_HEADER):
        raise InputError(f"{path}: line {number}: {len(fields)} fields, expected {len(DARR_HEADER)} "
                         f"({' '.join(DARR_HEADER)})")
    pair, data, sid_text, better, worse = fields
    if data != testset:
        raise InputError(f"{path}: line {number}: DATA is {data!r}, expected {testset!r}")
    if not (sid_text.isascii() and sid_text.isdigit()) or int(sid_text) < 1:
        raise InputError(f"{path}: line {number}: SID {sid_text!r} is not an integer >= 1")
    better, worse = darr_system_name(better, pair), darr_system_name(worse, pair)
    if better == worse:
        raise InputError(f"{path}: line {number}: BETTER and WORSE are the same system {better!r}")
    return pair, int(sid_text), better, worse


def read_darr(path: str | os.PathLike[str], pairs: Sequence[str] | None = None,
              testset: str = TESTSET) -> pd.DataFrame:
    """The DARR judgements of a WMT ``RR-seglevel.csv`` file, one row per line, in file order.

    Columns :data:`DARR_COLUMNS`: ``pair`` (the LP field), ``sid`` (int, 1-based line of the segment in
    ``testset``), ``better`` and ``worse`` (system names as in output file names, see
    :func:`darr_system_name`) and ``line`` (the row's line number in the file, for error messages).
    ``pairs``: keep only these language pairs (None: all).

    Raises:
        InputError: A bad header, a line without five fields, a DATA other than ``testset``, an SID that
            is not an integer >= 1, a row whose two systems are the same (the message names the file and
            line), or a requested pair without rows (it names the pair and the file).
    """
    name = os.fspath(path)
    lines = read_text_lines(path, segments=False)  # a header and fields: a U+FEFF opening the file is its signature
    if not lines or tuple(lines[0].split()) != DARR_HEADER:
        found = repr(lines[0]) if lines else "an empty file"
        raise InputError(f"{name}: line 1: header is {found}, expected {' '.join(DARR_HEADER)!r}")
    rows = [_darr_row(line.split(), name, number, testset) + (number,)
            for number, line in enumerate(lines[1:], start=2)]
    frame = pd.DataFrame(rows, columns=list(DARR_COLUMNS))
    frame = frame.astype({"pair": object, "sid": "int64", "better": object, "worse": object, "line": "int64"})
    if pairs is not None:
        present = set(frame["pair"])
        absent = [pair for pair in pairs if pair not in present]
        if absent:
            raise InputError(f"{name}: no DARR rows for pair(s) {', '.join(absent)} "
                             f"(the file has {', '.join(sorted(present)) or 'none'})")
        frame = frame[frame["pair"].isin(list(pairs))].reset_index(drop=True)
    return frame


def check_darr_systems(
    darr: pd.DataFrame,
    outputs: Mapping[str, Collection[str]],
    segments: Mapping[str, int],
    path: str | os.PathLike[str],
) -> None:
    """Check that every DARR row of ``darr`` (from :func:`read_darr`) can be scored.

    ``outputs`` maps a pair to its systems with an output file (a set of names, or a mapping system ->
    file); ``segments`` maps a pair to its reference's line count; ``path`` is the DARR file (named in
    errors). Every BETTER and WORSE system of a row must have an output, and its SID must be within the
    reference.

    Raises:
        InputError: Naming ``path``, the line of the first offending row and the missing system, the
            pair without outputs or reference, or the SID beyond the reference.
    """
    name = os.fspath(path)
    problems: list[tuple[int, str]] = []
    for pair, rows in darr.groupby("pair", sort=False):
        first = int(rows["line"].min())
        if pair not in outputs:
            problems.append((first, f"pair {pair} has no system outputs"))
            continue
        if pair not in segments:
            problems.append((first, f"pair {pair} has no reference"))
            continue
        systems = outputs[pair]
        for column in ("better", "worse"):
            missing = rows[~rows[column].isin(list(systems))]
            if len(missing):
                row = missing.iloc[0]
                problems.append((int(row["line"]), f"{column.upper()} system {row[column]!r} of {pair} has no "
                                 f"output file (outputs of: {', '.join(sorted(systems))})"))
        beyond = rows[rows["sid"] > segments[pair]]
        if len(beyond):
            row = beyond.iloc[0]
            problems.append((int(row["line"]), f"SID {row['sid']} is beyond the {segments[pair]} lines "
                             f"of the {pair} reference"))
    if problems:
        line, message = min(problems)
        raise InputError(f"{name}: line {line}: {message}")
