"""The perturbations section: defaults filled, and every mistake an error naming its key before any job runs."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from nlp_robustness.config.validation import fill_dependent_defaults, validate_config
from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.configuration import derived_testsets, parts
from tests.config_helpers import complete_perturbations
from nlp_robustness.perturbations.word_order import FUNCTIONS

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA = REPOSITORY / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))


def completed(edit=None) -> dict:
    """The default config, edited, then checked and completed as rules/common.smk does."""
    config = copy.deepcopy(DEFAULT)
    if edit is not None:
        edit(config)
    validate_config(config, SCHEMA)
    validate(config, str(SCHEMA), set_default=True)
    fill_dependent_defaults(config)
    complete_perturbations(config)
    return config


def word_order(config: dict) -> dict:
    return config["perturbations"]["families"]["word_order"]


def test_default_config_perturbs_every_test_set_with_the_16_functions() -> None:
    spec = word_order(completed())
    assert list(spec["functions"]) == list(FUNCTIONS) and len(FUNCTIONS) == 16
    assert spec["testsets"] == ["wmt14", "wmt15", "iwslt17", "bio18"]
    assert spec["systems"] == ["apertium-en-es-fr", "apertium-en-ca-fr", "convs2s-tatoeba"]
    assert spec["leave_out"] == list(FUNCTIONS)
    assert spec["epsilon"] == DEFAULT["robustness"]["epsilon"]
    # every function's settings are filled from its schema: {} in the config, the defaults here
    assert spec["functions"]["VerbSwaps"]["verb_pos"] == ["VERB", "AUX"]
    assert spec["options"]["batch_size"] >= 1
    assert parts(spec) == {"pooled": ["wmt14", "wmt15", "iwslt17", "bio18"]}
    assert derived_testsets("word_order", spec)[0] == "perturbed/word_order/WordShuffle/pooled"


def test_omitted_functions_mean_all_of_them_and_per_testset_parts() -> None:
    def edit(config):
        del word_order(config)["functions"]
        word_order(config)["derived_testsets"] = "per_testset"
        word_order(config)["testsets"] = ["wmt14", "bio18"]

    spec = word_order(completed(edit))
    assert list(spec["functions"]) == list(FUNCTIONS)
    assert parts(spec) == {"wmt14": ["wmt14"], "bio18": ["bio18"]}
    assert len(derived_testsets("word_order", spec)) == 32


@pytest.mark.parametrize(
    ("edit", "key", "message"),
    [
        (lambda spec: spec["functions"].update({"WordSalad": {}}), "perturbations.families.word_order.functions.WordSalad", "unknown function"),
        (lambda spec: spec["functions"]["VerbSwaps"].update({"verb_pos": "VERB"}), "perturbations.families.word_order.functions.VerbSwaps.verb_pos", "not of type 'array'"),
        (lambda spec: spec["functions"]["Reversed"].update({"keep_final_punctuation": "yes"}), "perturbations.families.word_order.functions.Reversed.keep_final_punctuation", "not of type 'boolean'"),
        (lambda spec: spec["functions"]["Reversed"].update({"colour": 1}), "perturbations.families.word_order.functions.Reversed", "colour"),
        (lambda spec: spec["options"].update({"source_model": 3}), "perturbations.families.word_order.options.source_model", "not of type 'string'"),
        (lambda spec: spec.update({"testsets": ["wmt14", "wmt99"]}), "perturbations.families.word_order.testsets[1]", "not a test set"),
        (lambda spec: spec.update({"systems": ["moses"]}), "perturbations.families.word_order.systems[0]", "not a system"),
        (lambda spec: spec.update({"leave_out": ["Reversed", "Shuffle"]}), "perturbations.families.word_order.leave_out[1]", "not a function"),
    ],
)
def test_bad_perturbation_settings_name_their_key(edit, key: str, message: str) -> None:
    with pytest.raises(InputError) as error:
        completed(lambda config: edit(word_order(config)))
    assert f"'{key}" in str(error.value) and message in str(error.value)


def test_an_unknown_family_and_a_bad_generic_key_are_errors() -> None:
    with pytest.raises(InputError, match=r"'perturbations.families.char_salad'.*unknown perturbation family"):
        completed(lambda config: config["perturbations"]["families"].update({"char_salad": {}}))
    with pytest.raises(InputError, match=r"perturbations.families.word_order.sample_size"):
        completed(lambda config: word_order(config).update({"sample_size": "all"}))
    with pytest.raises(InputError, match=r"perturbations.metrics"):
        completed(lambda config: config["perturbations"].update({"metrics": ["meteor"]}))


def test_a_hypotheses_system_must_give_every_perturbed_test_set() -> None:
    def edit(config):
        config["systems"]["copy"] = {"kind": "hypotheses", "files": {name: f"{name}.txt" for name in config["testsets"]}}
        word_order(config)["systems"] = ["copy"]
        word_order(config)["functions"] = {"Reversed": {}, "WordShuffle": {}}

    with pytest.raises(InputError, match=r"'systems.copy.files'.*perturbed/word_order/Reversed/pooled"):
        completed(edit)

    def edit_with_files(config):
        edit(config)
        config["systems"]["copy"]["files"].update({f"perturbed/word_order/{f}/pooled": "x.txt" for f in ("Reversed", "WordShuffle")})

    assert word_order(completed(edit_with_files))["systems"] == ["copy"]
    # not listed: hypotheses systems are not among a family's default systems
    assert "copy" not in word_order(completed(lambda config: edit(config) or word_order(config).pop("systems")))["systems"]


def test_a_submission_system_cannot_translate_perturbed_test_sets() -> None:
    def edit(config):
        config["systems"]["online-b"] = {"kind": "hypotheses", "submission": "Online-B"}
        word_order(config)["systems"] = ["online-b"]

    with pytest.raises(InputError, match=r"'perturbations\.families\.word_order\.systems': online-b is a dataset's submission"):
        completed(edit)


def test_a_family_writes_its_reports_for_the_metrics_it_names() -> None:
    config = completed()
    assert word_order(config)["metrics"] == ["bleu", "chrf", "levenshtein"]  # default: every perturbation metric
    assert config["perturbations"]["families"]["natural"]["metrics"] == []  # config.yaml: no beta reports

    def edit(config):
        config["perturbations"]["metrics"] = ["bleu", "chrf"]
        word_order(config)["metrics"] = ["bleu", "chrf", "levenshtein"]

    with pytest.raises(InputError, match=r"'perturbations.families.word_order.metrics\[2\]'.*one of perturbations.metrics"):
        completed(edit)
