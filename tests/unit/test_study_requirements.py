"""A config needs only what its studies need (issue 53, item 3): human studies, sentiment or metric robustness run
alone, without test sets, systems or an MT study; ``mt_studies: {}`` is no MT study; a config that measures
nothing is named in one message; and a human study's file paths resolve from the launch directory, like a test
set's (nlp_robustness.run_directory, ``x-path: download-or-path``)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from nlp_robustness.config.references import acquired_datasets
from nlp_robustness.config.validation import validate_config
from nlp_robustness.errors import InputError
from nlp_robustness.planning import prepare_config
from nlp_robustness.run_directory import DOWNLOAD_OR_PATH, path_keys, rebase_paths
from nlp_robustness.studies.mt_studies import DEFAULT_STUDY, complete_mt_studies
from tests.e2e.workflow_runner import small_config
from tests.paths import MIRROR, REPOSITORY

SCHEMA_PATH = REPOSITORY / "schemas" / "config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
SMALL = small_config()
LANGUAGES = {"news-enfr": ("en", "fr"), "ted-enfr": ("en", "fr")}


def _human_only() -> dict:
    return {"mirror_dir": str(MIRROR), "uncertainty": {"resamples": 200}, "human_studies": copy.deepcopy(SMALL["human_studies"])}


def test_a_config_of_human_studies_alone_plans_without_test_sets_systems_or_an_mt_study() -> None:
    config = _human_only()
    validate_config(config, SCHEMA_PATH)
    prepare_config(config, REPOSITORY)
    assert config["testsets"] == {} and config["systems"] == {} and config["mt_studies"] == {}
    assert acquired_datasets(config) == []  # no test set (or training data) to download
    assert list(config["human_studies"]) == list(SMALL["human_studies"]) and config["uncertainty"]["resamples"] == 200


def test_a_sentiment_only_config_plans_without_test_sets() -> None:
    config = {"mirror_dir": str(MIRROR), "sentiment": copy.deepcopy(SMALL["sentiment"])}
    prepare_config(config, REPOSITORY)
    assert config["mt_studies"] == {} and acquired_datasets(config) == [SMALL["sentiment"]["training"]["dataset"]]


def test_empty_mt_studies_is_no_mt_study_and_leaving_it_out_keeps_the_default_one() -> None:
    testsets = {"news": {"dataset": "news-enfr"}, "ted": {"dataset": "ted-enfr"}}
    config = {"testsets": testsets, "systems": {"rbmt": {"kind": "apertium"}}, "mt_studies": {}}
    complete_mt_studies(config, LANGUAGES)
    assert config["mt_studies"] == {}
    for absent in ({}, {"mt_studies": None}):
        config = {"testsets": copy.deepcopy(testsets), "systems": {"rbmt": {"kind": "apertium"}}, **absent}
        complete_mt_studies(config, LANGUAGES)
        assert list(config["mt_studies"]) == [DEFAULT_STUDY]
        assert config["mt_studies"][DEFAULT_STUDY]["testsets"] == ["news", "ted"] and config["mt_studies"][DEFAULT_STUDY]["systems"] == ["rbmt"]


@pytest.mark.parametrize("config", [{}, {"uncertainty": {"resamples": 200}, "mirror_dir": None}, {"human_studies": {}, "testsets": {}}])
def test_a_config_that_measures_nothing_is_told_what_is_missing_in_one_message(config: dict) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA_PATH)
    message = str(error.value)
    assert message.startswith("invalid configuration at key 'testsets': missing")
    assert all(key in message for key in ("testsets and systems", "human_studies", "sentiment", "metric_robustness"))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda config: config.pop("testsets"), "key 'testsets': missing: the config's systems translate test sets"),
    (lambda config: config.pop("systems"), "key 'systems': missing: MT study domains translates its test sets with systems"),
    # a named study's unknown test set still names its key, with or without test sets
    (lambda config: config.update(mt_studies={"mine": {"testsets": ["nope"]}}), "key 'mt_studies.mine.testsets[0]': 'nope' is not a test set"),
    (lambda config: config.update(testsets={}, systems={}, mt_studies={"mine": {"testsets": ["nope"]}}),
     "key 'mt_studies.mine.testsets[0]': 'nope' is not a test set (known: none)"),
])
def test_what_an_mt_study_lacks_is_named_by_its_key(edit, message: str) -> None:
    config = {**_human_only(), "testsets": copy.deepcopy(SMALL["testsets"]), "systems": copy.deepcopy(SMALL["systems"])}
    config.pop("mt_studies", None)
    edit(config)
    with pytest.raises(InputError) as error:
        prepare_config(config, REPOSITORY)
    assert message in str(error.value)


def _files(base: Path, *names: str) -> None:
    for name in names:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text("a\n", encoding="utf-8")


def _mixed() -> dict:
    """A test set and a system read from files, beside an MQM study of a file and downloads and a DA study of files."""
    return {
        "testsets": {"own": {"source": "data/own.en", "reference": "data/own.fr", "format": "plain", "domain": "own"}},
        "systems": {"mine": {"kind": "hypotheses", "files": {"own": "data/mine.fr"}}},
        "human_studies": {
            "mqm": {"format": "mqm", "systems": {"A": "sys-a", "B": "sys-b"},
                    "domains": {"news": {"scores": "data/mqm.tsv", "source": "src-download", "reference": "/abs/ref.txt",
                                         "outputs": {"A": "data/a.txt", "B": "out-b-download"}}}},
            "da": {"format": "wmt-da", "systems": {"A": "data/da-a.txt", "B": "data/da-b.txt"}, "domains": ["x", "y"],
                   "scores": "data/da.csv", "system_scores": "data/da-sys.csv", "domain_file": "data/da.xml",
                   "source": "data/da.de", "reference": "data/da.en", "rated_references": {"HUMAN-B": "ref-b-download"}},
        },
    }


def test_the_schema_marks_every_human_file_and_not_an_mqm_systems_names() -> None:
    marked = {where for where, mark in path_keys(_mixed(), SCHEMA).items() if mark == DOWNLOAD_OR_PATH}
    assert marked == {
        ("human_studies", "mqm", "domains", "news", key) for key in ("scores", "source", "reference")
    } | {("human_studies", "mqm", "domains", "news", "outputs", system) for system in ("A", "B")} | {
        ("human_studies", "da", key) for key in ("scores", "system_scores", "domain_file", "source", "reference")
    } | {("human_studies", "da", "systems", "A"), ("human_studies", "da", "systems", "B"), ("human_studies", "da", "rated_references", "HUMAN-B")}


def test_a_human_studys_relative_path_is_rebased_like_a_test_sets_and_a_download_stays(tmp_path: Path) -> None:
    _files(tmp_path, "data/own.en", "data/own.fr", "data/mine.fr", "data/mqm.tsv", "data/a.txt", "data/da-a.txt", "data/da-b.txt",
           "data/da.csv", "data/da-sys.csv", "data/da.xml", "data/da.de", "data/da.en")
    config = _mixed()
    rebase_paths(config, SCHEMA, tmp_path, tmp_path / "runs" / "b", downloads={"src-download", "out-b-download", "ref-b-download"})
    assert config["testsets"]["own"]["source"] == "../../data/own.en"
    mqm = config["human_studies"]["mqm"]["domains"]["news"]
    assert mqm == {"scores": "../../data/mqm.tsv", "source": "src-download", "reference": "/abs/ref.txt",
                   "outputs": {"A": "../../data/a.txt", "B": "out-b-download"}}
    assert config["human_studies"]["mqm"]["systems"] == {"A": "sys-a", "B": "sys-b"}  # names in the MQM files, no paths
    da = config["human_studies"]["da"]
    assert da["scores"] == "../../data/da.csv" and da["domain_file"] == "../../data/da.xml"
    assert da["systems"] == {"A": "../../data/da-a.txt", "B": "../../data/da-b.txt"} and da["rated_references"] == {"HUMAN-B": "ref-b-download"}


def test_a_missing_human_file_is_named_as_written_from_the_launch_directory(tmp_path: Path) -> None:
    _files(tmp_path, "data/own.en", "data/own.fr", "data/mine.fr")
    config = _mixed()
    with pytest.raises(InputError, match=r"^human_studies\.mqm\.domains\.news\.scores: data/mqm\.tsv does not exist \(relative to "
                                         r".*, where snakemake was launched\) and is no download of the dataset manifest$"):
        rebase_paths(config, SCHEMA, tmp_path, tmp_path / "runs" / "b", downloads={"src-download"})
