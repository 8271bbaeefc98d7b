"""Files of text read and written the one way: lines of segments, TSV tables of text, numbers, JSON records.

Tables and lines are written atomically (:func:`nlp_robustness.fileio.atomic.atomic_write`).

U+FEFF (the byte-order mark, ZERO WIDTH NO-BREAK SPACE) that stands in a segment is text, on the first line as on
any other: :func:`read_text_lines` with ``segments=True`` keeps every one, so a segment reaches the scorer as
written. This is what sacrebleu does, whose BLEU the organisers publish: it reads WMT XML with lxml and writes
each segment through ``Dataset._clean`` (``sacrebleu/dataset/wmt_xml.py``, ``WMTXMLDataset.process_to_text`` and
``_unwrap_wmt21_or_later``; ``sacrebleu/dataset/base.py``, ``_clean`` is ``re.sub(r"\\s+", " ", s.strip())``, and
U+FEFF is no whitespace to Python), and it opens plain files with ``utils.smart_open`` as ``utf-8``, not
``utf-8-sig``, so even a U+FEFF opening a hypotheses file stays in its first segment (sacrebleu 2.6.0). Dropping
it from line 1 only, as this module once did, gave that segment another sentence BLEU than sacrebleu's, and the
file another corpus BLEU (issue 54). The one U+FEFF that is not text is the UTF-8 signature opening a file
whose first line holds no segment (a header, a number, an id, markup): ``segments=False`` drops it there, as an
XML parser drops it before ``<?xml``, and as pandas drops it before a table's header (:func:`read_table`); a
U+FEFF anywhere else in such a file is kept, and fails as the malformed field it is.
"""

from __future__ import annotations

import codecs
import csv
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write

__all__ = ["FIELDS_ENCODING", "finite_number", "read_json_records", "read_table", "read_text_lines", "write_lines", "write_table"]

def write_lines(lines: list[str], path: str | os.PathLike[str]) -> None:
    """Write one segment per line, atomically; a segment holding a newline would misalign the file."""
    for number, line in enumerate(lines, start=1):
        if "\n" in line or "\r" in line:
            raise ValueError(f"{path}: segment {number} contains a line break")
    with atomic_write(path) as handle:
        handle.writelines(f"{line}\n" for line in lines)


def write_table(frame: pd.DataFrame, path: str | os.PathLike[str], columns: Sequence[str]) -> None:
    """Write a table of text as UTF-8 TSV with a header, atomically.

    ``columns`` come first, in that order, then any other column of ``frame``. Fields holding a tab,
    a quote or a line break are quoted CSV-style (``"..."`` with inner quotes doubled), so any text
    survives the round trip through :func:`read_table`.

    Raises:
        ValueError: A column of ``columns`` is missing or holds a missing value.
    """
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"table for {path} lacks column(s) {', '.join(missing)}")
    if frame[list(columns)].isna().any().any():
        raise ValueError(f"table for {path} has missing values in {', '.join(columns)}")
    ordered = list(columns) + [column for column in frame.columns if column not in columns]
    with atomic_write(path) as handle:
        frame.to_csv(
            handle,
            sep="\t",
            columns=ordered,
            index=False,
            quoting=csv.QUOTE_MINIMAL,
            quotechar='"',
            doublequote=True,
            lineterminator="\n",
        )


def read_table(path: str | os.PathLike[str], columns: Sequence[str], what: str = "table") -> pd.DataFrame:
    """Read a table written by :func:`write_table`; every column is read as strings.

    No value is turned into a missing value: ``"NA"``, ``"null"`` and ``""`` stay strings.

    Raises:
        InputError: The file is missing, unreadable, not a valid TSV, lacks one of ``columns``, or
            has no rows (``what`` names the kind of table in the message).
    """
    import pandas as pd  # here only: jobs that read no table (translation, downloads) start without pandas

    try:
        frame = pd.read_csv(
            path,
            sep="\t",
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            quoting=csv.QUOTE_MINIMAL,
            quotechar='"',
            doublequote=True,
            skip_blank_lines=False,
            encoding="utf-8",
            engine="c",
        )
    except FileNotFoundError:
        raise InputError(f"{what} not found: {path}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not a valid {what}: {error}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError(f"{path}: {what} lacks column(s) {', '.join(missing)}")
    if frame.empty:
        raise InputError(f"{path}: empty {what} (header only)")
    return frame


def finite_number(path: str | os.PathLike[str], line: int, what: str, text: str, hint: str = "") -> float:
    """``text`` (a field of line ``line`` of ``path``) as a finite float.

    Raises:
        InputError: The field is not a number, or not a finite one; the message names the file, the line and ``what``
            the field is (``hint``, e.g. how a missing value is written, follows the first case).
    """
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{path}: line {line}: {what} {text!r} is not a number{hint}") from None
    if not math.isfinite(value):
        raise InputError(f"{path}: line {line}: {what} {text!r} is not a finite number")
    return value


#: The codec of a file of fields read by another parser (``csv``): UTF-8 whose opening signature is dropped, as
#: ``read_text_lines(path, segments=False)`` drops it (see the module docstring).
FIELDS_ENCODING = "utf-8-sig"


def read_text_lines(path: str | os.PathLike[str], *, segments: bool) -> list[str]:
    """Read a UTF-8 file as lines without their line terminators.

    Lines are split on ``\\n`` only (not with :meth:`str.splitlines`, which would also split on
    U+2028, U+0085 and other characters that may occur inside a segment). A final newline does not
    start an extra line, and a ``\\r`` before the ``\\n`` is removed.

    Args:
        path: The file.
        segments: Whether the file's lines are (or hold) segments, which reach a scorer as written: then every
            U+FEFF is kept, the one opening the file included, as sacrebleu keeps it (module docstring). ``False``
            for a file of fields, numbers or markup (scores, ids, a header, tag lines): a U+FEFF opening it is its
            UTF-8 signature and is dropped; one anywhere else is kept.

    Raises:
        InputError: The file cannot be read, or a line is not valid UTF-8 (names file and line).
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if not segments:
        data = data.removeprefix(codecs.BOM_UTF8)  # U+FEFF, the signature some editors write
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines: list[str] = []
    for number, raw in enumerate(raw_lines, start=1):
        try:
            line = raw.decode("utf-8", errors="strict")
        except UnicodeDecodeError as error:
            raise InputError(
                f"{path}: line {number}: invalid UTF-8 ({error.reason} at byte {error.start} of the line)"
            ) from None
        lines.append(line.removesuffix("\r"))
    return lines


def read_json_records(paths: Sequence[str | os.PathLike[str]]) -> list[dict]:
    """One JSON object per file, in the order of ``paths`` (the per-item records that summaries join)."""
    records = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            records.append(json.load(handle))
    return records
