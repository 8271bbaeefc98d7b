"""spaCy parses as plain, typed data: what the word-order perturbations read, cached on disk as a TSV.

The perturbation functions never touch spaCy: each side of a sample is parsed once
(:func:`~nlp_robustness.perturbations.spacy_parsing.parse_texts`, which also drops
whitespace tokens), converted to :class:`ParsedSegment` (tokens with their Universal POS tag,
dependency label, head, sentence and noun chunk), and written as a readable table
(:func:`write_parse_table`, one row per token, columns :data:`PARSE_COLUMNS`) that every function's
job reads back (:func:`read_parse_table`). The tests build segments by hand, without a model.

Whitespace after a token
    Each token records whether whitespace followed it in the text (``space_after``; a dropped whitespace
    token counts as whitespace), so a family that rewrites a text rather than permuting tokens (the
    structure family) rebuilds it detokenised: a run of whitespace becomes one space. Tables written
    before the column existed are read with whitespace after every token.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_table, write_table

__all__ = ["PARSE_COLUMNS", "ParsedSegment", "ParsedToken", "read_parse_table", "write_parse_table"]

#: Columns of a parse table, in order: one row per token; ``token`` is its index within the segment.
PARSE_COLUMNS: tuple[str, ...] = ("segment_id", "token", "sentence", "text", "pos", "dep", "head", "noun_chunk", "space_after")
#: The columns a table must have: ``space_after`` is optional (older tables lack it; read as 1).
_REQUIRED_COLUMNS: tuple[str, ...] = PARSE_COLUMNS[:-1]


@dataclass(frozen=True)
class ParsedToken:
    """One token of a parsed segment.

    Attributes:
        text: The token's text (never empty or whitespace only).
        pos: Universal POS tag (spaCy ``token.pos_``).
        dep: Dependency label (spaCy ``token.dep_``).
        head: Index of its head among the segment's tokens; a root points to itself.
        sentence: 0-based number of its sentence within the segment.
        noun_chunk: 0-based number of the noun chunk holding it, -1 if none.
        space_after: Whether whitespace followed it in the text (spaCy ``token.whitespace_``).
    """

    text: str
    pos: str
    dep: str
    head: int
    sentence: int
    noun_chunk: int
    space_after: bool = True


@dataclass(frozen=True)
class ParsedSegment:
    """A segment's tokens in order.

    Checked on construction (:class:`ValueError` otherwise): texts are not whitespace only; heads are
    token indices and lead from every token to a root (no cycle); sentences are numbered 0, 1, ... in
    order and each is a contiguous run; noun chunks likewise (-1 outside any chunk). A head may lie in
    another sentence (spaCy's parser never does this): the functions then treat the token as a root of
    its own sentence.
    """

    segment_id: str
    tokens: tuple[ParsedToken, ...]

    def __post_init__(self) -> None:
        problem = _structure_problem(self.tokens)
        if problem is not None:
            raise ValueError(f"segment {self.segment_id!r}: {problem}")

    def words(self) -> list[str]:
        """The token texts."""
        return [token.text for token in self.tokens]

    def text(self) -> str:
        """The segment as its tokens with the whitespace that followed each (one space per run)."""
        return "".join(token.text + (" " if token.space_after else "") for token in self.tokens).rstrip(" ")

    def sentences(self) -> list[range]:
        """The token indices of each sentence, in order."""
        return _runs([token.sentence for token in self.tokens])

    def noun_chunks(self) -> list[range]:
        """The token indices of each noun chunk, in order."""
        return _runs([token.noun_chunk for token in self.tokens])


def _runs(numbers: list[int]) -> list[range]:
    """Ranges of the contiguous runs of each number >= 0 (numbered 0, 1, ... in order)."""
    runs: list[range] = []
    start = 0
    for index in range(1, len(numbers) + 1):
        if index == len(numbers) or numbers[index] != numbers[start]:
            if numbers[start] >= 0:
                runs.append(range(start, index))
            start = index
    return runs


def _numbering_problem(numbers: list[int], what: str, optional: bool) -> str | None:
    """Why ``numbers`` (one per token) do not number contiguous runs 0, 1, ... in order (-1: none, if optional)."""
    expected, previous = 0, None
    for index, number in enumerate(numbers):
        if optional and number == -1:
            previous = number
            continue
        if number == previous:
            continue
        if number != expected:
            return f"token {index}: {what} {number}, expected {expected}" + (" or -1" if optional else "")
        expected, previous = number + 1, number
    return None


def _structure_problem(tokens: Sequence[ParsedToken]) -> str | None:
    count = len(tokens)
    for index, token in enumerate(tokens):
        if not token.text.strip():
            return f"token {index}: empty or whitespace-only text {token.text!r}"
        if not 0 <= token.head < count:
            return f"token {index}: head {token.head} is not a token index (0..{count - 1})"
    problem = _numbering_problem([token.sentence for token in tokens], "sentence", optional=False)
    if problem is None:
        problem = _numbering_problem([token.noun_chunk for token in tokens], "noun chunk", optional=True)
    if problem is not None:
        return problem
    reaches_root = [False] * count  # follow heads from each token; a path that revisits a token is a cycle
    for start in range(count):
        path, node = [], start
        while not reaches_root[node] and tokens[node].head != node:
            path.append(node)
            if len(path) > count:
                return f"token {start}: its heads form a cycle"
            node = tokens[node].head
        for visited in path:
            reaches_root[visited] = True
        reaches_root[node] = True
    return None


# --------------------------------------------------------------------------------------------
# The parse table
# --------------------------------------------------------------------------------------------


def write_parse_table(segments: Iterable[ParsedSegment], path: str | os.PathLike[str]) -> None:
    """Write segments as a TSV, one row per token (columns :data:`PARSE_COLUMNS`), atomically.

    A segment without tokens has no row (a reader treats a missing id as "no tokens").
    """
    columns: dict[str, list] = {column: [] for column in PARSE_COLUMNS}
    for segment in segments:
        for index, token in enumerate(segment.tokens):
            columns["segment_id"].append(segment.segment_id)
            columns["token"].append(index)
            columns["sentence"].append(token.sentence)
            columns["text"].append(token.text)
            columns["pos"].append(token.pos)
            columns["dep"].append(token.dep)
            columns["head"].append(token.head)
            columns["noun_chunk"].append(token.noun_chunk)
            columns["space_after"].append(int(token.space_after))
    write_table(pd.DataFrame(columns, columns=list(PARSE_COLUMNS)), path, PARSE_COLUMNS)


def _header_only(path: str | os.PathLike[str]) -> bool:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return len(lines) == 1 and lines[0].split("\t") in (list(PARSE_COLUMNS), list(_REQUIRED_COLUMNS))


def _integer(value: str, column: str, where: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise InputError(f"{where}: {column} {value!r} is not an integer") from None


def _flag(value: str, column: str, where: str) -> bool:
    if value not in ("0", "1"):
        raise InputError(f"{where}: {column} {value!r} is not 0 or 1")
    return value == "1"


def read_parse_table(path: str | os.PathLike[str]) -> dict[str, ParsedSegment]:
    """Read a table written by :func:`write_parse_table`: segments by id, in order of first appearance.

    Raises:
        InputError: The file is missing or not a parse table; a row has a non-integer number, a
            token index out of sequence, or a whitespace-only text; a segment's rows are not
            consecutive; or a segment's heads, sentences or noun chunks are inconsistent (see
            :class:`ParsedSegment`). The message names the file and the line or segment.
    """
    try:
        frame = read_table(path, _REQUIRED_COLUMNS, what="parse table")
    except InputError:
        if _header_only(path):
            return {}
        raise
    segments: dict[str, ParsedSegment] = {}
    current_id: str | None = None
    current: list[ParsedToken] = []

    def close() -> None:
        if current_id is None:
            return
        try:
            segments[current_id] = ParsedSegment(current_id, tuple(current))
        except ValueError as error:
            raise InputError(f"{path}: {error}") from None

    if "space_after" not in frame.columns:
        frame = frame.assign(space_after="1")
    rows = zip(*(frame[column].tolist() for column in PARSE_COLUMNS))
    for line, (segment_id, token, sentence, text, pos, dep, head, noun_chunk, space_after) in enumerate(rows, start=2):
        where = f"{path}: line {line} (segment {segment_id!r})"
        if segment_id != current_id:
            close()
            if segment_id in segments:
                raise InputError(f"{where}: the segment's rows are not consecutive")
            current_id, current = segment_id, []
        if _integer(token, "token", where) != len(current):
            raise InputError(f"{where}: token {token}, expected {len(current)}")
        if not text.strip():
            raise InputError(f"{where}: empty or whitespace-only token text")
        current.append(
            ParsedToken(
                text=text,
                pos=pos,
                dep=dep,
                head=_integer(head, "head", where),
                sentence=_integer(sentence, "sentence", where),
                noun_chunk=_integer(noun_chunk, "noun_chunk", where),
                space_after=_flag(space_after, "space_after", where),
            )
        )
    close()
    return segments
