"""The Natural Robustness study: its config section, its records and responses, its scores table, and the
family interface it relies on (shared sample groups, batched perturbation)."""

from __future__ import annotations

import copy
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.natural_robustness import (
    CIRCULAR_MARK,
    FEW_MARK,
    score_cell,
    scores_latex,
    scores_markdown,
    scores_wide,
    thresholds_markdown,
    with_marks,
)
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.derive import derive_testset, sample_group
from nlp_robustness.sampling import sample_segments
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.statistics.natural_robustness import FEW_PERTURBATIONS
from nlp_robustness.studies.natural_robustness import units
from nlp_robustness.studies.natural_robustness_config import complete_natural_robustness
from nlp_robustness.studies.natural_robustness_responses import (
    mt_records,
    mt_responses,
    review_records,
    sentiment_responses,
)
from nlp_robustness.studies.natural_robustness_scores import natural_scores

SAME = {"casefold": True, "punctuation": True, "chrf_threshold": 80}


def config(**section) -> dict:
    families = {
        "natural": {"functions": {"typos": {}, "casing": {}}, "systems": ["apertium", "convs2s"]},
        "paraphrase": {"functions": {"contractions": {}}, "systems": ["convs2s", "apertium"]},
        "word_order": {"functions": {"Reversed": {}}, "systems": ["apertium"]},
    }
    return {
        "systems": {"apertium": {}, "convs2s": {}, "copy": {}},
        "robustness": {"epsilon": {"start": 1, "stop": 100, "step": 1}},
        "perturbations": {"families": families},
        "natural_robustness": {"families": ["natural", "paraphrase"], **section},
    }


def test_completion_fills_types_systems_and_epsilon() -> None:
    completed = config()
    complete_natural_robustness(completed)
    section = completed["natural_robustness"]
    assert section["leave_out"] == ["typos", "casing", "contractions"]
    assert section["systems"] == ["apertium", "convs2s"]  # config order; both families translate with them
    assert section["epsilon"] == {"start": 1, "stop": 100, "step": 1}
    again = copy.deepcopy(completed)
    complete_natural_robustness(again)
    assert again == completed  # completing twice changes nothing


@pytest.mark.parametrize(("section", "key"), [
    ({"families": ["natural", "typos"]}, "natural_robustness.families[1]"),
    ({"leave_out": ["casing", "shouting"]}, "natural_robustness.leave_out[1]"),
    ({"epsilon": {"start": 5, "stop": 1, "step": 1}}, "natural_robustness.epsilon.stop"),
])
def test_completion_names_the_bad_key(section: dict, key: str) -> None:
    with pytest.raises(InputError, match=key.replace("[", r"\[").replace("]", r"\]")):
        complete_natural_robustness(config(**section))


def test_types_must_be_distinct_and_some_system_must_serve_every_family() -> None:
    clash = config(families=["natural", "word_order"])
    clash["perturbations"]["families"]["word_order"]["functions"] = {"typos": {}}
    with pytest.raises(InputError, match="'typos' is in both natural and word_order"):
        complete_natural_robustness(clash)
    disjoint = config(families=["paraphrase", "word_order"])
    disjoint["perturbations"]["families"]["word_order"]["systems"] = ["copy"]
    with pytest.raises(InputError, match="no system translates"):
        complete_natural_robustness(disjoint)


def test_the_two_families_of_paper_001_share_one_sample_group() -> None:
    natural, paraphrase = family_module("natural"), family_module("paraphrase")
    assert sample_group(natural, "natural") == sample_group(paraphrase, "paraphrase") == "natural_robustness"
    assert sample_group(family_module("word_order"), "word_order") == "word_order"  # others keep their own samples
    table = pd.DataFrame({"segment_id": [str(i) for i in range(50)], "doc_id": "d", "source": "x", "reference": "y"})
    assert sample_segments(table, 10, 0, "natural_robustness", "wmt14")["segment_id"].tolist() != \
        sample_segments(table, 10, 0, "word_order", "wmt14")["segment_id"].tolist()


def test_a_batch_family_gets_every_text_once_with_the_generators_of_single_calls() -> None:
    calls = []

    def perturb_batch(function, texts, settings, rngs, context):
        calls.append(list(texts))
        return [Skipped("empty text") if not text else Perturbed((f"{text}-{rng.integers(1000)}",)) for text, rng in zip(texts, rngs)]

    module = SimpleNamespace(NEEDS_PARSE=False, PERTURBED_SIDES=("source",), perturb_batch=perturb_batch)
    samples = {
        "a": pd.DataFrame({"segment_id": ["1", "2"], "doc_id": "d", "source": ["one", ""], "reference": ["r1", "r2"]}),
        "b": pd.DataFrame({"segment_id": ["1"], "doc_id": "d", "source": ["three"], "reference": ["r3"]}),
    }
    derived, status = derive_testset(module, "fam", "f", {}, samples, None, 7)
    assert calls == [["one", "", "three"]]  # one call for the side, every sampled text in order
    assert status["kept"].tolist() == [True, False, True]
    alone, _ = derive_testset(module, "fam", "f", {}, {"b": samples["b"]}, None, 7)
    assert alone["source"].iloc[0] == derived["source"].iloc[1]  # a text's outcome does not depend on the batch
    assert derived["reference"].tolist() == ["r1", "r3"]


def test_mt_responses_compare_each_perturbed_translation_with_the_original_one() -> None:
    testset = pd.DataFrame({"segment_id": ["1", "2", "3"]})
    derived = pd.DataFrame({"testset": ["t", "t"], "segment_id": ["3", "1"]})
    responses = mt_responses({"casing": (derived, ["Le chat.", "un chien noir"])},
                             {"t": (testset, ["un chien", "deux", "le chat"])}, SAME)
    assert responses["record"].tolist() == ["t/3", "t/1"]
    assert responses["same_exact"].tolist() == [True, False]  # case and punctuation ignored
    assert responses["original_response"].tolist() == ["le chat", "un chien"]
    assert responses["same_chrf"].tolist() == [bool(value >= 80) for value in responses["chrf"]]
    with pytest.raises(InputError, match="2 translations of the 3 segments of t"):
        mt_responses({"casing": (derived, ["a", "b"])}, {"t": (testset, ["x", "y"])}, SAME)
    with pytest.raises(InputError, match="t/9, which is not a segment"):
        mt_responses({"casing": (derived.assign(segment_id=["9", "1"]), ["a", "b"])}, {"t": (testset, ["x", "y", "z"])}, SAME)


def test_review_records_are_the_reviews_every_classifier_answered() -> None:
    reviews = pd.DataFrame({"review_id": [str(i) for i in range(6)], "domain": ["books"] * 3 + ["dvd"] * 3,
                            "label": ["positive", "negative"] * 3})
    predictions = {
        "books": pd.DataFrame({"test_domain": ["books", "dvd", "dvd", "dvd"], "review_id": ["2", "3", "4", "5"]}),
        "dvd": pd.DataFrame({"test_domain": ["books", "books", "dvd"], "review_id": ["1", "2", "4"]}),
    }
    records = review_records(predictions, reviews, [f"doc {i}" for i in range(6)], ["books", "dvd"], None, 0, "natural_robustness")
    assert records["segment_id"].tolist() == ["2", "4"] and records["source"].tolist() == ["doc 2", "doc 4"]
    assert records["doc_id"].tolist() == ["books", "dvd"] and records["reference"].tolist() == ["positive", "positive"]
    with pytest.raises(InputError, match="no review of test domain 'dvd'"):
        review_records({"books": predictions["books"].iloc[:1]}, reviews, ["d"] * 6, ["books", "dvd"], None, 0, "g")


def test_sentiment_responses_and_engine_units() -> None:
    records = pd.DataFrame({"segment_id": ["1", "2"], "doc_id": ["books", "dvd"], "source": ["good", "bad"], "reference": ["p", "n"]})
    perturbed = pd.DataFrame({"testset": ["dvd", "books"], "segment_id": ["2", "1"], "source": ["good!", "gud"]})
    predict = lambda documents: np.array([int(text.startswith("good")) for text in documents])  # noqa: E731
    responses = sentiment_responses(predict, records, {"typos": perturbed})
    assert responses["record"].tolist() == ["dvd/2", "books/1", "books/1", "dvd/2"]
    assert responses["type"].tolist() == ["typos", "typos", "identity/reviews", "identity/reviews"]
    assert responses["same_label"].tolist() == [False, False, True, True]  # the control: a deterministic classifier
    assert responses["original_label"].tolist() == [0, 1, 1, 0]


def test_score_table_rows_and_cells(tmp_path) -> None:
    responses = pd.DataFrame({
        "record": ["t/1", "t/2", "t/1", "t/3"], "type": ["typos", "typos", "casing", "casing"],
        "same_exact": [True, False, True, True], "same_chrf": [True, True, True, False],
    })
    records = pd.DataFrame({"record": ["t/1", "t/2", "t/3"], "part": "t", "item": ["1", "2", "3"]})
    scores = natural_scores({"mt": records}, {"mt": {"sys": responses}}, {"typos": "natural", "casing": "natural"},
                            [2, None], {"resamples": 200, "confidence": 0.9}, 0)
    whole = scores[scores["sample"] == "all"].set_index(["criterion", "type"])
    assert whole.loc[("exact", "typos"), "score"] == 0.5 and whole.loc[("exact", "all"), "score"] == 0.75
    assert whole.loc[("chrf", "casing"), "score"] == 0.5 and whole.loc[("chrf", "all"), "family"] == "all"
    assert set(scores["kind"]) == {"MT system"} and len(scores) == 2 * 2 * 3
    assert score_cell(0.9, 0.8, 1.0) == "0.90 [0.80, 1.00]" and score_cell(math.nan, math.nan, math.nan) == "\u2013"
    # the interval: Wilson by default (per type; pooled on perturbations / design effect), or as configured
    assert set(scores["interval"]) == {"wilson"} and (scores["ci_high"] > scores["ci_low"]).all()
    assert whole.loc[("exact", "typos"), "design_effect"] == 1.0 and whole.loc[("exact", "all"), "design_effect"] >= 1.0
    jeffreys = natural_scores({"mt": records}, {"mt": {"sys": responses}}, {"typos": "natural", "casing": "natural"},
                              [2, None], {"resamples": 200, "confidence": 0.9}, 0, {"method": "jeffreys", "bootstrap_from_records": 3})
    assert set(jeffreys.loc[jeffreys["sample"] == "2", "interval"]) == {"jeffreys"}
    assert "cluster-bootstrap" in set(jeffreys.loc[jeffreys["sample"] == "all", "interval"])
    wide = scores_wide(scores, "all")
    assert list(wide.index) == ["sys (exact)", "sys (chrF)"] and list(wide.columns) == ["typos", "casing", "all"]
    assert "**Sample: all records (MT systems: 3)**" in scores_markdown(scores, 80) and "1.0 = robust" in scores_markdown(scores, 80)
    assert "Wilson score interval" in scores_markdown(scores, 80) and "bootstrap" not in scores_markdown(scores, 80)
    assert "percentile bootstrap over records" in scores_markdown(jeffreys, 80)
    path = tmp_path / "responses.tsv"
    responses.to_csv(path, sep="\t", index=False)
    assert units({"natural": str(path)}, ["typos", "casing"], "sys", "chrf", {})["score"].tolist() == [100.0, 100.0, 100.0, 0.0]


def test_tables_mark_the_types_with_few_perturbations_and_say_why() -> None:
    """20 records: typos perturbs all 20 (unmarked), casing 3 (marked, before the circular mark); on the 5-record
    sample typos is marked too; the pooled score never. The CSV has the flag as a column, the captions the reason."""
    records = pd.DataFrame({"record": [f"t/{i}" for i in range(20)], "part": "t", "item": [str(i) for i in range(20)]})
    rng = np.random.default_rng(1)
    responses = pd.DataFrame({
        "record": [*records["record"], *records["record"][:3]], "type": ["typos"] * 20 + ["casing"] * 3,
        "same_exact": rng.random(23) < 0.6, "same_chrf": rng.random(23) < 0.8,
    })
    scores = natural_scores({"mt": records}, {"mt": {"sys": responses}}, {"typos": "natural", "casing": "natural"},
                            [5, None], {"resamples": 10, "confidence": 0.95}, 0)
    circular = {"casing": ["sys"]}
    whole, five = scores_wide(scores, "all", circular), scores_wide(scores, "5", circular)
    assert not whole["typos"].str.contains(FEW_MARK).any() and not whole["all"].str.contains(FEW_MARK).any()
    assert whole["casing"].str.endswith(FEW_MARK + CIRCULAR_MARK).all()
    assert five["typos"].str.endswith(FEW_MARK).all() and not five["all"].str.contains(FEW_MARK).any()
    marked = with_marks(scores, circular)
    expected = (marked["type"] != "all") & marked["perturbations"].between(1, FEW_PERTURBATIONS - 1)
    assert marked["few_perturbations"].tolist() == expected.tolist() and marked["circular"].any()
    reason = f"{FEW_MARK} fewer than {FEW_PERTURBATIONS} perturbations of the type: a conservative interval."
    assert reason in scores_markdown(scores, 80, circular) and reason in scores_latex(scores, 80, circular)
    thresholds = scores.assign(threshold=80.0)
    assert reason in thresholds_markdown(thresholds)
    assert reason not in thresholds_markdown(thresholds[thresholds["type"] != "casing"])  # on every record typos has 20
    assert "contain the Clopper-Pearson interval at the level minus 0.02" in scores_markdown(scores, 80)


def test_identity_is_a_reserved_function_name() -> None:
    reserved = config()
    reserved["perturbations"]["families"]["natural"]["functions"]["identity"] = {}
    with pytest.raises(InputError, match=r"perturbations\.families\.natural\.functions\.identity"):
        complete_natural_robustness(reserved)
