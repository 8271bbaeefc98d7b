"""File helpers: atomic writing (an output appears complete, or not at all), TSV tables of text, summaries."""

from __future__ import annotations

import contextlib
import csv
import glob
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Iterator

import pandas as pd

from nlp_robustness.errors import InputError


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it onto ``path`` only if the block succeeds.

    A failure inside the block removes the temporary file, so no partial output is ever left
    under the final name (Snakemake would otherwise treat a half-written file as up to date); a
    temporary file left by a killed process is removed by the next write of the same path.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    # A run killed while writing (SIGKILL skips the cleanup below) leaves its temporary file; the job
    # that writes ``path`` again removes it (Snakemake runs one job per output at a time).
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.part"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    descriptor, temporary_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        if "b" in mode:
            handle = os.fdopen(descriptor, mode)
        else:
            handle = os.fdopen(descriptor, mode, encoding=encoding, newline="")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary_name)
        raise


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


def read_text_lines(path: str | os.PathLike[str]) -> list[str]:
    """Read a UTF-8 file as lines without their line terminators.

    Lines are split on ``\\n`` only (not with :meth:`str.splitlines`, which would also split on
    U+2028, U+0085 and other characters that may occur inside a segment). A final newline does not
    start an extra line, a UTF-8 byte-order mark at the start of the file is dropped and a ``\\r``
    before the ``\\n`` is removed.

    Raises:
        InputError: The file cannot be read, or a line is not valid UTF-8 (names file and line).
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
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


def markdown_table(table: pd.DataFrame) -> str:
    """A table as GitHub Markdown (``|`` in values escaped)."""
    header = list(table.columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for _, row in table.iterrows():
        lines.append("| " + " | ".join(str(value).replace("|", "\\|") for value in row) + " |")
    return "\n".join(lines) + "\n"


def write_summary_table(table: pd.DataFrame, csv_path: str | os.PathLike[str], markdown_path: str | os.PathLike[str]) -> None:
    """Write a summary table as CSV and as Markdown, each atomically."""
    with atomic_write(csv_path) as handle:
        table.to_csv(handle, index=False, lineterminator="\n")
    with atomic_write(markdown_path) as handle:
        handle.write(markdown_table(table))
