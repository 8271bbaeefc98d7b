"""Configuration validation, lookup tables and input functions: the only place that reads config."""

import re
from pathlib import Path

from snakemake.logging import logger

from nlp_robustness.acquisition import download_file_path, mirror_download_file, missing_mirror_files, plan_dataset
from nlp_robustness.config import (
    METHODS,
    acquired_datasets,
    leave_out_labels,
    pool_testsets,
    validate_config,
    validate_dataset_references,
)
from nlp_robustness.errors import InputError
from nlp_robustness.manifest import load_manifest


validate_config(config, workflow.source_path("../schemas/config.schema.yaml"))

TESTSETS = list(config["testsets"])
SYSTEMS = list(config["systems"])
METRICS = list(config["metrics"])
LEAVE_OUT = leave_out_labels(config)
ROBUSTNESS = config["robustness"]
DOWNLOAD = config["download"]
MIRROR_DIR = config["mirror_dir"]
# Downloads are resources the workflow fetches (snakemake-workflows convention; gitignored). The
# rules in datasets.smk spell this prefix out in their output paths.
DOWNLOAD_DIR = "resources/downloads"


def _workflow_path(path):
    """A config path to a file of the workflow itself (manifest, lock): relative ones are resolved
    against the workflow directory, so the workflow runs from any working directory (`--directory`)."""
    return str(Path(workflow.basedir) / path)


DATASET_MANIFEST = _workflow_path(config["dataset_manifest"])
CHECKSUM_LOCK = _workflow_path(DOWNLOAD["checksum_lock"])
try:
    MANIFEST = load_manifest(DATASET_MANIFEST, workflow.source_path("../schemas/datasets.schema.yaml"))
except InputError as error:
    raise InputError(f"config key 'dataset_manifest': {error}") from None
validate_dataset_references(
    config, {key: dataset.kind for key, dataset in MANIFEST.datasets.items()}, config["dataset_manifest"]
)
# Where every manifest dataset is read from (mirror or downloads), decided now so that a dry run
# shows every download; any manifest dataset can be requested as results/datasets/<key>.tsv.
DATASET_PLANS = {
    key: plan_dataset(dataset, MANIFEST, MIRROR_DIR, DOWNLOAD_DIR) for key, dataset in MANIFEST.datasets.items()
}
ACQUIRED_DATASETS = acquired_datasets(config)
for _key in ACQUIRED_DATASETS:
    _missing = missing_mirror_files(MANIFEST.datasets[_key], MIRROR_DIR) if MIRROR_DIR is not None else []
    if _missing and len(_missing) < len(MANIFEST.datasets[_key].mirror.files):
        logger.warning(
            f"dataset {_key}: mirror_dir {MIRROR_DIR} holds only part of it (missing {', '.join(_missing)}); "
            f"the whole dataset is taken from its downloads"
        )
ARCHIVE_DOWNLOADS = [key for key, download in MANIFEST.downloads.items() if download.archive is not None]


def _systems_of_kind(kind):
    return [name for name, spec in config["systems"].items() if spec["kind"] == kind]


def _alternation(names):
    """Regex matching exactly one of ``names`` (a pattern matching nothing when empty)."""
    return "|".join(re.escape(name) for name in names) if names else "(?!x)x"


APERTIUM_SYSTEMS = _alternation(_systems_of_kind("apertium"))
HYPOTHESES_SYSTEMS = _alternation(_systems_of_kind("hypotheses"))


wildcard_constraints:
    dataset=_alternation(MANIFEST.datasets),
    download=_alternation(MANIFEST.downloads),
    archive_download=_alternation(ARCHIVE_DOWNLOADS),
    filename=_alternation(sorted({download.filename for download in MANIFEST.downloads.values()})),
    testset=_alternation(TESTSETS),
    system=_alternation(SYSTEMS),
    metric=_alternation(METRICS),
    method=_alternation(METHODS),
    bagging_method=_alternation(["bagging", "design_bagging"]),
    left_out=_alternation(LEAVE_OUT),


def testset_spec(wildcards):
    """Config entry of a test set."""
    return config["testsets"][wildcards.testset]


def testset_input_files(wildcards):
    """What a test set is made from: its parsed manifest dataset, or the configured pair of files."""
    spec = testset_spec(wildcards)
    if "dataset" in spec:
        return {"dataset": f"results/datasets/{spec['dataset']}.tsv"}
    return {"source": spec["source"], "reference": spec["reference"]}


def download_mirror_file(wildcards):
    """The mirror's copy of a download, as the fetch job's input (none: the job downloads it)."""
    download = MANIFEST.downloads[wildcards.download]
    if wildcards.filename != download.filename:
        raise InputError(f"download {download.key} is stored as {download.filename}, not {wildcards.filename}")
    mirror_file = mirror_download_file(download, MIRROR_DIR)
    return [mirror_file] if mirror_file else []


def download_fetch_params(wildcards):
    """URL, checksum and mirror copy of a download (a manifest edit reruns exactly that download)."""
    download = MANIFEST.downloads[wildcards.download]
    checksum = download.checksum
    return {
        "url": download.url,
        "checksum": None if checksum is None else {"algorithm": checksum.algorithm, "hexdigest": checksum.hexdigest, "source": checksum.source},
        "mirror_file": mirror_download_file(download, MIRROR_DIR),
        "mirror_looked_for": str(Path(MIRROR_DIR) / download.mirror) if MIRROR_DIR and download.mirror else None,
    }


def downloaded_archive(wildcards):
    return download_file_path(DOWNLOAD_DIR, MANIFEST.downloads[wildcards.archive_download])


def dataset_inputs(wildcards):
    """Files a dataset is parsed from: mirror files, or downloaded files and extraction directories."""
    return list(DATASET_PLANS[wildcards.dataset].inputs)


def dataset_provenance(wildcards):
    """The canonical downloads of a dataset, whichever copy is read (recorded beside its table)."""
    dataset = MANIFEST.datasets[wildcards.dataset]
    keys = dict.fromkeys(ref.download for ref in dataset.download.files.values())
    return [
        {"download": key, "url": MANIFEST.downloads[key].url, "checksum_source": MANIFEST.downloads[key].checksum_source}
        for key in keys
    ]


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
    datasets = expand("results/datasets/{dataset}.tsv", dataset=ACQUIRED_DATASETS)
    dataset_summary = ["results/tables/datasets.csv", "results/tables/datasets.md"] if ACQUIRED_DATASETS else []
    return tables + testset_means + figures + datasets + dataset_summary
