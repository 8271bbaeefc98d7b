"""The test-set table: a source/reference pair of files read and aligned into it, written and read as TSV, and
the checksums of the files it is read from.

A *test set* is a line-aligned pair of source texts and reference translations; the formats of its files are
read by :mod:`nlp_robustness.data.testset_formats`.

:func:`build_parallel_table` reads a source and a reference file of one format, checks that they
align and returns a table with the columns of :data:`TABLE_COLUMNS`, which :func:`write_testset_table`
and :func:`read_testset_table` store as TSV. Datasets of the manifest are located and verified by
:mod:`nlp_robustness.data.acquisition`; a user-defined pair of files is loaded with :func:`load_parallel_files`.
:mod:`nlp_robustness.data.testset_preparation` turns either into the table that is translated and scored.
"""

from __future__ import annotations

import hashlib
import os

import pandas as pd

from nlp_robustness.data.testset_formats import read_parallel_side
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_table, write_table

__all__ = [
    "FORMATS", "TABLE_COLUMNS", "build_parallel_table", "limit_segments", "load_parallel_files", "read_testset_table",
    "sha256_of", "verify_checksum", "write_testset_table",
]

PathLike = str | os.PathLike[str]

#: Formats of a user-defined test set (config ``testsets.<name>.format``): one file per side.
FORMATS: tuple[str, ...] = ("plain", "wmt-sgml", "iwslt-xml")

#: Columns of a test-set table, in order.
TABLE_COLUMNS: tuple[str, ...] = ("segment_id", "doc_id", "source", "reference")

_HASH_CHUNK_BYTES = 1 << 20


# --------------------------------------------------------------------------------------------
# Checksums and loading test sets
# --------------------------------------------------------------------------------------------


def sha256_of(path: PathLike) -> str:
    """The sha256 of a file, read in chunks.

    Raises:
        InputError: The file is missing or unreadable (names it).
    """
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_HASH_CHUNK_BYTES):
                digest.update(chunk)
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    return digest.hexdigest()


def verify_checksum(path: PathLike, expected_sha256: str, *, dataset: str | None = None) -> None:
    """Check that the sha256 of ``path`` is ``expected_sha256``.

    Raises:
        InputError: The file is missing or unreadable, or its sha256 differs (names the file, the
            dataset when given, and both digests).
    """
    context = f" (dataset {dataset})" if dataset is not None else ""
    try:
        actual = sha256_of(path)
    except InputError as error:
        raise InputError(f"{error}{context}") from None
    if actual != expected_sha256.lower():
        raise InputError(
            f"checksum mismatch for {path}{context}: expected sha256 {expected_sha256}, found {actual}"
        )


def build_parallel_table(
    source_path: PathLike,
    reference_path: PathLike,
    file_format: str,
    *,
    source_column: int | None = None,
    reference_column: int | None = None,
) -> pd.DataFrame:
    """Read, align-check and tabulate a source/reference pair (no checksum or count checks).

    Args:
        source_path: Source-language file.
        reference_path: Reference file (the same file as ``source_path`` for ``tsv``).
        file_format: One of :data:`~nlp_robustness.data.testset_formats.PARALLEL_FORMATS`.
        source_column, reference_column: The columns to read (``tsv`` only).

    Returns:
        A table with the columns of :data:`TABLE_COLUMNS` (all strings); ``segment_id`` is the
        1-based position, ``doc_id`` is ``""`` for ``plain`` and ``tsv``.

    Raises:
        InputError: Unknown format, unreadable or malformed file, different segment counts or
            (SGML/XML) different doc/seg ids, or no segment at all.
    """
    source_texts, source_ids = read_parallel_side(source_path, file_format, source_column)
    reference_texts, reference_ids = read_parallel_side(reference_path, file_format, reference_column)
    if len(source_texts) != len(reference_texts):
        raise InputError(
            f"source and reference differ in length: {source_path} has {len(source_texts)} segments, "
            f"{reference_path} has {len(reference_texts)}"
        )
    if source_ids is not None and reference_ids is not None and source_ids != reference_ids:
        position = next(i for i, (a, b) in enumerate(zip(source_ids, reference_ids)) if a != b)
        (source_doc, source_seg), (reference_doc, reference_seg) = source_ids[position], reference_ids[position]
        raise InputError(
            f"source and reference are not aligned at segment {position + 1}: {source_path} has "
            f"doc {source_doc!r} seg {source_seg!r}, {reference_path} has doc {reference_doc!r} seg {reference_seg!r}"
        )
    if not source_texts:
        raise InputError(f"empty test set: no segments in {source_path} and {reference_path}")
    doc_ids = [doc for doc, _ in source_ids] if source_ids is not None else [""] * len(source_texts)
    return pd.DataFrame(
        {
            "segment_id": [str(position) for position in range(1, len(source_texts) + 1)],
            "doc_id": doc_ids,
            "source": source_texts,
            "reference": reference_texts,
        },
        dtype=str,
    )


def limit_segments(frame: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    """The first ``limit`` rows of a table (all of them for ``None``), renumbered from 0."""
    if limit is None:
        return frame
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"segment limit must be a positive integer or None, got {limit!r}")
    return frame.iloc[:limit].reset_index(drop=True)


def load_parallel_files(
    source_path: PathLike,
    reference_path: PathLike,
    format: str,
    limit: int | None = None,
) -> pd.DataFrame:
    """Load a user-defined test set (not in the manifest) from a source and a reference file.

    Args:
        source_path: Source-language file.
        reference_path: Reference-translation file, in the same format.
        format: One of :data:`FORMATS`.
        limit: Keep only the first ``limit`` segments (``None`` keeps all).

    Returns:
        A table with the columns of :data:`TABLE_COLUMNS` (all strings); ``segment_id`` is the
        1-based position, ``doc_id`` is ``""`` for ``plain``.

    Raises:
        InputError: Unknown format, unreadable or malformed file, different segment counts or
            (SGML/XML) different doc/seg ids, or no segment at all.
    """
    if format not in FORMATS:
        raise InputError(f"unknown test-set format {format!r} for {source_path}; expected one of {', '.join(FORMATS)}")
    return limit_segments(build_parallel_table(source_path, reference_path, format), limit)


# --------------------------------------------------------------------------------------------
# Test-set table (TSV)
# --------------------------------------------------------------------------------------------


def write_testset_table(frame: pd.DataFrame, path: PathLike) -> None:
    """Write a test-set table (columns :data:`TABLE_COLUMNS` first) as TSV, atomically (see :func:`~nlp_robustness.fileio.text_files.write_table`)."""
    write_table(frame, path, TABLE_COLUMNS)


def read_testset_table(path: PathLike) -> pd.DataFrame:
    """Read a table written by :func:`write_testset_table`; every column is read as strings.

    Raises:
        InputError: The file is missing, unreadable, not a valid TSV, lacks a column of
            :data:`TABLE_COLUMNS`, or has no rows.
    """
    return read_table(path, TABLE_COLUMNS, "test-set table")
