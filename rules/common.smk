"""Configuration validation, lookup tables and input functions: the only place that reads config."""

import re
from pathlib import Path

from nlp_robustness.errors import InputError
from nlp_robustness.testsets import load_manifest
from nlp_robustness.config import METHODS, leave_out_labels, pool_testsets, validate_config


validate_config(config, workflow.source_path("../schemas/config.schema.yaml"))

TESTSETS = list(config["testsets"])
SYSTEMS = list(config["systems"])
METRICS = list(config["metrics"])
LEAVE_OUT = leave_out_labels(config)
ROBUSTNESS = config["robustness"]
# The manifest is part of the workflow: a relative path is resolved against the workflow directory,
# so the workflow runs from any working directory (`snakemake --directory`).
DATASET_MANIFEST = str(Path(workflow.basedir) / config["dataset_manifest"])
try:
    DATASETS = load_manifest(DATASET_MANIFEST)
except InputError as error:
    raise InputError(f"config key 'dataset_manifest': {error}") from None


def _systems_of_kind(kind):
    return [name for name, spec in config["systems"].items() if spec["kind"] == kind]


def _alternation(names):
    """Regex matching exactly one of ``names`` (a pattern matching nothing when empty)."""
    return "|".join(re.escape(name) for name in names) if names else "(?!x)x"


APERTIUM_SYSTEMS = _alternation(_systems_of_kind("apertium"))
HYPOTHESES_SYSTEMS = _alternation(_systems_of_kind("hypotheses"))


wildcard_constraints:
    testset=_alternation(TESTSETS),
    system=_alternation(SYSTEMS),
    metric=_alternation(METRICS),
    method=_alternation(METHODS),
    bagging_method=_alternation(["bagging", "design_bagging"]),
    left_out=_alternation(LEAVE_OUT),


for _name, _spec in config["testsets"].items():
    if "dataset" in _spec and _spec["dataset"] not in DATASETS:
        raise InputError(
            f"invalid configuration at key 'testsets.{_name}.dataset': '{_spec['dataset']}' is not a dataset of "
            f"{config['dataset_manifest']} (known: {', '.join(DATASETS)})"
        )


def testset_spec(wildcards):
    """Config entry of a test set."""
    return config["testsets"][wildcards.testset]


def testset_input_files(wildcards):
    """Files a test set is parsed from (mirror files, or the configured pair)."""
    spec = testset_spec(wildcards)
    if "dataset" in spec:
        dataset = DATASETS[spec["dataset"]]
        return {role: str(Path(config["mirror_dir"]) / getattr(dataset, role).path) for role in ("source", "reference")}
    return {"source": spec["source"], "reference": spec["reference"]}


def hypotheses_file(wildcards):
    return config["systems"][wildcards.system]["files"][wildcards.testset]


def system_scores(wildcards):
    """Sentence score tables of one system, one per test set, in config order."""
    return expand("results/scores/{system}/{testset}.tsv", system=wildcards.system, testset=TESTSETS)


def pool_testset_tables(wildcards):
    return expand("results/testsets/{testset}.tsv", testset=pool_testsets(config, wildcards.left_out))


def bagging_block_files(wildcards):
    return expand(
        "results/blocks/{bagging_method}/{left_out}.tsv",
        bagging_method=["bagging", "design_bagging"],
        left_out=LEAVE_OUT,
    )


def final_outputs():
    """Everything `snakemake` builds by default."""
    tables = expand(
        "results/tables/{metric}/robustness_{method}.{extension}",
        metric=METRICS,
        method=METHODS,
        extension=["csv", "md", "tex"],
    )
    testset_means = expand("results/tables/{metric}/testset_means.csv", metric=METRICS)
    figures = expand("results/figures/{metric}/gamma_curves.{extension}", metric=METRICS, extension=["png", "pdf"])
    return tables + testset_means + figures
