"""One identity test set per record sample, and the per-type noise floor of the types with few perturbations (issue 43)."""

from __future__ import annotations

import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.natural_robustness import noise_columns, scores_markdown, scores_wide, thresholds_wide
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS
from nlp_robustness.statistics.natural_robustness import FEW_PERTURBATIONS
from nlp_robustness.studies.natural_robustness_config import complete_natural_robustness
from nlp_robustness.studies.natural_robustness_responses import mt_responses
from nlp_robustness.studies.natural_robustness_scores import natural_scores
from nlp_robustness.studies.natural_robustness_controls import (
    identity_samples,
    identity_testset,
    identity_testsets,
    read_control,
    type_control,
    type_controls,
    type_samples,
)

SAME = {"casefold": True, "punctuation": True, "chrf_threshold": 80}
BOOTSTRAP = {"resamples": 10, "confidence": 0.95}
GROUPS = {"natural": "natural_robustness", "paraphrase": "natural_robustness", "structure": "natural_robustness"}


def _families(**changes: dict) -> dict:
    families = {
        "natural": {"sample_size": 25, "derived_testsets": "pooled", "testsets": ["a", "b"], "functions": {"typos": {}, "casing": {}}},
        "paraphrase": {"sample_size": 25, "derived_testsets": "pooled", "testsets": ["a", "b"], "functions": {"contractions": {}}},
        "structure": {"sample_size": 25, "derived_testsets": "pooled", "testsets": ["a", "b"], "functions": {"coordination_swap": {}}},
    }
    for family, change in changes.items():
        families[family] = {**families[family], **change}
    return families


SECTION = {"families": ["natural", "paraphrase", "structure"], "type_noise_floor_below": 16}


def test_families_drawing_one_sample_share_one_identity_test_set_named_after_the_sample() -> None:
    samples = identity_samples(SECTION, _families(), GROUPS)
    assert list(samples) == ["natural_robustness"]
    shared = samples["natural_robustness"]
    assert shared.families == ("natural", "paraphrase", "structure") and shared.testsets() == ["perturbed/natural_robustness/identity/pooled"]
    # translated once: in the job of the sample's first family
    assert identity_testsets(SECTION, _families(), GROUPS) == {
        "natural": ["perturbed/natural_robustness/identity/pooled"], "paraphrase": [], "structure": []}
    types = {"typos": "natural", "casing": "natural", "contractions": "paraphrase", "coordination_swap": "structure"}
    assert set(type_samples(samples, types).values()) == {"natural_robustness"}
    # the sample's group is the modules' own (SAMPLE_GROUP): the three real families share it
    assert list(identity_samples(SECTION, _families())) == ["natural_robustness"]
    assert identity_samples(None, _families()) == {} and identity_testsets({}, _families()) == {}


def test_a_family_that_samples_differently_gets_its_own_identity_test_set() -> None:
    families = _families(structure={"sample_size": 10}, paraphrase={"derived_testsets": "per_testset"})
    samples = identity_samples(SECTION, families, GROUPS)
    assert {name: sample.families for name, sample in samples.items()} == {
        "natural_robustness-natural": ("natural",), "natural_robustness-paraphrase": ("paraphrase",),
        "natural_robustness-structure": ("structure",)}
    assert samples["natural_robustness-paraphrase"].testsets() == [
        "perturbed/natural_robustness-paraphrase/identity/a", "perturbed/natural_robustness-paraphrase/identity/b"]
    assert type_samples(samples, {"contractions": "paraphrase", "typos": "natural"}) == {
        "contractions": "natural_robustness-paraphrase", "typos": "natural_robustness-natural"}
    # every segment (sample_size null): the group cannot change the records, so other groups share
    whole = _families(**{family: {"sample_size": None} for family in GROUPS})
    assert list(identity_samples(SECTION, whole, {**GROUPS, "structure": "structure"})) == ["natural_robustness"]
    with pytest.raises(InputError, match="natural_robustness.families.*'typos'"):
        identity_samples(SECTION, _families(), {family: "typos" for family in GROUPS})


def _perturbed(ids: list[str], testset: str = "a") -> pd.DataFrame:
    return pd.DataFrame({
        "segment_id": ids, "doc_id": "d", "source": [f"perturbed {i}" for i in ids], "reference": [f"ref {i}" for i in ids],
        "testset": testset, "original_source": [f"original {i}" for i in ids], "source_tokens": [f"perturbed {i}" for i in ids],
        "perturbed_reference": [f"perturbed ref {i}" for i in ids],
    })[list(DERIVED_COLUMNS)]


def test_a_small_types_control_is_its_records_unperturbed_in_its_perturbed_layout(tmp_path) -> None:
    perturbed = {"a": _perturbed(["9", "3", "4"]), "b": _perturbed(["1"], "b")}
    control = type_control(perturbed, "a", 16)
    # the perturbed test set's layout: same records, same order, so the same neighbours
    assert control[["testset", "segment_id"]].values.tolist() == perturbed["a"][["testset", "segment_id"]].values.tolist()
    assert control["source"].tolist() == ["original 9", "original 3", "original 4"] == control["source_tokens"].tolist()
    assert control["perturbed_reference"].tolist() == control["reference"].tolist() == perturbed["a"]["reference"].tolist()
    assert type_control(perturbed, "b", 16)["source"].tolist() == ["original 1"]
    # the threshold counts every part: 4 perturbations are not fewer than 4
    assert type_control(perturbed, "a", 4).empty and list(type_control(perturbed, "a", 4).columns) == list(DERIVED_COLUMNS)
    assert len(type_control(perturbed, "a", 5)) == 3
    path = tmp_path / "control.tsv"
    type_control(perturbed, "a", 4).to_csv(path, sep="\t", index=False)
    assert read_control(str(path)).empty  # an empty control is read, where a test set would be refused
    names = type_controls(SECTION, _families(paraphrase={"derived_testsets": "per_testset"}))
    assert names["typos"] == {"pooled": "perturbed/natural/typos/identity/pooled"}
    assert names["contractions"] == {"a": "perturbed/paraphrase/contractions/identity/a", "b": "perturbed/paraphrase/contractions/identity/b"}
    assert type_controls({**SECTION, "type_noise_floor_below": 0}, _families()) == {} and type_controls(None, _families()) == {}


def test_the_threshold_defaults_to_the_tables_conservative_interval_count() -> None:
    section = {"families": ["natural"]}
    config = {"systems": {"s": {}}, "robustness": {"epsilon": {"start": 1, "stop": 100, "step": 1}},
              "perturbations": {"families": {"natural": {"functions": {"typos": {}, "casing": {}}, "systems": ["s"]}}},
              "natural_robustness": section}
    complete_natural_robustness(config)
    assert section["type_noise_floor_below"] == FEW_PERTURBATIONS == 16
    config["natural_robustness"] = {"families": ["natural"], "type_noise_floor_below": -1}
    with pytest.raises(InputError, match="natural_robustness.type_noise_floor_below"):
        complete_natural_robustness(config)


def _layouts() -> dict:
    """Records a/1..a/4; contractions (small) perturbed a/2 and a/4. Translations: the whole test set, the shared identity
    test set, the perturbed set and the control (a/4 translated differently among the perturbed set's neighbours)."""
    whole = pd.DataFrame({"segment_id": ["1", "2", "3", "4"]})
    sample = pd.DataFrame({"segment_id": ["1", "2", "3", "4"], "doc_id": "d", "source": ["s1", "s2", "s3", "s4"],
                           "reference": ["r1", "r2", "r3", "r4"]})
    identity = identity_testset({"a": sample})
    perturbed = _perturbed(["2", "4"])
    return {
        "testsets": {"a": (whole, ["W1", "W2", "W3", "W4 x"])},
        "identity": {"natural_robustness": (identity, ["W1", "W2", "W3", "W4"])},
        "derived": {"contractions": (perturbed, ["W2", "W4 changed"]), "typos": (_perturbed(["1", "2", "3", "4"]), ["W1", "W2", "W3", "W4"])},
        "controls": {"contractions": (type_control({"a": perturbed}, "a", 16), ["W2", "W4 other"]),
                     "typos": (type_control({"a": _perturbed(["1", "2", "3", "4"])}, "a", 4), [])},
        "types": {"contractions": "natural_robustness", "typos": "natural_robustness"},
    }


def test_a_types_own_noise_floor_compares_its_layout_with_the_shared_identity_layout() -> None:
    layouts = _layouts()
    responses = mt_responses(layouts["derived"], layouts["testsets"], SAME, identity=layouts["identity"], types=layouts["types"],
                             controls=layouts["controls"])
    kinds = responses["type"].tolist()
    assert kinds == ["contractions"] * 2 + ["typos"] * 4 + ["identity/natural_robustness"] * 4 + ["identity/contractions"] * 2
    control = responses[responses["type"] == "identity/contractions"]
    assert control["record"].tolist() == ["a/2", "a/4"]
    assert control["original_response"].tolist() == ["W2", "W4"]  # the shared identity test set's translations
    assert control["same_exact"].tolist() == [True, False]  # a/4 changes with its neighbours alone
    shared = responses[responses["type"] == "identity/natural_robustness"]
    assert shared["same_exact"].tolist() == [True, True, True, False]  # whole-test-set layout vs identity layout
    # a control that is not the type's perturbed records in their order is refused
    swapped = layouts["controls"]["contractions"][0].iloc[::-1].reset_index(drop=True)
    with pytest.raises(InputError, match="control test set of contractions does not hold its perturbed records"):
        mt_responses(layouts["derived"], layouts["testsets"], SAME, identity=layouts["identity"], types=layouts["types"],
                     controls={"contractions": (swapped, ["a", "b"])})
    with pytest.raises(InputError, match="1 translations of the 2 segments of the control test set of contractions"):
        mt_responses(layouts["derived"], layouts["testsets"], SAME, identity=layouts["identity"], types=layouts["types"],
                     controls={"contractions": (layouts["controls"]["contractions"][0], ["x"])})


def test_the_per_type_floor_is_scored_and_shown_beside_its_type_and_the_shared_one_once() -> None:
    layouts = _layouts()
    responses = mt_responses(layouts["derived"], layouts["testsets"], SAME, identity=layouts["identity"], types=layouts["types"],
                             controls=layouts["controls"])
    records = pd.DataFrame({"record": [f"a/{i}" for i in range(1, 5)], "part": "a", "item": [str(i) for i in range(1, 5)]})
    reviews = pd.DataFrame({"record": ["books/1", "books/1"], "type": ["typos", "identity/reviews"],
                            "same_label": [True, True]})
    types = {"typos": "natural", "contractions": "paraphrase"}
    scores = natural_scores({"mt": records, "sentiment": records.assign(record="books/1").iloc[:1]},
                            {"mt": {"sys": responses}, "sentiment": {"clf": reviews}}, types, [None], BOOTSTRAP, 0)
    exact = scores[(scores["criterion"] == "exact")].set_index("type")
    assert exact.loc["identity/contractions", "perturbations"] == 2 and exact.loc["identity/contractions", "score"] == 0.5
    assert exact.loc["identity/contractions", "family"] == "control"
    assert exact.loc["identity/natural_robustness", "score"] == 0.75
    assert noise_columns(scores) == {"identity/natural_robustness": "noise floor", "identity/contractions": "noise floor (contractions)",
                                     "identity/reviews": "noise floor"}
    wide = scores_wide(scores, "all")
    assert list(wide.columns) == ["typos", "contractions", "noise floor (contractions)", "all", "noise floor"]
    assert wide.loc["sys (exact)", "noise floor (contractions)"].startswith("0.50 [")  # 1 - share unchanged
    assert wide.loc["sys (exact)", "noise floor"].startswith("0.25 [") and wide.loc["clf (label)", "noise floor"].startswith("0.00 [")
    assert wide.loc["clf (label)", "noise floor (contractions)"] == "–"  # classifiers read a review alone
    assert "Noise floor (<type>), beside a type with few perturbations" in scores_markdown(scores, 80)
    # two record samples: one column each, named after the sample
    two = scores.assign(type=scores["type"].replace({"identity/natural_robustness": "identity/natural_robustness-natural"}))
    two = pd.concat([two, two[two["type"] == "identity/natural_robustness-natural"].assign(type="identity/natural_robustness-structure")])
    assert sorted(scores_wide(two, "all").columns[-3:]) == [
        "noise floor (natural_robustness-natural)", "noise floor (natural_robustness-structure)", "noise floor (reviews)"]
    thresholds = scores[scores["kind"] == "MT system"].assign(threshold=80.0)
    rows = list(thresholds_wide(thresholds).index)
    assert rows[:5] == ["sys / typos", "sys / contractions", "sys / noise floor (contractions)", "sys / all", "sys / noise floor"]
