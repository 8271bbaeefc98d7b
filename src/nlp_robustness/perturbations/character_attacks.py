"""The character-attack family: the five attacks of paper 002 (Section 3.2, Table 3), from Eger & Benz (2020).

Each attack changes a text at a *perturbation level* ``p``: the probability that each of its units (a
letter, a gap between letters, or a word, see each attack) is attacked, drawn independently with the
``rng`` given, so an output is reproducible. One *instance* is an attack at one level, named
``<attack>-p<level>`` (``visual-p0.3``); :func:`expand_functions` makes them from the configured attacks
and the family option ``levels``. Only the source side is attacked (:data:`PERTURBED_SIDES`).

Whitespace is never added, removed or changed: an attack works on ``text.split(" ")`` (which
``" ".join`` gives back exactly) and changes characters inside the pieces only; every other byte stays,
and no whitespace or control character is ever inserted. A *word* is such a piece (punctuation attached).

Readings chosen where the paper and the Zeroe code differ or are vague:

* The paper defines ``p`` per letter; Zeroe draws words until a share ``p`` is changed. Here every
  attack draws each unit independently with probability ``p``; an attack on a unit that cannot change
  it (a phonetic respelling equal to the word) leaves it, so the achieved rate (:func:`attack_rate`) is
  reported beside ``p``. An instance never skips a non-empty text, even if nothing changed.
* ``intrude`` (Zeroe: a random ``string.punctuation`` symbol per word) draws from ``symbols`` and puts
  it only between the word's first and last alphanumeric characters (Zeroe's tokens had no attached
  punctuation), so "agreement." never becomes "agreement/.".
* ``keyboard`` keeps the case (Zeroe's code drops uppercase letters: ``word[i].upper()`` is discarded).
* ``phonetic``: Zeroe's grapheme-to-phoneme-to-grapheme models are not available; the CMU pronouncing
  dictionary and a phoneme-to-spelling table (:data:`SPELLINGS`) replace them.
* ``visual``: VIPER ICES samples among the 20 nearest neighbours weighted by similarity; the default
  here is uniform (``weighting: similarity`` gives ICES's), among the ``neighbours`` nearest by cosine
  similarity of single-code-point characters that are not whitespace, control, format or unassigned.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations._attack_resources import (
    RESOURCES,
    AttackResources,
    cmu_dictionary,
    insertable,
    load_context,
)
from nlp_robustness.perturbations.base import Perturbed, Skipped

__all__ = [
    "CATEGORIES", "DEFAULT_SYMBOLS", "DOUBLED", "FUNCTIONS", "NEEDS_PARSE", "OPTIONS_SCHEMA", "PERTURBED_SIDES",
    "RESOURCES", "RESOURCE_DOWNLOADS", "SPELLINGS", "VOWELS",
    "AttackRate", "AttackResources", "attack_rate", "attack_text", "eligible_units", "expand_functions",
    "instance_category", "instance_name", "load_context", "parse_instance", "perturb",
]

NEEDS_PARSE = False
#: For the robustness of translation systems only the source is attacked.
PERTURBED_SIDES: tuple[str, ...] = ("source",)
#: Resource name -> the dataset-manifest download that holds it (canonical URL, checksum, mirror copy).
RESOURCE_DOWNLOADS: dict[str, str] = {"keyboard": "zeroe-en-key", "visual": "zeroe-visual-repres"}

DEFAULT_SYMBOLS = [".", ",", "/", ":", ";", "-", "+", "<", ">", "'", "*", "~", "|", "_"]
VOWELS = frozenset("aeiouAEIOU")



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
        "description": "Intruder symbols; one is drawn per word (no whitespace)."}),
    "disemvowel": _schema(),
    "keyboard": _schema(),
    "phonetic": _schema(max_tries={
        "type": "integer", "minimum": 1, "default": 10,
        "description": "Respellings drawn for an attacked word until one differs from it; else it stays."}),
    "visual": _schema(
        source={"enum": ["viper", "confusables"], "default": "viper",
                "description": "VIPER ICES nearest neighbours, or Unicode confusables (confusable_homoglyphs)."},
        neighbours={"type": "integer", "minimum": 1, "default": 20,
                    "description": "VIPER: how many nearest neighbours a substitute is drawn from."},
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
    "description": "Perturbation levels p: the probability that each unit is attacked."})

#: CMU phoneme (stress dropped) -> spellings drawn uniformly; :data:`DOUBLED` adds one after a vowel.
SPELLINGS: dict[str, tuple[str, ...]] = {
    "AA": ("o", "a", "ah"), "AE": ("a",), "AH": ("u", "a", "o", "uh"), "AO": ("aw", "au", "o"),
    "AW": ("ow", "ou", "au"), "AY": ("i", "y", "igh", "ai", "eye"), "EH": ("e", "eh", "ea"),
    "ER": ("er", "ur", "ir"), "EY": ("ay", "ai", "ei", "ey"), "IH": ("i",), "IY": ("ee", "ea", "ie", "i"),
    "OW": ("o", "oh", "oa", "ow"), "OY": ("oy", "oi"), "UH": ("u", "oo"), "UW": ("oo", "u", "ew", "ue"),
    "B": ("b",), "CH": ("ch",), "D": ("d",), "DH": ("th",), "F": ("f", "ph"), "G": ("g",), "HH": ("h",),
    "JH": ("j",), "K": ("k", "c"), "L": ("l",), "M": ("m",), "N": ("n",), "NG": ("ng",), "P": ("p",),
    "R": ("r",), "S": ("s",), "SH": ("sh",), "T": ("t",), "TH": ("th",), "V": ("v",), "W": ("w",),
    "Y": ("y",), "Z": ("z", "s"), "ZH": ("zh", "s"),
}
#: Consonant -> its doubled spelling, an extra option right after a vowel phoneme ("munny", "bakk" -> "back").
DOUBLED: dict[str, str] = {"B": "bb", "CH": "tch", "D": "dd", "F": "ff", "G": "gg", "K": "ck", "L": "ll",
                           "M": "mm", "N": "nn", "P": "pp", "R": "rr", "S": "ss", "T": "tt", "Z": "zz"}
_VOWEL_PHONEMES = frozenset(("AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"))
_CMU_WORD = re.compile(r"[A-Za-z']+")


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


def _attack_positions(count: int, p: float, rng: np.random.Generator) -> list[int]:
    """Which of ``count`` units are attacked: each with probability p (one uniform draw per unit)."""
    return np.flatnonzero(rng.random(count) < p).tolist() if count else []


def _intrude(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> int:
    """Rule: for each word with at least two letters, one symbol is drawn uniformly from ``symbols``;
    then each gap between two adjacent characters from its first to its last alphanumeric character
    gets that symbol with probability p ("c/o/me t+o a>n"). Units: the gaps."""
    symbols = list(_setting("intrude", settings, "symbols"))
    if not all(insertable(character) for symbol in symbols for character in symbol):
        raise InputError(f"intrude symbols must not hold whitespace or control characters: {symbols!r}")
    eligible = 0
    for number, piece in enumerate(pieces):
        if sum(character.isalpha() for character in piece) < 2:
            continue
        alphanumeric = [i for i, character in enumerate(piece) if character.isalnum()]
        first, gaps = alphanumeric[0], alphanumeric[-1] - alphanumeric[0]
        eligible += gaps
        symbol = symbols[int(rng.integers(len(symbols)))]
        cuts = [0, *(first + 1 + gap for gap in _attack_positions(gaps, p, rng)), len(piece)]
        pieces[number] = symbol.join(piece[start:end] for start, end in zip(cuts, cuts[1:]))
    return eligible


def _disemvowel(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> int:
    """Rule: each word with at least one vowel (a e i o u, either case) and one other letter loses all
    its vowels with probability p ("Nw thy ... grmnt"); words of vowels only are not eligible. Units: words."""
    eligible = [number for number, piece in enumerate(pieces)
                if any(c in VOWELS for c in piece) and any(c.isalpha() and c not in VOWELS for c in piece)]
    for index in _attack_positions(len(eligible), p, rng):
        pieces[eligible[index]] = "".join(c for c in pieces[eligible[index]] if c not in VOWELS)
    return len(eligible)


def _keyboard(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> int:
    """Rule: each letter whose lowercase is a key of en.key is replaced, with probability p, by one of
    its neighbours drawn uniformly; an uppercase letter's letter neighbour is uppercased ("No3", "xn").
    Units: those letters."""
    table, eligible = context.keyboard, 0
    for number, piece in enumerate(pieces):
        positions = [i for i, c in enumerate(piece) if c.isalpha() and c.lower() in table]
        eligible += len(positions)
        characters = list(piece)
        for index in _attack_positions(len(positions), p, rng):
            original = characters[positions[index]]
            options = table[original.lower()]
            neighbour = options[int(rng.integers(len(options)))]
            keep_case = original.isupper() and neighbour.isalpha()
            characters[positions[index]] = neighbour.upper() if keep_case else neighbour
        pieces[number] = "".join(characters)
    return eligible


def _respell(phonemes: Sequence[str], rng: np.random.Generator) -> str:
    """One spelling of a pronunciation: each phoneme (stress dropped) spelled by a uniform draw from
    :data:`SPELLINGS` (plus :data:`DOUBLED` right after a vowel); a "c" before e, i or y becomes "k"."""
    bare = [phoneme.rstrip("012") for phoneme in phonemes]
    graphemes = []
    for position, phoneme in enumerate(bare):
        options = SPELLINGS[phoneme]
        if phoneme in DOUBLED and position and bare[position - 1] in _VOWEL_PHONEMES:
            options = (*options, DOUBLED[phoneme])
        graphemes.append(options[int(rng.integers(len(options)))])
    for position, grapheme in enumerate(graphemes[:-1]):
        if grapheme == "c" and graphemes[position + 1][0] in "eiy":
            graphemes[position] = "k"
    return "".join(graphemes)


def _phonetic(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> int:
    """Rule: a word is eligible if its core (from its first to its last letter) is made of ASCII letters
    and apostrophes and is, lowercased, in the CMU dictionary. With probability p it is respelled from
    its first pronunciation (:func:`_respell`), drawn again up to ``max_tries`` times while the spelling
    equals the core (case ignored), else left; an all-uppercase core stays uppercase, a capital first
    letter stays capital, the characters around the core stay ("Nau", "agreemunt"). Units: words."""
    dictionary, tries, eligible = cmu_dictionary(), _setting("phonetic", settings, "max_tries"), []
    for number, piece in enumerate(pieces):
        letters = [i for i, character in enumerate(piece) if character.isalpha()]
        core = piece[letters[0]:letters[-1] + 1] if letters else ""
        if _CMU_WORD.fullmatch(core) and core.lower() in dictionary:
            eligible.append((number, letters[0], letters[-1] + 1, core))
    for index in _attack_positions(len(eligible), p, rng):
        number, start, end, core = eligible[index]
        phonemes = cmu_dictionary()[core.lower()][0]
        spellings = (_respell(phonemes, rng) for _ in range(tries))
        spelling = next((spelling for spelling in spellings if spelling != core.lower()), None)
        if spelling is None:
            continue
        if core.isupper() and len(core) > 1:
            spelling = spelling.upper()
        elif core[0].isupper():
            spelling = spelling[0].upper() + spelling[1:]
        pieces[number] = pieces[number][:start] + spelling + pieces[number][end:]
    return len(eligible)


def _visual(pieces: Pieces, p: float, settings: Settings, rng: np.random.Generator, context: AttackResources) -> int:
    """Rule: each character that has substitutes (VIPER: it is in the embeddings; confusables: it has a
    single-character confusable) is replaced with probability p by one of them, drawn uniformly (or,
    ``weighting: similarity``, proportionally to the cosine similarity, negative ones counted as 0).
    Units: those characters."""
    source, k = _setting("visual", settings, "source"), _setting("visual", settings, "neighbours")
    weighted, eligible = _setting("visual", settings, "weighting") == "similarity", 0
    for number, piece in enumerate(pieces):
        options = [context.visual_neighbours(character, source, k) for character in piece]
        positions = [i for i, (substitutes, _) in enumerate(options) if substitutes]
        eligible += len(positions)
        characters = list(piece)
        for index in _attack_positions(len(positions), p, rng):
            substitutes, similarities = options[positions[index]]
            weights = np.clip(similarities, 0, None) if weighted and similarities is not None else None
            if weights is not None and weights.sum() > 0:
                choice = rng.choice(len(substitutes), p=weights / weights.sum())
            else:
                choice = rng.integers(len(substitutes))
            characters[positions[index]] = substitutes[int(choice)]
        pieces[number] = "".join(characters)
    return eligible


_ATTACKS = {"intrude": _intrude, "disemvowel": _disemvowel, "keyboard": _keyboard, "phonetic": _phonetic, "visual": _visual}


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


def eligible_units(attack: str, text: str, context: AttackResources, settings: Mapping[str, Any] | None = None) -> int:
    """How many units of ``text`` the attack draws for (see each rule): the expected share attacked is p."""
    _check_attack(attack)
    return _ATTACKS[attack](text.split(" "), 0.0, settings or {}, np.random.default_rng(0), context)


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


def attack_rate(original: str, attacked: str) -> AttackRate:
    """The :class:`AttackRate` of ``attacked`` against ``original`` (piece by piece, split on single spaces).

    Raises:
        InputError: The two texts do not have the same number of space-separated pieces.
    """
    before, after = original.split(" "), attacked.split(" ")
    if len(before) != len(after):
        raise InputError(f"attacked text has {len(after)} space-separated pieces, the original {len(before)}")
    pairs = [(a, b) for a, b in zip(before, after) if a]
    return AttackRate(words=len(pairs), words_changed=sum(a != b for a, b in pairs),
                      characters=sum(len(a) for a, _ in pairs),
                      characters_changed=sum(Levenshtein.distance(a, b) for a, b in pairs))
