"""Config validation: the shipped config is valid; every mistake names its key; defaults come from the schema."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from nlp_robustness.config.references import (
    acquired_datasets,
    training_datasets,
    validate_dataset_references,
    validate_human_studies,
    validate_sentiment_references,
    validate_system_references,
)
from nlp_robustness.config.validation import fill_dependent_defaults, validate_config
from nlp_robustness.errors import InputError
from nlp_robustness.studies.study_settings import human_leave_out, mt_leave_out, sentiment_leave_out

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA = REPOSITORY / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))


def config_with(edit) -> dict:
    config = copy.deepcopy(DEFAULT)
    edit(config)
    return config


def filled(config: dict) -> dict:
    """``config`` checked and completed as rules/common.smk does: the schema's defaults, then the dependent ones."""
    config = copy.deepcopy(config)
    validate_config(config, SCHEMA)
    validate(config, str(SCHEMA), set_default=True)
    fill_dependent_defaults(config)
    return config


def schema_defaults(section: dict) -> dict:
    """The ``default`` of every property of a schema section that has one."""
    return {key: spec["default"] for key, spec in section["properties"].items() if "default" in spec}


SCHEMA_TREE = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
SYSTEM_KINDS = {rule["if"]["properties"]["kind"]["const"]: rule["then"]
                for rule in SCHEMA_TREE["properties"]["systems"]["additionalProperties"]["allOf"]}


def test_default_config_is_valid() -> None:
    validate_config(DEFAULT, SCHEMA)
    assert mt_leave_out({"leave_out": DEFAULT["mt_studies"]["paper"]["testsets"]}) == ["none", "wmt14", "wmt15", "iwslt17", "bio18"]
    assert human_leave_out(DEFAULT["human_studies"]["wmt21-mqm"]) == ["none", "news", "ted"]
    assert human_leave_out(DEFAULT["human_studies"]["wmt22-ja-en"]) == ["none", "conversation", "ecommerce", "news", "social"]


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
        (lambda c: c["robustness"].update(leave_out=["wmt14", "mtnt"]), "robustness"),  # now mt_studies.<study>.leave_out
        (lambda c: c["mt_studies"]["paper"].update(language_pair="english-french"), "mt_studies.paper.language_pair"),
        (lambda c: c["robustness"]["epsilon"].update(start=10, stop=5), "robustness.epsilon.stop"),
        (lambda c: c["systems"].update(mine={"kind": "hypotheses", "files": {"mtnt": "a.txt"}}), "systems.mine.files"),
        (lambda c: c.update(testsets={}), "testsets"),  # its systems need them (systems without testsets: planning)
    ],
)
def test_mistakes_name_their_key(edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config_with(edit), SCHEMA)
    assert f"'{key}" in str(error.value)


KINDS = {"wmt14-newstest2014-enfr": "parallel", "wmt15-newsdiscusstest2015-enfr": "parallel",
         "iwslt17-tst2017-enfr": "parallel", "wmt18-biomedical-medline-enfr": "parallel",
         "wmt22-general-defr": "parallel", "wmt22-general-frde": "parallel",
         "tatoeba-v2021-08-07-enfr": "parallel", "amazon-sentiment-acl": "reviews"}


def test_datasets_of_the_config() -> None:
    validate_dataset_references(DEFAULT, KINDS, "datasets.yaml")
    assert acquired_datasets(DEFAULT) == [
        "wmt14-newstest2014-enfr", "wmt15-newsdiscusstest2015-enfr", "iwslt17-tst2017-enfr",
        "wmt18-biomedical-medline-enfr", "wmt22-general-defr", "wmt22-general-frde", "tatoeba-v2021-08-07-enfr",
        "amazon-sentiment-acl",
    ]
    # a dataset used twice is acquired once; extra_datasets (default []) and sentiment may be absent
    config = config_with(lambda c: (c.pop("extra_datasets"), c.pop("sentiment"), c["testsets"].update(again={"dataset": "wmt14-newstest2014-enfr", "domain": "news"})))
    assert acquired_datasets(filled(config)) == list(KINDS)[:7]


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
    pretrained = filled(config_with(lambda c: c["systems"].update(wmt14=PRETRAINED)))
    fairseq = SYSTEM_KINDS["fairseq"]
    assert pretrained["systems"]["wmt14"] == {
        **PRETRAINED, **schema_defaults(fairseq), "generation": schema_defaults(fairseq["properties"]["generation"]),
    }
    assert pretrained["systems"]["wmt14"]["device"] == "auto" and pretrained["systems"]["wmt14"]["generation"]["beam"] == 5


def test_generation_options_match_the_schema_defaults() -> None:
    """GenerationOptions still has defaults of its own (for direct use); they must be the schema's."""
    from nlp_robustness.systems.fairseq.generate import GenerationOptions

    generation = schema_defaults(SYSTEM_KINDS["fairseq"]["properties"]["generation"])
    assert generation == GenerationOptions().__dict__


def _contains(whole, part) -> bool:
    """Every value ``part`` states is in ``whole`` unchanged (``whole`` may have more keys)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(key in whole and _contains(whole[key], value) for key, value in part.items())
    return whole == part


def test_defaults_fill_only_what_a_config_leaves_out() -> None:
    """The schema's defaults (snakemake.utils.validate, set_default) fill absent keys, at every depth,
    and never overwrite a value the config states."""
    config = filled(DEFAULT)
    assert _contains(config, DEFAULT) and config != DEFAULT
    assert config["max_segments"] is None and config["extra_datasets"] == []
    convs2s = config["systems"]["convs2s-tatoeba"]
    assert convs2s["training"]["bpe_min_frequency"] == 2 and convs2s["training"]["max_segments"] is None
    assert convs2s["generation"] == {**schema_defaults(SYSTEM_KINDS["fairseq"]["properties"]["generation"]),
                                     **DEFAULT["systems"]["convs2s-tatoeba"]["generation"]}
    bare = filled(config_with(lambda c: (c.pop("max_segments"), c.pop("extra_datasets"),
                                         c["systems"]["convs2s-tatoeba"]["training"].pop("train_args"))))
    assert bare["max_segments"] is None and bare["extra_datasets"] == []
    assert bare["systems"]["convs2s-tatoeba"]["training"]["train_args"] == {}


def test_a_config_of_test_sets_and_systems_alone_gets_the_default_configs_settings() -> None:
    """An MT study needs only ``testsets`` and ``systems`` (README, "Bring your own data"): the rest comes from the
    schema's defaults, which are the settings config.yaml writes out (a default mirror_dir of null downloads
    what a config names of the manifest; a user's own files need nothing)."""
    minimal = {"testsets": copy.deepcopy(DEFAULT["testsets"]), "systems": copy.deepcopy(DEFAULT["systems"])}
    config = filled(minimal)
    for key in ("dataset_manifest", "download", "metrics", "robustness"):
        assert config[key] == DEFAULT[key], key
    assert config["mirror_dir"] is None
    with pytest.raises(InputError, match="key 'testsets': missing: the config's systems translate test sets"):
        validate_config({"systems": minimal["systems"]}, SCHEMA)


def test_defaults_of_one_system_kind_stay_in_that_kind() -> None:
    """A kind's defaults (the if/then branch of its kind) reach only systems of that kind."""
    files = {testset: f"{testset}.txt" for testset in DEFAULT["testsets"]}
    config = filled(config_with(lambda c: c["systems"].update(
        bare={"kind": "apertium", "modes": ["eng-spa"]},
        mine={"kind": "hypotheses", "files": files},
        wmt14=PRETRAINED,
    )))
    assert config["systems"]["bare"] == {"kind": "apertium", "modes": ["eng-spa"], **schema_defaults(SYSTEM_KINDS["apertium"])}
    assert config["systems"]["bare"]["mark_unknown"] is False
    assert config["systems"]["mine"] == {"kind": "hypotheses", "files": files}
    assert set(config["systems"]["wmt14"]) == {
        "kind", "pretrained", "generation", "device", "cpu_threads", "translation_cpu_threads", "gpus", "mem_mb",
    }


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
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"]["train_args"].update({"user-dir": "plugins"}),
         r"'systems\.convs2s-tatoeba\.training\.train_args\.user-dir': --user-dir: fairseq imports the folder it names "
         r"as a Python module; to run it, set systems\.convs2s-tatoeba\.training\.allow_code_in_train_args: true"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"]["train_args"].update({"decoder-layers": "exec('...')"}),
         r"'systems\.convs2s-tatoeba\.training\.train_args\.decoder-layers': the value \"exec\('...'\)\" calls something.*"
         r"allow_code_in_train_args: true"),
        (lambda c: c["systems"]["convs2s-tatoeba"]["training"].update(allow_code_in_train_args=True, train_args={"lr": "--user-dir=x"}),
         r"'systems\.convs2s-tatoeba\.training\.train_args\.lr': the value '--user-dir=x' would reach fairseq-train as an "
         r"option of its own, not as the value of --lr$"),
    ],
)
def test_fairseq_references_name_their_key(edit, message: str) -> None:
    config = config_with(edit)
    validate_config(config, SCHEMA)
    with pytest.raises(InputError, match=message):
        validate_system_references(config, KINDS, ["wmt14-enfr-fconv"], "datasets.yaml")


def test_allow_code_in_train_args_lets_user_dir_through() -> None:
    """The key allows; that the option then reaches fairseq-train: tests/unit/test_system_registry.py."""
    config = filled(config_with(lambda c: c["systems"]["convs2s-tatoeba"]["training"]["train_args"].update({"user-dir": "plugins"})))
    assert config["systems"]["convs2s-tatoeba"]["training"]["allow_code_in_train_args"] is False  # the schema's default
    with pytest.raises(InputError, match=r"train_args\.user-dir'"):
        validate_system_references(config, KINDS, ["wmt14-enfr-fconv"], "datasets.yaml")
    config["systems"]["convs2s-tatoeba"]["training"]["allow_code_in_train_args"] = True
    validate_system_references(config, KINDS, ["wmt14-enfr-fconv"], "datasets.yaml")


# --------------------------------------------------------------------------------------------
# sentiment branch
# --------------------------------------------------------------------------------------------

ACL_DOMAINS = ["books", "dvd", "electronics", "kitchen_&_housewares"]
DOMAINS = {key: [] for key in KINDS} | {"amazon-sentiment-acl": ACL_DOMAINS, "amazon-sentiment-unprocessed": ["apparel", *ACL_DOMAINS]}
REVIEW_KINDS = KINDS | {"amazon-sentiment-unprocessed": "reviews"}


def test_sentiment_section_of_the_default_config() -> None:
    validate_sentiment_references(DEFAULT, DOMAINS, REVIEW_KINDS, "datasets.yaml")
    assert sentiment_leave_out(DEFAULT) == ["none", *ACL_DOMAINS]
    assert filled(DEFAULT)["sentiment"]["epsilon"] == {"start": 0.1, "stop": 15, "step": 0.1}  # given: kept
    bare = config_with(lambda c: c.update(sentiment={
        "training": {"dataset": "amazon-sentiment-acl", "domains": ["dvd"]},
        "test": {"dataset": "amazon-sentiment-unprocessed", "domains": ["apparel", "books"]},
        "leave_out": ["apparel"],
    }))
    section = filled(bare)["sentiment"]
    validate_sentiment_references(filled(bare), DOMAINS, REVIEW_KINDS, "datasets.yaml")
    schema = SCHEMA_TREE["properties"]["sentiment"]
    assert section["training"] == {**schema_defaults(schema["properties"]["training"]), "dataset": "amazon-sentiment-acl", "domains": ["dvd"]}
    assert section["training"]["validation_fraction"] == 0.15 and section["bagging_unit"] == "review"
    assert section["classifier"] == schema_defaults(schema["properties"]["classifier"])  # {} filled at depth
    assert section["epsilon"] == DEFAULT["robustness"]["epsilon"]  # the MT grid unless given
    assert acquired_datasets(filled(bare))[-2:] == ["amazon-sentiment-acl", "amazon-sentiment-unprocessed"]
    assert "sentiment" not in filled(config_with(lambda c: c.pop("sentiment")))  # no section: no branch, no defaults
    assert sentiment_leave_out(config_with(lambda c: c.pop("sentiment"))) == []


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


def test_classifier_settings_match_the_schema_defaults() -> None:
    """ClassifierSettings keeps defaults for direct use (from_config takes none of them); they must be the schema's."""
    from nlp_robustness.systems.sentiment_classifier import ClassifierSettings

    classifier = SCHEMA_TREE["properties"]["sentiment"]["properties"]["classifier"]
    assert schema_defaults(classifier) == ClassifierSettings().as_dict()
    assert ClassifierSettings.from_config(filled(DEFAULT)["sentiment"]["classifier"]) == ClassifierSettings()


# --------------------------------------------------------------------------------------------
# human judgements
# --------------------------------------------------------------------------------------------

MQM = DEFAULT["human_studies"]["wmt21-mqm"]
DA = DEFAULT["human_studies"]["wmt22-de-en"]
HUMAN_DOWNLOADS = [download for spec in MQM["domains"].values()
                   for download in [spec["scores"], *(spec[key] for key in ("source", "reference", "errors") if key in spec),
                                    *spec.get("outputs", {}).values()]]
HUMAN_DOWNLOADS += [DA[key] for key in ("scores", "system_scores", "domain_file", "source", "reference")]
HUMAN_DOWNLOADS += [*DA["systems"].values(), *DA["rated_references"].values()]


def _human(study: str, edit):
    return config_with(lambda c: (c["human_studies"].pop("wmt22-ja-en"), c["human_studies"].pop("wmt22-zh-en"),
                                  edit(c["human_studies"][study])))


def test_human_studies_of_the_default_config() -> None:
    config = filled(_human("wmt21-mqm", lambda h: None))
    validate_human_studies(config, HUMAN_DOWNLOADS, "datasets.yaml")
    section = config["human_studies"]["wmt21-mqm"]
    assert section["ranking"] == {"gamma": "area", "permutations": 100000}
    assert section["epsilon"] == {"start": 0.1, "stop": 25, "step": 0.1}
    bare = filled(_human("wmt21-mqm", lambda h: (h.pop("epsilon"), h.pop("ranking"))))["human_studies"]["wmt21-mqm"]
    assert bare["ranking"] == {"gamma": "area", "permutations": 100000}
    assert bare["epsilon"] == DEFAULT["robustness"]["epsilon"]  # the MT grid unless given
    da = config["human_studies"]["wmt22-de-en"]
    assert (da["score"], da["drop_placeholders"], da["all_segments"], da["ignore_systems"]) == ("z", True, True, [])
    assert filled(config_with(lambda c: c.pop("human_studies")))["human_studies"] == {}


@pytest.mark.parametrize(
    ("study", "edit", "message"),
    [
        ("wmt21-mqm", lambda h: h["domains"]["news"].update(scores="mqm-2021"),
         "'human_studies.wmt21-mqm.domains.news.scores': 'mqm-2021' is neither a download"),
        ("wmt21-mqm", lambda h: h["domains"]["news"]["outputs"].pop("UEdin"),
         "'human_studies.wmt21-mqm.domains.news.outputs': no output for UEdin"),
        ("wmt21-mqm", lambda h: h["domains"]["news"]["outputs"].update(Lingua="wmt21-newstest2021-ende-src"), "unknown system(s) Lingua"),
        ("wmt21-mqm", lambda h: h["ranking"].update(gamma="at", gamma_at={"human": 2, "bleu": 10}),
         "'human_studies.wmt21-mqm.ranking.gamma_at': no epsilon for chrf"),
        ("wmt21-mqm", lambda h: h["domains"].update(none=h["domains"]["ted"]), "'human_studies.wmt21-mqm.domains.none': the name is reserved"),
        ("wmt22-de-en", lambda h: h.update(scores="no/such/file.csv"),
         "'human_studies.wmt22-de-en.scores': 'no/such/file.csv' is neither a download of datasets.yaml nor an existing file"),
        ("wmt22-de-en", lambda h: h["systems"].update(PROMT="promt.txt"), "'human_studies.wmt22-de-en.systems.PROMT': 'promt.txt'"),
        ("wmt22-de-en", lambda h: h["rated_references"].update(PROMT=h["systems"]["PROMT"]),
         "'human_studies.wmt22-de-en.rated_references': PROMT is also in human_studies.wmt22-de-en.systems"),
        ("wmt22-de-en", lambda h: h.update(domains=["news", "none"]), "'human_studies.wmt22-de-en.domains': the name 'none' is reserved"),
    ],
)
def test_human_studies_name_their_key(study: str, edit, message: str) -> None:
    with pytest.raises(InputError) as error:
        validate_human_studies(filled(_human(study, edit)), HUMAN_DOWNLOADS, "datasets.yaml")
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("study", "edit", "key"),
    [
        ("wmt21-mqm", lambda h: h["domains"]["ted"].update(source="x"), "human_studies.wmt21-mqm.domains.ted"),
        ("wmt21-mqm", lambda h: h["domains"]["news"].pop("reference"), "human_studies.wmt21-mqm.domains.news"),
        ("wmt21-mqm", lambda h: h["ranking"].update(gamma="median"), "human_studies.wmt21-mqm.ranking.gamma"),
        ("wmt21-mqm", lambda h: h.update(systems={"only": "one"}), "human_studies.wmt21-mqm.systems"),
        ("wmt22-de-en", lambda h: h.pop("domain_file"), "human_studies.wmt22-de-en"),
        ("wmt22-de-en", lambda h: h.update(score="zz"), "human_studies.wmt22-de-en.score"),
        ("wmt22-de-en", lambda h: h.update(domains=["news"]), "human_studies.wmt22-de-en.domains"),
        ("wmt22-de-en", lambda h: h.update(colour="blue"), "human_studies.wmt22-de-en"),
    ],
)
def test_human_schema_names_the_key(study: str, edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(_human(study, edit), SCHEMA)
    assert f"'{key}'" in str(error.value)


def test_the_readmes_minimal_config_is_valid_and_complete() -> None:
    """The config README's "Bring your own data" asks a user to paste is valid and, with the schema's defaults,
    complete: the keys it leaves out are the ones the README says have defaults."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Bring your own data"):]
    block = section[section.index("```yaml\n") + len("```yaml\n"): section.index("```\n", section.index("```yaml\n") + 8)]
    pasted = yaml.safe_load(block)
    assert set(pasted) == {"run_directory", "testsets", "systems", "mt_studies"}
    config = filled(pasted)
    assert config["metrics"] == ["bleu", "chrf"] and config["uncertainty"]["resamples"] == 1000
    assert all(set(spec["files"]) == set(pasted["testsets"]) for spec in config["systems"].values())
