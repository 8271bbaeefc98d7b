"""Tests of nlp_robustness.scoring.bulk_scores: bit-identical to sacrebleu on real test sets, edge cases, processes.

Parity data (all compared with ``==`` on float64, i.e. bit identity):

* WMT'22 General de-fr and fr-de of the mirror: every submitted system's output against the reference, both
  directions (25,946 pairs) -- BLEU with 13a, intl, and lowercased 13a, and chrF, on every pair;
* the en-fr test sets the workflow uses (WMT'14 newstest2014, WMT'15 newsdiscusstest2015, Tatoeba v2021-08-07):
  source against reference in both roles, and newstest2014's reference against a seeded perturbation of
  itself (adjacent words swapped, a character dropped) -- BLEU 13a and chrF on every pair;
* the other settings (smoothing methods, no effective order, tokenizers none/char/zh, chrF with whitespace,
  epsilon smoothing, other orders and beta, chrF++) on the first 2,000 WMT'22 pairs.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from nlp_robustness.data.wmt_xml import read_wmt_xml
from nlp_robustness.errors import InputError
from nlp_robustness.scoring import bulk_scores
from nlp_robustness.scoring.bulk_ngrams import clipped_matches
from nlp_robustness.scoring.bulk_scores import sentence_bleu_many, sentence_chrf_many
from nlp_robustness.scoring.sentence_scores import sentence_scores
from tests.paths import MIRROR

WMT22 = MIRROR / "wmt22-general-defr-frde" / "xml"
EN_FR = {
    "newstest2014": (MIRROR / "wmt14-newstest2014-enfr" / "derived" / "newstest2014.en-fr.en",
                     MIRROR / "wmt14-newstest2014-enfr" / "derived" / "newstest2014.en-fr.fr"),
    "newsdiscusstest2015": (MIRROR / "opus-mt-testsets-enfr" / "testsets" / "en-fr" / "newsdiscusstest2015.en",
                            MIRROR / "opus-mt-testsets-enfr" / "testsets" / "en-fr" / "newsdiscusstest2015.fr"),
    "tatoeba": (MIRROR / "opus-mt-testsets-enfr" / "testsets" / "eng-fra" / "tatoeba-test-v2021-08-07.eng",
                MIRROR / "opus-mt-testsets-enfr" / "testsets" / "eng-fra" / "tatoeba-test-v2021-08-07.fra"),
}
SUBSET = 2000


def _require(*paths: Path) -> None:
    for path in paths:
        if not path.exists():
            pytest.skip(f"mirrored test set not found: {path} (set NLP_ROBUSTNESS_MIRROR)")


@pytest.fixture(scope="module")
def wmt22_pairs() -> tuple[list[str], list[str]]:
    """Every system's output against the reference, de-fr then fr-de."""
    paths = [WMT22 / f"wmttest2022.{direction}.all.xml" for direction in ("de-fr", "fr-de")]
    _require(*paths)
    hypotheses: list[str] = []
    references: list[str] = []
    for path in paths:
        for document in read_wmt_xml(path).documents:
            for outputs in document.hypotheses.values():
                hypotheses.extend(outputs)
                references.extend(document.reference)
    return hypotheses, references


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def _perturbed(line: str, rng: random.Random) -> str:
    """Two adjacent words swapped and one character dropped (seeded)."""
    words = line.split(" ")
    if len(words) > 1:
        position = rng.randrange(len(words) - 1)
        words[position], words[position + 1] = words[position + 1], words[position]
    text = " ".join(words)
    if text:
        position = rng.randrange(len(text))
        text = text[:position] + text[position + 1 :]
    return text


@pytest.fixture(scope="module")
def en_fr_pairs() -> tuple[list[str], list[str]]:
    """Source vs reference both ways for the three en-fr sets, and newstest2014's reference vs its perturbation."""
    _require(*(path for paths in EN_FR.values() for path in paths))
    hypotheses: list[str] = []
    references: list[str] = []
    for english_path, french_path in EN_FR.values():
        english, french = _lines(english_path), _lines(french_path)
        assert len(english) == len(french) > 1000
        hypotheses += english + french
        references += french + english
    rng = random.Random(29)
    french = _lines(EN_FR["newstest2014"][1])
    hypotheses += [_perturbed(line, rng) for line in french]
    references += french
    return hypotheses, references


def _sacrebleu_bleu(hypotheses: list[str], references: list[str], **options) -> np.ndarray:
    return np.array([sacrebleu.sentence_bleu(h, [r], **options).score for h, r in zip(hypotheses, references)])


def _sacrebleu_chrf(hypotheses: list[str], references: list[str], **options) -> np.ndarray:
    return np.array([sacrebleu.sentence_chrf(h, [r], **options).score for h, r in zip(hypotheses, references)])


def _metric_loop(metric, hypotheses: list[str], references: list[str]) -> np.ndarray:
    """sacrebleu's loop with one metric object (what ``sentence_scores`` did): fast enough for every pair."""
    return np.array([metric.sentence_score(h, [r]).score for h, r in zip(hypotheses, references)])


def _assert_identical(bulk: np.ndarray, expected: np.ndarray) -> None:
    assert bulk.dtype == np.float64 and bulk.shape == expected.shape
    differing = np.flatnonzero(bulk != expected)
    assert differing.size == 0, f"{differing.size} differ, first at {differing[0]}: {bulk[differing[0]]!r} != {expected[differing[0]]!r}"


@pytest.mark.parametrize(
    "options", [{}, {"tokenize": "intl"}, {"lowercase": True}], ids=["13a", "intl", "lowercase"]
)
def test_bleu_identical_on_every_wmt22_pair(wmt22_pairs, options):
    hypotheses, references = wmt22_pairs
    assert len(hypotheses) == 25_946
    expected = _metric_loop(sacrebleu.BLEU(effective_order=True, **options), hypotheses, references)
    _assert_identical(sentence_bleu_many(hypotheses, references, **options), expected)
    assert 20 < expected.mean() < 60  # real, mostly good translations


def test_chrf_identical_on_every_wmt22_pair(wmt22_pairs):
    hypotheses, references = wmt22_pairs
    expected = _metric_loop(sacrebleu.CHRF(), hypotheses, references)
    _assert_identical(sentence_chrf_many(hypotheses, references), expected)


def test_bleu_and_chrf_identical_on_the_en_fr_test_sets(en_fr_pairs):
    hypotheses, references = en_fr_pairs
    _assert_identical(
        sentence_bleu_many(hypotheses, references),
        _metric_loop(sacrebleu.BLEU(effective_order=True), hypotheses, references),
    )
    _assert_identical(sentence_chrf_many(hypotheses, references), _metric_loop(sacrebleu.CHRF(), hypotheses, references))


@pytest.mark.parametrize(
    "options",
    [
        {"smooth_method": "floor"},
        {"smooth_method": "floor", "smooth_value": 0.01},
        {"smooth_method": "add-k"},
        {"smooth_method": "none"},
        {"use_effective_order": False},
        {"tokenize": "none"},
        {"tokenize": "char"},
        {"tokenize": "zh"},
        {"tokenize": "13a", "lowercase": True, "smooth_method": "add-k", "smooth_value": 2},
    ],
)
def test_bleu_identical_for_other_settings(wmt22_pairs, options):
    hypotheses, references = (side[:SUBSET] for side in wmt22_pairs)
    _assert_identical(sentence_bleu_many(hypotheses, references, **options), _sacrebleu_bleu(hypotheses, references, **options))


@pytest.mark.parametrize(
    "options",
    [
        {"remove_whitespace": False},
        {"eps_smoothing": True},
        {"char_order": 4, "beta": 1},
        {"char_order": 9, "beta": 3},
        {"word_order": 2},
    ],
)
def test_chrf_identical_for_other_settings(wmt22_pairs, options):
    hypotheses, references = (side[:SUBSET] for side in wmt22_pairs)
    _assert_identical(sentence_chrf_many(hypotheses, references, **options), _sacrebleu_chrf(hypotheses, references, **options))


def _edge_pairs() -> tuple[list[str], list[str]]:
    rng = random.Random(7)
    cjk = "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(6000))  # thousands of distinct characters
    many_words = " ".join(f"w{number}" for number in range(40_000))  # more distinct tokens than a block can pack
    long_line = " ".join(rng.choice(["le", "chat", "noir", "mange", ",", "."]) for _ in range(20_000))
    cases = [
        ("", "a reference"),
        ("a hypothesis", ""),
        ("", ""),
        ("   ", " \t "),
        ("word", "word"),
        ("word", "other"),
        ("the the the the the the the", "the cat is on the mat"),  # clipping
        ("a a a b b", "a b b b a a"),
        ("café naïve", "cafe\u0301 nai\u0308ve"),  # precomposed vs combining marks: different characters
        ("東京は日本の首都です。", "東京は日本の首都である。"),
        ("I love 🍕 and 🍣 🍣!", "I love 🍣 and 🍕!"),
        ("3.5 km, i.e. 3,500 m - 1-2 days.", "3.5 km, i.e. 3,500m-1-2 days ."),
        ("&quot;quoted&quot; &amp; <skipped> A-\nB x\ny", "\"quoted\" & A-B x y"),
        ("(hi) [there] {you}: ok?!", "( hi ) there you : ok ? !"),
        ("trailing spaces   ", "trailing spaces"),
        ("\ud800 lone surrogate", "\ud800 lone surrogate"),
        (long_line, long_line[::-1]),
        (long_line, long_line),
        (cjk, cjk[::-1]),
        (many_words, many_words),
        ("x" * 20_000, "x" * 19_999),
    ]
    return [h for h, _ in cases], [r for _, r in cases]


def test_edge_cases_identical():
    hypotheses, references = _edge_pairs()
    for options in ({}, {"lowercase": True}, {"tokenize": "intl"}, {"tokenize": "none"}):
        _assert_identical(sentence_bleu_many(hypotheses, references, **options), _sacrebleu_bleu(hypotheses, references, **options))
    for options in ({}, {"remove_whitespace": False}):
        _assert_identical(sentence_chrf_many(hypotheses, references, **options), _sacrebleu_chrf(hypotheses, references, **options))


def test_edge_case_values():
    scores = sentence_bleu_many(["", "a b c d", "a b c d"], ["a b c d", "", "a b c d"])
    assert scores[:2].tolist() == [0.0, 0.0]
    assert scores[2] == sacrebleu.sentence_bleu("a b c d", ["a b c d"]).score == pytest.approx(100.0)  # exp(log) rounding
    assert sentence_chrf_many(["", "", "abc"], ["abc", "", "abc"]).tolist() == [0.0, 0.0, 100.0]
    assert sentence_bleu_many([], []).shape == (0,) and sentence_chrf_many([], []).shape == (0,)


def test_clipped_matches_counts_and_falls_back_for_a_pair_too_wide_to_pack():
    wide = np.arange(5000, dtype=np.int64)  # 5,000 distinct symbols: 13 bits each, 6 of them do not fit in 63
    hyp = np.concatenate(([1, 1, 1, 2], wide, [3, 4]))
    ref = np.concatenate(([1, 2, 1], wide[::-1], [4]))
    asked: list[int] = []

    def fallback(index: int) -> list[int]:
        asked.append(index)
        return [-1] * 6

    matches = clipped_matches(hyp, np.array([4, 5000, 2]), ref, np.array([3, 5000, 1]), 6, fallback)
    assert asked == [1]
    assert matches.tolist() == [[3, 1, 0, 0, 0, 0], [-1] * 6, [1, 0, 0, 0, 0, 0]]


def test_two_processes_give_the_same_array(wmt22_pairs):
    hypotheses, references = wmt22_pairs
    assert len(hypotheses) >= bulk_scores.PARALLEL_MIN_PAIRS  # the workers are really used
    for bulk in (sentence_bleu_many, sentence_chrf_many):
        single = bulk(hypotheses, references)
        assert np.array_equal(bulk(hypotheses, references, processes=2), single)


def test_parts_do_not_change_the_scores(wmt22_pairs, monkeypatch):
    hypotheses, references = (side[:3000] for side in wmt22_pairs)
    whole = sentence_chrf_many(hypotheses, references), sentence_bleu_many(hypotheses, references)
    monkeypatch.setattr(bulk_scores, "PART_PAIRS", 700)
    assert np.array_equal(sentence_chrf_many(hypotheses, references), whole[0])
    assert np.array_equal(sentence_bleu_many(hypotheses, references), whole[1])


def test_sentence_scores_uses_the_same_values(wmt22_pairs):
    hypotheses, references = (side[:SUBSET] for side in wmt22_pairs)
    bleu = _metric_loop(sacrebleu.BLEU(effective_order=True), hypotheses, references)
    _assert_identical(sentence_scores(hypotheses, references, "bleu"), bleu)
    _assert_identical(sentence_scores(hypotheses, references, "bleu", tokenize="13a"), bleu)
    _assert_identical(
        sentence_scores(hypotheses, references, "bleu", tokenize="intl"),
        _metric_loop(sacrebleu.BLEU(effective_order=True, tokenize="intl"), hypotheses, references),
    )
    _assert_identical(sentence_scores(hypotheses, references, "chrf"), _metric_loop(sacrebleu.CHRF(), hypotheses, references))


@pytest.mark.parametrize("bulk", [sentence_bleu_many, sentence_chrf_many])
def test_bad_input_raises_input_error(bulk):
    with pytest.raises(InputError, match="length mismatch, 2 hypotheses for 1 references"):
        bulk(["a", "b"], ["a"])
    with pytest.raises(InputError, match=r"references\[1\]: expected a string, got NoneType"):
        bulk(["a", "b"], ["a", None])
    with pytest.raises(InputError, match="single string"):
        bulk("ab", "ab")
    with pytest.raises(InputError, match="processes"):
        bulk(["a"], ["a"], processes=0)


def test_bad_options_raise_input_error():
    with pytest.raises(InputError, match="tokenize: unknown sacrebleu tokenizer 'nope'"):
        sentence_bleu_many(["a"], ["a"], tokenize="nope")
    with pytest.raises(InputError, match="smooth_method"):
        sentence_bleu_many(["a"], ["a"], smooth_method="nope")
    with pytest.raises(InputError, match="char_order"):
        sentence_chrf_many(["a"], ["a"], char_order=0)


def test_character_ids_by_sort_and_by_table_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short inputs rank their characters by sorting, long ones by a table over Unicode: the same ids."""
    from nlp_robustness.scoring import bulk_ngrams

    rng = random.Random(3)
    alphabet = [" ", "a", "B", "é", "中", "\U0001F600", "\ud800", "\U0010FFFF", "\n"]
    for _ in range(200):
        texts = ["".join(rng.choice(alphabet + [chr(rng.randint(0, 0x10FFFF))]) for _ in range(rng.randint(0, 30)))
                 for _ in range(rng.randint(0, 8))]
        by_sort = bulk_ngrams.character_ids(texts)
        with monkeypatch.context() as patch:
            patch.setattr(bulk_ngrams, "SORT_CHARACTERS_BELOW", 0)
            by_table = bulk_ngrams.character_ids(texts)
        for mine, theirs in zip(by_sort, by_table):
            assert mine.dtype == theirs.dtype == np.int64 and np.array_equal(mine, theirs)
