"""The units of the natural family (:mod:`nlp_robustness.perturbations.natural`): the spans of a text each of its
functions but ``casing`` may change, each with its alternatives (punctuation marks to remove or alter, words with a
known natural typo), and the draw of the edits that change some of them.

Each unit is replaced with probability ``rate``, independently, by an alternative drawn uniformly; if none was
drawn, one unit drawn uniformly is (:func:`draw_edits`). Units never hold whitespace and their alternatives are
never empty, so :func:`splice` keeps every whitespace byte of the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations._lexicons import english_words

__all__ = [
    "ALTERNATIVES", "INNER_WORD", "LETTER", "SYMBOL_MARKS", "UNIT_RULES", "WORD", "TypoSource", "Unit", "draw_edits",
    "sentence_starts", "splice", "units", "word_making_marks", "word_typos",
]

#: A letter (any script; no digit or underscore), the piece every word pattern is made of.
LETTER = r"[^\W\d_]"
#: A word: letters with single apostrophes inside ("don't"), not touching a letter or digit ("3rd" is none).
WORD = re.compile(rf"(?<![^\W_]){LETTER}+(?:['’]{LETTER}+)*(?![^\W_])")
#: Punctuation (category P) that works as a symbol: removing it changes the content (50% -> 50).
SYMBOL_MARKS = frozenset("%‰‱&@#/\\§¶†‡")
#: Punctuation -> its natural alternatives (a run of 2+ dots: "…" or "."; "!!"+: "!"; "??"+: "?"; '"': the
#: curly quote for its place). ".,;:!?" only where no letter or digit follows (not in 3.5, U.S, 10:30);
#: a hyphen only between whitespace (a dash: not in well-known).
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    ".": ("!", "..."), ",": (";",), ";": (",",), ":": (";",), "!": (".", "!!"), "?": ("?!", "??"),
    "…": ("...",), "'": ("’",), "’": ("'",), "‘": ("'",), "“": ('"',), "”": ('"',),
    "-": ("–", "—"), "–": ("-",), "—": ("-",),
}
_ALTERABLE = re.compile(r"""\.{2,}|!{2,}|\?{2,}|[.,;:!?](?![^\W_])|['’‘"“”…–—]|(?<!\S)-(?!\S)""")
_SENTENCE_START = re.compile(r"""(?:\A|(?<=[.!?…])["'’”)\]]*\s+|\n\s*)["'“‘(\[«]*""")
_INNER_MARKS = "'’‘‐‑-"  # apostrophes, hyphens (the ASCII one last: a literal in a character class)
#: A word with apostrophes or hyphens inside ("we're", "well-known"), not touching a letter or digit.
INNER_WORD = re.compile(rf"(?<![^\W_]){LETTER}+(?:[{_INNER_MARKS}]{LETTER}+)*(?![^\W_])")


class TypoSource(Protocol):
    """What the ``typos`` rule reads of the family's resources
    (:class:`~nlp_robustness.perturbations.natural.NaturalResources`): word -> its typos."""

    @property
    def typos(self) -> Mapping[str, tuple[str, ...]]: ...


def sentence_starts(text: str) -> set[int]:
    """Offsets where a sentence starts: the text's start, after a line break, or after ``.!?…`` (and
    closing quotes or brackets) and whitespace; opening quotes and brackets skipped. Abbreviations
    ("Mr. Smith") count as sentence ends: that only lets a capitalised word be looked up lowercased."""
    return {match.end() for match in _SENTENCE_START.finditer(text)}


def word_typos(table: Mapping[str, tuple[str, ...]], word: str, sentence_initial: bool) -> tuple[str, ...]:
    """The typos of ``word``: those of the word as written; else, for a capitalised word (first letter
    upper, the rest not) at a sentence start, those of its lowercased form with the first letter
    upper-cased ("Esteem" -> "Estime"). Names mid-sentence ("Bill") are not looked up lowercased."""
    if word in table:
        return table[word]
    if sentence_initial and word[0].isupper() and word[1:] == word[1:].lower():
        return tuple(typo[0].upper() + typo[1:] for typo in table.get(word[0].lower() + word[1:], ()))
    return ()


@dataclass(frozen=True)
class Unit:
    """A span ``text[start:end]`` that may be replaced by one of ``alternatives`` (each differs from it)."""

    start: int
    end: int
    alternatives: tuple[str, ...]


def _is_mark(character: str) -> bool:
    return unicodedata.category(character)[0] == "P"


def word_making_marks(text: str) -> set[int]:
    """Offsets of the apostrophes and hyphens inside a word (:data:`INNER_WORD`) whose removal makes the
    word another English word (:func:`~nlp_robustness.perturbations._lexicons.english_words`): "we're"
    -> "were", "he'll" -> "hell", "it's" -> "its", "can't" -> "cant", "e-mail" -> "email"."""
    found = set()
    for match in INNER_WORD.finditer(text):
        word = match.group()
        for offset, character in enumerate(word):
            if character in _INNER_MARKS and (word[:offset] + word[offset + 1:]).lower() in english_words():
                found.add(match.start() + offset)
    return found


def _removal_units(text: str, context: TypoSource | None) -> list[Unit]:
    """Rule: every punctuation mark (Unicode category P: ASCII and typographic quotes, dashes, brackets
    ...), except :data:`SYMBOL_MARKS`, a mark between two digits (3.5, 1,000, 10:30: removing it changes
    the number), the marks of a whitespace-delimited token made of punctuation only (" - ", "..."):
    removing those would empty the token and leave a double space, and an apostrophe or hyphen whose
    removal makes another English word (:func:`word_making_marks`: "we're" -> "were", "can't" -> "cant").
    Other marks inside words are units: "dont", "theyre", "wellknown" are natural. Units: those marks,
    each removed."""
    found = []
    making_words = word_making_marks(text) if any(mark in text for mark in _INNER_MARKS) else set()
    for token in re.finditer(r"\S+", text):
        piece = token.group()
        if all(_is_mark(character) for character in piece):
            continue
        for offset, character in enumerate(piece):
            between_digits = 0 < offset < len(piece) - 1 and piece[offset - 1].isdigit() and piece[offset + 1].isdigit()
            if (_is_mark(character) and character not in SYMBOL_MARKS and not between_digits
                    and token.start() + offset not in making_words):
                found.append(Unit(token.start() + offset, token.start() + offset + 1, ("",)))
    return found


def _alteration_units(text: str, context: TypoSource | None) -> list[Unit]:
    """Rule: the marks of :data:`ALTERNATIVES` where its comment allows, runs of dots, "!" or "?", and
    straight double quotes, which become an opening curly quote at the text's start or after whitespace
    or an opening bracket, else a closing one. Units: those marks, each replaced by an alternative."""
    found = []
    for match in _ALTERABLE.finditer(text):
        mark, start = match.group(), match.start()
        if mark == '"':
            opening = start == 0 or text[start - 1].isspace() or unicodedata.category(text[start - 1]) in ("Ps", "Pi")
            alternatives = ("“",) if opening else ("”",)
        elif len(mark) > 1:
            alternatives = ("…", ".") if mark[0] == "." else (mark[0],)
        else:
            alternatives = ALTERNATIVES[mark]
        found.append(Unit(start, match.end(), alternatives))
    return found


def _typo_units(text: str, context: TypoSource | None) -> list[Unit]:
    """Rule: every word (:data:`WORD`) with typos (:func:`word_typos`). Units: those words, each replaced
    by one of its typos."""
    if context is None:
        raise InputError("the typos function needs the family's resources (load_context), none were given")
    table, starts = context.typos, sentence_starts(text)
    found = []
    for match in WORD.finditer(text):
        typos = word_typos(table, match.group(), match.start() in starts)
        if typos:
            found.append(Unit(match.start(), match.end(), typos))
    return found


#: Function -> how its units are found, and the reason a text without any is skipped.
UNIT_RULES: dict[str, tuple[Callable[[str, TypoSource | None], list[Unit]], str]] = {
    "punctuation_removal": (_removal_units, "no removable punctuation"),
    "punctuation_alteration": (_alteration_units, "no punctuation with an alternative"),
    "typos": (_typo_units, "no word with a known typo"),
}


def units(function: str, text: str, context: TypoSource | None = None) -> list[Unit]:
    """The units of ``text`` for ``function`` (any but ``casing``), in text order, not overlapping."""
    if function not in UNIT_RULES:
        raise InputError(f"natural function {function!r} has no units (those with: {', '.join(UNIT_RULES)})")
    return UNIT_RULES[function][0](text, context)


def draw_edits(found: list[Unit], rate: float, rng: np.random.Generator) -> list[tuple[int, int, str]]:
    """Edits ``(start, end, replacement)``: each unit chosen with probability ``rate`` (one uniform draw
    per unit), or one drawn uniformly if none was; each chosen unit's alternative drawn uniformly."""
    chosen = np.flatnonzero(rng.random(len(found)) < rate).tolist()
    if not chosen and found:
        chosen = [int(rng.integers(len(found)))]
    edits = []
    for index in chosen:
        unit = found[index]
        edits.append((unit.start, unit.end, unit.alternatives[int(rng.integers(len(unit.alternatives)))]))
    return edits


def splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each non-overlapping span ``[start, end)`` replaced by its replacement."""
    pieces, last = [], 0
    for start, end, replacement in sorted(edits):
        pieces += [text[last:start], replacement]
        last = end
    return "".join(pieces) + text[last:]
