"""The Hugging Face classifier kind (nlp_robustness.systems.hf_classifier) on a tiny BERT built from mirror reviews
(the session fixture ``tiny_classifier`` of tests/conftest.py)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.planning import prepare_config
from nlp_robustness.studies.natural_robustness_responses import sentiment_responses
from nlp_robustness.studies.plan import study_plan
from nlp_robustness.studies.study_settings import natural_rows
from nlp_robustness.studies.profile_plan import profile_plan
from nlp_robustness.studies.sentiment import accuracy_by_domain, sentiment_classifiers
from nlp_robustness.systems.hf_classifier import (
    ModelSettings,
    choose_device,
    class_indices,
    file_hashes,
    load_classifier,
    looks_like_path,
)
from nlp_robustness.systems.sentiment_classifier import predict_test_domains
from tests.e2e.workflow_runner import DEFAULT_CONFIG
from tests.paths import REPOSITORY
from tests.tiny_models.classifier import mirror_reviews

#: A completed ``sentiment.models`` entry (the schema's defaults), with the tiny model's labels.
ENTRY = {
    "kind": "huggingface", "revision": None, "labels": {"negative": "NEGATIVE", "positive": "POSITIVE"},
    "batch_size": 32, "max_length": 64, "device": "cpu", "cpu_threads": 1, "fields": ["title", "review_text"],
    "dtype": "float32",
}


def settings_for(model: Path | str, name: str = "tiny", **changes: object) -> ModelSettings:
    return ModelSettings.from_config(name, {**ENTRY, "model": str(model), **changes})


@pytest.fixture(scope="module")
def loaded(tiny_classifier: Path):
    return load_classifier(settings_for(tiny_classifier))


@pytest.fixture(scope="module")
def dvd_reviews(mirror_dir: Path) -> tuple[list[str], np.ndarray]:
    documents, classes = mirror_reviews("dvd", mirror_dir, per_label=100)
    return documents, np.asarray(classes)


def test_loads_a_local_directory_and_beats_chance(loaded, dvd_reviews, tiny_classifier: Path) -> None:
    documents, truth = dvd_reviews
    predicted = loaded.predict(documents)
    assert predicted.dtype == np.int64 and predicted.shape == (200,) and set(np.unique(predicted)) == {0, 1}
    assert np.mean(predicted == truth) >= 0.6  # built on books reviews, tested on dvd ones
    assert loaded.classes == {"negative": 0, "positive": 1} and loaded.device == "cpu"
    assert loaded.commit is None and loaded.directory == tiny_classifier


def test_batches_keep_input_order_and_runs_repeat(tiny_classifier: Path, loaded, dvd_reviews) -> None:
    documents = dvd_reviews[0][:40]
    whole = loaded.predict(documents)
    by_three = load_classifier(settings_for(tiny_classifier, batch_size=3)).predict(documents)
    one_by_one = load_classifier(settings_for(tiny_classifier, batch_size=1)).predict(documents)
    assert by_three.tolist() == one_by_one.tolist() == whole.tolist()
    assert loaded.predict(documents[::-1]).tolist() == whole[::-1].tolist()
    assert loaded.predict(documents).tolist() == whole.tolist()
    assert loaded.predict([]).tolist() == []


def test_a_review_longer_than_the_models_positions_is_truncated_there(tiny_classifier: Path) -> None:
    classifier = load_classifier(settings_for(tiny_classifier, max_length=512))
    positions = classifier.model.config.max_position_embeddings
    assert classifier.max_tokens == positions < 512
    long_review = " ".join(["a great book , i loved every page"] * 80)
    assert classifier.predict([long_review, "bad"]).shape == (2,)


def test_swapped_labels_swap_every_prediction(tiny_classifier: Path, loaded, dvd_reviews) -> None:
    """Labels by index, the other way round: the argmax over the two mapped classes is the complement."""
    swapped = load_classifier(settings_for(tiny_classifier, labels={"negative": 1, "positive": 0}))
    documents = dvd_reviews[0][:30]
    assert swapped.classes == {"negative": 1, "positive": 0}
    assert (swapped.predict(documents) == 1 - loaded.predict(documents)).all()


def test_predicts_every_review_of_every_test_domain(loaded, mirror_dir: Path) -> None:
    documents, classes = mirror_reviews("electronics", mirror_dir, per_label=10)
    titles, texts = zip(*(document.split("\n", 1) for document in documents))
    reviews = pd.DataFrame({
        "review_id": [f"r{index}" for index in range(20)], "domain": ["electronics", "books"] * 10,
        "label": ["negative" if label == 0 else "positive" for label in classes], "title": titles, "review_text": texts,
    })
    predictions, excluded = predict_test_domains(loaded, reviews, ["books", "electronics"], None, None, set(), loaded.settings.fields, "t.tsv")
    assert predictions["test_domain"].tolist() == ["books"] * 10 + ["electronics"] * 10
    assert set(predictions["source"]) == {"cross-domain"} and excluded == {"books": 0, "electronics": 0}
    expected = loaded.predict(list(documents))
    order = [*range(1, 20, 2), *range(0, 20, 2)]
    assert predictions["predicted"].tolist() == expected[order].tolist()
    accuracy = accuracy_by_domain(predictions, ["books", "electronics"], excluded)
    assert accuracy["reviews"].tolist() == [10, 10]


def test_report_records_model_files_and_run(loaded, tiny_classifier: Path) -> None:
    report = loaded.report({"dvd": 200}, 1.23456)
    expected = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(tiny_classifier.iterdir())}
    assert report["files_sha256"] == expected
    assert {"model.safetensors", "tokenizer.json", "config.json"} <= set(report["files_sha256"])
    assert report["model"] == str(tiny_classifier) and report["local_directory"] is True and report["commit"] is None
    assert report["labels"] == {"negative": {"index": 0, "model_label": "NEGATIVE"}, "positive": {"index": 1, "model_label": "POSITIVE"}}
    assert report["model_labels"] == {"0": "NEGATIVE", "1": "POSITIVE"}
    assert (report["device"], report["dtype"], report["reviews_per_domain"], report["wall_seconds"]) == ("cpu", "float32", {"dvd": 200}, 1.235)
    json.dumps(report)  # JSON-ready


def test_file_hashes_follow_links_and_skip_hidden(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(b"abc")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "lock").write_text("x")
    (tmp_path / "link.bin").symlink_to(tmp_path / "weights.bin")
    digest = hashlib.sha256(b"abc").hexdigest()
    assert file_hashes(tmp_path) == {"link.bin": digest, "weights.bin": digest}


def test_device_choice() -> None:
    assert choose_device("auto", False, "k") == "cpu"
    assert choose_device("auto", True, "k") == "cuda"
    assert choose_device("cpu", True, "k") == "cpu"
    with pytest.raises(InputError, match="'sentiment.models.m.device': 'cuda' requested but torch sees no GPU"):
        choose_device("cuda", False, "sentiment.models.m.device")
    with pytest.raises(InputError, match="device must be one of auto, cpu, cuda"):
        choose_device("tpu", True, "k")


def test_unknown_model_directory(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.model': no model directory .*no-such-model"):
        load_classifier(settings_for(missing))
    assert looks_like_path("./model") and looks_like_path("/a") and looks_like_path("a/b/c")
    assert not looks_like_path("distilbert-base-uncased-finetuned-sst-2-english") and not looks_like_path("owner/name")


def test_a_directory_without_a_model(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.model': cannot load .*no Hugging Face model config"):
        load_classifier(settings_for(tmp_path))


def test_a_revision_for_a_local_directory(tiny_classifier: Path) -> None:
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.revision': .* is a local directory"):
        load_classifier(settings_for(tiny_classifier, revision="main"))


def test_label_mapping_errors_name_the_key_and_the_model_labels(tiny_classifier: Path) -> None:
    labels = {0: "NEGATIVE", 1: "POSITIVE"}
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.labels\.positive': 'POS' is not a label of .* \(its labels: 0 NEGATIVE, 1 POSITIVE\)"):
        class_indices(settings_for(tiny_classifier, labels={"negative": "NEGATIVE", "positive": "POS"}), labels, 2)
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.labels\.negative': class index 2 is out of range; .* has 2 labels \(0 NEGATIVE, 1 POSITIVE\)"):
        class_indices(settings_for(tiny_classifier, labels={"negative": 2, "positive": 1}), labels, 2)
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.labels\.positive': class 1 \(POSITIVE\) is also labels\.negative"):
        class_indices(settings_for(tiny_classifier, labels={"negative": 1, "positive": "POSITIVE"}), labels, 2)
    with pytest.raises(InputError, match=r"'sentiment\.models\.tiny\.labels': needs exactly the review labels negative, positive"):
        settings_for(tiny_classifier, labels={"negative": 0, "positive": 1, "neutral": 2})
    # a three-class model: any two of its classes, by name or index
    three = {0: "negative", 1: "neutral", 2: "positive"}
    assert class_indices(settings_for(tiny_classifier, labels={"negative": "negative", "positive": 2}), three, 3) == {"negative": 0, "positive": 2}
    # the model's own config is checked before its weights are loaded
    with pytest.raises(InputError, match=r"labels\.positive': 'POS' is not a label"):
        load_classifier(settings_for(tiny_classifier, labels={"negative": "NEGATIVE", "positive": "POS"}))


def test_a_copied_model_gives_the_same_labels_and_hashes(tiny_classifier: Path, loaded, dvd_reviews, tmp_path: Path) -> None:
    copy = shutil.copytree(tiny_classifier, tmp_path / "copy")
    again = load_classifier(settings_for(copy))
    assert again.predict(dvd_reviews[0][:20]).tolist() == loaded.predict(dvd_reviews[0][:20]).tolist()
    assert again.report({}, 0)["files_sha256"] == loaded.report({}, 0)["files_sha256"]


def test_classifier_rows_and_name_clash() -> None:
    section = {"training": {"domains": ["books", "dvd"]}, "models": {"sst2": {}, "tiny": {}}}
    assert sentiment_classifiers({"sentiment": section}) == ["books", "dvd", "sst2", "tiny"]
    assert sentiment_classifiers({"sentiment": {**section, "models": {}}}) == ["books", "dvd"]
    assert sentiment_classifiers({}) == []
    with pytest.raises(InputError, match=r"'sentiment\.models\.dvd': 'dvd' is a training domain"):
        sentiment_classifiers({"sentiment": {**section, "models": {"dvd": {}}}})


def test_the_model_answers_perturbed_reviews(loaded, dvd_reviews) -> None:
    """Through the Natural Robustness responses: the tokenizer lower-cases, so upper-casing changes no label."""
    documents = dvd_reviews[0][:12]
    records = pd.DataFrame({"segment_id": [str(index) for index in range(12)], "doc_id": "dvd", "source": documents,
                            "reference": "x"})
    shouted = pd.DataFrame({"testset": "dvd", "segment_id": records["segment_id"], "source": [text.upper() for text in documents]})
    emptied = pd.DataFrame({"testset": "dvd", "segment_id": records["segment_id"], "source": ""})
    responses = sentiment_responses(loaded.predict, records, {"casing": shouted, "emptied": emptied})
    casing = responses[responses["type"] == "casing"]
    assert casing["same_label"].all() and casing["original_label"].tolist() == loaded.predict(documents).tolist()
    emptied_labels = responses.loc[responses["type"] == "emptied", "perturbed_label"]
    assert emptied_labels.nunique() == 1  # every empty review gets the same label


def _with_model(name: str = "tiny", **entry: object) -> dict:
    config = copy.deepcopy(DEFAULT_CONFIG)
    config["sentiment"]["models"] = {name: {"kind": "huggingface", "labels": {"negative": "NEGATIVE", "positive": "POSITIVE"}, **entry}}
    return config


def test_a_model_is_one_more_row_of_the_sentiment_and_natural_studies(tiny_classifier: Path) -> None:
    config = _with_model(model=str(tiny_classifier))
    prepare_config(config, REPOSITORY)
    assert config["sentiment"]["models"]["tiny"]["batch_size"] == 32 and config["sentiment"]["models"]["tiny"]["device"] == "auto"
    domains = list(config["sentiment"]["training"]["domains"])
    sections = {"domains": "D", "sentiment": "S", "human": "H", "natural": "N", "metric_robustness": "M"}
    plan = study_plan(config, {**sections, **{family: family for family in config["perturbations"]["families"]}})
    assert list(plan.table_summaries("sentiment")) == [*domains, "tiny"]
    assert plan.block_sets["sentiment/tiny"].unit_files == {"predictions": "results/sentiment/predictions/tiny.tsv"}
    assert plan.tables["sentiment"].row_label == "classifier (training domain or model)"
    assert natural_rows(config)["label"] == [*domains, "tiny"]
    assert "tiny (label)" in plan.tables["natural_robustness"].rows
    groups = {group["name"]: group for group in profile_plan(config, plan.gamma_curves())["groups"]}
    assert groups["sentiment"]["systems"] == [*domains, "tiny"]


@pytest.mark.parametrize(("name", "entry", "expected"), [
    ("dvd", {"model": "x/y"}, r"'sentiment\.models\.dvd': 'dvd' is a training domain"),
    ("tiny", {"model": "./no/such/model"}, r"'sentiment\.models\.tiny\.model': no model directory \./no/such/model"),
    ("tiny", {"model": "x/y", "fields": ["review_text"]}, r"'sentiment\.models\.tiny\.fields': \['review_text'\] differ from sentiment\.classifier\.fields"),
    ("tiny", {"model": "x/y", "labels": {"negative": "NEGATIVE"}}, r"sentiment\.models\.tiny\.labels.*positive"),
    ("tiny", {"model": "x/y", "device": "tpu"}, r"sentiment\.models\.tiny\.device"),
    ("bad name", {"model": "x/y"}, r"sentiment\.models.*bad name"),
])
def test_bad_model_entries_fail_before_any_job(name: str, entry: dict, expected: str) -> None:
    config = _with_model(name, **entry)
    if "labels" in entry:
        config["sentiment"]["models"][name]["labels"] = entry["labels"]
    with pytest.raises(InputError, match=expected):
        prepare_config(config, REPOSITORY)
