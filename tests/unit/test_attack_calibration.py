"""The character attacks are as strong as paper 002's (nlp_robustness.perturbations.attack_calibration): on
the mirror's WMT19 to-English references (the first 300 lines of each of the seven pairs, every line seeded
on its own), each attack at p = 0.1, 0.2, 0.3 changes the share of whitespace words the authors' attacked
files change within 0.03, with edits per changed word within 0.25 and, for visual, the share of changed
words that keep their WordPiece tokens within 0.10. The measure itself is checked on small texts."""

from __future__ import annotations

import functools

import pytest

from nlp_robustness.perturbations import character_attacks as attacks
from nlp_robustness.perturbations.attack_calibration import PAPER_PAIRS, PAPER_RATES, measure, paper_rate
from nlp_robustness.sampling import rng_for
from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer
from tests.paths import MIRROR

REFERENCES = MIRROR / "wmt19-newstest2019-to-en" / "references"
RESOURCE_FOLDER = MIRROR / "zeroe-attack-resources"
LINES_PER_PAIR = 300

pytestmark = pytest.mark.skipif(not REFERENCES.is_dir() or not RESOURCE_FOLDER.is_dir(), reason="no offline mirror")


@functools.cache
def references() -> tuple[str, ...]:
    lines: list[str] = []
    for pair in PAPER_PAIRS:
        lines += (REFERENCES / f"newstest2019-{pair.replace('-', '')}-ref.en").read_text(encoding="utf-8").split("\n")[:LINES_PER_PAIR]
    return tuple(lines)


@functools.cache
def tokenizer():
    return load_wordpiece_tokenizer()


@pytest.mark.parametrize(("attack", "p"), list(PAPER_RATES))
def test_the_attack_changes_as_much_as_the_papers_at_the_same_level(attack, p):
    context = attacks.load_context({name: RESOURCE_FOLDER / file for name, file in attacks.RESOURCES.items()})
    clean = references()
    attacked = [attacks.attack_text(attack, line, p, {}, rng_for(0, "calibration", attack, str(p), str(number)), context)
                for number, line in enumerate(clean)]
    achieved = measure(clean, attacked, tokenizer())
    paper_words, paper_edits, paper_kept = PAPER_RATES[attack, p]
    assert achieved.lines_left_out == 0  # whitespace is never moved
    assert abs(achieved.word_rate - paper_words) <= 0.03, (achieved.word_rate, paper_words)
    assert abs(achieved.edits_per_changed_word - paper_edits) <= 0.25, (achieved.edits_per_changed_word, paper_edits)
    if attack == "visual":
        assert abs(achieved.wordpiece_kept_rate - paper_kept) <= 0.10, (achieved.wordpiece_kept_rate, paper_kept)


def test_the_measure_pairs_words_and_leaves_out_lines_whose_whitespace_moved():
    changes = measure(["the cat sat", "to...", "a b"], ["thé cαt sat", "to ...", "a b"], tokenizer())
    assert (changes.lines, changes.lines_left_out, changes.words, changes.words_changed, changes.edits) == (2, 1, 5, 2, 2)
    assert changes.word_rate == pytest.approx(2 / 5) and changes.edits_per_changed_word == 1
    assert changes.wordpiece_kept == 1  # "thé" is "the" to uncased BERT; Greek alpha is not "a"
    assert paper_rate("keyboard", 0.30000000001) == PAPER_RATES["keyboard", 0.3] and paper_rate("keyboard", 0.5) is None
