"""A config given with --configfile is the whole config: nothing of the default config.yaml comes back.

Each test plans (dry run) in a temporary working directory that holds the default config.yaml, where
the Snakefile's `configfile:` finds it, beside the config under test: Snakemake would merge the second
into the first, key by key, if the workflow let it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.workflow_runner import DEFAULT_CONFIG, REPOSITORY, SNAKEMAKE, run_workflow

pytestmark = pytest.mark.e2e

DEFAULT_SYSTEM = "convs2s-tatoeba"  # in config.yaml only

#: Two test sets, one Apertium system, no sentiment or human section, optional keys left to the schema.
SMALL = {
    "mirror_dir": None,  # set to the mirror by each test
    "dataset_manifest": "resources/datasets.yaml",
    "download": {"checksum_lock": "resources/checksums.lock.yaml", "timeout_seconds": 60, "retries": 3, "retry_wait_seconds": 5},
    "testsets": {
        "wmt14": {"dataset": "wmt14-newstest2014-enfr", "domain": "news"},
        "bio18": {"dataset": "wmt18-biomedical-medline-enfr", "domain": "biomedical"},
    },
    "systems": {"apertium-en-es-fr": {"kind": "apertium", "modes": ["eng-spa", "es-fr"]}},
    "metrics": ["bleu", "chrf"],
    "robustness": {"seed": 0, "bagging": {"blocks": 30, "fraction": 0.6}, "epsilon": {"start": 1, "stop": 100, "step": 1}},
    "mt_studies": {"paper": {"leave_out": ["bio18"]}},  # every test set and system
}


def _with_mirror(config: dict[str, Any], mirror_dir: Path) -> dict[str, Any]:
    return {**config, "mirror_dir": str(mirror_dir)}


def _working_directory(tmp_path: Path, mirror_dir: Path) -> Path:
    """A working directory holding the default config as config.yaml (on the test mirror)."""
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "config.yaml").write_text(yaml.safe_dump(_with_mirror(DEFAULT_CONFIG, mirror_dir), sort_keys=False), encoding="utf-8")
    return workdir


def _planned(output: str) -> dict[str, list[str]]:
    """Jobs of a dry run: rule -> the wildcards line of each of its jobs."""
    jobs: dict[str, list[str]] = {}
    for block in output.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0].strip()
        wildcards = re.search(r"^\s*wildcards: (.*)$", block, re.M)
        jobs.setdefault(rule, []).append(wildcards.group(1) if wildcards else "")
    return jobs


def _systems(jobs: dict[str, list[str]]) -> set[str]:
    return {match.group(1) for lines in jobs.values() for line in lines for match in [re.search(r"\bsystem=([^,\s]+)", line)] if match}


def test_the_default_config_is_read_without_configfile(tmp_path: Path, mirror_dir: Path) -> None:
    """The control for the tests below: in their working directory, no --configfile plans the default config."""
    workdir = _working_directory(tmp_path, mirror_dir)
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--directory", str(workdir), "--cores", "1", "--dry-run"]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-5000:]
    jobs = _planned(result.stdout)
    assert _systems(jobs) == set(DEFAULT_CONFIG["systems"])
    assert "sentiment_train" in jobs and "human_mqm_segments" in jobs and "human_da_segments" in jobs


def test_paper_config_replaces_the_default(tmp_path: Path, mirror_dir: Path) -> None:
    paper = yaml.safe_load((REPOSITORY / "config" / "paper.yaml").read_text(encoding="utf-8"))
    result = run_workflow(_working_directory(tmp_path, mirror_dir), _with_mirror(paper, mirror_dir), "--dry-run", config_name="paper.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    jobs = _planned(result.stdout)
    assert _systems(jobs) == set(paper["systems"]) and DEFAULT_SYSTEM not in result.stdout
    assert {line for line in jobs["prepare_testset"]} == {f"testset={name}" for name in paper["testsets"]}


def test_small_config_runs_only_what_it_names(tmp_path: Path, mirror_dir: Path) -> None:
    result = run_workflow(_working_directory(tmp_path, mirror_dir), _with_mirror(SMALL, mirror_dir), "--dry-run", config_name="small.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    jobs = _planned(result.stdout)
    assert not [rule for rule in jobs if rule.startswith(("sentiment", "human", "fairseq"))], sorted(jobs)
    assert _systems(jobs) == {"apertium-en-es-fr"}
    assert sorted(jobs["prepare_testset"]) == ["testset=bio18", "testset=wmt14"]
    assert sorted(jobs["prepare_dataset"]) == ["dataset=wmt14-newstest2014-enfr", "dataset=wmt18-biomedical-medline-enfr"]
    assert len(jobs["robustness_tables"]) == 2 * 3  # bleu and chrf, three methods


def test_config_overrides_still_apply_on_top_of_a_configfile(tmp_path: Path, mirror_dir: Path) -> None:
    result = run_workflow(_working_directory(tmp_path, mirror_dir), _with_mirror(SMALL, mirror_dir), "--dry-run",
                          "--config", "metrics=['chrf']", config_name="small.yaml")
    assert result.returncode == 0, result.stdout[-5000:]
    jobs = _planned(result.stdout)
    assert sorted(jobs["robustness_tables"]) == [f"study_table=paper/chrf, method={method}" for method in ("bagging", "design_bagging", "pool")]


@pytest.mark.parametrize("section", ["systems"])  # "testsets" and other sections: tests/unit/test_bad_config.py
def test_an_empty_section_is_an_error_not_the_default(tmp_path: Path, mirror_dir: Path, section: str) -> None:
    config = _with_mirror(SMALL, mirror_dir) | {section: {}}
    result = run_workflow(_working_directory(tmp_path, mirror_dir), config, "--dry-run", config_name="empty.yaml")
    assert result.returncode != 0
    assert f"invalid configuration at key '{section}'" in result.stdout


@pytest.mark.parametrize("text, fault", [
    ("max_segments: 40\nrobustness:\n\tseed: 0\n",
     "line 3, column 1: not valid YAML: while scanning for the next token found character '\\t' that cannot start any "
     "token (a tab in the indentation: YAML indents with spaces only)"),
    ("max_segments: 40\nmetrics: [bleu, chrf\nrobustness: {seed: 0}\n",
     "line 3, column 11: not valid YAML: while parsing a flow sequence begun at line 2, column 10, expected ',' or ']', "
     "but got ':'"),
], ids=["tab", "unclosed-bracket"])
def test_a_syntax_error_in_a_configfile_names_the_file_line_and_column(tmp_path: Path, text: str, fault: str) -> None:
    """Snakemake reads a --configfile before the workflow starts and says only "not valid JSON or YAML"; the
    repository's scheduler plugin has its reader name the fault (nlp_robustness.snakemake_messages). Nothing is
    written: no results/, runs/, logs/ or .snakemake/."""
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--dry-run", "--configfile", "bad.yaml"]
    result = subprocess.run(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode != 0
    assert f"\nInputError: bad.yaml: {fault}\n" in result.stdout, result.stdout[-2000:]
    assert "Traceback" not in result.stdout and "not valid JSON or YAML" not in result.stdout
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.yaml"]
