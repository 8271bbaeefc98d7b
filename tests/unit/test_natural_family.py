"""The natural family (paper 001's naive perturbations) on real texts: WMT14 English news sources and
Amazon reviews (title and text joined by a line break), the Zeroe natural typo list, each rule on
hand-made examples, the achieved rates, and the family through the perturbation machinery."""

from __future__ import annotations

import copy
import functools
import re
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.data.reviews import read_blitzer_reviews
from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import natural, natural_units
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.configuration import fill_schema_defaults
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, STATUS_COLUMNS, derive_testset, perturbed_sides, sample_group
from tests.paths import MIRROR

FAMILY = "natural"
WMT14 = MIRROR / "wmt14-newstest2014-enfr" / "derived"
TYPO_LIST = MIRROR / "zeroe-attack-resources" / "en.natural"
REVIEWS = MIRROR / "amazon-multidomain-sentiment" / "sorted_data_acl" / "kitchen_&_housewares" / "negative.review"
PUNCTUATION_FUNCTIONS = ("punctuation_removal", "punctuation_alteration")

needs_mirror = pytest.mark.skipif(
    not (WMT14.is_dir() and TYPO_LIST.is_file() and REVIEWS.is_file()), reason=f"offline data mirror not found at {MIRROR}"
)


@functools.cache
def wmt14_sources(count: int = 300) -> tuple[str, ...]:
    return tuple((WMT14 / "newstest2014.en-fr.en").read_text(encoding="utf-8").split("\n")[:count])


@functools.cache
def wmt14_references(count: int = 300) -> tuple[str, ...]:
    return tuple((WMT14 / "newstest2014.en-fr.fr").read_text(encoding="utf-8").split("\n")[:count])


@functools.cache
def review_texts(count: int = 40) -> tuple[str, ...]:
    """Real reviews as a sentiment system reads them: title, a line break, the text (paragraph breaks kept)."""
    reviews = read_blitzer_reviews(REVIEWS, domain="kitchen_&_housewares", label="negative").iloc[:count]
    return tuple(title + "\n" + text for title, text in zip(reviews["title"], reviews["review_text"]))


def context() -> natural.NaturalResources:
    """The typo list; its typos are checked against Apertium's analysers, so without lt-proc the test is skipped."""
    if shutil.which("lt-proc") is None:
        pytest.skip("lt-proc (Apertium) is not on PATH: the natural typos are checked against its analysers")
    return _context()


@functools.cache
def _context() -> natural.NaturalResources:
    return natural.load_context({"typos": TYPO_LIST})


def context_for(function: str) -> natural.NaturalResources | None:
    return context() if function == "typos" else None


def rng(seed: int, index: int = 0) -> np.random.Generator:
    return np.random.default_rng([seed, index])


def perturb(function: str, text: str, seed: int = 0, index: int = 0, **settings) -> Perturbed | Skipped:
    return natural.perturb(function, text, settings, rng(seed, index), context_for(function))


def whitespace(text: str) -> list[str]:
    """The whitespace runs between the non-whitespace runs: what every function keeps."""
    return re.split(r"\S+", text)


def has_mark(text: str) -> bool:
    return any(unicodedata.category(character).startswith("P") for character in text)


# ---- the interface and its schemas ---------------------------------------------------------------------


def test_the_family_interface() -> None:
    assert natural.NEEDS_PARSE is False and perturbed_sides(natural) == ("source",)
    assert sample_group(natural, FAMILY) == "natural_robustness"
    assert list(natural.FUNCTIONS) == ["punctuation_removal", "punctuation_alteration", "casing", "typos"]
    assert natural.CATEGORIES == {"punctuation_removal": "punctuation", "punctuation_alteration": "punctuation",
                                  "casing": "casing", "typos": "typo"}
    assert natural.RESOURCE_DOWNLOADS == {"typos": "zeroe-en-natural"}
    assert natural.OPTIONS_SCHEMA == {"type": "object", "additionalProperties": False, "properties": {}}
    for schema in natural.FUNCTIONS.values():
        assert schema["additionalProperties"] is False and schema["properties"]
        assert all("default" in spec and spec["description"] for spec in schema["properties"].values())


def test_empty_settings_get_every_default_and_bad_ones_name_their_key() -> None:
    filled = {}
    for function, schema in natural.FUNCTIONS.items():
        settings: dict = {}
        fill_schema_defaults(settings, schema, f"perturbations.families.natural.functions.{function}")
        filled[function] = settings
    assert filled == {"punctuation_removal": {"rate": 0.5}, "punctuation_alteration": {"rate": 0.5},
                      "casing": {"styles": ["lower", "upper", "title", "first_letter"]}, "typos": {"rate": 0.1}}
    key = "perturbations.families.natural.functions.typos"
    with pytest.raises(InputError, match=rf"'{key}'.*'p'"):
        fill_schema_defaults({"p": 0.1}, natural.FUNCTIONS["typos"], key)
    with pytest.raises(InputError, match=rf"'{key}\.rate'"):
        fill_schema_defaults({"rate": 0}, natural.FUNCTIONS["typos"], key)
    with pytest.raises(InputError, match=r"'casing\.styles\.1'"):
        fill_schema_defaults({"styles": ["lower", "camel"]}, natural.FUNCTIONS["casing"], "casing")
    with pytest.raises(InputError, match="unknown setting.* p of natural function typos"):
        natural.perturb("typos", "text", {"p": 0.1}, rng(0), None)
    with pytest.raises(InputError, match="unknown natural function 'typo'"):
        natural.perturb("typo", "text", {}, rng(0), None)
    with pytest.raises(InputError, match=r"rate must lie in \(0, 1\]"):
        natural.perturb("punctuation_removal", "a, b", {"rate": 1.5}, rng(0))


# ---- every function on real texts ----------------------------------------------------------------------


@needs_mirror
@pytest.mark.parametrize("function", list(natural.FUNCTIONS))
def test_every_output_differs_and_keeps_the_whitespace_on_wmt14_and_reviews(function: str) -> None:
    texts = wmt14_sources() + review_texts()
    assert sum("\n" in text for text in review_texts()) == len(review_texts())  # the line breaks meant
    assert any("  " in text for text in review_texts()) and any("\n\n" in text for text in review_texts())
    skipped = set()
    for index, text in enumerate(texts):
        result = perturb(function, text, index=index)
        if isinstance(result, Skipped):
            skipped.add(text)
            continue
        perturbed = result.text
        assert " ".join(result.tokens) == perturbed and perturbed != text
        assert whitespace(perturbed) == whitespace(text)  # same whitespace, between as many non-empty runs
        if function == "punctuation_removal":  # each run loses marks only
            for before, after in zip(re.findall(r"\S+", text), re.findall(r"\S+", perturbed)):
                kept = iter(before)
                assert all(character in kept for character in after)
                assert all(has_mark(character) for character in _removed(before, after))
        if function == "casing":
            assert perturbed in {natural.apply_style(style, text) for style in natural.CASING_STYLES}
    # the skipped segments, checked independently: headlines without punctuation (and, for alteration,
    # with in-word hyphens only); casing and typos perturb every real text
    no_mark = {text for text in texts if not has_mark(text)}
    assert len(no_mark) == 5
    expected = {
        "punctuation_removal": no_mark,
        "punctuation_alteration": {text for text in texts if not has_mark(re.sub(r"(?<=\w)-(?=\w)", "", text))},
        # typos: a headline whose only lowercase-listed words lost their typos to the real-word check
        "casing": set(), "typos": {'NSA Blames "Internal Error," Not Hackers, For Website Crash'},
    }[function]
    assert skipped == expected
    if function == "punctuation_alteration":
        assert expected - no_mark == {"Frontier Airlines to charge for carry-on baggage", "Delta Centre-Ville Closes"}


def _removed(before: str, after: str) -> str:
    """The characters of ``before`` that are not in ``after`` (``after`` a subsequence of it)."""
    removed, position = [], 0
    for character in before:
        if position < len(after) and after[position] == character:
            position += 1
        else:
            removed.append(character)
    return "".join(removed)


@needs_mirror
@pytest.mark.parametrize("function", list(natural.FUNCTIONS))
def test_the_same_seed_gives_the_same_output_and_other_seeds_mostly_others(function: str) -> None:
    texts = wmt14_sources()[:150]
    first = [perturb(function, text, seed=0, index=index) for index, text in enumerate(texts)]
    assert first == [perturb(function, text, seed=0, index=index) for index, text in enumerate(texts)]
    second = [perturb(function, text, seed=1, index=index) for index, text in enumerate(texts)]
    kept = [(a, b) for a, b in zip(first, second) if isinstance(a, Perturbed)]
    # a sentence with one unit (one mark) has one outcome, and casing has at most four
    share = {"punctuation_removal": 0.55, "punctuation_alteration": 0.6, "casing": 0.6, "typos": 0.9}[function]
    assert sum(a != b for a, b in kept) > share * len(kept)


@needs_mirror
@pytest.mark.parametrize(("function", "rate"), [("punctuation_removal", 0.5), ("punctuation_alteration", 0.5),
                                                ("typos", 0.1), ("punctuation_removal", 0.2), ("typos", 0.3)])
def test_achieved_rates_match_the_rate_and_perturb_applies_the_drawn_edits(function: str, rate: float) -> None:
    units = drawn = expected = 0
    for index, text in enumerate(wmt14_sources(1500) + review_texts()):
        found = natural_units.units(function, text, context_for(function))
        if not found:
            continue
        edits = natural_units.draw_edits(found, rate, rng(7, index))
        assert all((start, end) in {(unit.start, unit.end) for unit in found} for start, end, _ in edits)
        assert natural.perturb(function, text, {"rate": rate}, rng(7, index), context_for(function)).text == natural_units.splice(text, edits)
        if function == "punctuation_removal":
            assert len(text) - len(natural_units.splice(text, edits)) == len(edits)
        units, drawn = units + len(found), drawn + len(edits)
        expected += len(found) * rate + (1 - rate) ** len(found)  # at least one: the (1 - rate)^n fallback
    assert units > 4000
    assert abs(drawn - expected) / units < 0.03


@needs_mirror
def test_long_reviews_achieve_the_rate_itself() -> None:
    for function, rate in (("punctuation_removal", 0.5), ("typos", 0.1)):
        found = [(index, natural_units.units(function, text, context_for(function))) for index, text in enumerate(review_texts())]
        found = [(index, units) for index, units in found if len(units) >= 30]
        drawn = sum(len(natural_units.draw_edits(units, rate, rng(3, index))) for index, units in found)
        assert abs(drawn / sum(len(units) for _, units in found) - rate) < 0.03


# ---- each rule on hand-made examples ---------------------------------------------------------------------


def test_removal_keeps_numbers_symbols_and_punctuation_only_tokens() -> None:
    text = "Don't worry, it's well-known: 3.5% of 1,000 - really...?\n(\"Sure\")"
    assert natural.perturb("punctuation_removal", text, {"rate": 1}, rng(0)).text == (
        "Dont worry it's wellknown 3.5% of 1,000 - really\nSure"  # "its" is another word: the apostrophe stays
    )
    # one unit: removed whatever the rate and the seed
    assert {natural.perturb("punctuation_removal", "Hello, world", {"rate": 0.01}, rng(seed)).text for seed in range(5)} == {"Hello world"}
    for text in ("No marks at all", "50% at 10:30 - 3.5 & 1,000 / #1", " ... \n -- "):
        assert natural.perturb("punctuation_removal", text, {}, rng(0)) == Skipped("no removable punctuation")


def test_alteration_follows_the_table() -> None:
    assert natural.perturb("punctuation_alteration", "\"Well\", she said; it's fine: no", {"rate": 1}, rng(0)).text == (
        "“Well”; she said, it’s fine; no"
    )
    assert natural.perturb("punctuation_alteration", "“Yes” ‘no’ - a–b—c", {"rate": 1}, rng(0)).text in {
        "\"Yes\" 'no' – a-b-c", "\"Yes\" 'no' — a-b-c"}
    seen = set()
    for seed in range(40):
        altered = natural.perturb("punctuation_alteration", "Wait! Really? Fine.\nWow!!! Hmm... Sure??", {"rate": 1}, rng(seed)).text
        match = re.fullmatch(r"Wait(\.|!!) Really(\?!|\?\?) Fine(!|\.\.\.)\nWow! Hmm(…|\.) Sure\?", altered)
        assert match is not None, altered
        seen.update(enumerate(match.groups()))
    assert len(seen) == 8  # both alternatives of each mark are drawn
    for text in ("It costs 3.5 or 1,000 at 10:30 in the well-known U.S.A", "no marks"):
        assert natural.perturb("punctuation_alteration", text, {}, rng(0)) == Skipped("no punctuation with an alternative")
    table_keys = set(natural_units.ALTERNATIVES)
    assert all(not any(c.isspace() for c in alternative) and alternative != mark
               for mark in table_keys for alternative in natural_units.ALTERNATIVES[mark])


def test_casing_styles() -> None:
    text = "don't STOP me-now 1st time\nOK straße"
    assert natural.apply_style("title", text) == "Don't Stop Me-Now 1st Time\nOk Straße"
    assert natural.apply_style("upper", text) == "DON'T STOP ME-NOW 1ST TIME\nOK STRASSE"  # longer, same whitespace
    assert natural.apply_style("lower", text) == "don't stop me-now 1st time\nok straße"
    assert natural.apply_style("first_letter", "\"hello\" World") == "\"Hello\" World"
    assert natural.apply_style("first_letter", "123 Go") == "123 go"
    assert natural.perturb("casing", text, {"styles": ["title"]}, rng(0)).tokens == ("Don't", "Stop", "Me-Now", "1st", "Time\nOk", "Straße")
    # a style drawn among those that change the text: "hello world" is lowercase already
    drawn = {natural.perturb("casing", "hello world", {}, rng(seed)).text for seed in range(40)}
    assert drawn == {"HELLO WORLD", "Hello World", "Hello world"}
    assert natural.perturb("casing", "123 !", {}, rng(0)) == Skipped("no casing style changes the text")
    assert natural.perturb("casing", "already lower", {"styles": ["lower"]}, rng(0)) == Skipped("no casing style changes the text")
    assert natural.perturb("casing", " \n ", {}, rng(0)) == Skipped("empty text")


@needs_mirror
def test_typos_come_from_the_real_list() -> None:
    table = context().typos
    assert "Esteem" not in table and "Rose" not in table and "rose" in table
    assert "bill" not in table  # its one typo, "bell", is a word
    # two lines of the file merged; "estime" (a French word) dropped
    assert set(table["esteem"]) == {"esstem", "steem"}
    assert "Lila" not in table and "lila" not in table  # "Lila lila": a casing change only
    assert "becuase" in table["because"] and not any("?" in typo or "[" in typo for typo in table["because"])
    assert "'cause" not in table["because"]  # the CMU dictionary lists it: a word
    for word, typos in table.items():
        assert natural_units.WORD.fullmatch(word) and typos and len(set(typos)) == len(typos)
        assert all(natural.TYPO_SPELLING.fullmatch(typo) and typo.lower() != word.lower() for typo in typos)
    for seed in range(10):
        tokens = natural.perturb("typos", "Xyzzy esteem qwrtz.", {}, rng(seed), context()).tokens
        assert tokens[0] == "Xyzzy" and tokens[1] in table["esteem"] and tokens[2] == "qwrtz."
        # a capitalised word at a sentence start (text start, after a line break) takes its lowercase typos
        for text in ("Esteem qwrtz", "Xyzzy qwrtz\nEsteem", "Xyzzy. \"Esteem"):
            perturbed = natural.perturb("typos", text, {}, rng(seed), context()).text
            assert perturbed in {text.replace("Esteem", typo[0].upper() + typo[1:]) for typo in table["esteem"]}
    # a capitalised word mid-sentence (a name) is not looked up lowercased
    assert natural.perturb("typos", "Xyzzy Rose qwrtz", {}, rng(0), context()) == Skipped("no word with a known typo")
    assert natural.perturb("typos", "Esteemed 3rd", {}, rng(0), context()) == Skipped("no word with a known typo")
    assert natural_units.sentence_starts("A b. C\nD \"E? (F") == {0, 5, 7, 14}


# ---- typos and removals that make other words -------------------------------------------------------------


@pytest.mark.parametrize(("table", "expected"), [
    # the issue's examples: an English word in any case ("END", "area"), a word of French/Spanish/Catalan ("de")
    ({"and": ("END", "adn"), "in": ("de", "ih"), "are": ("area", "arw")}, {"and": ("adn",), "in": ("ih",), "are": ("arw",)}),
    ({"house": ("maison", "casa", "hosue"), "the": ("teh",), "of": ("off", "Of")}, {"house": ("hosue",), "the": ("teh",)}),
])
def test_typos_that_are_words_of_english_or_another_language_are_dropped(table: dict, expected: dict) -> None:
    if shutil.which("lt-proc") is None:
        pytest.skip("lt-proc (Apertium) is not on PATH")
    kept, dropped = natural.without_real_words(table)
    assert kept == expected and dropped == sum(map(len, table.values())) - sum(map(len, expected.values()))


def test_the_apertium_analysers_know_their_languages_words() -> None:
    from nlp_robustness.perturbations._lexicons import ANALYSER_MODES, foreign_words

    if shutil.which("lt-proc") is None:
        pytest.skip("lt-proc (Apertium) is not on PATH")
    assert set(ANALYSER_MODES) == {"French", "Spanish", "Catalan", "Galician"}
    # French, Spanish, Catalan, Galician words, in any case; English typos and nonsense are unknown
    assert foreign_words(["Maison", "CASA", "també", "xanela", "teh", "becuase", "xyzzy", "l'eau"]) == {
        "maison", "casa", "també", "xanela"}


@needs_mirror
def test_the_whole_typo_list_loses_its_real_words() -> None:
    table = context().typos
    raw = natural.read_typos(TYPO_LIST)
    assert sum(map(len, raw.values())) == 49244 and sum(map(len, table.values())) == 39805
    assert len(raw) == 11173 and len(table) == 9845
    assert "end" not in {typo.lower() for typo in table["and"]} and "de" not in table["in"] and "area" not in table["are"]


@pytest.mark.parametrize(("text", "kept"), [
    ("We're sure he'll come.", "We're sure he'll come"),  # "were", "hell": only the period goes
    ("It's true, I can't.", "It's true I can't"),  # "its", "cant" are words too
    ("She'll see the e-mail.", "She'll see the e-mail"),  # "shell", "email"
])
def test_removal_keeps_a_mark_whose_removal_makes_another_word(text: str, kept: str) -> None:
    assert natural.perturb("punctuation_removal", text, {"rate": 1}, rng(0)).text == kept


def test_removal_still_removes_marks_that_make_no_word() -> None:
    text = "They're sure you don't know the well-known man."
    assert natural.perturb("punctuation_removal", text, {"rate": 1}, rng(0)).text == "Theyre sure you dont know the wellknown man"
    assert natural_units.word_making_marks("we’re WE'RE he-ll he-yy") == {2, 8, 14}  # typographic apostrophe, upper case, hyphen


@needs_mirror
def test_removal_on_real_reviews_never_makes_an_english_word() -> None:
    from nlp_robustness.perturbations._lexicons import english_words

    protected = 0
    for text in review_texts() + wmt14_sources():
        protected += len(natural_units.word_making_marks(text))
        for unit in natural_units.units("punctuation_removal", text):
            for match in natural_units.INNER_WORD.finditer(text):
                if match.start() < unit.start < match.end():
                    word = match.group()
                    offset = unit.start - match.start()
                    assert (word[:offset] + word[offset + 1:]).lower() not in english_words(), word
    assert protected >= 20


# ---- the typo list ---------------------------------------------------------------------------------------


def test_the_typo_list_is_read_lazily_and_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "en.natural"
    path.write_text("word wrod\n\nteh the The\nlila Lila\n", encoding="utf-8")
    resources = natural.load_context({"typos": path})
    path.write_text("word wrod werd\n\nteh the The\nlila Lila\nword wrod ward\n", encoding="utf-8")
    # read on first use; "ward" and "the" are English words: dropped, and "teh" is left without typos
    assert resources.typos == {"word": ("wrod", "werd")}
    assert resources.typos is resources.typos
    path.write_text("word wrod\n\nthe\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{re.escape(str(path))}, line 3: expected '<word> <typo> \.\.\.'"):
        natural.load_context({"typos": path}).typos
    with pytest.raises(InputError, match=rf"cannot read the natural typo list {re.escape(str(tmp_path / 'missing'))}"):
        natural.load_context({"typos": tmp_path / "missing"}).typos
    path.write_bytes(b"word w\xffrd\n")
    with pytest.raises(InputError, match="cannot read the natural typo list"):
        natural.load_context({"typos": path}).typos
    with pytest.raises(InputError, match="unknown natural resource.*keyboard"):
        natural.load_context({"keyboard": path})
    with pytest.raises(InputError, match="needs the resource 'typos'"):
        natural.perturb("typos", "the", {}, rng(0), natural.load_context({}))
    with pytest.raises(InputError, match="needs the family's resources"):
        natural.perturb("typos", "the", {}, rng(0), None)


# ---- through the perturbation machinery -------------------------------------------------------------------


@functools.cache
def wmt14_table(count: int = 60) -> pd.DataFrame:
    return pd.DataFrame({"segment_id": [str(number) for number in range(1, count + 1)], "doc_id": "news",
                         "source": list(wmt14_sources()[:count]), "reference": list(wmt14_references()[:count])})


@needs_mirror
@pytest.mark.parametrize("function", list(natural.FUNCTIONS))
def test_derived_testsets_keep_the_reference_and_record_the_skipped(function: str) -> None:
    settings: dict = {}
    fill_schema_defaults(settings, natural.FUNCTIONS[function], function)
    table = wmt14_table()
    assert "\u00a0" in table["reference"].iloc[3]  # a no-break space before "?": kept byte for byte
    derive_context = context() if function == "typos" else None
    derived, status = derive_testset(natural, FAMILY, function, settings, {"wmt14": table}, None, 0, derive_context)
    assert list(derived.columns) == list(DERIVED_COLUMNS) and list(status.columns) == list(STATUS_COLUMNS)
    assert list(status["segment_id"]) == list(table["segment_id"])
    skipped = status.loc[~status["kept"]]
    if function in PUNCTUATION_FUNCTIONS:
        assert list(skipped["segment_id"]) == ["1"]  # "Spectacular Wingsuit Jump Over Bogota"
        assert skipped["reason"].iloc[0].startswith("source: no ")
    else:
        assert skipped.empty
    assert list(derived["segment_id"]) == list(status.loc[status["kept"], "segment_id"])
    originals = table.set_index("segment_id").loc[derived["segment_id"]]
    for column in ("reference", "perturbed_reference"):
        assert [text.encode("utf-8") for text in derived[column]] == [text.encode("utf-8") for text in originals["reference"]]
    assert list(derived["original_source"]) == list(originals["source"]) == list(derived["source_tokens"])
    assert (derived["source"] != derived["original_source"]).all()
    assert [whitespace(text) for text in derived["source"]] == [whitespace(text) for text in derived["original_source"]]
    again, _ = derive_testset(natural, FAMILY, function, copy.deepcopy(settings), {"wmt14": table.iloc[[4]]}, None, 0, derive_context)
    assert again["source"].iloc[0] == derived.set_index("segment_id").loc["5", "source"]  # alone or not, the same
