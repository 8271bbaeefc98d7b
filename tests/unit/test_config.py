"""Config validation: the shipped config is valid; every mistake names its key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from nlp_robustness.config import (
    FAIRSEQ_DEFAULTS,
    HUMAN_RANKING_DEFAULTS,
    SENTIMENT_BAGGING_UNIT_DEFAULT,
    SENTIMENT_TRAINING_DEFAULTS,
    acquired_datasets,
    fairseq_settings,
    human_settings,
    leave_out_labels,
    pool_testsets,
    sentiment_leave_out_labels,
    sentiment_settings,
    training_datasets,
    validate_config,
    validate_dataset_references,
    validate_human_references,
    validate_sentiment_references,
    validate_system_references,
)
from nlp_robustness.errors import InputError

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA = REPOSITORY / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((REPOSITORY / "config" / "config.yaml").read_text(encoding="utf-8"))


def config_with(edit) -> dict:
    config = copy.deepcopy(DEFAULT)
    edit(config)
    return config


def test_default_config_is_valid() -> None:
    validate_config(DEFAULT, SCHEMA)
    assert leave_out_labels(DEFAULT) == ["none", "wmt14", "wmt15", "iwslt17", "bio18"]
    assert pool_testsets(DEFAULT, "iwslt17") == ["wmt14", "wmt15", "bio18"]
    assert pool_testsets(DEFAULT, "none") == ["wmt14", "wmt15", "iwslt17", "bio18"]


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda c: c["systems"]["apertium-en-es-fr"].update(kind="fairseqq"), "systems.apertium-en-es-fr.kind"),
        (lambda c: c["systems"]["apertium-en-es-fr"].update(pivot=["eng-spa"]), "systems.apertium-en-es-fr"),
        (lambda c: c["robustness"]["bagging"].update(fraction=1.5), "robustness.bagging.fraction"),
        (lambda c: c["robustness"]["bagging"].update(blocks="30"), "robustness.bagging.blocks"),
        (lambda c: c["robustness"].update(seeds=1), "robustness"),
        (lambda c: c.update(metrics=["bleu", "ter"]), "metrics.1"),
        (lambda c: c["testsets"]["wmt14"].update(source="x.en"), "testsets.wmt14"),
        (lambda c: c["testsets"].update(none={"dataset": "x", "domain": "y"}), "testsets.none"),
        (lambda c: c["robustness"].update(leave_out=["wmt14", "mtnt"]), "robustness.leave_out[1]"),
        (lambda c: c["robustness"]["epsilon"].update(start=10, stop=5), "robustness.epsilon.stop"),
        (lambda c: c["systems"].update(mine={"kind": "hypotheses", "files": {"wmt14": "a.txt"}}), "systems.mine.files"),
    ],
)
def test_mistakes_name_their_key(edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config_with(edit), SCHEMA)
    assert f"'{key}" in str(error.value)


KINDS = {"wmt14-newstest2014-enfr": "parallel", "wmt15-newsdiscusstest2015-enfr": "parallel",
         "iwslt17-tst2017-enfr": "parallel", "wmt18-biomedical-medline-enfr": "parallel",
         "tatoeba-v2021-08-07-enfr": "parallel", "amazon-sentiment-acl": "reviews"}


def test_datasets_of_the_config() -> None:
    validate_dataset_references(DEFAULT, KINDS, "datasets.yaml")
    assert acquired_datasets(DEFAULT) == [
        "wmt14-newstest2014-enfr", "wmt15-newsdiscusstest2015-enfr", "iwslt17-tst2017-enfr",
        "wmt18-biomedical-medline-enfr", "tatoeba-v2021-08-07-enfr", "amazon-sentiment-acl",
    ]
    # a dataset used twice is acquired once; extra_datasets and sentiment may be absent
    config = config_with(lambda c: (c.pop("extra_datasets"), c.pop("sentiment"), c["testsets"].update(again={"dataset": "wmt14-newstest2014-enfr", "domain": "news"})))
    assert acquired_datasets(config) == list(KINDS)[:5]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["testsets"]["bio18"].update(dataset="wmt18-biomed"), r"'testsets\.bio18\.dataset': 'wmt18-biomed' is not a dataset of datasets\.yaml"),
        (lambda c: c["testsets"]["bio18"].update(dataset="amazon-sentiment-acl"), r"'testsets\.bio18\.dataset': 'amazon-sentiment-acl' is a reviews dataset"),
        (lambda c: c.update(extra_datasets=["amazon-sentiment-acl", "khresmoi"]), r"'extra_datasets\[1\]': 'khresmoi' is not a dataset"),
    ],
)
def test_unknown_datasets_name_their_key(edit, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate_dataset_references(config_with(edit), KINDS, "datasets.yaml")


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda c: c["download"].update(retries=-1), "download.retries"),
        (lambda c: c["download"].update(timeout_seconds=0), "download.timeout_seconds"),
        (lambda c: c["download"].update(proxy="x"), "download"),
        (lambda c: c.update(extra_datasets="amazon-sentiment-acl"), "extra_datasets"),
    ],
)
def test_download_settings_are_validated(edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config_with(edit), SCHEMA)
    assert f"'{key}" in str(error.value)
    validate_config(config_with(lambda c: c.update(mirror_dir=None)), SCHEMA)  # null: download everything


# --------------------------------------------------------------------------------------------
# fairseq systems
# --------------------------------------------------------------------------------------------

PRETRAINED = {"kind": "fairseq", "pretrained": "wmt14-enfr-fconv"}


def test_fairseq_systems_of_the_default_config() -> None:
    validate_system_references(DEFAULT, KINDS, ["wmt14-enfr-fconv"], "datasets.yaml")
    assert training_datasets(DEFAULT) == ["tatoeba-v2021-08-07-enfr"]
    with_dev = config_with(lambda c: c["systems"]["convs2s-tatoeba"]["training"].update(dev={"datasets": ["wmt15-newsdiscusstest2015-enfr"]}))
    assert training_datasets(with_dev) == ["tatoeba-v2021-08-07-enfr", "wmt15-newsdiscusstest2015-enfr"]
    pretrained = config_with(lambda c: c["systems"].update(wmt14=PRETRAINED))
    validate_config(pretrained, SCHEMA)
    assert fairseq_settings(pretrained["systems"]["wmt14"]) == {**FAIRSEQ_DEFAULTS, "generation": {}, **PRETRAINED}


def _fairseq_schema_defaults() -> dict:
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    branch = next(rule["then"] for rule in schema["properties"]["systems"]["additionalProperties"]["allOf"]
                  if rule["if"]["properties"]["kind"]["const"] == "fairseq")
    return {key: spec["default"] for key, spec in branch["properties"].items() if "default" in spec}


def test_fairseq_defaults_are_the_ones_the_schema_documents() -> None:
    from nlp_robustness.systems.fairseq_mt import GenerationOptions

    assert _fairseq_schema_defaults() == FAIRSEQ_DEFAULTS
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    branch = next(rule["then"] for rule in schema["properties"]["systems"]["additionalProperties"]["allOf"]
                  if rule["if"]["properties"]["kind"]["const"] == "fairseq")
    generation = {key: spec["default"] for key, spec in branch["properties"]["generation"]["properties"].items()}
    assert generation == GenerationOptions().__dict__


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["systems"].update(both={**PRETRAINED, "training": c["systems"]["convs2s-tatoeba"]["training"]}),
         r"'systems\.both': a fairseq system gives either 'pretrained'"),
        (lambda c: c["systems"].update(neither={"kind": "fairseq"}), r"'systems\.neither': a fairseq system gives either"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"].update(dev={"holdout": 5, "datasets": ["x"]}),
         r"'systems\.convs2s-tatoeba\.training\.dev': give either 'datasets' .* or 'holdout'"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"].pop("patience"), r"'systems\.convs2s-tatoeba\.training': 'patience' is a required"),
        (lambda c: c["systems"]["convs2s-tatoeba"].update(device="tpu"), r"'systems\.convs2s-tatoeba\.device'"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["generation"].update(beam=0), r"'systems\.convs2s-tatoeba\.generation\.beam'"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"]["train_args"].update({"--lr": 1}),
         r"'systems\.convs2s-tatoeba\.training\.train_args'"),
    ],
)
def test_fairseq_mistakes_name_their_key(edit, message: str) -> None:
    with pytest.raises(InputError, match=message):
        validate_config(config_with(edit), SCHEMA)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["systems"].update(wmt14={**PRETRAINED, "pretrained": "wmt19"}),
         r"'systems\.wmt14\.pretrained': 'wmt19' is not a model of datasets\.yaml \(known: wmt14-enfr-fconv\)"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"].update(datasets=["tatoeba-v2021-08-07-enfr", "europarl"]),
         r"'systems\.convs2s-tatoeba\.training\.datasets\[1\]': 'europarl' is not a dataset"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"].update(dev={"datasets": ["wmt14-newstest2014-enfr", "amazon-sentiment-acl"]}),
         r"'systems\.convs2s-tatoeba\.training\.dev\.datasets\[1\]': 'amazon-sentiment-acl' is a reviews dataset"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"]["train_args"].update({"save-dir": "/tmp/x"}),
         r"'systems\.convs2s-tatoeba\.training\.train_args\.save-dir': the workflow sets --save-dir itself"),
    ],
)
def test_fairseq_references_name_their_key(edit, message: str) -> None:
    config = config_with(edit)
    validate_config(config, SCHEMA)
    with pytest.raises(InputError, match=message):
        validate_system_references(config, KINDS, ["wmt14-enfr-fconv"], "datasets.yaml")


# --------------------------------------------------------------------------------------------
# sentiment branch
# --------------------------------------------------------------------------------------------

ACL_DOMAINS = ["books", "dvd", "electronics", "kitchen_&_housewares"]
DOMAINS = {key: [] for key in KINDS} | {"amazon-sentiment-acl": ACL_DOMAINS, "amazon-sentiment-unprocessed": ["apparel", *ACL_DOMAINS]}
REVIEW_KINDS = KINDS | {"amazon-sentiment-unprocessed": "reviews"}


def test_sentiment_section_of_the_default_config() -> None:
    validate_sentiment_references(DEFAULT, DOMAINS, REVIEW_KINDS, "datasets.yaml")
    assert sentiment_leave_out_labels(DEFAULT) == ["none", *ACL_DOMAINS]
    settings = sentiment_settings(DEFAULT)
    assert settings["training"]["validation_fraction"] == 0.15 and settings["bagging_unit"] == "review"
    bare = config_with(lambda c: c.update(sentiment={
        "training": {"dataset": "amazon-sentiment-acl", "domains": ["dvd"]},
        "test": {"dataset": "amazon-sentiment-unprocessed", "domains": ["apparel", "books"]},
        "leave_out": ["apparel"],
    }))
    validate_config(bare, SCHEMA)
    validate_sentiment_references(bare, DOMAINS, REVIEW_KINDS, "datasets.yaml")
    filled = sentiment_settings(bare)
    assert filled["training"] == {**SENTIMENT_TRAINING_DEFAULTS, "dataset": "amazon-sentiment-acl", "domains": ["dvd"]}
    assert filled["classifier"] == {} and filled["bagging_unit"] == SENTIMENT_BAGGING_UNIT_DEFAULT
    assert filled["epsilon"] == DEFAULT["robustness"]["epsilon"]  # the MT grid unless given
    assert settings["epsilon"] == {"start": 0.1, "stop": 15, "step": 0.1}
    assert acquired_datasets(bare)[-2:] == ["amazon-sentiment-acl", "amazon-sentiment-unprocessed"]
    assert sentiment_settings(config_with(lambda c: c.pop("sentiment"))) is None
    assert sentiment_leave_out_labels(config_with(lambda c: c.pop("sentiment"))) == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["training"].update(dataset="wmt14-newstest2014-enfr"), "'sentiment.training.dataset': 'wmt14-newstest2014-enfr' is a parallel dataset, not reviews"),
        (lambda s: s["test"].update(dataset="amazon-reviews"), "'sentiment.test.dataset': 'amazon-reviews' is not a dataset of datasets.yaml"),
        (lambda s: s["training"].update(domains=["books", "kitchen"]), "'sentiment.training.domains[1]': 'kitchen' is not a domain of dataset amazon-sentiment-acl"),
        (lambda s: s["test"].update(domains=["books", "apparel"]), "'sentiment.test.domains[1]': 'apparel' is not a domain"),
        (lambda s: s.update(leave_out=["dvd", "music"]), "'sentiment.leave_out[1]': 'music' is not a test domain"),
        (lambda s: (s["test"].update(domains=["dvd"]), s.update(leave_out=["dvd"])), "'sentiment.leave_out': leaving out the only test domain"),
    ],
)
def test_sentiment_references_name_their_key(edit, message: str) -> None:
    config = config_with(lambda c: edit(c["sentiment"]))
    with pytest.raises(InputError) as error:
        validate_sentiment_references(config, DOMAINS, REVIEW_KINDS, "datasets.yaml")
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda s: s["training"].update(validation_fraction=1.0), "sentiment.training.validation_fraction"),
        (lambda s: s["classifier"].update(c_grid=[0, 1]), "sentiment.classifier.c_grid.0"),
        (lambda s: s["classifier"].update(fields=["text"]), "sentiment.classifier.fields.0"),
        (lambda s: s.update(bagging_unit="sentence"), "sentiment.bagging_unit"),
        (lambda s: s.pop("test"), "sentiment"),
        (lambda s: s["epsilon"].update(step=0), "sentiment.epsilon.step"),
        (lambda s: s["epsilon"].update(stop=0.05), "sentiment.epsilon.stop"),
    ],
)
def test_sentiment_schema_names_the_key(edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config_with(lambda c: edit(c["sentiment"])), SCHEMA)
    assert f"'{key}'" in str(error.value)


def test_sentiment_defaults_are_the_ones_the_schema_documents() -> None:
    from nlp_robustness.studies.sentiment import ClassifierSettings

    section = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["properties"]["sentiment"]["properties"]
    training = {key: spec["default"] for key, spec in section["training"]["properties"].items() if "default" in spec}
    assert training == SENTIMENT_TRAINING_DEFAULTS
    assert section["bagging_unit"]["default"] == SENTIMENT_BAGGING_UNIT_DEFAULT
    classifier = {key: spec["default"] for key, spec in section["classifier"]["properties"].items()}
    assert classifier == ClassifierSettings().as_dict()


# --------------------------------------------------------------------------------------------
# human judgements
# --------------------------------------------------------------------------------------------

HUMAN_DOWNLOADS = [download for spec in DEFAULT["human"]["domains"].values()
                   for download in [spec["scores"], *(spec[key] for key in ("source", "reference", "errors") if key in spec),
                                    *spec.get("outputs", {}).values()]]


def test_human_section_of_the_default_config() -> None:
    validate_human_references(DEFAULT, HUMAN_DOWNLOADS, "datasets.yaml")
    settings = human_settings(DEFAULT)
    assert settings["ranking"] == {"gamma": "area", "permutations": 100000}
    assert settings["epsilon"] == {"start": 0.1, "stop": 25, "step": 0.1}
    bare = config_with(lambda c: (c["human"].pop("epsilon"), c["human"].pop("ranking")))
    validate_config(bare, SCHEMA)
    assert human_settings(bare)["ranking"] == HUMAN_RANKING_DEFAULTS
    assert human_settings(bare)["epsilon"] == DEFAULT["robustness"]["epsilon"]
    assert human_settings(config_with(lambda c: c.pop("human"))) is None
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["properties"]["human"]["properties"]["ranking"]["properties"]
    assert {key: spec["default"] for key, spec in schema.items() if "default" in spec} == HUMAN_RANKING_DEFAULTS


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h["domains"]["news"].update(scores="mqm-2021"), "'human.domains.news.scores': 'mqm-2021' is not a download"),
        (lambda h: h["domains"]["news"]["outputs"].pop("UEdin"), "'human.domains.news.outputs': no output for UEdin"),
        (lambda h: h["domains"]["news"]["outputs"].update(Lingua="wmt21-newstest2021-ende-src"), "unknown system(s) Lingua"),
        (lambda h: h["ranking"].update(gamma="at", gamma_at={"human": 2, "bleu": 10}), "'human.ranking.gamma_at': no epsilon for chrf"),
        (lambda h: h["domains"].update(none=h["domains"]["ted"]), "'human.domains.none': the name is reserved"),
    ],
)
def test_human_references_name_their_key(edit, message: str) -> None:
    with pytest.raises(InputError) as error:
        validate_human_references(config_with(lambda c: edit(c["human"])), HUMAN_DOWNLOADS, "datasets.yaml")
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda h: h["domains"]["ted"].update(source="x"), "human.domains.ted"),
        (lambda h: h["domains"]["news"].pop("reference"), "human.domains.news"),
        (lambda h: h["ranking"].update(gamma="median"), "human.ranking.gamma"),
        (lambda h: h.update(systems={"only": "one"}), "human.systems"),
    ],
)
def test_human_schema_names_the_key(edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config_with(lambda c: edit(c["human"])), SCHEMA)
    assert f"'{key}'" in str(error.value)
