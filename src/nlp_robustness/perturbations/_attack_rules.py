"""The rules of the character attacks (see :mod:`.character_attacks` for the readings chosen): token by token,
Zeroe's tokens of a whitespace word, Zeroe's draw of the tokens attacked, the edit each attack makes to an
attacked token, and the letters the phonetic and visual attacks may change; then each attack over the pieces of a
text (:data:`ATTACKS`). Pure functions of a word or text, their settings and an ``rng``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from string import punctuation
from typing import Any

from rapidfuzz.distance import Levenshtein

import numpy as np

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations._attack_resources import AttackResources, cmu_dictionary, insertable

__all__ = [
    "ATTACKS", "DOUBLED", "SPELLINGS", "VOWELS", "ZEROE_SYMBOLS", "attack_tokens", "disemvowel", "intrude_edit",
    "keyboard_edit", "letters", "phonetic_edit", "phonetic_eligible", "respell", "target", "token_spans",
    "visual_options",
]

VOWELS = frozenset("aeiouAEIOU")

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


#: Zeroe's intruder symbols: ``string.punctuation``.
ZEROE_SYMBOLS: tuple[str, ...] = tuple(punctuation)
#: A word of letters and digits, joined by the characters Treebank keeps inside a token ("04/05/2018",
#: "U.S", "1,000", "well-known", "O'Brien"), then a clitic Treebank splits off ("n't", "'s", "'ll", ...).
_WORD_TOKEN = re.compile(r"[^\W_]+(?:[.,/:'’-][^\W_]+)*")
_CLITIC = re.compile(r"(?i)(?:n['’]t|['’](?:s|m|d|re|ve|ll))$")
_OTHER_TOKEN = re.compile(r"(.)\1*")


def token_spans(piece: str) -> list[tuple[int, int]]:
    """Zeroe's tokens of one whitespace word, as (start, end) spans that tile it: ``nltk.word_tokenize``'s
    units, approximated without NLTK. A word token (:data:`_WORD_TOKEN`) is one token, its clitic another
    ("don't" -> "do", "n't"); every other character is a token, a run of one repeated character one token
    ("..." , "--"). "2018:" -> "2018", ":"; "(AFP)" -> "(", "AFP", ")"."""
    spans: list[tuple[int, int]] = []
    position = 0
    while position < len(piece):
        word = _WORD_TOKEN.match(piece, position)
        if word:
            clitic = _CLITIC.search(word.group())
            cut = word.start() + clitic.start() if clitic and clitic.start() > 0 else word.end()
            spans.extend([(word.start(), cut), (cut, word.end())] if cut < word.end() else [(word.start(), word.end())])
            position = word.end()
        else:
            run = _OTHER_TOKEN.match(piece, position)
            spans.append((run.start(), run.end()))
            position = run.end()
    return spans


def target(count: int, p: float) -> int:
    """How many of ``count`` tokens Zeroe changes at level p: ``while changed < p * count`` gives ceil(p * count)."""
    return math.ceil(round(p * count, 9))  # 0.3 * 10 is 3.0000000000000004


def attack_tokens(pieces: list[str], p: float, rng: np.random.Generator, edit: Callable[[str], str]) -> None:
    """Zeroe's draw (``simple_perturb``) over the tokens of ``pieces`` (:func:`token_spans`), in place: the
    tokens, punctuation included, are visited in a random order without replacement and edited until
    :func:`target` of all of them changed; a token its edit gives back counts nothing and the next is tried.
    Punctuation counts in the target but rarely changes, so more words change than p of them."""
    tokens = [[piece[start:end] for start, end in token_spans(piece)] for piece in pieces]
    where = [(number, index) for number, piece_tokens in enumerate(tokens) for index in range(len(piece_tokens))]
    goal, changed = target(len(where), p), 0
    for visit in rng.permutation(len(where)) if goal else ():
        if changed == goal:
            break
        number, index = where[int(visit)]
        edited = edit(tokens[number][index])
        if edited != tokens[number][index]:
            tokens[number][index], changed = edited, changed + 1
    pieces[:] = ["".join(piece_tokens) for piece_tokens in tokens]


def letters(piece: str) -> list[int]:
    """The positions of the letters (``str.isalpha``) of a word."""
    return [i for i, character in enumerate(piece) if character.isalpha()]


def intrude_edit(token: str, p: float, symbols: Sequence[str], rng: np.random.Generator) -> str:
    """Zeroe's intruders: a token that is a piece of ``string.punctuation`` or shorter than two characters
    stays; else one symbol is drawn uniformly and each gap between adjacent characters gets it with
    probability p, drawn given that at least one does (Zeroe redraws an unchanged token): the first gap
    that gets it is drawn with weights (1 - p)^j, each later gap then independently with probability p.
    A two-character token gets exactly one ("a>n", "2\\018" has one in its first gap)."""
    if len(token) < 2 or token in punctuation:
        return token
    gaps = len(token) - 1
    symbol = symbols[int(rng.integers(len(symbols)))]
    cumulative = np.cumsum((1 - p) ** np.arange(gaps))
    opening = min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), gaps - 1)
    chosen = [opening, *(opening + 1 + np.flatnonzero(rng.random(gaps - opening - 1) < p)).tolist()]
    cuts = [0, *(1 + gap for gap in chosen), len(token)]
    return symbol.join(token[start:end] for start, end in zip(cuts, cuts[1:]))


def disemvowel(token: str) -> str:
    """Zeroe's disemvoweling: a token of three or more characters that are not all vowels loses its vowels
    (a e i o u, either case); a shorter or all-vowel token stays."""
    if len(token) < 3 or all(c in VOWELS for c in token):
        return token
    return "".join(c for c in token if c not in VOWELS)


def keyboard_edit(token: str, table: Mapping[str, Sequence[str]], rng: np.random.Generator) -> str:
    """Zeroe's key typo: one character of the token is drawn uniformly; if it is a key of en.key (lowercase
    letters) it becomes one of its neighbours (letters or digits), drawn uniformly; else the token stays
    and another is tried (Zeroe's ``word[i].upper()`` is discarded: uppercase letters never change)."""
    position = int(rng.integers(len(token)))
    options = table.get(token[position])
    if not options:
        return token
    return token[:position] + options[int(rng.integers(len(options)))] + token[position + 1:]


def respell(phonemes: Sequence[str], rng: np.random.Generator) -> str:
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


def _phonetic_core(piece: str) -> tuple[int, int] | None:
    """Where the word's core (first to last letter) lies, if it is ASCII letters and apostrophes and in CMU."""
    found = letters(piece)
    core = piece[found[0]:found[-1] + 1] if found else ""
    return (found[0], found[-1] + 1) if _CMU_WORD.fullmatch(core) and core.lower() in cmu_dictionary() else None


def phonetic_eligible(piece: str) -> bool:
    return _phonetic_core(piece) is not None


def phonetic_edit(piece: str, p: float, tries: int, rng: np.random.Generator) -> str:
    """Each letter of the word's core is attacked with probability p, and an attacked letter takes the
    respelling of its sound: the core's respelling (:func:`respell` of its first CMU pronunciation, drawn
    up to ``tries`` times until it differs from the core, case ignored) is aligned to the core
    (Levenshtein opcodes), and each differing block is applied if a letter it covers (an insertion: the
    letter before it) was attacked. A word none of whose blocks is hit stays. So a longer word changes
    more often, and in more places, as in paper 002's files ("Munich" -> "Munech", "the" -> "thi").
    An all-uppercase core stays uppercase, a capital first letter stays capital, the characters around
    the core stay ("Nau", "agreemunt")."""
    start, end = _phonetic_core(piece)
    core = piece[start:end]
    lower = core.lower()
    attacked = rng.random(len(core)) < p
    if not attacked.any():
        return piece
    phonemes = cmu_dictionary()[lower][0]
    spelling = next((s for s in (respell(phonemes, rng) for _ in range(tries)) if s != lower), None)
    if spelling is None:
        return piece
    parts = []
    for tag, a_start, a_end, b_start, b_end in Levenshtein.opcodes(lower, spelling):
        covered = attacked[a_start:a_end] if a_end > a_start else attacked[max(a_start - 1, 0):a_start + 1]
        hit = tag != "equal" and bool(covered.any())
        parts.append(spelling[b_start:b_end] if hit else lower[a_start:a_end])
    result = "".join(parts)
    if result == lower:
        return piece
    if core.isupper() and len(core) > 1:
        result = result.upper()
    elif core[0].isupper():
        result = result[0].upper() + result[1:]
    return piece[:start] + result + piece[end:]


def visual_options(piece: str, context: AttackResources | None, source: str, k: int) -> list[tuple[int, tuple[str, ...], np.ndarray | None]]:
    """The letters of ``piece`` that have (non-ASCII) substitutes, as (position, substitutes, their
    similarities); ``context`` None: every letter, with no substitutes listed."""
    if context is None:
        return [(i, (), None) for i in letters(piece)]
    options = ((i, *context.visual_neighbours(piece[i], source, k)) for i in letters(piece))
    return [option for option in options if option[1]]


# --------------------------------------------------------------------------------------------
# Each attack over the pieces of a text
# --------------------------------------------------------------------------------------------


def _intrude(pieces: list[str], p: float, settings: Mapping[str, Any], rng: np.random.Generator,
             context: AttackResources | None) -> None:
    """Rule: Zeroe's draw of ceil(p · tokens) changed tokens; a token gets one symbol drawn from ``symbols``
    in one or more of its gaps, each with probability p (:func:`intrude_edit`, "c/o/me t+o a>n")."""
    symbols = list(settings["symbols"])
    if not all(insertable(character) for symbol in symbols for character in symbol):
        raise InputError(f"intrude symbols must not hold whitespace or control characters: {symbols!r}")
    attack_tokens(pieces, p, rng, lambda token: intrude_edit(token, p, symbols, rng))


def _disemvowel(pieces: list[str], p: float, settings: Mapping[str, Any], rng: np.random.Generator,
                context: AttackResources | None) -> None:
    """Rule: Zeroe's draw of ceil(p · tokens) changed tokens; a token of three or more characters, not all
    vowels, loses all its vowels ("Nw thy ... grmnt"; "It" stays)."""
    attack_tokens(pieces, p, rng, disemvowel)


def _keyboard(pieces: list[str], p: float, settings: Mapping[str, Any], rng: np.random.Generator,
              context: AttackResources | None) -> None:
    """Rule: Zeroe's draw of ceil(p · tokens) changed tokens; a token gets one key typo at a character drawn
    uniformly, if it is a lowercase letter of en.key (:func:`keyboard_edit`, "No3", "xn agrrement")."""
    table = context.keyboard
    attack_tokens(pieces, p, rng, lambda token: keyboard_edit(token, table, rng))


def _phonetic(pieces: list[str], p: float, settings: Mapping[str, Any], rng: np.random.Generator,
              context: AttackResources | None) -> None:
    """Rule: in every word whose core (first to last letter) is ASCII letters and apostrophes and a CMU
    dictionary word, each letter is attacked with probability p; the word takes the parts of a respelling
    of its pronunciation that cover its attacked letters (:func:`phonetic_edit`, "Nau",
    "agreemunt")."""
    tries = settings["max_tries"]
    for number, piece in enumerate(pieces):
        if phonetic_eligible(piece):
            pieces[number] = phonetic_edit(piece, p, tries, rng)


def _visual(pieces: list[str], p: float, settings: Mapping[str, Any], rng: np.random.Generator,
            context: AttackResources | None) -> None:
    """Rule: each letter that has non-ASCII substitutes (descriptions: its decorated forms; VIPER: the
    non-ASCII ones among its ``neighbours`` nearest in the embeddings; confusables: its non-ASCII
    single-character confusables) is replaced with probability p by one of them, drawn uniformly (or, ``weighting: similarity``,
    proportionally to the cosine similarity, negative ones counted as 0). Digits, punctuation and
    symbols are never attacked."""
    weighted = settings["weighting"] == "similarity"
    for number, piece in enumerate(pieces):
        options = visual_options(piece, context, settings["source"], settings["neighbours"])
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


#: Attack -> the rule that attacks the pieces of a text (``text.split(" ")``) in place at level p, given the
#: attack's settings with every default filled in and the family's resources.
ATTACKS: dict[str, Callable[[list[str], float, Mapping[str, Any], np.random.Generator, AttackResources | None], None]] = {
    "intrude": _intrude, "disemvowel": _disemvowel, "keyboard": _keyboard, "phonetic": _phonetic, "visual": _visual,
}
