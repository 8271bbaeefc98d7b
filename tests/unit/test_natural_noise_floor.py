"""Like-with-like responses and the identity control of Natural Robustness, on real newstest2014 sentences."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.studies.natural_robustness import (
    identity_testset,
    identity_testsets,
    mt_responses,
    natural_scores,
)

SAME = {"casefold": True, "punctuation": True, "chrf_threshold": 80}


@pytest.fixture()
def sentences(mirror_dir: Path) -> list[str]:
    lines = (mirror_dir / "wmt14-newstest2014-enfr" / "derived" / "newstest2014.en-fr.en").read_text(encoding="utf-8").splitlines()
    return lines[:4]


def _sample(sentences: list[str], ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"segment_id": ids, "doc_id": "d", "source": sentences, "reference": [f"ref {i}" for i in ids]})


def test_identity_testset_is_the_sample_unperturbed_in_the_perturbed_sets_order(sentences: list[str]) -> None:
    table = identity_testset({"wmt14": _sample(sentences[:3], ["7", "2", "5"]), "other": _sample(sentences[3:], ["1"])})
    assert table["testset"].tolist() == ["wmt14", "wmt14", "wmt14", "other"]
    assert table["segment_id"].tolist() == ["7", "2", "5", "1"]
    assert table["source"].tolist() == sentences and table["original_source"].tolist() == sentences
    assert table["perturbed_reference"].tolist() == table["reference"].tolist()
    families = {"natural": {"derived_testsets": "pooled", "testsets": ["a", "b"]},
                "paraphrase": {"derived_testsets": "per_testset", "testsets": ["a", "b"]}}
    assert identity_testsets({"families": ["natural", "paraphrase"]}, families) == {
        "natural": ["perturbed/natural/identity/pooled"],
        "paraphrase": ["perturbed/paraphrase/identity/a", "perturbed/paraphrase/identity/b"],
    }
    assert identity_testsets(None, families) == {}


def test_perturbations_are_compared_with_the_identity_layout_and_the_control_with_the_whole_test_set(sentences: list[str]) -> None:
    whole = pd.DataFrame({"segment_id": ["1", "2", "3"]})
    # the whole-test-set layout translated segment 2 differently (its neighbours differ)
    whole_translations = ["Saut spectaculaire", "Il a sauté.", "Le sportif"]
    identity = identity_testset({"t": _sample(sentences[:2], ["2", "3"])})
    identity_translations = ["Ce a sauté.", "Le sportif"]
    derived = pd.DataFrame({"testset": ["t"], "segment_id": ["2"]})
    responses = mt_responses({"casing": (derived, ["ce a sauté"])}, {"t": (whole, whole_translations)}, SAME,
                             identity={"natural": (identity, identity_translations)}, types={"casing": "natural"})
    assert responses["type"].tolist() == ["casing", "identity/natural", "identity/natural"]
    assert responses["original_response"].tolist() == ["Ce a sauté.", "Il a sauté.", "Le sportif"]
    assert responses["same_exact"].tolist() == [True, False, True]  # like with like: the perturbation changed nothing
    old = mt_responses({"casing": (derived, ["ce a sauté"])}, {"t": (whole, whole_translations)}, SAME)
    assert old["same_exact"].tolist() == [False]  # the old comparison counted the layout as a change
    with pytest.raises(InputError, match="1 translations of the 2 segments of the identity test set of natural"):
        mt_responses({}, {"t": (whole, whole_translations)}, SAME, identity={"natural": (identity, ["x"])}, types={})


def test_the_control_is_scored_beside_the_types_and_kept_out_of_the_pooled_score() -> None:
    responses = pd.DataFrame({
        "record": ["t/1", "t/2", "t/1", "t/2"], "type": ["typos", "typos", "identity/natural", "identity/natural"],
        "same_exact": [True, False, False, True], "same_chrf": [True, True, True, True],
    })
    records = pd.DataFrame({"record": ["t/1", "t/2"], "part": "t", "item": ["1", "2"]})
    scores = natural_scores({"mt": records}, {"mt": {"sys": responses}}, {"typos": "natural"}, [None],
                            {"resamples": 10, "confidence": 0.95}, 0)
    exact = scores[scores["criterion"] == "exact"].set_index("type")
    assert list(exact.index) == ["typos", "all", "identity/natural"]
    assert exact.loc["all", "perturbations"] == 2 and exact.loc["all", "score"] == 0.5
    assert exact.loc["identity/natural", "family"] == "control" and exact.loc["identity/natural", "score"] == 0.5
