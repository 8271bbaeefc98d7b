"""The natural family: paper 001's "naive perturbations", benign variations of an English input text.

Four functions: ``punctuation_removal``, ``punctuation_alteration``, ``casing`` and ``typos`` (natural
misspellings from the Zeroe list ``en.natural``). Only the input is perturbed (:data:`PERTURBED_SIDES`);
the family draws its sample under :data:`SAMPLE_GROUP`, shared with the paraphrases, so both perturb the
same records. Every random choice comes from the ``rng`` given, so an output is reproducible.

Choices, where the paper (one line: "removing or altering punctuation, modifying letter casing, or
introducing natural typos") leaves them open:

* Whitespace is never added, removed or changed, and no token is emptied: the functions work with
  regular expressions over the whole text (line breaks inside, e.g. a review's ``title\\nbody``,
  included) and replace non-empty runs of non-whitespace characters by non-empty ones, so
  ``re.split(r"\\S+", text)`` is the same before and after and ``" ".join`` of the tokens gives the
  perturbed text back byte for byte.
* Every function but ``casing`` works on *units* (:func:`~.natural_units.units`): spans of the text with
  their alternatives. Each unit is replaced with probability ``rate``, independently, by an alternative
  drawn uniformly; if none was drawn, one unit drawn uniformly is (:func:`~.natural_units.draw_edits`). So
  the expected share changed is ``rate + (1 - rate)^n / n`` for ``n`` units: above ``rate`` in short texts.
* A function returns a text that differs from its input, or :class:`~.base.Skipped` with the reason
  (empty text, no unit, or, checked last, ``unchanged``).
* ``typos``: the list's lines ``<word> <typo> ...`` are merged by word (572 words have two lines). A
  word is kept only if it is a word as :data:`~.natural_units.WORD` matches (so ``swim.`` or ``[[bed`` are
  not), and a typo only if it differs from its word beyond letter case (``Lila lila``: casing is its own function)
  and is spelled like a word (:data:`TYPO_SPELLING`: ``didnt``, ``un-written``, ``o.k.``, ``'cause``).
  That drops whitespace and control characters and the list's markup and encoding debris
  (``[[realy``, ``did''nt``, ``co?ntry``, ``hab\\ve``) with a few digit spellings (``5`` for ``five``).
  A typo that is itself a word is dropped too (:func:`without_real_words`), case-insensitively: a word
  of English (the CMU dictionary: "and" -> "END", "are" -> "area") changes the meaning rather than the
  spelling, and a word of French, Spanish, Catalan or Galician (Apertium's analysers: "in" -> "de") may
  be translated as that language's word. Of the list's 49,244 typos (11,173 words), 9,439 are dropped
  (7,460 English words, the rest other languages), leaving 39,805 typos of 9,845 words.
* ``punctuation_removal`` keeps an apostrophe or hyphen whose removal would make another English word
  ("we're" -> "were", "he'll" -> "hell", "it's" -> "its", and "can't" -> "cant", which the CMU
  dictionary lists): that is a different word, not a missing mark. "don't" -> "dont" stays a unit.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations._lexicons import english_words, foreign_words
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.natural_units import LETTER, UNIT_RULES, WORD, draw_edits, splice, units

__all__ = [
    "CASING_STYLES", "CATEGORIES", "FUNCTIONS", "NEEDS_PARSE", "OPTIONS_SCHEMA", "PERTURBED_SIDES", "RESOURCE_DOWNLOADS",
    "SAMPLE_GROUP", "TYPO_SPELLING", "NaturalResources", "apply_style", "languages", "load_context", "perturb",
    "read_typos", "without_real_words",
]

logger = logging.getLogger(__name__)

NEEDS_PARSE = False
#: Only the input of a system is perturbed; the reference is kept as it is.
PERTURBED_SIDES: tuple[str, ...] = ("source",)
#: Shared with the paraphrase family: both perturb the same sampled records.
SAMPLE_GROUP = "natural_robustness"
#: Resource name -> the dataset-manifest download that holds it.
RESOURCE_DOWNLOADS: dict[str, str] = {"typos": "zeroe-en-natural"}

CASING_STYLES: tuple[str, ...] = ("lower", "upper", "title", "first_letter")


def languages(options: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """Zeroe's English natural typos and English casing and punctuation rules: English sources."""
    return "en", None

def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties}


def _rate(default: float, units_: str) -> dict[str, Any]:
    return {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": default,
            "description": f"Probability that each {units_} is changed (at least one is)."}


#: Function -> JSON schema of its settings. Typos: 0.1, the lowest level of Zeroe's attacks (paper 002),
#: a share of words a hurried writer may plausibly get wrong (the list covers ~83% of the words of WMT14
#: news, so ~9% of all words change); punctuation is varied more freely (0.5).
FUNCTIONS: dict[str, dict[str, Any]] = {
    "punctuation_removal": _schema(rate=_rate(0.5, "removable punctuation mark")),
    "punctuation_alteration": _schema(rate=_rate(0.5, "punctuation mark with alternatives (ALTERNATIVES)")),
    "casing": _schema(styles={
        "type": "array", "items": {"enum": list(CASING_STYLES)}, "minItems": 1, "uniqueItems": True,
        "default": list(CASING_STYLES),
        "description": "Casing styles; one that changes the text is drawn uniformly per text."}),
    "typos": _schema(rate=_rate(0.1, "word with a known natural typo")),
}
CATEGORIES: dict[str, str] = {"punctuation_removal": "punctuation", "punctuation_alteration": "punctuation",
                              "casing": "casing", "typos": "typo"}
#: The family has no options.
OPTIONS_SCHEMA: dict[str, Any] = _schema()

#: How a kept typo is spelled: letters, with single apostrophes, hyphens or periods between or after them
#: and an apostrophe before them ("'cause").
TYPO_SPELLING = re.compile(rf"['’‘]?{LETTER}+(?:[-.'’‘]{LETTER}+)*[-.'’‘]?")
_TITLE_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def read_typos(path: Path) -> dict[str, tuple[str, ...]]:
    """Word (as written) -> its typos, in file order, from lines ``<word> <typo> ...`` (split on
    whitespace, blank lines skipped, lines of one word merged; words and typos kept as the module says).

    Raises:
        InputError: Unreadable file, or a line with fewer than two fields (naming file and line).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the natural typo list {path}: {error}") from error
    table: dict[str, dict[str, None]] = {}
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) < 2:
            raise InputError(f"{path}, line {number}: expected '<word> <typo> ...', got {line!r}")
        word = fields[0]
        if WORD.fullmatch(word):
            typos = table.setdefault(word, {})
            typos.update((t, None) for t in fields[1:] if TYPO_SPELLING.fullmatch(t) and t.lower() != word.lower())
    return {word: tuple(typos) for word, typos in table.items() if typos}


class NaturalResources:
    """The family's resources, each read on first use and cached: ``paths`` maps a name of
    :data:`RESOURCE_DOWNLOADS` (``typos``) to its file."""

    def __init__(self, paths: Mapping[str, str | Path]) -> None:
        unknown = sorted(set(paths) - set(RESOURCE_DOWNLOADS))
        if unknown:
            raise InputError(f"unknown natural resource(s) {', '.join(unknown)} (known: {', '.join(RESOURCE_DOWNLOADS)})")
        self.paths = {name: Path(path) for name, path in paths.items()}

    @functools.cached_property
    def typos(self) -> dict[str, tuple[str, ...]]:
        """The natural typo list (:func:`read_typos`) without the typos that are real words
        (:func:`without_real_words`)."""
        if "typos" not in self.paths:
            raise InputError("the typos function needs the resource 'typos' (Zeroe en.natural), which was not given")
        table, dropped = without_real_words(read_typos(self.paths["typos"]))
        logger.info("natural typos: dropped %d of %d typos that spell an English, French, Spanish, Catalan or "
                    "Galician word", dropped, dropped + sum(len(typos) for typos in table.values()))
        return table


def without_real_words(table: Mapping[str, tuple[str, ...]]) -> tuple[dict[str, tuple[str, ...]], int]:
    """``table`` without every typo that is itself a word, case-insensitively: an English word (CMU
    dictionary: "and" -> "end", "are" -> "area") or a French, Spanish, Catalan or Galician one (Apertium's
    analysers: "in" -> "de"; :mod:`~nlp_robustness.perturbations._lexicons`); words left without typos
    are dropped. Returns the table and how many typos were dropped."""
    candidates = {typo.lower() for typos in table.values() for typo in typos}
    real = (candidates & english_words()) | foreign_words(candidates)
    kept = {word: tuple(typo for typo in typos if typo.lower() not in real) for word, typos in table.items()}
    dropped = sum(len(typos) for typos in table.values()) - sum(len(typos) for typos in kept.values())
    return {word: typos for word, typos in kept.items() if typos}, dropped


def load_context(paths: Mapping[str, str | Path]) -> NaturalResources:
    """The family's resources (``paths`` keyed like :data:`RESOURCE_DOWNLOADS`), read when first needed.

    Raises:
        InputError: Unknown resource name; later, an unreadable file or a malformed line.
    """
    return NaturalResources(paths)


def _first_letter(text: str) -> str:
    for index, character in enumerate(text):
        if character.islower() or character.isupper():
            return text[:index] + character.swapcase() + text[index + 1:]
    return text


def _title(text: str) -> str:
    return _TITLE_WORD.sub(lambda match: match.group()[0].upper() + match.group()[1:].lower(), text)


_STYLES: dict[str, Callable[[str], str]] = {"lower": str.lower, "upper": str.upper, "title": _title, "first_letter": _first_letter}


def apply_style(style: str, text: str) -> str:
    """``text`` in a casing style: ``lower``/``upper`` (str.lower/upper: "ß" becomes "SS", so the length
    may change, never the whitespace), ``title`` (each run of letters and digits, with apostrophes
    inside, gets its first character upper-cased and the rest lower-cased: "Don't", "1st", "Well-Known"),
    ``first_letter`` (the case of the text's first cased letter swapped)."""
    if style not in _STYLES:
        raise InputError(f"unknown casing style {style!r} (known: {', '.join(CASING_STYLES)})")
    return _STYLES[style](text)


def _setting(function: str, settings: Mapping[str, Any], key: str) -> Any:
    return settings.get(key, FUNCTIONS[function]["properties"][key]["default"])


def _perturb_text(function: str, text: str, settings: Mapping[str, Any], rng: np.random.Generator,
                  context: NaturalResources | None) -> str | Skipped:
    if function == "casing":
        styles = [style for style in _setting(function, settings, "styles") if apply_style(style, text) != text]
        if not styles:
            return Skipped("no casing style changes the text")
        return apply_style(styles[int(rng.integers(len(styles)))], text)
    rate = _setting(function, settings, "rate")
    if not 0 < rate <= 1:
        raise InputError(f"natural function {function}: rate must lie in (0, 1], got {rate!r}")
    found = units(function, text, context)
    if not found:
        return Skipped(UNIT_RULES[function][1])
    return splice(text, draw_edits(found, rate, rng))


def perturb(function: str, segment: str, settings: Mapping[str, Any], rng: np.random.Generator,
            context: NaturalResources | None = None) -> Perturbed | Skipped:
    """Perturb one text ``segment`` with ``function`` (settings missing from ``settings`` take their
    defaults); ``context`` (:func:`load_context`) is needed by ``typos`` only. The result differs from
    ``segment``, or is :class:`~.base.Skipped` with the reason.

    Raises:
        InputError: Unknown function or setting, a rate outside (0, 1], or (typos) a missing or bad list.
    """
    if function not in FUNCTIONS:
        raise InputError(f"unknown natural function {function!r} (known: {', '.join(FUNCTIONS)})")
    unknown = sorted(set(settings) - set(FUNCTIONS[function]["properties"]))
    if unknown:
        raise InputError(f"unknown setting(s) {', '.join(unknown)} of natural function {function}")
    if not segment.strip():
        return Skipped("empty text")
    result = _perturb_text(function, segment, settings, rng, context)
    if isinstance(result, Skipped):
        return result
    if result == segment:
        return Skipped("unchanged")
    return Perturbed(tuple(result.split(" ")))
