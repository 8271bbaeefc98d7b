"""Attack levels as Zeroe defines them (nlp_robustness.perturbations.character_attacks) on real
references, the first 300 of WMT'19 lt-en: the share of each attack's own units it changes (eligible
words; letters for visual) is p within 0.03 at p = 0.1, 0.3, 0.5, counted here with the test's own
eligibility rules; each sentence gets p times its eligible words, rounded down or up; keyboard makes one
key typo per attacked word; disemvowel leaves words under three letters; visual changes letters only,
into non-ASCII characters; the rate table reports the unit rate beside the word and character rates."""

from __future__ import annotations

import functools
import math
from collections import Counter
import string

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.outputs.metric_robustness import attacked_source_rates
from nlp_robustness.perturbations import character_attacks as attacks
from tests.unit.test_character_attacks import (
    REFERENCES,
    RESOURCE_FOLDER,
    VOWELS,
    attacked,
    changed_positions,
    context,
    keyboard_table,
    lines,
    phonetic_core,
    viper,
    word_pairs,
)

LEVELS = (0.1, 0.3, 0.5)
TOLERANCE = 0.03
WORD_ATTACKS = ("intrude", "disemvowel", "keyboard", "phonetic")

pytestmark = pytest.mark.skipif(not RESOURCE_FOLDER.is_dir() or not REFERENCES.is_file(), reason="no offline mirror")


def letters(word: str) -> str:
    return "".join(c for c in word if c.isalpha())


#: The test's own eligibility rule of each word-level attack.
ELIGIBLE = {
    "intrude": lambda word: len(letters(word)) >= 2,
    "disemvowel": lambda word: len(letters(word)) >= 3 and bool(VOWELS & set(word)) and bool(set(letters(word)) - VOWELS),
    "keyboard": lambda word: any(c.lower() in keyboard_table() for c in letters(word)),
    "phonetic": lambda word: phonetic_core(word) is not None,
}


@functools.cache
def viper_look_alikes(character: str, k: int = 20) -> tuple[str, ...]:
    """The non-ASCII ones among the k nearest printable VIPER characters, computed here again."""
    characters, vectors = viper()
    if character not in characters:
        return ()
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    printable = np.array([len(c) == 1 and c.isprintable() and not c.isspace() for c in characters])
    row = characters.index(character)
    similarity = np.where(printable, unit @ unit[row], -np.inf)
    similarity[row] = -np.inf
    nearest = [characters[j] for j in np.argsort(-similarity, kind="stable")[:k]]
    return tuple(c for c in nearest if not c.isascii())


def own_rate(attack: str, p: float) -> tuple[int, int]:
    """(eligible units, changed units) over the slice, counted without the module's code."""
    if attack == "visual":
        units = changed = 0
        for original, result in zip(lines(), attacked("visual", p)):
            eligible = {i for i, c in enumerate(original) if c.isalpha() and viper_look_alikes(c)}
            units += len(eligible)
            changed += len(set(changed_positions(original, result)) & eligible)
        return units, changed
    pairs = [(a, b) for a, b in word_pairs(attack, p) if ELIGIBLE[attack](a)]
    return len(pairs), sum(a != b for a, b in pairs)


@pytest.mark.parametrize("p", LEVELS)
@pytest.mark.parametrize("attack", [*WORD_ATTACKS, "visual"])
def test_the_share_of_the_attacks_own_units_changed_is_p(attack, p):
    units, changed = own_rate(attack, p)
    assert units > 1000 and abs(changed / units - p) < TOLERANCE, changed / units
    measured = [attacks.unit_rate(attack, a, b, context()) for a, b in zip(lines(), attacked(attack, p))]
    assert (sum(m.units for m in measured), sum(m.units_changed for m in measured)) == (units, changed)
    assert {m.unit for m in measured} == {attacks.UNITS[attack]}
    assert units == sum(attacks.eligible_units(attack, line, context()) for line in lines())
    # without resources (the rate table's reading) the counts are the same on this text
    plain = [attacks.unit_rate(attack, a, b) for a, b in zip(lines(), attacked(attack, p))]
    assert (sum(m.units for m in plain), sum(m.units_changed for m in plain)) == (units, changed)


@pytest.mark.parametrize("p", LEVELS)
@pytest.mark.parametrize("attack", WORD_ATTACKS)
def test_each_sentence_gets_p_times_its_eligible_words_rounded_and_only_eligible_words_change(attack, p):
    for original, result in zip(lines(), attacked(attack, p)):
        pairs = list(zip(original.split(" "), result.split(" ")))
        eligible = [a != b for a, b in pairs if ELIGIBLE[attack](a)]
        assert all(a == b for a, b in pairs if not ELIGIBLE[attack](a))
        target = p * len(eligible)
        low = math.floor(target + 1e-9) if attack != "phonetic" else 0  # a word no respelling changes is passed over
        assert low <= sum(eligible) <= math.ceil(target - 1e-9)


def test_keyboard_makes_exactly_one_key_typo_per_changed_word():
    changed = [(a, b) for a, b in word_pairs("keyboard", 0.5) if a != b]
    assert len(changed) > 1000
    for a, b in changed:
        (i,) = changed_positions(a, b)
        assert b[i].lower() in keyboard_table()[a[i].lower()]
        assert not b[i].isalpha() or b[i].isupper() == a[i].isupper()


def test_disemvowel_never_touches_words_under_three_letters():
    pairs = list(word_pairs("disemvowel", 0.5))
    short = [(a, b) for a, b in pairs if len(letters(a)) < 3]
    assert len(short) > 1000 and all(a == b for a, b in short)
    assert sum(a != b for a, b in pairs) > 1000
    for text in ("It is an ox.", "It.", "Eu, up"):
        assert attacks.attack_text("disemvowel", text, 1.0, {}, np.random.default_rng(0), context()) == text


def test_intrude_puts_one_symbol_in_a_two_letter_word_and_in_every_gap_at_p1():
    for seed in range(20):
        result = attacks.attack_text("intrude", "an", 0.1, {}, np.random.default_rng(seed), context())
        assert result == "an" or (len(result) == 3 and result[0] + result[2] == "an" and result[1] in attacks.DEFAULT_SYMBOLS)
    assert attacks.attack_text("intrude", "(come)", 1.0, {"symbols": ["#"]}, np.random.default_rng(0), context()) == "(c#o#m#e)"


@pytest.mark.parametrize("settings", [{}, {"source": "confusables"}])
def test_visual_changes_letters_only_and_never_into_ascii(settings):
    changed = 0
    for original, result in zip(lines(), attacked("visual", 0.5, **settings)):
        for i in changed_positions(original, result):
            assert original[i].isalpha() and not result[i].isascii(), (original[i], result[i])
            changed += 1
    assert changed > 5000
    text = "On 19 November, 2019: 7.5% (A&B)!"
    result = attacks.attack_text("visual", text, 1.0, settings, np.random.default_rng(0), context())
    kept = [i for i, c in enumerate(text) if not c.isalpha()]
    assert [result[i] for i in kept] == [text[i] for i in kept]
    source = settings.get("source", "viper")
    for i, c in enumerate(text):  # at p = 1 every letter with a look-alike is replaced by a non-ASCII one
        if c.isalpha():
            has_substitutes = bool(context().visual_neighbours(c, source, 20)[0])
            assert (result[i] != c and not result[i].isascii()) if has_substitutes else result[i] == c


def test_viper_substitutes_are_the_non_ascii_ones_among_the_k_nearest():
    for character in string.ascii_letters:
        substitutes, similarities = context().visual_neighbours(character, "viper", 20)
        assert substitutes == viper_look_alikes(character) and len(similarities) == len(substitutes) >= 14


def test_the_rate_table_reports_the_unit_rate_beside_word_and_character_rates():
    derived = {
        "visual-p0.3": pd.DataFrame({"original_source": ["the cat sat", "a dog 19."], "source": ["the cαt sat", "a dog 19."]}),
        "disemvowel-p0.5": pd.DataFrame({"original_source": ["It was agreed today"], "source": ["It ws agreed tdy"]}),
    }
    rates = attacked_source_rates(derived, attacks.attack_rate, attacks.parse_instance, attacks.unit_rate)
    assert list(rates.columns) == ["function", "attack", "p", "segments", "unit", "unit_rate", "word_rate", "character_rate"]
    visual, disemvowel = rates.to_dict("records")
    assert (visual["unit"], visual["unit_rate"]) == ("letters", pytest.approx(1 / 13))  # 13 letters; "19." not
    assert visual["word_rate"] == pytest.approx(1 / 6) and visual["character_rate"] == pytest.approx(1 / 16)
    assert (disemvowel["unit"], disemvowel["unit_rate"]) == ("words", pytest.approx(2 / 3))  # "It" is not eligible
    assert disemvowel["word_rate"] == pytest.approx(2 / 4)
    plain = attacked_source_rates(derived, attacks.attack_rate, attacks.parse_instance)
    assert list(plain.columns) == ["function", "attack", "p", "segments", "word_rate", "character_rate"]


@pytest.mark.parametrize("p", LEVELS)
def test_an_intruded_word_has_each_gap_with_probability_p_given_at_least_one(p):
    """Zeroe redraws a word its intruders left unchanged: the symbols in a word of g gaps follow a
    binomial(g, p) given at least one, mean g p / (1 - (1 - p)^g), and no gap is favoured."""
    rng, gaps, draws = np.random.default_rng(5), 8, 4000
    results = [attacks.attack_text("intrude", "agreement", p, {"symbols": ["#"]}, rng, context())
               for _ in range(int(draws / p))]
    attacked_words = [r for r in results if r != "agreement"]
    counts = np.array([r.count("#") for r in attacked_words])
    assert counts.min() >= 1 and abs(counts.mean() - gaps * p / (1 - (1 - p) ** gaps)) < 0.1
    per_gap = Counter(len(r[:i].replace("#", "")) - 1 for r in attacked_words for i, c in enumerate(r) if c == "#")
    assert max(per_gap.values()) / min(per_gap.values()) < 1.25 and len(per_gap) == gaps
