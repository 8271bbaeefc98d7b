"""The character-attack family: the five attacks of paper 002 (Section 3.2, Table 3), from Eger & Benz (2020).

Each attack changes a text at a *perturbation level* ``p``, which, as in Zeroe, is a share of the attack's
own unit (:data:`UNITS`): for the word-level attacks (intrude, disemvowel, keyboard, phonetic) the share
of the words it may change (its *eligible* words) that it does change, with the one edit per word the
attack defines; for ``visual`` the probability that each letter with a look-alike is replaced. Every
draw uses the ``rng`` given, so an output is reproducible. One *instance* is an attack at one level,
named ``<attack>-p<level>`` (``visual-p0.3``); :func:`expand_functions` makes them from the configured
attacks and the family option ``levels``. Only the source side is attacked (:data:`PERTURBED_SIDES`).

Whitespace is never added, removed or changed: an attack works on ``text.split(" ")`` (which
``" ".join`` gives back exactly) and changes characters inside the pieces only; every other byte stays,
and no whitespace or control character is ever inserted. A *word* is such a piece (punctuation attached).

Readings chosen where paper 002, Zeroe's paper and Zeroe's code (github.com/yannikbenz/zeroe,
``code/attacks/simple_attacks.py``, ``viper_ices.py``, ``g2pp2g.py``) differ or are vague:

* Level. Paper 002 says "each letter is attacked with probability p"; Zeroe's code visits the tokens in
  a random order, without replacement, and edits them until ceil(p · tokens) changed (a word an edit
  leaves unchanged does not count, the next one is tried). Here a word-level attack does the same over
  its eligible words, with p · eligible rounded stochastically (down, or up with probability equal to
  the fraction: :func:`~._attack_rules.share`) so that the share achieved is p on average also over
  short sentences; ``visual`` keeps VIPER's independent draw per letter. :func:`unit_rate` measures the
  share achieved in the attack's unit, :func:`attack_rate` the share of all words and characters.
* ``intrude``: eligible words have two or more letters. Zeroe draws one ``string.punctuation`` symbol per
  word and inserts it after each inner character with probability p, redrawing until the word changed;
  here the symbol comes from ``symbols`` and goes only between the word's first and last alphanumeric
  characters (Zeroe's tokens had no attached punctuation), so "agreement." never becomes "agreement/.".
  The redraw is done exactly: at least one gap, each gap with probability p given that.
* ``disemvowel``: eligible words have three or more letters (Zeroe: three characters; "It." stays here),
  a vowel and another letter; an attacked word loses all its vowels (a e i o u), as in Zeroe.
* ``keyboard``: one key typo per attacked word, as in Zeroe: a letter that is a key of en.key and one of
  its neighbours, each drawn uniformly; the case is kept (Zeroe's ``word[i].upper()`` is discarded and
  its uppercase letters are never changed).
* ``phonetic``: eligible words are CMU dictionary words; the whole word is respelled. Zeroe's
  grapheme-to-phoneme-to-grapheme models are not available; the CMU pronouncing dictionary and a
  phoneme-to-spelling table (:data:`SPELLINGS`) replace them. A word whose respellings all equal it is
  passed over for another eligible word, as Zeroe does.
* ``visual``: letters only (VIPER replaces any character it has an embedding for, digits and punctuation
  included: "19" -> "15", "." -> "˼"), and only non-ASCII substitutes (8% of VIPER's neighbours are
  ASCII, "l" -> "1"); the ASCII ones are dropped from the ``neighbours`` nearest, so a letter has at most
  that many. Combining marks stay possible substitutes, as in VIPER's embeddings. VIPER ICES samples
  among the 20 nearest neighbours weighted by similarity; the default here is uniform (``weighting:
  similarity`` gives ICES's), among the nearest by cosine similarity of single-code-point characters
  that are not whitespace, control, format or unassigned.

An instance never skips a non-empty text, even if nothing changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import _attack_rules as rules
from nlp_robustness.perturbations._attack_resources import RESOURCES, AttackResources, insertable, load_context
from nlp_robustness.perturbations._attack_rules import DOUBLED, SPELLINGS, VOWELS, ZEROE_KEYS
from nlp_robustness.perturbations.base import Perturbed, Skipped

__all__ = [
    "CATEGORIES", "DEFAULT_SYMBOLS", "DOUBLED", "FUNCTIONS", "NEEDS_PARSE", "OPTIONS_SCHEMA", "PERTURBED_SIDES",
    "RESOURCES", "RESOURCE_DOWNLOADS", "SPELLINGS", "UNITS", "VOWELS", "ZEROE_KEYS",
    "AttackRate", "AttackResources", "UnitRate", "attack_rate", "attack_text", "eligible_units", "expand_functions",
    "instance_category", "instance_name", "load_context", "parse_instance", "perturb", "unit_rate",
]

NEEDS_PARSE = False
#: For the robustness of translation systems only the source is attacked.
PERTURBED_SIDES: tuple[str, ...] = ("source",)
#: Resource name -> the dataset-manifest download that holds it (canonical URL, checksum, mirror copy).
RESOURCE_DOWNLOADS: dict[str, str] = {"keyboard": "zeroe-en-key", "visual": "zeroe-visual-repres"}

DEFAULT_SYMBOLS = [".", ",", "/", ":", ";", "-", "+", "<", ">", "'", "*", "~", "|", "_"]


def languages(options: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """CMU pronunciations (phonetic), an English keyboard and the Zeroe resources: English sources."""
    return "en", None


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties}


#: Attack name -> JSON schema of its settings (the level ``p`` is a family option, not a setting).
FUNCTIONS: dict[str, dict[str, Any]] = {
    "intrude": _schema(symbols={
        "type": "array", "items": {"type": "string", "minLength": 1, "pattern": r"^\S+$"}, "minItems": 1,
        "uniqueItems": True, "default": DEFAULT_SYMBOLS,
        "description": "Intruder symbols; one is drawn per attacked word (no whitespace)."}),
    "disemvowel": _schema(),
    "keyboard": _schema(),
    "phonetic": _schema(max_tries={
        "type": "integer", "minimum": 1, "default": 10,
        "description": "Respellings drawn for an attacked word until one differs from it; else another word is attacked."}),
    "visual": _schema(
        source={"enum": ["viper", "confusables"], "default": "viper",
                "description": "VIPER ICES nearest neighbours, or Unicode confusables (confusable_homoglyphs)."},
        neighbours={"type": "integer", "minimum": 1, "default": 20,
                    "description": "VIPER: how many nearest neighbours a substitute is drawn from (ASCII ones dropped)."},
        weighting={"enum": ["uniform", "similarity"], "default": "uniform",
                   "description": "VIPER: draw neighbours uniformly, or weighted by cosine similarity (ICES)."}),
}

#: Attack -> category.
CATEGORIES: dict[str, str] = {"intrude": "insertion", "disemvowel": "deletion", "keyboard": "substitution",
                              "phonetic": "substitution", "visual": "substitution"}

#: The family's options: the perturbation levels every attack is applied at.
OPTIONS_SCHEMA: dict[str, Any] = _schema(levels={
    "type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "minItems": 1,
    "uniqueItems": True, "default": [0.1, 0.2, 0.3],
    "description": "Perturbation levels p: the share of words (visual: letters) attacked."})



# --------------------------------------------------------------------------------------------
# Instances
# --------------------------------------------------------------------------------------------


def _check_attack(attack: str) -> None:
    if attack not in FUNCTIONS:
        raise InputError(f"unknown character attack {attack!r} (known: {', '.join(FUNCTIONS)})")


def instance_name(attack: str, p: float) -> str:
    """The name of ``attack`` at level ``p``: ``visual-p0.3``."""
    return f"{attack}-p{p:g}"


def parse_instance(name: str) -> tuple[str, float]:
    """The attack and level of an instance name (inverse of :func:`instance_name`).

    Raises:
        InputError: Not ``<attack>-p<level>`` with a known attack.
    """
    attack, separator, level = name.rpartition("-p")
    try:
        p = float(level)
    except ValueError:
        p = None
    if not separator or p is None:
        raise InputError(f"character-attack instance {name!r} is not <attack>-p<level> (e.g. visual-p0.3)")
    _check_attack(attack)
    return attack, p


def instance_category(name: str) -> str:
    """The category of an instance's attack."""
    return CATEGORIES[parse_instance(name)[0]]


def expand_functions(functions: Mapping[str, Mapping[str, Any]], options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every configured attack (settings with defaults) at every level of ``options["levels"]``:
    ``{instance name: {"attack": ..., "p": ..., **settings}}``, attack by attack, levels in the order given.

    Raises:
        InputError: Unknown attack, or a level whose name (6 significant digits) does not give it back.
    """
    instances: dict[str, dict[str, Any]] = {}
    for attack, settings in functions.items():
        _check_attack(attack)
        for p in options["levels"]:
            name = instance_name(attack, p)
            if parse_instance(name)[1] != p:
                raise InputError(f"character-attack level {p!r} of key 'levels' has more than 6 significant digits")
            instances[name] = {"attack": attack, "p": p, **settings}
    return instances


# --------------------------------------------------------------------------------------------
# Attacks
# --------------------------------------------------------------------------------------------


Pieces = list[str]
Settings = Mapping[str, Any]


def _setting(attack: str, settings: Mapping[str, Any], key: str) -> Any:
    return settings.get(key, FUNCTIONS[attack]["properties"][key]["default"])


def _word_eligible(attack: str, piece: str, context: AttackResources | None) -> bool:
    """Whether the word-level ``attack`` may change ``piece`` (``context`` None: keys :data:`ZEROE_KEYS`)."""
    if attack == "keyboard":
        return rules.keyboard_eligible(piece, context.keyboard if context is not None else rules.ZEROE_KEYS)
    return {"intrude": rules.intrude_eligible, "disemvowel": rules.disemvowel_eligible,
            "phonetic": rules.phonetic_eligible}[attack](piece)


def _eligible_words(attack: str, pieces: Pieces, context: AttackResources | None) -> list[int]:
    return [number for number, piece in enumerate(pieces) if _word_eligible(attack, piece, context)]


def _intrude(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> None:
    """Rule: a share p of the words with at least two letters is attacked; an attacked word gets one
    symbol drawn from ``symbols`` in one or more of its gaps, each with probability p
    (:func:`~._attack_rules.intrude_edit`, "c/o/me t+o a>n")."""
    symbols = list(_setting("intrude", settings, "symbols"))
    if not all(insertable(character) for symbol in symbols for character in symbol):
        raise InputError(f"intrude symbols must not hold whitespace or control characters: {symbols!r}")
    rules.attack_words(pieces, _eligible_words("intrude", pieces, context), p, rng,
                       lambda piece: rules.intrude_edit(piece, p, symbols, rng))


def _disemvowel(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> None:
    """Rule: a share p of the words with at least three letters, a vowel (a e i o u, either case) and
    another letter is attacked; an attacked word loses all its vowels ("Nw thy ... grmnt"; "It" stays)."""
    rules.attack_words(pieces, _eligible_words("disemvowel", pieces, context), p, rng, rules.disemvowel)


def _keyboard(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> None:
    """Rule: a share p of the words with a letter on the keyboard (a key of en.key) is attacked; an
    attacked word gets exactly one key typo (:func:`~._attack_rules.keyboard_edit`, "No3", "xn agrrement")."""
    table = context.keyboard
    rules.attack_words(pieces, _eligible_words("keyboard", pieces, context), p, rng,
                       lambda piece: rules.keyboard_edit(piece, table, rng))


def _phonetic(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> None:
    """Rule: a share p of the words whose core (first to last letter) is ASCII letters and apostrophes
    and a CMU dictionary word is attacked; an attacked word is respelled whole
    (:func:`~._attack_rules.phonetic_edit`, "Nau", "agreemunt"); a word that ``max_tries`` respellings
    leave unchanged is passed over for another eligible word."""
    tries = _setting("phonetic", settings, "max_tries")
    rules.attack_words(pieces, _eligible_words("phonetic", pieces, context), p, rng,
                       lambda piece: rules.phonetic_edit(piece, tries, rng))


def _visual_options(piece: str, settings: Settings, context: AttackResources | None) -> list:
    return rules.visual_options(piece, context, _setting("visual", settings, "source"), _setting("visual", settings, "neighbours"))


def _visual(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> None:
    """Rule: each letter that has non-ASCII substitutes (VIPER: the non-ASCII ones among its
    ``neighbours`` nearest in the embeddings; confusables: its non-ASCII single-character confusables) is
    replaced with probability p by one of them, drawn uniformly (or, ``weighting: similarity``,
    proportionally to the cosine similarity, negative ones counted as 0). Digits, punctuation and
    symbols are never attacked."""
    weighted = _setting("visual", settings, "weighting") == "similarity"
    for number, piece in enumerate(pieces):
        options = _visual_options(piece, settings, context)
        characters = list(piece)
        for index in np.flatnonzero(rng.random(len(options)) < p) if options else ():
            position, substitutes, similarities = options[int(index)]
            weights = np.clip(similarities, 0, None) if weighted and similarities is not None else None
            if weights is not None and weights.sum() > 0:
                choice = rng.choice(len(substitutes), p=weights / weights.sum())
            else:
                choice = rng.integers(len(substitutes))
            characters[position] = substitutes[int(choice)]
        pieces[number] = "".join(characters)


_ATTACKS = {"intrude": _intrude, "disemvowel": _disemvowel, "keyboard": _keyboard, "phonetic": _phonetic, "visual": _visual}
#: Attack -> the unit its level p is a share of.
UNITS: dict[str, str] = {"intrude": "words", "disemvowel": "words", "keyboard": "words", "phonetic": "words",
                         "visual": "letters"}


def attack_text(attack: str, text: str, p: float, settings: Mapping[str, Any], rng: np.random.Generator,
                context: AttackResources) -> str:
    """``text`` attacked by ``attack`` at level ``p`` (settings missing from ``settings`` take their defaults).

    Raises:
        InputError: Unknown attack, p outside [0, 1], or a resource that is missing or malformed.
    """
    _check_attack(attack)
    if not 0 <= p <= 1:
        raise InputError(f"perturbation level p of the {attack} attack must lie in [0, 1], got {p!r}")
    pieces = text.split(" ")
    _ATTACKS[attack](pieces, p, settings, rng, context)
    return " ".join(pieces)


def eligible_units(attack: str, text: str, context: AttackResources | None, settings: Mapping[str, Any] | None = None) -> int:
    """How many units of ``text`` (:data:`UNITS`: its words or letters) the attack may change (see each
    rule): the attack changes a share p of them. ``context`` None: resource-free eligibility (keyboard keys
    :data:`ZEROE_KEYS`; visual: every letter), which equals the real one for Zeroe's en.key and for
    English text with VIPER (every ASCII letter has non-ASCII neighbours)."""
    _check_attack(attack)
    settings = settings or {}
    if attack == "visual":
        return sum(len(_visual_options(piece, settings, context)) for piece in text.split(" "))
    return sum(_word_eligible(attack, piece, context) for piece in text.split(" "))


def perturb(function: str, segment: str, settings: Mapping[str, Any], rng: np.random.Generator,
            context: AttackResources) -> Perturbed | Skipped:
    """Attack one text ``segment`` with the instance ``function`` (``settings``: as made by
    :func:`expand_functions`; ``context``: :func:`load_context`'s resources). Skipped only for an empty or
    all-whitespace text; an unchanged text is still :class:`~.base.Perturbed`.

    Raises:
        InputError: Unknown instance, or settings of another attack.
    """
    attack, p = parse_instance(function)
    if settings.get("attack", attack) != attack:
        raise InputError(f"instance {function!r} was given the settings of the {settings['attack']!r} attack")
    if not segment.strip():
        return Skipped("empty text")
    return Perturbed(tokens=tuple(attack_text(attack, segment, settings.get("p", p), settings, rng, context).split(" ")))


@dataclass(frozen=True)
class AttackRate:
    """How much an attack changed a text. Words: the non-empty space-separated pieces of the original,
    changed if the attacked piece differs. Characters: the characters of those pieces; changed: the sum
    over the pieces of the Levenshtein distance (insertions, deletions, substitutions) between the
    original and the attacked piece, so an intruder or a removed vowel counts 1, like a substitution."""

    words: int
    words_changed: int
    characters: int
    characters_changed: int

    @property
    def word_rate(self) -> float:
        return self.words_changed / self.words if self.words else 0.0

    @property
    def char_rate(self) -> float:
        return self.characters_changed / self.characters if self.characters else 0.0


def _pieces(original: str, attacked: str) -> list[tuple[str, str]]:
    before, after = original.split(" "), attacked.split(" ")
    if len(before) != len(after):
        raise InputError(f"attacked text has {len(after)} space-separated pieces, the original {len(before)}")
    return [(a, b) for a, b in zip(before, after) if a]


def attack_rate(original: str, attacked: str) -> AttackRate:
    """The :class:`AttackRate` of ``attacked`` against ``original`` (piece by piece, split on single spaces).

    Raises:
        InputError: The two texts do not have the same number of space-separated pieces.
    """
    pairs = _pieces(original, attacked)
    return AttackRate(words=len(pairs), words_changed=sum(a != b for a, b in pairs),
                      characters=sum(len(a) for a, _ in pairs),
                      characters_changed=sum(Levenshtein.distance(a, b) for a, b in pairs))


@dataclass(frozen=True)
class UnitRate:
    """How many of a text's eligible units (:data:`UNITS`) an attack changed: the rate its level p sets."""

    unit: str
    units: int
    units_changed: int

    @property
    def rate(self) -> float:
        return self.units_changed / self.units if self.units else 0.0


def unit_rate(attack: str, original: str, attacked: str, context: AttackResources | None = None,
              settings: Mapping[str, Any] | None = None) -> UnitRate:
    """The :class:`UnitRate` of ``attacked`` against ``original``: eligible words of the original whose
    attacked piece differs, or (visual) eligible letters replaced. ``context``: as :func:`eligible_units`.

    Raises:
        InputError: Unknown attack; the texts differ in pieces or (visual) a piece in length.
    """
    _check_attack(attack)
    settings, pairs = settings or {}, _pieces(original, attacked)
    if attack != "visual":
        eligible = [a != b for a, b in pairs if _word_eligible(attack, a, context)]
        return UnitRate("words", len(eligible), sum(eligible))
    units = changed = 0
    for a, b in pairs:
        if len(a) != len(b):
            raise InputError(f"a visual attack keeps each word's length, but {a!r} became {b!r}")
        positions = [position for position, *_ in _visual_options(a, settings, context)]
        units, changed = units + len(positions), changed + sum(a[i] != b[i] for i in positions)
    return UnitRate("letters", units, changed)
