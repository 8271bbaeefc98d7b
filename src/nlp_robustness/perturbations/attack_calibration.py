"""How strong the character attacks are, measured as paper 002's own attacked references are measured.

Paper 002's authors publish the WMT19 references they attacked (github.com/long21wt/robust-bert-based-metrics
at commit 8cac959, ``wmt19/wmt19-metrics-task-package/input/attacked-references/<attack>/<p>/``).
:data:`PAPER_RATES` holds what :func:`measure` finds on their files for the seven to-English pairs (de, fi,
gu, kk, lt, ru, zh -> en: 11,019 lines), and the workflow's attacks are built to give the same numbers at the
same nominal level p on the same references (:mod:`.character_attacks` says how; the attack-rates tables
print both; tests/unit/test_attack_calibration.py pins the match on the mirror's references). Only the
numbers are kept here, not the authors' files. To measure them again from a checkout of that repository::

    .venv/bin/python -m nlp_robustness.perturbations.attack_calibration <checkout> <references folder>

What is measured (:class:`WordChanges`), over whitespace words, word by word:

* ``word_rate``: the share of words changed;
* ``edits_per_changed_word``: Levenshtein edits per changed word;
* ``wordpiece_kept``: the share of changed words whose uncased BERT WordPiece tokens
  (:func:`~nlp_robustness.scoring.unknown_tokens.load_wordpiece_tokenizer`) equal the clean word's: a
  changed word BERT still reads as the clean one (accents stripped by its normaliser).

The paper's intrude, disemvowel and keyboard files went through NLTK's detokeniser, which moves whitespace
("to..." -> "to ..."): a line whose whitespace word count changed is left out (about a fifth of the lines
of those attacks; none of phonetic and visual), on both sides, since its words cannot be paired.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

__all__ = ["PAPER_ATTACK_NAMES", "PAPER_PAIRS", "PAPER_RATES", "WordChanges", "measure", "paper_rate"]

#: The workflow's attack -> its folder name in the authors' files.
PAPER_ATTACK_NAMES: dict[str, str] = {"intrude": "intrude", "disemvowel": "disemvowel", "keyboard": "keyboard-typo",
                                      "phonetic": "phonetic", "visual": "visual"}
#: The seven WMT19 to-English pairs measured.
PAPER_PAIRS: tuple[str, ...] = ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")

#: (attack, p) -> (word_rate, edits_per_changed_word, wordpiece_kept) in paper 002's attacked references.
PAPER_RATES: dict[tuple[str, float], tuple[float, float, float]] = {
    ("intrude", 0.1): (0.1370, 1.235, 0.0), ("intrude", 0.2): (0.2460, 1.417, 0.0), ("intrude", 0.3): (0.3598, 1.661, 0.0),
    ("disemvowel", 0.1): (0.1366, 2.170, 0.0), ("disemvowel", 0.2): (0.2467, 2.167, 0.0),
    ("disemvowel", 0.3): (0.3616, 2.165, 0.0),
    ("keyboard", 0.1): (0.1372, 1.059, 0.0), ("keyboard", 0.2): (0.2492, 1.074, 0.0), ("keyboard", 0.3): (0.3652, 1.088, 0.0),
    ("phonetic", 0.1): (0.2312, 1.609, 0.033), ("phonetic", 0.2): (0.3923, 1.824, 0.019),
    ("phonetic", 0.3): (0.5057, 2.010, 0.014),
    ("visual", 0.1): (0.3675, 1.284, 0.431), ("visual", 0.2): (0.5919, 1.599, 0.377), ("visual", 0.3): (0.7333, 1.949, 0.324),
}


@dataclass(frozen=True)
class WordChanges:
    """Word-by-word changes of attacked texts against their clean ones (see the module docstring)."""

    lines: int
    lines_left_out: int
    words: int
    words_changed: int
    edits: int
    wordpiece_kept: int

    @property
    def word_rate(self) -> float:
        return self.words_changed / self.words if self.words else math.nan

    @property
    def edits_per_changed_word(self) -> float:
        return self.edits / self.words_changed if self.words_changed else math.nan

    @property
    def wordpiece_kept_rate(self) -> float:
        return self.wordpiece_kept / self.words_changed if self.words_changed else math.nan


def measure(clean: Iterable[str], attacked: Iterable[str], tokenizer: Any | None = None) -> WordChanges:
    """The :class:`WordChanges` of ``attacked`` against ``clean`` (paired lines); a line whose whitespace word
    count differs is left out. ``tokenizer`` (a ``tokenizers.Tokenizer``; None: the WordPiece one of
    :func:`~nlp_robustness.scoring.unknown_tokens.load_wordpiece_tokenizer`) decides ``wordpiece_kept``."""
    if tokenizer is None:
        from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer

        tokenizer = load_wordpiece_tokenizer()
    lines = left_out = words = changed = edits = kept = 0
    for before, after in zip(clean, attacked, strict=True):
        old, new = before.split(), after.split()
        if len(old) != len(new):
            left_out += 1
            continue
        lines += 1
        words += len(old)
        for a, b in zip(old, new):
            if a != b:
                changed += 1
                edits += Levenshtein.distance(a, b)
                kept += tokenizer.encode(a, add_special_tokens=False).tokens == tokenizer.encode(b, add_special_tokens=False).tokens
    return WordChanges(lines, left_out, words, changed, edits, kept)


def paper_rate(attack: str, p: float) -> tuple[float, float, float] | None:
    """Paper 002's (word_rate, edits_per_changed_word, wordpiece_kept) for ``attack`` at ``p``, if it published that level."""
    return PAPER_RATES.get((attack, round(float(p), 6)))


def _read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def measure_paper_files(checkout: Path, references: Path, levels: Sequence[float] = (0.1, 0.2, 0.3)) -> Mapping[tuple[str, float], WordChanges]:
    """:func:`measure` on the authors' attacked references (``checkout``: a work tree of their repository;
    ``references``: the folder of the clean ``newstest2019-<xx>en-ref.en`` files) per attack and level."""
    base = checkout / "wmt19" / "wmt19-metrics-task-package" / "input" / "attacked-references"
    results = {}
    for attack, folder in PAPER_ATTACK_NAMES.items():
        for p in levels:
            clean, attacked = [], []
            for pair in PAPER_PAIRS:
                name = f"newstest2019-{pair.replace('-', '')}-ref.en"
                clean += _read(references / name)
                attacked += _read(base / folder / f"{p:g}" / name)
            results[attack, p] = measure(clean, attacked)
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Measure paper 002's attacked WMT19 references (see the module docstring).")
    parser.add_argument("checkout", type=Path, help="work tree of github.com/long21wt/robust-bert-based-metrics")
    parser.add_argument("references", type=Path, help="folder of the clean newstest2019-<xx>en-ref.en files")
    arguments = parser.parse_args(argv)
    print("attack\tp\tword_rate\tedits_per_changed_word\twordpiece_kept\tlines\tlines_left_out")
    for (attack, p), changes in measure_paper_files(arguments.checkout, arguments.references).items():
        print(f"{attack}\t{p:g}\t{changes.word_rate:.4f}\t{changes.edits_per_changed_word:.3f}\t"
              f"{changes.wordpiece_kept_rate:.3f}\t{changes.lines}\t{changes.lines_left_out}")


if __name__ == "__main__":
    main()
