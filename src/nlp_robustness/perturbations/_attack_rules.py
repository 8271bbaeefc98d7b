"""The rules of the character attacks, word by word (see :mod:`.character_attacks` for the readings
chosen): which words and letters each attack may change, the one edit it makes to an attacked word, and
Zeroe's draw of the share of words attacked. Pure functions of a word, their settings and an ``rng``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from string import ascii_lowercase

import numpy as np

from nlp_robustness.perturbations._attack_resources import AttackResources, cmu_dictionary

__all__ = [
    "DOUBLED", "SPELLINGS", "VOWELS", "ZEROE_KEYS", "attack_words", "disemvowel", "disemvowel_eligible",
    "intrude_edit", "intrude_eligible", "keyboard_edit", "keyboard_eligible", "letters", "phonetic_edit",
    "phonetic_eligible", "respell", "share", "visual_options",
]

VOWELS = frozenset("aeiouAEIOU")
#: The keys of Zeroe's en.key (the lowercase ASCII letters): keyboard eligibility without the resource.
ZEROE_KEYS = frozenset(ascii_lowercase)

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


def share(count: int, p: float, rng: np.random.Generator) -> int:
    """How many of ``count`` units to attack: p·count rounded down, plus one with probability equal to
    its fractional part, so the expected number is exactly p·count and the achieved one within 1 of it
    (Zeroe rounds up, which overshoots p in short sentences)."""
    target = round(p * count, 9)  # 0.3 * 10 is 3.0000000000000004
    whole = int(np.floor(target))
    return whole + int(rng.random() < target - whole)


def attack_words(pieces: list[str], eligible: Sequence[int], p: float, rng: np.random.Generator,
                 edit: Callable[[str], str | None]) -> None:
    """Zeroe's draw: the eligible words (indices into ``pieces``) are visited in a random order, without
    replacement, and edited in place until :func:`share` of them changed; an edit that gives the word
    back (or None) moves on to the next one."""
    target, changed = share(len(eligible), p, rng), 0
    for index in rng.permutation(len(eligible)) if target else ():
        if changed == target:
            break
        number = eligible[int(index)]
        edited = edit(pieces[number])
        if edited is not None and edited != pieces[number]:
            pieces[number], changed = edited, changed + 1


def letters(piece: str) -> list[int]:
    """The positions of the letters (``str.isalpha``) of a word."""
    return [i for i, character in enumerate(piece) if character.isalpha()]


def intrude_eligible(piece: str) -> bool:
    return len(letters(piece)) >= 2


def intrude_edit(piece: str, p: float, symbols: Sequence[str], rng: np.random.Generator) -> str:
    """Zeroe's intruders: one symbol drawn uniformly; each gap between adjacent characters from the first
    to the last alphanumeric one gets it with probability p, drawn given that at least one does (Zeroe
    redraws an unchanged word): the first gap that gets it is drawn with weights (1 - p)^j, each later gap
    then independently with probability p. A two-letter word gets exactly one ("a>n")."""
    alphanumeric = [i for i, character in enumerate(piece) if character.isalnum()]
    first, gaps = alphanumeric[0], alphanumeric[-1] - alphanumeric[0]
    symbol = symbols[int(rng.integers(len(symbols)))]
    cumulative = np.cumsum((1 - p) ** np.arange(gaps))
    opening = min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), gaps - 1)
    chosen = [opening, *(opening + 1 + np.flatnonzero(rng.random(gaps - opening - 1) < p)).tolist()]
    cuts = [0, *(first + 1 + gap for gap in chosen), len(piece)]
    return symbol.join(piece[start:end] for start, end in zip(cuts, cuts[1:]))


def disemvowel_eligible(piece: str) -> bool:
    """Three or more letters, among them a vowel and another letter (Zeroe: three characters, not all vowels)."""
    found = [piece[i] for i in letters(piece)]
    return len(found) >= 3 and any(c in VOWELS for c in found) and any(c not in VOWELS for c in found)


def disemvowel(piece: str) -> str:
    return "".join(c for c in piece if c not in VOWELS)


def keyboard_eligible(piece: str, keys: Mapping[str, Sequence[str]] | frozenset[str]) -> bool:
    return any(c.isalpha() and c.lower() in keys for c in piece)


def keyboard_edit(piece: str, table: Mapping[str, Sequence[str]], rng: np.random.Generator) -> str:
    """One key typo: a letter of the word whose lowercase is a key of en.key is drawn uniformly and
    replaced by one of its neighbours, drawn uniformly; an uppercase letter's letter neighbour is
    uppercased (Zeroe draws any character and leaves uppercase ones, then moves to another word)."""
    positions = [i for i, c in enumerate(piece) if c.isalpha() and c.lower() in table]
    position = positions[int(rng.integers(len(positions)))]
    original, options = piece[position], table[piece[position].lower()]
    neighbour = options[int(rng.integers(len(options)))]
    neighbour = neighbour.upper() if original.isupper() and neighbour.isalpha() else neighbour
    return piece[:position] + neighbour + piece[position + 1:]


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


def phonetic_edit(piece: str, tries: int, rng: np.random.Generator) -> str | None:
    """The core respelled whole from its first CMU pronunciation (:func:`respell`), drawn up to ``tries``
    times until it differs from the core (case ignored), else None; an all-uppercase core stays uppercase,
    a capital first letter stays capital, the characters around the core stay ("Nau", "agreemunt")."""
    start, end = _phonetic_core(piece)
    core = piece[start:end]
    phonemes = cmu_dictionary()[core.lower()][0]
    spelling = next((s for s in (respell(phonemes, rng) for _ in range(tries)) if s != core.lower()), None)
    if spelling is None:
        return None
    if core.isupper() and len(core) > 1:
        spelling = spelling.upper()
    elif core[0].isupper():
        spelling = spelling[0].upper() + spelling[1:]
    return piece[:start] + spelling + piece[end:]


def visual_options(piece: str, context: AttackResources | None, source: str, k: int) -> list[tuple[int, tuple[str, ...], np.ndarray | None]]:
    """The letters of ``piece`` that have (non-ASCII) substitutes, as (position, substitutes, their
    similarities); ``context`` None: every letter, with no substitutes listed."""
    if context is None:
        return [(i, (), None) for i in letters(piece)]
    options = ((i, *context.visual_neighbours(piece[i], source, k)) for i in letters(piece))
    return [option for option in options if option[1]]
