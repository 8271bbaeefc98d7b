"""Tests of sentence- and corpus-level scoring with sacrebleu."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF

from nlp_robustness.errors import InputError
from nlp_robustness.scoring.sentence_scores import SENTENCE_METRICS, corpus_score, metric_signature, sentence_scores

HYPOTHESIS = "The cat sat on mat."
REFERENCE = "The cat sat on the mat."

PAIRS = [
    (HYPOTHESIS, REFERENCE),
    ("the cat", "The cat sat on the mat."),  # short: no 3- or 4-gram match
    ("Le chat est sur le tapis.", "Le chat était assis sur le tapis."),
    ("completely different words", "nothing in common here"),
    ("", "An empty hypothesis."),
]


def test_registry_names() -> None:
    assert set(SENTENCE_METRICS) == {"bleu", "chrf", "levenshtein"}
    assert all(spec.name == name for name, spec in SENTENCE_METRICS.items())


@pytest.mark.parametrize("metric", ["bleu", "chrf", "levenshtein"])
def test_identical_hypothesis_scores_100(metric: str) -> None:
    references = ["The cat sat on the mat.", "A longer sentence, with some punctuation!", "Short."]
    scores = sentence_scores(references, references, metric)
    assert scores.dtype == np.float64 and scores.shape == (3,)
    np.testing.assert_allclose(scores, 100.0)
    assert corpus_score(references, references, metric) == pytest.approx(100.0)


def test_sentence_bleu_known_value() -> None:
    # 1-4 gram precisions 6/6, 4/5, 2/4, 1/3 and brevity penalty exp(1 - 7/6): BLEU = 51.15.
    (score,) = sentence_scores([HYPOTHESIS], [REFERENCE], "bleu")
    expected = 100 * np.exp(1 - 7 / 6) * (1 * 0.8 * 0.5 * (1 / 3)) ** 0.25
    assert score == pytest.approx(expected)
    assert score == pytest.approx(51.15, abs=0.01)


@pytest.mark.parametrize("hypothesis, reference", PAIRS)
def test_single_sentence_equals_sacrebleu_corpus_score(hypothesis: str, reference: str) -> None:
    # For one sentence, the sentence score is sacrebleu's corpus score of that one-sentence corpus.
    (bleu,) = sentence_scores([hypothesis], [reference], "bleu")
    (chrf,) = sentence_scores([hypothesis], [reference], "chrf")
    assert bleu == pytest.approx(BLEU(effective_order=True).corpus_score([hypothesis], [[reference]]).score)
    assert chrf == pytest.approx(CHRF().corpus_score([hypothesis], [[reference]]).score)


def test_effective_order_keeps_short_partial_matches_above_zero() -> None:
    (score,) = sentence_scores(["the cat"], ["The cat sat on the mat."], "bleu")
    assert score > 0
    assert BLEU().corpus_score(["the cat"], [["The cat sat on the mat."]]).score == 0


def test_scores_are_aligned_with_the_pairs() -> None:
    hypotheses = [hypothesis for hypothesis, _ in PAIRS]
    references = [reference for _, reference in PAIRS]
    for metric in ("bleu", "chrf"):
        together = sentence_scores(hypotheses, references, metric)
        one_by_one = [sentence_scores([h], [r], metric)[0] for h, r in PAIRS]
        np.testing.assert_allclose(together, one_by_one)
    scores = sentence_scores(hypotheses, references, "bleu")
    assert scores[0] > scores[2] > 0 and scores[4] == 0


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=40), st.text(max_size=40)),
        min_size=0,
        max_size=5,
    )
)
def test_chrf_and_bleu_are_in_range(pairs: list[tuple[str, str]]) -> None:
    hypotheses = [hypothesis for hypothesis, _ in pairs]
    references = [reference for _, reference in pairs]
    for metric in ("bleu", "chrf"):
        scores = sentence_scores(hypotheses, references, metric)
        assert scores.shape == (len(pairs),)
        assert np.all((scores >= 0) & (scores <= 100 + 1e-9))


def test_corpus_score_matches_sacrebleu() -> None:
    hypotheses = [hypothesis for hypothesis, _ in PAIRS]
    references = [reference for _, reference in PAIRS]
    assert corpus_score(hypotheses, references, "bleu") == pytest.approx(
        sacrebleu.corpus_bleu(hypotheses, [references]).score
    )
    assert corpus_score(hypotheses, references, "chrf") == pytest.approx(
        sacrebleu.corpus_chrf(hypotheses, [references]).score
    )


def test_signatures() -> None:
    version = f"version:{sacrebleu.__version__}"
    bleu = metric_signature("bleu")
    assert bleu == f"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|{version}"
    assert metric_signature("bleu", corpus=True) == f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|{version}"
    chrf = metric_signature("chrf")
    assert chrf.startswith("nrefs:1|case:mixed|") and "nc:6|nw:0" in chrf and chrf.endswith(version)


def test_unknown_metric_is_named() -> None:
    with pytest.raises(InputError, match="'ter'"):
        sentence_scores(["a"], ["a"], "ter")
    with pytest.raises(InputError, match="'BLEU'"):
        metric_signature("BLEU")
    with pytest.raises(InputError, match="'meteor'"):
        corpus_score(["a"], ["a"], "meteor")


def test_length_mismatch() -> None:
    with pytest.raises(InputError, match="2 hypotheses for 1 references"):
        sentence_scores(["a", "b"], ["a"], "bleu")
    with pytest.raises(InputError, match="length mismatch"):
        corpus_score(["a"], [], "chrf")


def test_bad_segments() -> None:
    with pytest.raises(InputError, match=r"references\[1\]"):
        sentence_scores(["a", "b"], ["a", None], "chrf")  # type: ignore[list-item]
    with pytest.raises(InputError, match="hypotheses"):
        sentence_scores("a", ["a"], "bleu")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no segments"):
        corpus_score([], [], "bleu")


def test_empty_input_gives_empty_array() -> None:
    scores = sentence_scores([], [], "bleu")
    assert scores.shape == (0,) and scores.dtype == np.float64


def test_levenshtein_is_the_normalised_character_similarity() -> None:
    """100 * (1 - edit distance / longer length): kitten -> sitting is 3 edits over 7 characters."""
    scores = sentence_scores(["kitten", "", "abc"], ["sitting", "", "abd"], "levenshtein")
    np.testing.assert_allclose(scores, [100 * (1 - 3 / 7), 100.0, 100 * (1 - 1 / 3)])
    # corpus level pools the edits and the lengths: (3 + 1) / (7 + 3)
    assert corpus_score(["kitten", "abc"], ["sitting", "abd"], "levenshtein") == pytest.approx(100 * (1 - 4 / 10))
    assert metric_signature("levenshtein").startswith("levenshtein:normalised|unit:char|rapidfuzz:")
