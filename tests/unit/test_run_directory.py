"""A config's relative paths keep naming the launch directory's files from its run directory
(nlp_robustness.run_directory), found through the schema's x-path annotations."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from nlp_robustness.errors import InputError
from nlp_robustness.run_directory import path_keys, rebase_paths, run_directory
from tests.paths import REPOSITORY

SCHEMA = yaml.safe_load((REPOSITORY / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))


def _config() -> dict:
    """A config with a path under every annotated key, beside strings that are no paths."""
    return {
        "run_directory": "runs/b",
        "mirror_dir": "../shared/data",
        "dataset_manifest": "resources/datasets.yaml",
        "download": {"checksum_lock": "resources/checksums.lock.yaml"},
        "testsets": {
            "news": {"dataset": "wmt22-general-defr", "select": {"domain": "news"}, "domain": "news"},
            "own": {"source": "data/own.en", "reference": "data/own.fr", "format": "plain", "domain": "own",
                    "domain_file": "data/own.domains"},
            "xml": {"file": "/abs/wmttest.xml", "format": "wmt-xml", "domain": "web"},
        },
        "systems": {
            "apertium": {"kind": "apertium", "modes": ["eng-spa", "es-fr"]},
            "mine": {"kind": "hypotheses", "files": {"own": "outputs/own.txt", "news": "~/outputs/news.txt"}},
            "hub": {"kind": "huggingface", "model": "Helsinki-NLP/opus-mt-en-fr", "cache_dir": "hf-cache"},
            "local": {"kind": "huggingface", "model": "models/tiny/marian"},
            "bare": {"kind": "huggingface", "model": "marian"},
            "pretrained": {"kind": "fairseq", "pretrained": "wmt14-enfr-fconv"},
        },
        "sentiment": {"training": {"dataset": "amazon", "domains": ["books"]}, "test": {"dataset": "amazon", "domains": ["dvd"]},
                      "leave_out": [], "models": {"sst2": {"kind": "huggingface", "model": "./classifier",
                                                            "labels": {"negative": 0, "positive": 1}}}},
    }


def test_the_schema_marks_every_path_and_only_paths() -> None:
    found = path_keys(_config(), SCHEMA)
    assert found == {
        ("mirror_dir",): "working-directory",
        ("testsets", "own", "source"): "working-directory",
        ("testsets", "own", "reference"): "working-directory",
        ("testsets", "own", "domain_file"): "working-directory",
        ("testsets", "xml", "file"): "working-directory",
        ("systems", "mine", "files", "own"): "working-directory",
        ("systems", "mine", "files", "news"): "working-directory",
        ("systems", "hub", "model"): "model",
        ("systems", "hub", "cache_dir"): "working-directory",
        ("systems", "local", "model"): "model",
        ("systems", "bare", "model"): "model",
        ("sentiment", "models", "sst2", "model"): "model",
    }


def test_relative_paths_are_rebased_onto_the_run_directory_and_stay_relative(tmp_path: Path) -> None:
    (tmp_path / "marian").mkdir()  # a bare name that is a directory of the launch directory: a local model
    for name in ("data/own.en", "data/own.fr", "data/own.domains", "outputs/own.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).touch()
    config = _config()
    rebased = rebase_paths(config, SCHEMA, tmp_path, tmp_path / "runs" / "b")
    assert config["mirror_dir"] == "../../../shared/data"
    assert config["testsets"]["own"] == {"source": "../../data/own.en", "reference": "../../data/own.fr", "format": "plain",
                                         "domain": "own", "domain_file": "../../data/own.domains"}
    assert config["testsets"]["xml"]["file"] == "/abs/wmttest.xml"  # absolute: as written
    assert config["systems"]["mine"]["files"] == {"own": "../../outputs/own.txt", "news": "~/outputs/news.txt"}
    assert config["systems"]["hub"] == {"kind": "huggingface", "model": "Helsinki-NLP/opus-mt-en-fr", "cache_dir": "../../hf-cache"}
    assert config["systems"]["local"]["model"] == "../../models/tiny/marian"
    assert config["systems"]["bare"]["model"] == "../../marian"
    assert config["sentiment"]["models"]["sst2"]["model"] == "../../classifier"
    # workflow-relative paths and strings that are no paths are untouched
    untouched = _config()
    for key in ("dataset_manifest", "download", "run_directory"):
        assert config[key] == untouched[key]
    assert config["systems"]["apertium"] == untouched["systems"]["apertium"]
    assert config["testsets"]["news"] == untouched["testsets"]["news"]
    assert len(rebased) == 9  # not the absolute, the ~ path or the hub id
    # each rebased path names the file the config named, from the run directory
    for where, path in rebased.items():
        written = untouched
        for key in where:
            written = written[key]
        assert os.path.normpath(tmp_path / "runs" / "b" / path) == os.path.normpath(tmp_path / written)


def test_a_missing_input_file_is_named_as_written_not_rebased(tmp_path: Path) -> None:
    config = {"testsets": {"own": {"source": "data/own.en", "reference": "data/own.fr", "format": "plain", "domain": "own"}},
              "systems": {}}
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "own.en").touch()
    with pytest.raises(InputError, match=r"^testsets\.own\.reference: data/own\.fr does not exist \(relative to .*, where snakemake was launched\)$"):
        rebase_paths(config, SCHEMA, tmp_path, tmp_path / "runs" / "b")


def test_a_model_path_below_the_run_directory_is_still_read_as_a_directory(tmp_path: Path) -> None:
    config = {"testsets": {}, "systems": {"local": {"kind": "huggingface", "model": "./runs/b/model"}}}
    rebase_paths(config, SCHEMA, tmp_path, tmp_path / "runs" / "b")
    assert config["systems"]["local"]["model"] == "./model"  # not "model", which could be a hub id


def test_nothing_changes_when_the_run_directory_is_the_launch_directory(tmp_path: Path) -> None:
    config = _config()
    assert rebase_paths(config, SCHEMA, tmp_path, tmp_path / "." / "") == {}
    assert config == _config()


def test_the_run_directory_defaults_to_the_launch_directory() -> None:
    assert run_directory({}) == "." and run_directory({"run_directory": "runs/a"}) == "runs/a"
    assert run_directory({"run_directory": 3}) == "."  # validation names the key afterwards
