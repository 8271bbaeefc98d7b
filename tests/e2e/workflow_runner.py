"""Run the real workflow in a temporary directory (helpers shared by the end-to-end tests)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.paths import MIRROR

REPOSITORY = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
DEFAULT_CONFIG = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
#: The small test configuration, a file a person runs from the repository root (see its header).
SMALL_CONFIG_FILE = REPOSITORY / "tests" / "config" / "small.yaml"


def for_working_directory(config: dict[str, Any], mirror_dir: Path = MIRROR) -> dict[str, Any]:
    """``config`` (written for the repository root as working directory) with its working-directory-
    relative paths made absolute, so that it runs in any directory (the tests run in temporary ones).

    Rewritten: the config's ``mirror_dir`` becomes the argument ``mirror_dir`` (the mirror the tests use,
    possibly a doctored copy) and paths inside the config's mirror follow it; other relative paths of
    hypotheses files and test sets' files (source, reference, file, domain_file) are resolved against the
    repository root. Paths relative
    to the workflow directory (``dataset_manifest``, ``download.checksum_lock``) and absolute paths
    stay as written.
    """
    config = copy.deepcopy(config)
    written_mirror = None if config.get("mirror_dir") is None else Path(config["mirror_dir"])

    def absolute(path: str) -> str:
        if Path(path).is_absolute():
            return path
        if written_mirror is not None and Path(path).is_relative_to(written_mirror):
            return str(mirror_dir / Path(path).relative_to(written_mirror))
        return str(REPOSITORY / path)

    if written_mirror is not None:
        config["mirror_dir"] = str(mirror_dir)
    for spec in config.get("systems", {}).values():
        if spec["kind"] == "hypotheses" and "files" in spec:  # a submission is read from its dataset
            spec["files"] = {testset: absolute(path) for testset, path in spec["files"].items()}
    for spec in config.get("testsets", {}).values():
        for side in ("source", "reference", "file", "domain_file"):
            if side in spec:
                spec[side] = absolute(spec[side])
    return config


def small_config(mirror_dir: Path = MIRROR, tiny_models: Path | None = None) -> dict[str, Any]:
    """The small test configuration (tests/config/small.yaml: the default config on the first 40
    segments of each test set, a seconds-long ConvS2S training and a copy-source system), made to
    run in a temporary directory on ``mirror_dir``; with ``tiny_models`` (the directory the e2e fixture
    ``tiny_models`` builds) also the bring-your-own-model systems of :func:`with_tiny_models`."""
    config = for_working_directory(yaml.safe_load(SMALL_CONFIG_FILE.read_text(encoding="utf-8")), mirror_dir)
    return config if tiny_models is None else with_tiny_models(config, tiny_models)


def without_system(config: dict[str, Any], system: str) -> dict[str, Any]:
    """``config`` (in place) without ``system``, in the systems and in every MT study that names it."""
    del config["systems"][system]
    for study in (config.get("mt_studies") or {}).values():
        if system in study.get("systems", []):
            study["systems"].remove(system)
    return config


#: The Hugging Face translator and sentiment classifier of the shared run (tiny models the tests build:
#: tests/tiny_models/marian.py, tests/tiny_models/classifier.py).
TINY_TRANSLATOR, TINY_CLASSIFIER = "tiny-marian", "tiny-bert"


def with_tiny_models(config: dict[str, Any], tiny_models: Path) -> dict[str, Any]:
    """``config`` with the tiny Hugging Face models the tests build (``tiny_models``: ``marian/``, ``classifier/``)
    as a user brings their own: the translator a system of the paper's study, so it joins every branch that
    translates (its perturbation families and Natural Robustness take every system by default); the
    classifier a row of the sentiment study and of Natural Robustness."""
    config = copy.deepcopy(config)
    config["systems"][TINY_TRANSLATOR] = {
        "kind": "huggingface", "model": str(tiny_models / "marian"), "batch_size": 8, "beam": 2, "max_length": 64,
        "cpu_threads": 1, "device": "auto",
    }
    # no other edit: the paper study takes every system no other study names (as a user adds one)
    config["sentiment"]["models"] = {TINY_CLASSIFIER: {
        "kind": "huggingface", "model": str(tiny_models / "classifier"), "labels": {"negative": "NEGATIVE", "positive": "POSITIVE"},
        "max_length": 64, "batch_size": 32,
    }}
    return config


def run_workflow(
    workdir: Path, config: dict[str, Any], *arguments: str, cores: int | None = 2, config_name: str = "config.yaml"
) -> subprocess.CompletedProcess[str]:
    """Write ``config`` into ``workdir`` (as ``config_name``: edited configs of dry runs go beside the run's
    own config.yaml, which later tests reuse) and run the repository's Snakefile there (stderr merged into stdout)."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path = workdir / config_name
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    command = [
        str(SNAKEMAKE),
        "--snakefile", str(REPOSITORY / "Snakefile"),
        "--directory", str(workdir),
        "--configfile", str(config_path),
        *(["--cores", str(cores)] if cores is not None else []),  # None: a cluster profile sets the jobs
        *arguments,
    ]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200)


#: The profile's jobs in the small run (6 groups: MT paper, MT WMT22 de-fr, sentiment, the three human studies; a figure each). The profile records the config's hash,
#: so every config edit reruns them too, and the benchmark summary after them (its input is every other output).
PROFILE_JOBS = {"robustness_profile": 1, "robustness_profile_figure": 6, "robustness_profile_overview": 1,
                "robustness_profile_report": 1, "benchmark_summary": 1}


def with_profile(jobs: dict[str, int | str]) -> dict[str, int | str]:
    """``jobs`` (rule -> count, as ints or as the strings of a dry run's count table with its total) plus the
    profile's jobs."""
    as_text = any(isinstance(count, str) for count in jobs.values())
    added = {rule: str(count) if as_text else count for rule, count in PROFILE_JOBS.items()}
    edited = {**jobs, **added}
    if "total" in jobs:
        edited["total"] = str(int(jobs["total"]) + sum(PROFILE_JOBS.values()))
    return edited
