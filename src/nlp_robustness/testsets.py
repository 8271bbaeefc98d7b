"""Test-set parsing: the dataset manifest, the mirror's file formats and the test-set table.

A *test set* is a line-aligned pair of source texts and reference translations. Three file
formats are read:

``wmt-sgml``
    The "fake SGML" of the WMT news tasks up to 2020 (one ``<seg id="N">...</seg>`` per line inside
    ``<doc docid="...">`` blocks). It is not valid XML: it holds raw ``&`` characters, so it is read
    line by line with regular expressions, as sacrebleu does. Like sacrebleu, nothing is unescaped:
    the text between the tags is kept verbatim apart from stripping leading and trailing whitespace.
``iwslt-xml``
    The IWSLT/WIT3 test-set files: valid XML (mteval style) with ``<doc docid>`` and ``<seg id>``.
    They are read with :mod:`xml.etree.ElementTree`, so XML entities are decoded; leading and
    trailing whitespace of every segment is stripped.
``plain``
    One segment per line, UTF-8; leading and trailing whitespace of every line is stripped, inner
    whitespace is kept.

Unlike sacrebleu, inner runs of whitespace are *not* collapsed in any format (sacrebleu's ``_clean``
turns them into one space); this keeps the texts identical to the mirror's ``derived/`` plain files.

Datasets of the manifest (``resources/datasets.yaml``) are loaded with :func:`load_parallel_testset`,
which verifies the sha256 of every mirror file, the alignment of source and reference and the
expected segment count. A user-defined pair of files is loaded with :func:`load_parallel_files`.
Either returns a table with the columns of :data:`TABLE_COLUMNS`, which
:func:`write_testset_table` and :func:`read_testset_table` store as TSV.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pandas as pd
import yaml

from nlp_robustness.errors import InputError
from nlp_robustness.fileio import atomic_write

PathLike = str | os.PathLike[str]

#: File formats understood by :func:`load_parallel_files` and the manifest's ``format`` key.
FORMATS: tuple[str, ...] = ("plain", "wmt-sgml", "iwslt-xml")

#: Columns of a test-set table, in order.
TABLE_COLUMNS: tuple[str, ...] = ("segment_id", "doc_id", "source", "reference")

_SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")
_MD5_PATTERN = re.compile(r"^[0-9a-f]{32}$")

# WMT "fake SGML": sacrebleu keeps lines starting with "<seg " and takes everything between the
# opening tag and the last "</seg>" of the line; document metadata comes from "<doc ...>" lines.
_SGML_DOC_OPEN = re.compile(r"^\s*<doc\b(?P<attributes>[^>]*)>")
_SGML_DOC_CLOSE = re.compile(r"^\s*</doc\s*>")
_SGML_SEG_START = re.compile(r"^\s*<seg\b")
_SGML_SEG = re.compile(r"^\s*<seg\b(?P<attributes>[^>]*)>(?P<text>.*)</seg>\s*$")
_SGML_DOCID = re.compile(r'\bdocid="(?P<value>[^"]*)"')
_SGML_SEGID = re.compile(r'\bid="(?P<value>[^"]*)"')

_HASH_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class SgmlSegment:
    """One segment of a WMT SGML or IWSLT XML file.

    Attributes:
        doc_id: The ``docid`` attribute of the enclosing ``<doc>``.
        seg_id: The ``id`` attribute of the ``<seg>`` (numbering usually restarts in every document).
        text: The segment text, leading and trailing whitespace stripped.
    """

    doc_id: str
    seg_id: str
    text: str


@dataclass(frozen=True)
class FileSpec:
    """One file of a manifest dataset.

    Attributes:
        path: Path relative to the mirror directory.
        sha256: Expected sha256 of the mirror file (64 lowercase hex digits).
        url: Canonical URL of exactly this file, or of the archive holding it (``archive_member``).
        archive_member: Path of the file inside the archive at ``url``; ``None`` when ``url`` is
            the file itself.
    """

    path: str
    sha256: str
    url: str
    archive_member: str | None = None


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of the manifest (``resources/datasets.yaml``).

    Attributes:
        key: The manifest key, e.g. ``"wmt14-newstest2014-enfr"``.
        description: Free text.
        domain: Test domain, e.g. ``"news"``.
        licence: Licence or terms of use of the data.
        segments: Expected number of segments.
        format: One of :data:`FORMATS`.
        source_language: ISO 639-1 code of the source side.
        target_language: ISO 639-1 code of the reference side.
        source: The source-language file.
        reference: The reference-translation file.
        upstream: The official distribution (release, archives, md5, member paths, notes), as
            written in the manifest.
    """

    key: str
    description: str
    domain: str
    licence: str
    segments: int
    format: str
    source_language: str
    target_language: str
    source: FileSpec
    reference: FileSpec
    upstream: Mapping[str, Any]


# --------------------------------------------------------------------------------------------
# Parsers
# --------------------------------------------------------------------------------------------


def _read_lines(path: PathLike) -> list[str]:
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


def read_plain_lines(path: PathLike) -> list[str]:
    """Read a line-aligned plain-text file: one segment per line.

    The file must be UTF-8. The line terminator and leading/trailing whitespace of each line are
    removed; inner whitespace is kept. Blank lines are kept as empty segments (they hold a position
    in the alignment).

    Raises:
        InputError: The file is missing or unreadable, or a line is not valid UTF-8 (the message
            names the file and the line number).
    """
    return [line.strip() for line in _read_lines(path)]


def read_wmt_sgml(path: PathLike) -> list[SgmlSegment]:
    """Read a WMT "fake SGML" file (e.g. ``newstest2014-fren-src.en.sgm``).

    Every line starting with ``<seg`` must be one whole ``<seg id="...">text</seg>`` inside a
    ``<doc docid="...">`` block. The text is taken verbatim (no entity is unescaped, as in
    sacrebleu; the WMT files hold raw ``&``) and stripped of leading and trailing whitespace.

    Raises:
        InputError: The file is unreadable or not UTF-8, a ``<seg>`` line is malformed, lacks an
            ``id``, lies outside a ``<doc>``, or a ``<doc>`` lacks a ``docid`` (names file and line).
    """
    segments: list[SgmlSegment] = []
    doc_id: str | None = None
    for number, line in enumerate(_read_lines(path), start=1):
        doc_match = _SGML_DOC_OPEN.match(line)
        if doc_match is not None:
            docid_match = _SGML_DOCID.search(doc_match.group("attributes"))
            if docid_match is None:
                raise InputError(f"{path}: line {number}: <doc> without a docid attribute")
            doc_id = docid_match.group("value")
            continue
        if _SGML_DOC_CLOSE.match(line):
            doc_id = None
            continue
        if not _SGML_SEG_START.match(line):
            continue
        seg_match = _SGML_SEG.match(line)
        if seg_match is None:
            raise InputError(f"{path}: line {number}: <seg> line without a closing </seg> on the same line")
        segid_match = _SGML_SEGID.search(seg_match.group("attributes"))
        if segid_match is None:
            raise InputError(f"{path}: line {number}: <seg> without an id attribute")
        if doc_id is None:
            raise InputError(f"{path}: line {number}: <seg> outside a <doc docid=...> block")
        text = seg_match.group("text").strip()
        segments.append(SgmlSegment(doc_id=doc_id, seg_id=segid_match.group("value"), text=text))
    return segments


def read_iwslt_xml(path: PathLike) -> list[SgmlSegment]:
    """Read an IWSLT/WIT3 XML test-set file (e.g. ``IWSLT17.TED.tst2017.en-fr.en.xml``).

    The file is parsed as XML, so entities such as ``&amp;`` are decoded. Segments are the
    ``<seg id>`` elements of every ``<doc docid>``, in document order; the text (including that of
    any nested element) is stripped of leading and trailing whitespace.

    Raises:
        InputError: The file is unreadable or not well-formed XML (names file, line and column), a
            ``<doc>`` lacks ``docid``, a ``<seg>`` lacks ``id`` or lies outside every ``<doc>``.
    """
    try:
        root = ElementTree.parse(path).getroot()
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except ElementTree.ParseError as error:
        line, column = error.position
        raise InputError(f"{path}: line {line}, column {column}: not well-formed XML ({error})") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None

    segments: list[SgmlSegment] = []
    for doc_number, doc in enumerate(root.iter("doc"), start=1):
        doc_id = doc.get("docid")
        if doc_id is None:
            raise InputError(f"{path}: <doc> number {doc_number} has no docid attribute")
        for seg in doc.iter("seg"):
            seg_id = seg.get("id")
            if seg_id is None:
                raise InputError(f"{path}: document {doc_id!r}: <seg> without an id attribute")
            segments.append(SgmlSegment(doc_id=doc_id, seg_id=seg_id, text="".join(seg.itertext()).strip()))
    total = sum(1 for _ in root.iter("seg"))
    if total != len(segments):
        raise InputError(f"{path}: {total - len(segments)} <seg> element(s) outside every <doc docid=...>")
    return segments


# --------------------------------------------------------------------------------------------
# Manifest
# --------------------------------------------------------------------------------------------

_DATASET_KEYS = {
    "description": str,
    "domain": str,
    "licence": str,
    "segments": int,
    "format": str,
    "source_language": str,
    "target_language": str,
    "files": dict,
    "upstream": dict,
}
_FILE_KEYS_REQUIRED = ("path", "sha256", "url")
_FILE_KEYS_OPTIONAL = ("archive_member",)
_UPSTREAM_FILE_KEYS_REQUIRED = ("archive", "md5")
_UPSTREAM_FILE_KEYS_OPTIONAL = ("member",)


def _require_text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _check_keys(mapping: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...], where: str) -> None:
    missing = [key for key in required if key not in mapping]
    if missing:
        raise InputError(f"{where}: missing key(s) {', '.join(missing)}")
    unknown = sorted(str(key) for key in mapping if key not in required and key not in optional)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")


def _parse_file_spec(value: Any, where: str) -> FileSpec:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a mapping with keys {', '.join(_FILE_KEYS_REQUIRED)}")
    _check_keys(value, _FILE_KEYS_REQUIRED, _FILE_KEYS_OPTIONAL, where)
    path = _require_text(value["path"], f"{where}.path")
    relative = Path(path)
    if relative.is_absolute() or ".." in relative.parts:
        raise InputError(f"{where}.path: must be relative to mirror_dir without '..', got {path!r}")
    sha256 = value["sha256"]
    if not isinstance(sha256, str) or not _SHA256_PATTERN.match(sha256):
        raise InputError(f"{where}.sha256: expected 64 lowercase hex digits, got {sha256!r}")
    url = _require_text(value["url"], f"{where}.url")
    member = value.get("archive_member")
    if member is not None:
        member = _require_text(member, f"{where}.archive_member")
    return FileSpec(path=path, sha256=sha256, url=url, archive_member=member)


def _validate_upstream(value: Mapping[str, Any], where: str) -> None:
    missing = [key for key in ("release", "source", "reference") if key not in value]
    if missing:
        raise InputError(f"{where}: missing key(s) {', '.join(missing)}")
    _require_text(value["release"], f"{where}.release")
    for side in ("source", "reference"):
        entry = value.get(side)
        side_where = f"{where}.{side}"
        if not isinstance(entry, dict):
            raise InputError(f"{side_where}: expected a mapping with keys archive, md5[, member]")
        _check_keys(entry, _UPSTREAM_FILE_KEYS_REQUIRED, _UPSTREAM_FILE_KEYS_OPTIONAL, side_where)
        _require_text(entry["archive"], f"{side_where}.archive")
        md5 = entry["md5"]
        if md5 is not None and (not isinstance(md5, str) or not _MD5_PATTERN.match(md5)):
            raise InputError(f"{side_where}.md5: expected 32 lowercase hex digits or null, got {md5!r}")
        if entry.get("member") is not None:
            _require_text(entry["member"], f"{side_where}.member")


def _parse_dataset(key: str, entry: Any, manifest: PathLike) -> DatasetSpec:
    where = f"{manifest}: dataset {key!r}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a mapping")
    _check_keys(entry, tuple(_DATASET_KEYS), (), where)
    for name, expected_type in _DATASET_KEYS.items():
        value = entry[name]
        if expected_type is int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{where}: key 'segments' must be a positive integer, got {value!r}")
        elif expected_type is str:
            _require_text(value, f"{where}: key {name!r}")
        elif not isinstance(value, expected_type):
            raise InputError(f"{where}: key {name!r} must be a mapping")
    if entry["format"] not in FORMATS:
        raise InputError(f"{where}: key 'format' must be one of {', '.join(FORMATS)}, got {entry['format']!r}")
    files = entry["files"]
    _check_keys(files, ("source", "reference"), (), f"{where}: files")
    _validate_upstream(entry["upstream"], f"{where}: upstream")
    return DatasetSpec(
        key=key,
        description=entry["description"],
        domain=entry["domain"],
        licence=entry["licence"],
        segments=entry["segments"],
        format=entry["format"],
        source_language=entry["source_language"],
        target_language=entry["target_language"],
        source=_parse_file_spec(files["source"], f"{where}: files.source"),
        reference=_parse_file_spec(files["reference"], f"{where}: files.reference"),
        upstream=entry["upstream"],
    )


def load_manifest(path: PathLike) -> dict[str, DatasetSpec]:
    """Load and validate the dataset manifest.

    The manifest is a YAML mapping from dataset key to an entry with the keys ``description``,
    ``domain``, ``licence``, ``segments``, ``format``, ``source_language``, ``target_language``,
    ``files`` (``source``/``reference``, each with ``path``, ``sha256``, ``url`` and optionally
    ``archive_member``) and ``upstream`` (``release`` plus ``source``/``reference`` each with
    ``archive``, ``md5`` (or null) and optionally ``member``; other keys are free-form notes).

    Returns:
        The datasets by key, in manifest order.

    Raises:
        InputError: The file is missing or not YAML (names the line), or an entry is invalid (names
            the dataset key and the offending key).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"dataset manifest not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read dataset manifest {path}: {error}") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        location = f" line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}:{location} invalid YAML: {error}") from None
    if not isinstance(document, dict) or not document:
        raise InputError(f"{path}: the manifest must be a non-empty mapping from dataset key to entry")
    return {str(key): _parse_dataset(str(key), entry, path) for key, entry in document.items()}


# --------------------------------------------------------------------------------------------
# Loading test sets
# --------------------------------------------------------------------------------------------


def verify_checksum(
    path: PathLike,
    expected_sha256: str,
    *,
    dataset: str | None = None,
    mirror_dir: PathLike | None = None,
) -> None:
    """Check that the sha256 of ``path`` is ``expected_sha256``.

    ``dataset`` and ``mirror_dir`` only enrich the error messages (which dataset of the manifest the
    file belongs to and where the mirror was looked for).

    Raises:
        InputError: The file is missing or unreadable ("mirror file not found: <path> (dataset <key>,
            mirror_dir <dir>)" when ``dataset`` is given), or its sha256 differs (names the file and
            both digests).
    """
    context = ""
    if dataset is not None:
        context = f" (dataset {dataset}" + (f", mirror_dir {mirror_dir})" if mirror_dir is not None else ")")
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_HASH_CHUNK_BYTES):
                digest.update(chunk)
    except FileNotFoundError:
        prefix = "mirror file not found" if dataset is not None else "file not found"
        raise InputError(f"{prefix}: {path}{context}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}{context}: {error.strerror or error}") from None
    actual = digest.hexdigest()
    if actual != expected_sha256.lower():
        raise InputError(
            f"checksum mismatch for {path}{context}: expected sha256 {expected_sha256}, found {actual}"
        )


def _read_side(path: PathLike, file_format: str) -> tuple[list[str], list[tuple[str, str]] | None]:
    """Read one side of a test set: the texts and, for SGML/XML, the (doc_id, seg_id) of each."""
    if file_format == "plain":
        return read_plain_lines(path), None
    if file_format == "wmt-sgml":
        segments = read_wmt_sgml(path)
    elif file_format == "iwslt-xml":
        segments = read_iwslt_xml(path)
    else:
        raise InputError(f"unknown test-set format {file_format!r} for {path}; expected one of {', '.join(FORMATS)}")
    return [segment.text for segment in segments], [(segment.doc_id, segment.seg_id) for segment in segments]


def _build_frame(
    source_path: PathLike,
    reference_path: PathLike,
    file_format: str,
) -> pd.DataFrame:
    """Read, align-check and tabulate a source/reference pair (no checksum or count checks)."""
    source_texts, source_ids = _read_side(source_path, file_format)
    reference_texts, reference_ids = _read_side(reference_path, file_format)
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


def _apply_limit(frame: pd.DataFrame, limit: int | None) -> pd.DataFrame:
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
    return _apply_limit(_build_frame(source_path, reference_path, format), limit)


def load_parallel_testset(
    spec: DatasetSpec,
    mirror_dir: PathLike,
    limit: int | None = None,
) -> pd.DataFrame:
    """Load a manifest dataset from the offline mirror, verifying it first.

    The sha256 of both files is checked, then the source and reference alignment and the segment
    count against ``spec.segments``; ``limit`` is applied only after these checks, so a subset is
    always drawn from a verified test set.

    Args:
        spec: The dataset, from :func:`load_manifest`.
        mirror_dir: Directory holding the mirror; ``spec.source.path`` etc. are relative to it.
        limit: Keep only the first ``limit`` segments (``None`` keeps all).

    Returns:
        A table with the columns of :data:`TABLE_COLUMNS` (see :func:`load_parallel_files`).

    Raises:
        InputError: A file is missing ("mirror file not found: ..."), its checksum differs, the
            sides are misaligned, or the segment count differs from the manifest.
    """
    mirror = Path(mirror_dir)
    source_path = mirror / spec.source.path
    reference_path = mirror / spec.reference.path
    for file_path, file_spec in ((source_path, spec.source), (reference_path, spec.reference)):
        verify_checksum(file_path, file_spec.sha256, dataset=spec.key, mirror_dir=mirror_dir)
    frame = _build_frame(source_path, reference_path, spec.format)
    if len(frame) != spec.segments:
        raise InputError(
            f"dataset {spec.key}: {source_path} has {len(frame)} segments but the manifest expects {spec.segments}"
        )
    return _apply_limit(frame, limit)


# --------------------------------------------------------------------------------------------
# Test-set table (TSV)
# --------------------------------------------------------------------------------------------


def write_testset_table(frame: pd.DataFrame, path: PathLike) -> None:
    """Write a test-set table as UTF-8 TSV with a header, atomically.

    Fields holding a tab, a quote or a line break are quoted CSV-style (``"..."`` with inner quotes
    doubled), so any text survives the round trip through :func:`read_testset_table`; columns beyond
    :data:`TABLE_COLUMNS` are written after them.

    Raises:
        ValueError: A required column is missing or holds a missing value.
    """
    missing = [column for column in TABLE_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"test-set table for {path} lacks column(s) {', '.join(missing)}")
    columns = list(TABLE_COLUMNS) + [column for column in frame.columns if column not in TABLE_COLUMNS]
    if frame[list(TABLE_COLUMNS)].isna().any().any():
        raise ValueError(f"test-set table for {path} has missing values in {', '.join(TABLE_COLUMNS)}")
    with atomic_write(path) as handle:
        frame.to_csv(
            handle,
            sep="\t",
            columns=columns,
            index=False,
            quoting=csv.QUOTE_MINIMAL,
            quotechar='"',
            doublequote=True,
            lineterminator="\n",
        )


def read_testset_table(path: PathLike) -> pd.DataFrame:
    """Read a table written by :func:`write_testset_table`; every column is read as strings.

    No value is turned into a missing value: ``"NA"``, ``"null"`` and ``""`` stay strings.

    Raises:
        InputError: The file is missing, unreadable, not a valid TSV, lacks a column of
            :data:`TABLE_COLUMNS`, or has no rows.
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
        raise InputError(f"test-set table not found: {path}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not a valid test-set table: {error}") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    missing = [column for column in TABLE_COLUMNS if column not in frame.columns]
    if missing:
        raise InputError(f"{path}: test-set table lacks column(s) {', '.join(missing)}")
    if frame.empty:
        raise InputError(f"{path}: empty test-set table (header only)")
    return frame
