"""Attack levels as paper 002's files define them (nlp_robustness.perturbations.character_attacks) on real
references, the first 300 of WMT'19 lt-en: Zeroe's tokens (punctuation included) tile every word; intrude,
disemvowel and keyboard change ceil(p · tokens) tokens of a sentence (fewer only when it has too few a
token edit changes); keyboard makes one key typo per changed token, at a lowercase letter; disemvowel
leaves tokens under three characters; phonetic changes CMU words only, long ones more often, each letter
attacked with probability p; visual changes letters only, into non-ASCII forms of the same letter; the
rate table reports the unit rate, edits per changed word and the paper's rates beside the achieved ones."""

from __future__ import annotations

import functools
import math
from collections import Counter
import string
import unicodedata

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.outputs.metric_robustness import PAPER_COLUMNS, attacked_source_rates
from nlp_robustness.perturbations import _attack_rules as rules
from nlp_robustness.perturbations.attack_calibration import PAPER_RATES
from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer
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
TOKEN_ATTACKS = ("intrude", "disemvowel", "keyboard")

pytestmark = pytest.mark.skipif(not RESOURCE_FOLDER.is_dir() or not REFERENCES.is_file(), reason="no offline mirror")


def letters(word: str) -> str:
    return "".join(c for c in word if c.isalpha())


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


@pytest.mark.parametrize(("word", "tokens"), [
    ("2018:", ["2018", ":"]), ("don't", ["do", "n't"]), ("(AFP)", ["(", "AFP", ")"]), ("...", ["..."]),
    ("U.S.", ["U.S", "."]), ("04/05/2018", ["04/05/2018"]), ("well-known", ["well-known"]), ("it's", ["it", "'s"]),
    ("\"Yes,", ["\"", "Yes", ","]), ("", []),
])
def test_zeroe_tokens_tile_the_word_as_nltk_would_split_it(word, tokens):
    assert [word[start:end] for start, end in rules.token_spans(word)] == tokens


def test_tokens_tile_every_word_of_real_text():
    for line in lines():
        for word in line.split(" "):
            spans = rules.token_spans(word)
            assert "".join(word[start:end] for start, end in spans) == word
            assert all(end > start for start, end in spans) and all(b[0] == a[1] for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("p", LEVELS)
@pytest.mark.parametrize("attack", TOKEN_ATTACKS)
def test_a_sentence_gets_ceil_p_times_its_tokens_changed(attack, p):
    short = 0
    for original, result in zip(lines(), attacked(attack, p)):
        rate = attacks.unit_rate(attack, original, result, context())
        assert rate.unit == "tokens" and rate.units == attacks.eligible_units(attack, original, context())
        target = math.ceil(round(p * rate.units, 9))
        # counted back by aligning tokens: an edited token that splits differently ("don't" -> "dob't") counts one more
        assert rate.units_changed <= target + 1
        short += rate.units_changed < target
        assert all(a == b for a, b in zip(original.split(" "), result.split(" ")) if not letters(a) and not any(c.isdigit() for c in a)
                   and attack != "intrude")  # only intrude changes a token of punctuation ("..." -> "..).")
    assert short <= 0.05 * len(lines())  # a sentence with too few changeable tokens stops short


@pytest.mark.parametrize("p", LEVELS)
def test_phonetic_attacks_each_letter_of_a_dictionary_word_with_probability_p(p):
    by_length: dict[int, list[bool]] = {}
    for a, b in word_pairs("phonetic", p):
        if phonetic_core(a) is None:
            assert a == b
        else:
            by_length.setdefault(len(phonetic_core(a)), []).append(a != b)
    rates = {length: np.mean(changed) for length, changed in by_length.items() if len(changed) > 200}
    assert len(rates) >= 5
    for length, rate in rates.items():  # a word changes only if a letter is attacked, and more often when longer
        assert rate <= 1 - (1 - p) ** length + 0.03, (length, rate)
    ordered = [rates[length] for length in sorted(rates)]
    assert ordered[-1] > ordered[0]


def test_visual_substitutes_are_decorated_forms_of_the_same_letter():
    for original, result in zip(lines(), attacked("visual", 0.5)):
        for i in changed_positions(original, result):
            name = unicodedata.name(result[i])
            assert f" {original[i].upper()}" in name and not result[i].isascii(), (original[i], result[i], name)
    assert len(context().visual_neighbours("e", "descriptions", 20)[0]) >= 20


def test_keyboard_makes_one_key_typo_per_changed_token_at_a_lowercase_letter():
    changed = [(a, b) for a, b in word_pairs("keyboard", 0.5) if a != b]
    assert len(changed) > 1000
    for a, b in changed:
        positions = changed_positions(a, b)
        assert 1 <= len(positions) <= len(rules.token_spans(a))
        for i in positions:
            assert a[i].islower() and b[i] in keyboard_table()[a[i]]


def test_disemvowel_never_touches_tokens_under_three_characters():
    pairs = list(word_pairs("disemvowel", 0.5))
    short = [(a, b) for a, b in pairs if all(end - start < 3 for start, end in rules.token_spans(a))]
    assert len(short) > 1000 and all(a == b for a, b in short)
    assert sum(a != b for a, b in pairs) > 1000
    for text in ("It is an ox.", "It.", "Eu, up"):
        assert attacks.attack_text("disemvowel", text, 1.0, {}, np.random.default_rng(0), context()) == text


def test_intrude_puts_one_symbol_in_a_two_letter_word_and_in_every_gap_at_p1():
    for seed in range(20):
        result = attacks.attack_text("intrude", "an", 0.1, {}, np.random.default_rng(seed), context())
        assert result == "an" or (len(result) == 3 and result[0] + result[2] == "an" and result[1] in attacks.DEFAULT_SYMBOLS)
    assert attacks.attack_text("intrude", "(come)", 1.0, {"symbols": ["#"]}, np.random.default_rng(0), context()) == "(c#o#m#e)"


@pytest.mark.parametrize("settings", [{}, {"source": "viper"}, {"source": "confusables"}])
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
    source = settings.get("source", "descriptions")
    for i, c in enumerate(text):  # at p = 1 every letter with a look-alike is replaced by a non-ASCII one
        if c.isalpha():
            has_substitutes = bool(context().visual_neighbours(c, source, 20)[0])
            assert (result[i] != c and not result[i].isascii()) if has_substitutes else result[i] == c


def test_viper_substitutes_are_the_non_ascii_ones_among_the_k_nearest():
    for character in string.ascii_letters:
        substitutes, similarities = context().visual_neighbours(character, "viper", 20)
        assert substitutes == viper_look_alikes(character) and len(similarities) == len(substitutes) >= 14


def test_the_rate_table_reports_the_unit_rate_beside_word_and_character_rates_and_the_papers():
    derived = {
        "visual-p0.3": pd.DataFrame({"original_source": ["the cat sat", "a dog 19."], "source": ["the cαt sat", "a dog 19."]}),
        "disemvowel-p0.5": pd.DataFrame({"original_source": ["It was agreed today"], "source": ["It ws agreed tdy"]}),
    }
    rates = attacked_source_rates(derived, attacks.attack_rate, attacks.parse_instance, attacks.unit_rate, load_wordpiece_tokenizer())
    assert list(rates.columns) == ["function", "attack", "p", "segments", "unit", "unit_rate", "word_rate", "character_rate",
                                   "edits_per_changed_word", "wordpiece_kept", *PAPER_COLUMNS]
    visual, disemvowel = rates.to_dict("records")
    assert (visual["unit"], visual["unit_rate"]) == ("letters", pytest.approx(1 / 13))  # 13 letters; "19." not
    assert visual["word_rate"] == pytest.approx(1 / 6) and visual["character_rate"] == pytest.approx(1 / 16)
    assert visual["edits_per_changed_word"] == 1 and visual["wordpiece_kept"] == 0  # Greek alpha is no "a"
    assert (visual["paper_word_rate"], visual["paper_wordpiece_kept"]) == PAPER_RATES["visual", 0.3][::2]
    assert (disemvowel["unit"], disemvowel["unit_rate"]) == ("tokens", pytest.approx(2 / 4))
    assert disemvowel["word_rate"] == pytest.approx(2 / 4) and disemvowel["edits_per_changed_word"] == 1.5
    assert np.isnan(disemvowel["paper_word_rate"])  # the paper has no p = 0.5
    plain = attacked_source_rates(derived, attacks.attack_rate, attacks.parse_instance)
    assert list(plain.columns) == ["function", "attack", "p", "segments", "word_rate", "character_rate", "edits_per_changed_word",
                                   *PAPER_COLUMNS]


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
