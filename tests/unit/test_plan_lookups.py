"""What rules/common.smk takes from the prepared config (nlp_robustness.planning): the warnings the log opens with and
every test set's BLEU tokenizer, perturbed ones included."""

from __future__ import annotations

import copy

from nlp_robustness.data.acquisition import plan_dataset
from nlp_robustness.data.document_ids import configured_without_document_ids
from nlp_robustness.perturbations.configuration import derived_testsets
from nlp_robustness.planning import bleu_tokenizers, plan_warnings, prepare_config
from nlp_robustness.studies import mt_studies
from tests.e2e.workflow_runner import DEFAULT_CONFIG
from tests.paths import REPOSITORY


def test_a_perturbed_test_set_has_the_tokenizer_of_the_first_test_set_it_is_drawn_from() -> None:
    config = copy.deepcopy(DEFAULT_CONFIG)
    prepare_config(config, REPOSITORY)
    tokenizers = bleu_tokenizers(config)
    base = mt_studies.testset_tokenizers(config)
    families = config["perturbations"]["families"]
    assert families and {name: tokenizers[name] for name in base} == base
    for family, spec in families.items():
        for name in derived_testsets(family, spec):
            assert tokenizers[name] == base.get(spec["testsets"][0], "13a")


def test_the_plan_warns_of_test_sets_without_document_ids_once_per_study() -> None:
    config = copy.deepcopy(DEFAULT_CONFIG)
    manifest = prepare_config(config, REPOSITORY)
    formats = {key: plan_dataset(dataset, manifest, config["mirror_dir"], "resources/downloads").format
               for key, dataset in manifest.datasets.items()}
    without = configured_without_document_ids(config["testsets"], formats)
    warnings = plan_warnings(config, manifest, [], without)
    studies = [study for study, spec in config["mt_studies"].items() if set(spec["testsets"]) & set(without)]
    assert studies and [warning.split(":")[0] for warning in warnings if "document ids" in warning] == [f"study {study}" for study in studies]
    assert plan_warnings(config, manifest, [], []) == [warning for warning in warnings if "document ids" not in warning]
