"""The file formats of parallel test sets: each read into its segments (and, for SGML/XML, their document and
segment ids).

A *test set* is a line-aligned pair of source texts and reference translations. Five file
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
``tsv``
    The MTNT files: one segment per line, fields separated by tabs, no quoting (a ``"`` is text);
    the source and the reference are two columns of the same file (MTNT 1.1: id, source, target;
    MTNT2019: two ids, source, target). Fields are stripped; empty fields are kept.
``plain``
    One segment per line, UTF-8; leading and trailing whitespace of every line is stripped, inner
    whitespace is kept.
``wit3-tags``
    The IWSLT/WIT3 *training* files (``train.tags.en-fr.en``): one segment per line, line-aligned
    across the two languages, with talk metadata on lines of their own that start with a tag
    (``<url>``, ``<keywords>``, ``<talkid>``, ``<title>``, ``<description>``, ``<speaker>``,
    ``<doc ...>``, ...). Those lines are dropped, as fairseq's ``prepare-iwslt14.sh`` does; the rest
    is read like ``plain``.

Unlike sacrebleu, inner runs of whitespace are *not* collapsed in any format (sacrebleu's ``_clean``
turns them into one space); this keeps the texts identical to the mirror's ``derived/`` plain files.

:func:`read_parallel_side` reads one side of a test set in any of the formats of :data:`PARALLEL_FORMATS`;
:mod:`nlp_robustness.data.testsets` aligns two sides into the test-set table.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines

__all__ = [
    "PARALLEL_FORMATS", "SgmlSegment", "read_iwslt_xml", "read_parallel_side", "read_plain_lines", "read_tsv_column",
    "read_wit3_tags", "read_wmt_sgml", "refuse_control_characters",
]

PathLike = str | os.PathLike[str]

#: Formats of parallel files (the manifest's ``format``; ``tsv`` also needs a column per side).
PARALLEL_FORMATS: tuple[str, ...] = ("plain", "wmt-sgml", "iwslt-xml", "tsv", "wit3-tags")

# WMT "fake SGML": sacrebleu keeps lines starting with "<seg " and takes everything between the
# opening tag and the last "</seg>" of the line; document metadata comes from "<doc ...>" lines.
_SGML_DOC_OPEN = re.compile(r"^\s*<doc\b(?P<attributes>[^>]*)>")
_SGML_DOC_CLOSE = re.compile(r"^\s*</doc\s*>")
_SGML_SEG_START = re.compile(r"^\s*<seg\b")
_SGML_SEG = re.compile(r"^\s*<seg\b(?P<attributes>[^>]*)>(?P<text>.*)</seg>\s*$")
_SGML_DOCID = re.compile(r'\bdocid="(?P<value>[^"]*)"')
_SGML_SEGID = re.compile(r'\bid="(?P<value>[^"]*)"')

# C0 control characters but the tab, and DEL. A NUL is most often a binary or corrupt file; a lone carriage
# return, a vertical tab or a form feed ends a line for other readers (Python's universal newlines, which
# fairseq reads with; str.splitlines), so a segment holding one would shift every later line there.
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def refuse_control_characters(lines: list[str], path: PathLike, line_numbers: list[int] | None = None) -> None:
    """Raise :class:`InputError` naming the file, line and column of the first control character in ``lines``
    (C0 controls but the tab, and DEL), if any.

    Args:
        line_numbers: The file line of each of ``lines`` (default: line *i* is ``lines[i - 1]``).
    """
    if _CONTROL_CHARACTER.search("\n".join(lines)) is None:  # one scan of the file in the usual case
        return
    for index, line in enumerate(lines):
        found = _CONTROL_CHARACTER.search(line)
        if found is not None:
            number = line_numbers[index] if line_numbers is not None else index + 1
            character = found.group()
            raise InputError(
                f"{path}: line {number}, column {found.start() + 1}: control character U+{ord(character):04X} "
                f"({_CONTROL_NAMES.get(character, 'a C0 control')}) in a segment; a test-set or hypotheses line holds text only "
                f"(a NUL is most often a binary or corrupt file, and other tools end a line at a carriage return)"
            )


_CONTROL_NAMES = {"\x00": "NUL", "\r": "carriage return", "\x0b": "vertical tab", "\x0c": "form feed", "\x1b": "escape", "\x7f": "DEL"}


@dataclass(frozen=True)
class SgmlSegment:
    """One segment of a WMT SGML or IWSLT XML file.

    Attributes:
        doc_id: The ``docid`` attribute of the enclosing ``<doc>``.
        seg_id: The ``id`` attribute of the ``<seg>`` (numbering usually restarts in every document).
        text: The segment text, leading and trailing whitespace stripped.
        line: The line of the file where the segment starts (0: not known); not compared.
    """

    doc_id: str
    seg_id: str
    text: str
    line: int = field(default=0, compare=False)


# --------------------------------------------------------------------------------------------
# Parsers
# --------------------------------------------------------------------------------------------


def read_plain_lines(path: PathLike) -> list[str]:
    """Read a line-aligned plain-text file: one segment per line.

    The file must be UTF-8. The line terminator and leading/trailing whitespace of each line are
    removed; inner whitespace is kept. Blank lines are kept as empty segments (they hold a position
    in the alignment).

    Raises:
        InputError: The file is missing or unreadable, or a line is not valid UTF-8 (the message
            names the file and the line number), or a line holds a control character
            (:func:`refuse_control_characters`).
    """
    lines = read_text_lines(path, segments=True)
    refuse_control_characters(lines, path)
    return [line.strip() for line in lines]


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
    for number, line in enumerate(read_text_lines(path, segments=False), start=1):  # line 1 is markup
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
        refuse_control_characters([text], path, [number])
        segments.append(SgmlSegment(doc_id=doc_id, seg_id=segid_match.group("value"), text=text, line=number))
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


def read_wit3_tags(path: PathLike) -> list[str]:
    """Read a WIT3 training file: every line that does not start with ``<`` is a segment (stripped).

    Raises:
        InputError: The file is missing or unreadable, or a line is not valid UTF-8.
    """
    return [line.strip() for line in read_text_lines(path, segments=False) if not line.lstrip().startswith("<")]


def read_tsv_column(path: PathLike, column: int) -> list[str]:
    """Read one column (0-based) of a tab-separated file without quoting: one segment per line.

    Every field is stripped of leading and trailing whitespace; empty fields are kept (MTNT2019 has
    empty source or target fields). No quoting rule applies: ``"`` is ordinary text.

    Raises:
        InputError: The file is unreadable or not UTF-8, or a line has no such column (names the
            file, the line and its number of fields).
    """
    values = []
    lines = read_text_lines(path, segments=True)
    refuse_control_characters(lines, path)
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if column >= len(fields):
            raise InputError(f"{path}: line {number}: has {len(fields)} tab-separated field(s), no column {column}")
        values.append(fields[column].strip())
    return values


def read_parallel_side(
    path: PathLike, file_format: str, column: int | None = None
) -> tuple[list[str], list[tuple[str, str]] | None]:
    """Read one side of a test set in one of :data:`PARALLEL_FORMATS`: the texts and, for SGML/XML, the
    (doc_id, seg_id) of each.

    Raises:
        InputError: Unknown format, ``tsv`` without a column, or what the format's reader raises.
    """
    if file_format == "plain":
        return read_plain_lines(path), None
    if file_format == "wit3-tags":
        return read_wit3_tags(path), None
    if file_format == "tsv":
        if column is None:
            raise InputError(f"{path}: format 'tsv' needs the column to read")
        return read_tsv_column(path, column), None
    if file_format == "wmt-sgml":
        segments = read_wmt_sgml(path)
    elif file_format == "iwslt-xml":
        segments = read_iwslt_xml(path)
    else:
        raise InputError(
            f"unknown test-set format {file_format!r} for {path}; expected one of {', '.join(PARALLEL_FORMATS)}"
        )
    return [segment.text for segment in segments], [(segment.doc_id, segment.seg_id) for segment in segments]

