"""A finished run moves with its project, and a touched input reruns nothing unless its content changed.

Both work on copies of the session's shared run of tests/config/small.yaml (tests/e2e/conftest.py),
laid out as a person's checkout after `snakemake --configfile ...`: the workflow's files and the run's
results/, logs/, resources/downloads/ and .snakemake/ in one directory. Dry runs there use the copy's
own profiles/default (its rerun triggers and checksum size limit), found as a person's run finds it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.workflow_runner import REPOSITORY, SNAKEMAKE

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

#: What a checkout holds to run the workflow (config.yaml is the default config, config/ holds the paper's).
WORKFLOW_FILES = ("Snakefile", "config.yaml", "config", "rules", "scripts", "schemas", "resources", "envs", "report",
                  "profiles")
#: What a run adds beside them.
RUN_FILES = ("results", "logs", "resources/downloads", ".snakemake")
#: Inputs of the small run over Snakemake's default checksum limit of 1 MB (1,000,000 bytes), one per
#: branch: the Tatoeba table the ConvS2S trains on (1.08 MB; touched, it reran the training and all
#: after it), the parsed reviews every classifier reads, and the TED MQM errors as copied from the mirror.
LARGE_INPUTS = ("results/datasets/tatoeba-v2021-08-07-enfr.tsv", "results/datasets/amazon-sentiment-acl.tsv",
                "resources/downloads/wmt21-mqm-ted-ende-errors/mqm_ted_ende.tsv")


def copy_project(finished_run: Path, destination: Path) -> Path:
    """The repository's workflow files and ``finished_run``'s results in ``destination`` (file times kept,
    as `cp -a` or `rsync -a` keep them); the run's config as run.yaml."""

    def skipped(directory: str, names: list[str]) -> list[str]:
        generated = ["downloads"] if Path(directory) == REPOSITORY / "resources" else []  # a local run's, not ours
        return [*generated, *(name for name in names if name == "__pycache__")]

    destination.mkdir(parents=True)
    for name in WORKFLOW_FILES:
        if (REPOSITORY / name).is_dir():
            shutil.copytree(REPOSITORY / name, destination / name, symlinks=True, ignore=skipped)
        elif (REPOSITORY / name).is_file():
            shutil.copy2(REPOSITORY / name, destination / name)
    for name in RUN_FILES:
        shutil.copytree(finished_run / name, destination / name, symlinks=True)
    shutil.copy2(finished_run / "config.yaml", destination / "run.yaml")
    return destination


def dry_run(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`snakemake --dry-run` in ``project`` as a person runs it there (its Snakefile, its default profile)."""
    command = [str(SNAKEMAKE), "--dry-run", "--cores", "2", "--configfile", "run.yaml", *arguments]
    return subprocess.run(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600)


def planned_rules(output: str) -> list[str]:
    return re.findall(r"^(?:local)?rule (\w+):$", output, flags=re.MULTILINE)


def test_a_finished_run_copied_to_another_directory_has_nothing_to_do(
    finished_run: Path, tmp_path: Path, mirror_dir: Path
) -> None:
    project = copy_project(finished_run, tmp_path / "elsewhere")
    result = dry_run(project)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Nothing to be done" in result.stdout and planned_rules(result.stdout) == [], result.stdout[-3000:]
    # no result names the directories the run was made in (the checkout, its working directory); the
    # mirror's path, absolute in the tests' config, may appear (dataset provenance)
    for path in (project / "results").rglob("*"):
        if path.is_file() and path.suffix in {".tsv", ".json", ".csv", ".md", ".tex", ".txt"}:
            text = path.read_text(encoding="utf-8", errors="replace").replace(str(mirror_dir), "")
            assert str(REPOSITORY) not in text and str(finished_run) not in text, path


def test_touching_a_large_input_reruns_nothing(finished_run: Path, tmp_path: Path) -> None:
    project = copy_project(finished_run, tmp_path / "touched")
    now = time.time()
    for name in LARGE_INPUTS:
        assert (project / name).stat().st_size > 1_000_000, name
        os.utime(project / name, (now, now))
    result = dry_run(project)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Nothing to be done" in result.stdout and planned_rules(result.stdout) == [], result.stdout[-3000:]
    # the profile's max-checksum-file-size is what keeps them: at Snakemake's default, mtime decides
    result = dry_run(project, "--max-checksum-file-size", "1MB")
    assert result.returncode == 0, result.stdout[-3000:]
    updated = ", ".join(re.findall(r"reason: Updated input files: ([^;\n]*)", result.stdout)).split(", ")
    assert set(updated) == set(LARGE_INPUTS), result.stdout[-3000:]
