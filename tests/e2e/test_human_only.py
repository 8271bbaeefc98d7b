"""A study that needs no translation runs alone (issue 53, item 3), planned as a user runs it: snakemake launched in
a directory of their own with the repository's Snakefile and ``--configfile``, no ``--directory``, so the config's
``run_directory`` decides where results go and its relative paths mean the launch directory's files. Dry runs only.

* A config of human studies alone plans their jobs and nothing of the MT branch: no test set, no translation, no
  model, no download but the studies' own files.
* A human study's relative file path resolves from the launch directory, rebased onto the run directory exactly as
  a test set's file path is.
"""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.workflow_runner import REPOSITORY, SNAKEMAKE, small_config

pytestmark = pytest.mark.e2e

#: The rules a config of an MQM and a DA study plans, and no other.
HUMAN_RULES = {"fetch_download", "human_mqm_segments", "human_da_segments", "human_domain_means", "study_blocks",
               "robustness_statistics", "robustness_tables", "robustness_comparisons", "gamma_curves", "human_rankings",
               "metric_consistency", "benchmark_summary", "all"}


def _dry_run(launch: Path, config: dict[str, Any]) -> str:
    """Plan ``config``, written to ``launch/configs/mine.yaml``, from ``launch``; the dry run's output."""
    path = launch / "configs" / "mine.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--configfile", "configs/mine.yaml", "--cores", "1",
               "--dry-run"]
    result = subprocess.run(command, cwd=launch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-5000:]
    return result.stdout


def _jobs(output: str) -> list[tuple[str, str, str]]:
    """(rule, input line, output line) of every planned job."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?(?:rule|checkpoint) )", output)[1:]:
        rule = block.split(":", 1)[0].split()[-1]
        lines = {key: re.search(rf"^\s*{key}: (.*)$", block, re.M) for key in ("input", "output")}
        jobs.append((rule, *(match.group(1) if match else "" for match in lines.values())))
    return jobs


def _human_studies(mirror_dir: Path) -> dict[str, Any]:
    """The small config's MQM study and WMT22 de-en DA study (downloads of the manifest, read from the mirror)."""
    studies = small_config(mirror_dir)["human_studies"]
    return {name: copy.deepcopy(studies[name]) for name in ("wmt21-mqm", "wmt22-de-en")}


def _values(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set().union(*(_values(value) for value in node.values())) if node else set()
    return {node} if isinstance(node, str) else set()


def test_a_config_of_human_studies_alone_translates_and_downloads_nothing_else(tmp_path: Path, mirror_dir: Path) -> None:
    studies = _human_studies(mirror_dir)
    config = {"run_directory": "runs/human", "mirror_dir": str(mirror_dir), "uncertainty": {"resamples": 200},
              "human_studies": studies}
    jobs = _jobs(_dry_run(tmp_path, config))
    rules = {rule for rule, _, _ in jobs}
    assert {"human_mqm_segments", "human_da_segments", "human_rankings"} <= rules <= HUMAN_RULES, rules - HUMAN_RULES
    # every download is one the studies name (test sets, models and training data are manifest downloads too)
    downloads = {output.split("resources/downloads/", 1)[1].split("/", 1)[0] for rule, _, output in jobs if rule == "fetch_download"}
    assert downloads and downloads <= _values(studies)
    # nothing in the launch directory; and a dry run leaves no run directory it created (it held only Snakemake's records)
    assert not (tmp_path / "results").exists() and not (tmp_path / "runs").exists()


def test_a_human_studys_relative_path_resolves_like_a_test_sets(tmp_path: Path, mirror_dir: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("own.en", "own.fr", "mine.fr"):
        (data / name).write_text("one\ntwo\nthree\n", encoding="utf-8")
    (data / "mqm-news.tsv").write_text("system\tmqm_avg_score\tseg_id\n", encoding="utf-8")  # read by its job, not planned
    studies = {"wmt21-mqm": _human_studies(mirror_dir)["wmt21-mqm"]}
    studies["wmt21-mqm"]["domains"]["news"]["scores"] = "data/mqm-news.tsv"  # a file of the launch directory, not a download
    config = {
        "run_directory": "runs/mine", "mirror_dir": str(mirror_dir),
        "testsets": {"own": {"source": "data/own.en", "reference": "data/own.fr", "format": "plain", "domain": "own"}},
        "systems": {"mine": {"kind": "hypotheses", "files": {"own": "data/mine.fr"}}},
        "mt_studies": {"own": {"language_pair": "en-fr"}},
        "human_studies": studies,
    }
    jobs = _jobs(_dry_run(tmp_path, config))
    testset_inputs = [inputs for rule, inputs, _ in jobs if rule == "prepare_testset"]
    human_inputs = [inputs for rule, inputs, output in jobs if rule == "human_mqm_segments" and output.endswith("/news.tsv")]
    assert len(testset_inputs) == 1 and "../../data/own.en" in testset_inputs[0].split(", ")
    assert len(human_inputs) == 1 and "../../data/mqm-news.tsv" in human_inputs[0].split(", ")
