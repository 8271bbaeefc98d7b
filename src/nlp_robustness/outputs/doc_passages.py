"""The passages of a Markdown page and the numbers each prints: what the docs' number check reads.

A page is cut into the blocks a reader sees: headings, paragraphs, list items (a nested item is a passage of its own;
continuation lines join their item), tables (one passage each, header and rows) and fenced code blocks. A passage is
named by its *lead*: its first words as they read (emphasis, backticks, link targets and a list marker or table pipe
dropped); a lead in the sources names the one passage whose words begin with it.

Numbers are read as the pages print them: a sign (``−``, U+2212, or ``+``) and digits with ``,`` thousands and a
``.`` decimal part (``.137`` too); digits glued to a letter, an apostrophe or another number's dot are part of a name
or a version, not numbers (WMT22, β2, WMT'14, 3.8.0, 1e-14, 6.6M), and so is a number that names a paper, an issue,
a table, figure, algorithm or section (paper 000, issue 52, Tables 3/5, Section 4.1). A hex digest of 12 or more hex digits (a
weights digest printed by its first digits) is read as one token too, so a digest in a page needs a source like a
number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Passage", "lead_words", "number_tokens", "passages", "same_token", "table_cells"]

_TOKEN = re.compile(
    r"(?<![\w.'’−+\-])"
    r"(?:(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}"  # a hex digest (letters and digits)
    r"|[−+\-]?(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+))"  # a number as printed
    r"(?![\w'’]|\.\d)"
)
_REFERENCE = re.compile(  # a paper (000-004), an issue, table, figure, algorithm or section by its number
    r"\b([Pp]apers?(?=\s+\d{3}\b)|(?:[Ii]ssue|Table|Figure|Algorithm|Section)s?)"
    r"\s+\d+(?:\.\d+)*(?:\s*[/–]\s*\d+(?:\.\d+)*)*(?![\w'’]|[.,]\d)"
)
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+\.)\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Passage:
    """One block of a page: its kind (heading, paragraph, item, table, code), the line it starts on, its words as
    they read (what a lead is matched against) and its text as printed (what its numbers are read from); a table's
    rows as lists of cells, header first, separator row left out."""

    kind: str
    line: int
    words: tuple[str, ...]
    text: str
    rows: tuple[tuple[str, ...], ...] = ()

    @property
    def lead(self) -> str:
        """Its first six words (how the sources name a passage unless more are needed to tell it apart)."""
        return " ".join(self.words[:6])


def number_tokens(text: str) -> list[str]:
    """The numbers (and hex digests) of ``text`` as printed, in order (module docstring); link targets are not
    read (``[More](x.md#section-2)``)."""
    return _TOKEN.findall(_REFERENCE.sub(r"\1", _without_link_targets(text)))


def same_token(printed: str, expected: str) -> bool:
    """Whether two tokens print the same number at the same precision: ``−`` and ``-`` are one sign, ``.137`` is
    ``0.137``, thin spaces are ignored."""
    return _normal(printed) == _normal(expected)


def _normal(token: str) -> str:
    token = token.replace("−", "-").replace("\u2009", "")
    return re.sub(r"^([+\-]?)\.", r"\g<1>0.", token)


def lead_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as a lead reads them: without emphasis, backticks and link targets."""
    plain = _without_link_targets(text).replace("*", "").replace("`", "")
    return tuple(plain.split())


def _without_link_targets(text: str) -> str:
    return re.sub(r"\]\([^)]*\)", "]", text)


def table_cells(line: str) -> tuple[str, ...]:
    """The cells of a Markdown table row (``\\|`` is a pipe inside a cell), stripped."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return tuple(cell.strip() for cell in re.split(r"(?<!\\)\|", inner))


def _is_separator(cells: tuple[str, ...]) -> bool:
    return all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells)


def passages(markdown: str) -> list[Passage]:
    """The passages of a Markdown page in order (module docstring)."""
    found: list[Passage] = []
    block: list[str] = []
    kind = ""
    start = 0

    def close() -> None:
        nonlocal block
        if block:
            found.append(_passage(kind, start, block))
        block = []

    fence = ""
    for number, line in enumerate(markdown.splitlines(), start=1):
        if fence:
            if line.strip().startswith(fence):
                fence = ""
                close()
            else:
                block.append(line)
            continue
        stripped = line.strip()
        opening = _FENCE.match(line)
        if opening:
            close()
            fence, kind, start = opening.group(1), "code", number + 1
            continue
        if not stripped:
            close()
            continue
        if stripped.startswith("#"):
            close()
            kind, start, block = "heading", number, [stripped.lstrip("#")]
            close()
            continue
        if stripped.startswith("|"):
            if kind != "table" or not block:
                close()
                kind, start = "table", number
            block.append(line)
            continue
        item = _ITEM.match(line)
        if item:
            close()
            kind, start, block = "item", number, [line[item.end():]]
            continue
        if not block or kind in ("table", "heading"):
            close()
            kind, start = "paragraph", number
        block.append(stripped)  # a paragraph's line, or an item's continuation (indented or lazy)
    close()
    return found


def _passage(kind: str, start: int, lines: list[str]) -> Passage:
    if kind == "table":
        rows = tuple(cells for cells in (table_cells(line) for line in lines) if not _is_separator(cells))
        text = "\n".join(" | ".join(cells) for cells in rows)
        return Passage(kind, start, lead_words(text), text, rows)
    text = "\n".join(line.strip() for line in lines) if kind != "code" else "\n".join(lines)
    return Passage(kind, start, lead_words(text), text)
