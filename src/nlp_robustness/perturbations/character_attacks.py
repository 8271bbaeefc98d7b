"""The character-attack family: the five attacks of paper 002 (Section 3.2, Table 3), from Eger & Benz (2020).

Each attack changes a text at a *perturbation level* ``p``: for intrude, disemvowel and keyboard, as in
Zeroe, the share of the text's tokens (punctuation included) changed, rounded up; for phonetic and
visual the probability that each letter is attacked. Every draw uses the ``rng`` given, so an output
is reproducible. One *instance* is an attack at one level,
named ``<attack>-p<level>`` (``visual-p0.3``); :func:`expand_functions` makes them from the configured
attacks and the family option ``levels``. Only the source side is attacked (:data:`PERTURBED_SIDES`).

Whitespace is never added, removed or changed: an attack works on ``text.split(" ")`` (which
``" ".join`` gives back exactly) and changes characters inside the pieces only; every other byte stays,
and no whitespace or control character is ever inserted. A *word* is such a piece (punctuation attached).

**Calibrated to paper 002's own attacked references.** The authors publish the WMT19 references they
attacked (github.com/long21wt/robust-bert-based-metrics @ 8cac959,
``wmt19/wmt19-metrics-task-package/input/attacked-references/<attack>/<p>/``). The attacks here choose
their units as those files show, so that at the same p they change the same share of whitespace words,
with as many edits per changed word, on the same references (:data:`~.attack_calibration.PAPER_RATES`, measured by
``python -m nlp_robustness.perturbations.attack_calibration``; tests/unit/test_attack_calibration.py pins the match on the
mirror's seven WMT19 to-English references). The levels are *nominal*: paper 002 calls p "the
probability that each letter is attacked", which holds only for visual.

* intrude, disemvowel, keyboard: Zeroe's ``simple_perturb`` (github.com/yannikbenz/zeroe,
  ``code/attacks/simple_attacks.py``), which the files match: the text is cut into NLTK word tokens,
  punctuation included (:func:`~._attack_rules.token_spans`; a whitespace word "2018:" holds two), the
  tokens are visited in a random order and edited until ceil(p · tokens) changed; a token the edit
  leaves alone counts nothing. Punctuation tokens count in the target but rarely change, and a changed
  token changes its whole whitespace word, so about 1.4 p of the words change (0.138 at p = 0.1). The
  edits are Zeroe's: ``intrude`` puts one symbol of ``string.punctuation`` into the gaps of any token of
  two or more characters that is not itself punctuation ("2\\018", "..)."), each gap with probability
  p given at least one; ``disemvowel`` removes every vowel of a token of three or more characters;
  ``keyboard`` replaces one character drawn uniformly by an en.key neighbour (digits included) if it is a
  lowercase letter, else the token stays (Zeroe's uppercase branch is a no-op). Zeroe rejoins its
  tokens with NLTK's detokeniser, which moves whitespace ("to..." -> "to ..."); here the tokens are
  edited in place, so whitespace is never changed.
* phonetic: paper 002's files change long words more often than short ones and in more places (at
  p = 0.1, 3 % of one-letter words, 47 % of twelve-letter ones; 1.6 edits per changed word), stopwords
  included: each letter is attacked with probability p. Here each letter of a CMU dictionary word is
  attacked with probability p, and the word takes the parts of a respelling of its pronunciation
  (:func:`~._attack_rules.respell`) that cover an attacked letter (:func:`~._attack_rules.phonetic_edit`).
  The paper's neural grapheme-to-phoneme-to-grapheme models are not available; the CMU pronouncing
  dictionary and a phoneme-to-spelling table (:data:`SPELLINGS`) replace them. Words outside the
  dictionary (names, numbers) never change.
* visual: each letter is replaced with probability p (the files: letters only, never digits or
  punctuation, never by an ASCII character), by a substitute drawn uniformly among the characters
  whose Unicode name describes the same letter decorated (``source: descriptions``, the default:
  :func:`~._attack_resources.described_forms`). The paper's substitutes are VIPER's description-based
  neighbours (DCES): 20 decorated forms of the same letter ("e" -> "ḗ", "Ḛ", "ᶓ", ...), about half of
  which lose their decoration under BERT's uncased normalisation; so 43 % (p = 0.1) to 32 % (p = 0.3)
  of the words they change keep their WordPiece tokens. VIPER's image-based neighbours (``source:
  viper``: the non-ASCII ones among the ``neighbours`` nearest in Zeroe's ``visual_repres.txt``, drawn
  uniformly or, ``weighting: similarity``, as VIPER ICES) are homoglyphs of other scripts ("е", "ɛ") and
  keep only 10-16 %: a harsher attack on BERTScore than the paper's at equal p. ``confusables`` draws
  among Unicode confusables.

:func:`attack_rate` measures the share of whitespace words changed and the edits (Levenshtein) per
changed word, the quantities :data:`~.attack_calibration.PAPER_RATES` holds; :func:`unit_rate` the share of the attack's own
unit (:data:`UNITS`) changed.

An instance never skips a non-empty text, even if nothing changed.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import _attack_rules as rules
from nlp_robustness.perturbations._attack_resources import RESOURCES, AttackResources, load_context
from nlp_robustness.perturbations._attack_rules import DOUBLED, SPELLINGS, VOWELS, ZEROE_SYMBOLS
from nlp_robustness.perturbations.base import Perturbed, Skipped

__all__ = [
    "CATEGORIES", "DEFAULT_SYMBOLS", "DOUBLED", "FUNCTIONS", "NEEDS_PARSE", "OPTIONS_SCHEMA", "PERTURBED_SIDES",
    "RESOURCES", "RESOURCE_DOWNLOADS", "SPELLINGS", "UNITS", "VOWELS",
    "AttackRate", "AttackResources", "UnitRate", "attack_rate", "attack_text", "eligible_units", "expand_functions",
    "instance_category", "instance_name", "load_context", "parse_instance", "perturb", "unit_rate",
]

NEEDS_PARSE = False
#: For the robustness of translation systems only the source is attacked.
PERTURBED_SIDES: tuple[str, ...] = ("source",)
#: Resource name -> the dataset-manifest download that holds it (canonical URL, checksum, mirror copy).
RESOURCE_DOWNLOADS: dict[str, str] = {"keyboard": "zeroe-en-key", "visual": "zeroe-visual-repres"}

#: Zeroe's intruders, as in paper 002's files: the 32 ASCII punctuation characters.
DEFAULT_SYMBOLS = list(ZEROE_SYMBOLS)


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
        "description": "Intruder symbols; one is drawn per attacked token (no whitespace). Default: Zeroe's string.punctuation."}),
    "disemvowel": _schema(),
    "keyboard": _schema(),
    "phonetic": _schema(max_tries={
        "type": "integer", "minimum": 1, "default": 10,
        "description": "Respellings drawn for an attacked word until one differs from it; else another word is attacked."}),
    "visual": _schema(
        source={"enum": ["descriptions", "viper", "confusables"], "default": "descriptions",
                "description": "descriptions: the decorated forms of the same letter by Unicode name, as paper 002's "
                               "VIPER DCES substitutes; viper: VIPER ICES nearest neighbours (homoglyphs of other "
                               "scripts, a harsher attack on BERT); confusables: Unicode confusables (confusable_homoglyphs)."},
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
    "description": "Perturbation levels p, paper 002's: the share of tokens changed (intrude, disemvowel, keyboard; "
                   "rounded up) or the probability that a letter is attacked (phonetic, visual)."})



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


def _with_defaults(attack: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with the default of every setting of ``attack``'s schema that it does not give."""
    return {**{key: schema["default"] for key, schema in FUNCTIONS[attack]["properties"].items()}, **settings}


def _visual_options(piece: str, settings: Mapping[str, Any], context: AttackResources | None) -> list:
    filled = _with_defaults("visual", settings)
    return rules.visual_options(piece, context, filled["source"], filled["neighbours"])


#: Attack -> the unit its level p is a share of.
UNITS: dict[str, str] = {"intrude": "tokens", "disemvowel": "tokens", "keyboard": "tokens", "phonetic": "words",
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
    rules.ATTACKS[attack](pieces, p, _with_defaults(attack, settings), rng, context)
    return " ".join(pieces)


def _token_count(piece: str) -> int:
    return len(rules.token_spans(piece))


def eligible_units(attack: str, text: str, context: AttackResources | None, settings: Mapping[str, Any] | None = None) -> int:
    """How many units of ``text`` (:data:`UNITS`) the attack's level p is a share or a probability of: for
    intrude, disemvowel and keyboard every token (punctuation included: Zeroe's target is p of them); for
    phonetic the CMU dictionary words; for visual the letters with substitutes (``context`` None: every
    letter, which equals the real count for English text with every source)."""
    _check_attack(attack)
    settings = settings or {}
    pieces = text.split(" ")
    if attack == "visual":
        return sum(len(_visual_options(piece, settings, context)) for piece in pieces)
    if attack == "phonetic":
        return sum(rules.phonetic_eligible(piece) for piece in pieces)
    return sum(_token_count(piece) for piece in pieces)


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

    @property
    def edits_per_changed_word(self) -> float:
        """Levenshtein edits per changed word (NaN when none changed): paper 002's files have 1.1 (keyboard)
        to 2.2 (disemvowel)."""
        return self.characters_changed / self.words_changed if self.words_changed else float("nan")


def _pieces(original: str, attacked: str) -> list[tuple[str, str]]:
    before, after = original.split(" "), attacked.split(" ")
    if len(before) != len(after):
        raise InputError(f"attacked text has {len(after)} space-separated pieces, the original {len(before)}")
    return [(a, b) for a, b in zip(before, after) if a]


def _changed_tokens(before: str, after: str) -> int:
    """How many of ``before``'s tokens ``after`` changed: those outside the longest matching token blocks."""
    if before == after:
        return 0
    tokens = [before[start:end] for start, end in rules.token_spans(before)]
    attacked = [after[start:end] for start, end in rules.token_spans(after)]
    matcher = difflib.SequenceMatcher(a=tokens, b=attacked, autojunk=False)
    return len(tokens) - sum(block.size for block in matcher.get_matching_blocks())


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
    """The :class:`UnitRate` of ``attacked`` against ``original``: the original's tokens changed (intrude,
    disemvowel, keyboard: tokens outside the longest matching blocks of the two token sequences, word by
    word), its CMU words changed (phonetic), or its eligible letters replaced (visual). ``context``: as :func:`eligible_units`.

    Raises:
        InputError: Unknown attack; the texts differ in pieces or (visual) a piece in length.
    """
    _check_attack(attack)
    settings, pairs = settings or {}, _pieces(original, attacked)
    if attack == "phonetic":
        eligible = [a != b for a, b in pairs if rules.phonetic_eligible(a)]
        return UnitRate("words", len(eligible), sum(eligible))
    if attack != "visual":
        return UnitRate("tokens", sum(_token_count(a) for a, _ in pairs), sum(_changed_tokens(a, b) for a, b in pairs))
    units = changed = 0
    for a, b in pairs:
        if len(a) != len(b):
            raise InputError(f"a visual attack keeps each word's length, but {a!r} became {b!r}")
        positions = [position for position, *_ in _visual_options(a, settings, context)]
        units, changed = units + len(positions), changed + sum(a[i] != b[i] for i in positions)
    return UnitRate("letters", units, changed)
