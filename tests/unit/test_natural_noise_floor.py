"""Like-with-like responses and the identity control of Natural Robustness, on real newstest2014 sentences."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.natural_robustness import (
    CIRCULAR_MARK,
    changes_markdown,
    changes_with_circular,
    with_circular,
    meaning_check_rejections,
    read_thresholds,
    scores_latex,
    scores_markdown,
    scores_wide,
    thresholds_markdown,
    thresholds_wide,
)
from nlp_robustness.studies.natural_robustness_responses import mt_responses
from nlp_robustness.studies.natural_robustness_scores import natural_scores
from nlp_robustness.studies.natural_robustness_controls import (
    circular_pairs,
    identity_testset,
    identity_testsets,
    threshold_scores,
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
    families = {"natural": {"derived_testsets": "pooled", "testsets": ["a", "b"], "sample_size": 5, "functions": {"typos": {}}},
                "paraphrase": {"derived_testsets": "per_testset", "testsets": ["a", "b"], "sample_size": 5, "functions": {"contractions": {}}}}
    # two samples (their layouts differ), each named after the sample group and its first family (tests/unit/test_identity_controls.py)
    assert identity_testsets({"families": ["natural", "paraphrase"]}, families) == {
        "natural": ["perturbed/natural_robustness-natural/identity/pooled"],
        "paraphrase": ["perturbed/natural_robustness-paraphrase/identity/a", "perturbed/natural_robustness-paraphrase/identity/b"],
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


def _two_systems() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    records = pd.DataFrame({"record": ["t/1", "t/2", "t/3"], "part": "t", "item": ["1", "2", "3"]})
    responses = {}
    for system, control in (("apertium-en-es-fr", [True, False, True]), ("convs2s", [True, True, True])):
        responses[system] = pd.DataFrame({
            "record": ["t/1", "t/2", "t/1", "t/3"] + ["t/1", "t/2", "t/3"],
            "type": ["typos", "typos", "round_trip_spa", "round_trip_spa"] + ["identity/natural"] * 3,
            "same_exact": [True, False, True, True] + control, "same_chrf": [True] * 7,
            "chrf": [100.0, 79.0, 85.0, 92.0, 100.0, 74.0 if system == "convs2s" else 50.0, 100.0],
        })
    return records, responses


def test_every_table_shows_each_mt_systems_noise_floor_and_marks_circular_pairs() -> None:
    records, responses = _two_systems()
    types = {"typos": "natural", "round_trip_spa": "paraphrase"}
    scores = natural_scores({"mt": records}, {"mt": responses}, types, [None], {"resamples": 10, "confidence": 0.95}, 0)
    circular = {"round_trip_spa": ["apertium-en-es-fr"]}
    wide = scores_wide(scores, "all", circular)
    assert list(wide.columns) == ["typos", "round_trip_spa", "all", "noise floor"]  # one record sample: one noise floor
    floors = wide["noise floor"]
    assert floors["apertium-en-es-fr (exact)"].startswith("0.33 [") and floors["convs2s (exact)"].startswith("0.00 [")
    assert floors.notna().all() and len(floors) == 4  # every MT system under both criteria
    assert wide.loc["apertium-en-es-fr (exact)", "round_trip_spa"].endswith(CIRCULAR_MARK)
    assert wide.loc["apertium-en-es-fr (exact)", "all"].endswith(CIRCULAR_MARK)
    assert not wide.loc["convs2s (exact)", "round_trip_spa"].endswith(CIRCULAR_MARK)
    assert not wide.loc["apertium-en-es-fr (exact)", "typos"].endswith(CIRCULAR_MARK)
    text = scores_markdown(scores, 80, circular)
    assert "Noise floor = 1 - share unchanged of the identity control" in text
    assert f"{CIRCULAR_MARK} circular: the round-trip paraphrase uses an Apertium mode the system also uses (round_trip_spa: apertium-en-es-fr)" in text
    assert "noise floor" in scores_latex(scores, 80, circular)


def test_threshold_table_scores_every_threshold_with_its_noise_floor(tmp_path) -> None:
    records, responses = _two_systems()
    types = {"typos": "natural", "round_trip_spa": "paraphrase"}
    table = threshold_scores({"mt": records}, responses, types, [70, 80, 90], [None], {"resamples": 10, "confidence": 0.95}, 0)
    convs2s = table[(table["responder"] == "convs2s") & (table["type"] == "typos")].set_index("threshold")["score"]
    assert convs2s.to_dict() == {70.0: 1.0, 80.0: 0.5, 90.0: 0.5}  # chrF 100 and 79
    floor = table[(table["responder"] == "convs2s") & (table["type"] == "identity/natural")].set_index("threshold")["score"]
    assert floor.to_dict() == {70.0: 1.0, 80.0: 2 / 3, 90.0: 2 / 3}
    path = tmp_path / "thresholds.tsv"
    table.to_csv(path, sep="\t", index=False)
    wide = thresholds_wide(read_thresholds(path), {"round_trip_spa": ["apertium-en-es-fr"]})
    assert list(wide.columns) == ["chrF >= 70", "chrF >= 80", "chrF >= 90"]
    assert wide.loc["convs2s / noise floor", "chrF >= 80"].startswith("0.33 [")
    assert wide.loc["apertium-en-es-fr / round_trip_spa", "chrF >= 90"].endswith(CIRCULAR_MARK)
    assert "Sensitivity of the chrF criterion" in thresholds_markdown(read_thresholds(path))


def test_circular_pairs_are_round_trips_sharing_a_mode_with_an_apertium_system() -> None:
    families = {"paraphrase": {"functions": {"round_trip_spa": {}, "round_trip_cat": {"modes": ["en-eo", "eo-en"]}, "contractions": {}}},
                "natural": {"functions": {"typos": {}}}}
    systems = {"apertium-en-es-fr": {"kind": "apertium", "modes": ["eng-spa", "es-fr"]},
               "apertium-en-ca-fr": {"kind": "apertium", "modes": ["eng-cat", "cat-fra"]},
               "convs2s": {"kind": "fairseq"}}
    types = {"round_trip_spa": "paraphrase", "round_trip_cat": "paraphrase", "contractions": "paraphrase", "typos": "natural"}
    # round_trip_spa's default modes (eng-spa, spa-eng) share eng-spa; round_trip_cat here goes through Esperanto
    assert circular_pairs(types, families, systems) == {"round_trip_spa": ["apertium-en-es-fr"]}
    families["paraphrase"]["functions"]["round_trip_cat"] = {}
    assert circular_pairs(types, families, systems)["round_trip_cat"] == ["apertium-en-ca-fr"]


def test_meaning_check_rejections_are_counted_from_the_skip_reasons() -> None:
    reasons = pd.Series(["", "source: meaning check: cosine 0.61 < 0.80", "source: paraphrase equals its input",
                         "reference: x; source: meaning check: chrF 20 < 40", None])
    assert meaning_check_rejections(reasons).tolist() == [False, True, False, True, False]


def test_csv_tables_and_the_changes_table_name_the_circular_pairs() -> None:
    records, responses = _two_systems()
    scores = natural_scores({"mt": records}, {"mt": responses}, {"typos": "natural", "round_trip_spa": "paraphrase"}, [None],
                            {"resamples": 10, "confidence": 0.95}, 0)
    marked = with_circular(scores, {"round_trip_spa": ["apertium-en-es-fr"]})
    flagged = marked[marked["circular"]]
    assert set(zip(flagged["responder"], flagged["type"])) == {("apertium-en-es-fr", "round_trip_spa"), ("apertium-en-es-fr", "all")}
    changes = pd.DataFrame([{"inputs": "MT test sets", "family": f, "type": t, "sampled": 25, "perturbed": 20, "skipped": 5,
                             "share_perturbed": 0.8, "rejected_by_meaning_check": r, "chrf_to_input": 90.0,
                             "levenshtein_similarity_to_input": 95.0}
                            for f, t, r in (("natural", "typos", 0.0), ("paraphrase", "round_trip_spa", 0.12))])
    text = changes_markdown(changes_with_circular(changes, {"round_trip_spa": ["apertium-en-es-fr"]}))
    assert "| MT test sets | paraphrase | round_trip_spa | 25 | 20 | 5 | 0.12 | 90.0 | 95.0 | apertium-en-es-fr |" in text
    assert "| MT test sets | natural | typos | 25 | 20 | 5 | 0.00 | 90.0 | 95.0 |  |" in text
