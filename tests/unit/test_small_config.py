"""The small test configuration (tests/config/small.yaml): complete, in step with config.yaml, and
rewritten for a temporary working directory only where its paths are working-directory-relative."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from snakemake.utils import validate

from tests.e2e.workflow_runner import SMALL_CONFIG_FILE, for_working_directory
from tests.paths import REPOSITORY


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_small_config_is_complete_in_itself() -> None:
    config = load(SMALL_CONFIG_FILE)
    validate(copy.deepcopy(config), str(REPOSITORY / "schemas" / "config.schema.yaml"))  # every required key
    assert config["max_segments"] == 40 and list(config["testsets"])[:4] == ["wmt14", "wmt15", "iwslt17", "bio18"]
    assert list(config["mt_studies"]) == ["paper", "wmt22-de-fr"]
    assert {"sentiment", "human_studies"} <= set(config)  # both branches run
    assert list(config["human_studies"]) == ["wmt21-mqm", "wmt22-de-en", "wmt22-ja-en"]


def test_small_config_is_the_default_config_made_small() -> None:
    """Only what its header names differs from config.yaml; a change there is a change here too."""
    small, default = load(SMALL_CONFIG_FILE), load(REPOSITORY / "config.yaml")
    assert small["systems"].pop("copy-source")["kind"] == "hypotheses"
    # of the WMT22 studies, German->French only
    del default["mt_studies"]["wmt22-fr-de"]
    for section in ("testsets", "systems"):
        default[section] = {name: spec for name, spec in default[section].items() if not name.startswith("frde-")}
    training = small["systems"]["convs2s-tatoeba"]["training"]
    default_training = default["systems"]["convs2s-tatoeba"]["training"]
    assert training.pop("max_segments") == 1200 and training["max_epoch"] == 1
    for key in ("dev", "bpe_merges", "max_epoch"):
        training[key] = default_training[key]
    for key, value in default_training["train_args"].items():
        if key.endswith("-dim") or key.endswith("-layers"):
            training["train_args"][key] = value
    small["max_segments"] = default["max_segments"]
    assert small["human_studies"]["wmt22-ja-en"].pop("all_segments") is False
    word_order, default_word_order = small["perturbations"]["families"]["word_order"], default["perturbations"]["families"]["word_order"]
    assert word_order["sample_size"] == 12 and len(word_order["functions"]) == 6
    assert all(default_word_order["functions"][name] == settings for name, settings in word_order["functions"].items())
    word_order["sample_size"], word_order["functions"] = default_word_order["sample_size"], default_word_order["functions"]
    attacks, default_attacks = small["perturbations"]["families"]["character_attacks"], default["perturbations"]["families"]["character_attacks"]
    assert attacks["sample_size"] == 12 and list(attacks["functions"]) == ["keyboard", "visual"]
    assert attacks["options"]["levels"] == [0.3]
    attacks["sample_size"], attacks["functions"], attacks["options"] = (
        default_attacks["sample_size"], default_attacks["functions"], default_attacks["options"]
    )
    for family, functions in (("natural", ["punctuation_removal", "typos"]), ("paraphrase", ["contractions", "number_words"])):
        spec, default_spec = small["perturbations"]["families"][family], default["perturbations"]["families"][family]
        assert spec["sample_size"] == 6 and list(spec["functions"]) == functions
        assert all(default_spec["functions"][name] == settings for name, settings in spec["functions"].items())
        spec["sample_size"], spec["functions"] = default_spec["sample_size"], default_spec["functions"]
    structure, default_structure = small["perturbations"]["families"]["structure"], default["perturbations"]["families"]["structure"]
    assert structure["sample_size"] == 6 and structure.pop("leave_out") == [] and list(structure["functions"]) == ["coordination_swap"]
    assert all(default_structure["functions"][name] == settings for name, settings in structure["functions"].items())
    structure["sample_size"], structure["functions"] = default_structure["sample_size"], default_structure["functions"]
    assert small["natural_robustness"]["reviews_per_domain"] == 4
    small["natural_robustness"]["reviews_per_domain"] = default["natural_robustness"]["reviews_per_domain"]
    metric, default_metric = small["metric_robustness"], default["metric_robustness"]
    assert metric["pairs"] == ["lt-en", "gu-en"] and metric["sample_size"] == 8 and metric["levels"] == [0.3]
    assert list(metric["attacks"]) == ["disemvowel", "visual"]
    assert metric["bagging_unit"] == "judgement"
    for key in ("pairs", "sample_size", "levels", "attacks", "bagging_unit"):
        metric[key] = default_metric[key]
    # the WMT22 zh-en MTME study (14 systems x 13 scores) stays out of the small config, for CI time
    assert "wmt22-zh-en" not in small["human_studies"]
    default["human_studies"].pop("wmt22-zh-en")
    assert small == default, "tests/config/small.yaml is config.yaml made small: make the same change in both"


def test_only_working_directory_paths_are_rewritten(mirror_dir: Path) -> None:
    written = load(SMALL_CONFIG_FILE)
    config = for_working_directory(written, mirror_dir)
    assert config["mirror_dir"] == str(mirror_dir)
    files = config["systems"]["copy-source"]["files"]
    assert list(files) == ["wmt14", "wmt15", "iwslt17", "bio18"]
    for testset, path in files.items():
        assert Path(path).is_absolute() and Path(path).is_file(), path
        as_written = Path(written["systems"]["copy-source"]["files"][testset])
        assert Path(path) == mirror_dir / as_written.relative_to(written["mirror_dir"])
    # relative to the workflow directory, not the working directory: as written
    assert config["dataset_manifest"] == "resources/datasets.yaml"
    assert config["download"]["checksum_lock"] == "resources/checksums.lock.yaml"
    # and nothing else
    config["mirror_dir"] = written["mirror_dir"]
    config["systems"]["copy-source"]["files"] = written["systems"]["copy-source"]["files"]
    assert config == written


def test_file_pair_testsets_follow_the_mirror_or_the_repository(tmp_path: Path) -> None:
    written = load(SMALL_CONFIG_FILE)
    written["testsets"]["pair"] = {"source": "../shared/data/x/a.en", "reference": "tests/data/a.fr", "format": "plain",
                                   "domain": "custom"}
    config = for_working_directory(written, tmp_path / "mirror")
    assert config["testsets"]["pair"]["source"] == str(tmp_path / "mirror" / "x" / "a.en")
    assert config["testsets"]["pair"]["reference"] == str(REPOSITORY / "tests" / "data" / "a.fr")
    assert config["testsets"]["wmt14"] == written["testsets"]["wmt14"]
