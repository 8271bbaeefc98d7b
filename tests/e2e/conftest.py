"""The one full run of the small test configuration (tests/config/small.yaml), shared by the end-to-end tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.workflow_runner import run_workflow, small_config


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Path:
    """A temporary working directory in which the whole workflow ran on the small test configuration
    (its config.yaml, results/, logs/, resources/downloads/ and .snakemake/). Tests read it and dry-run
    edited configs beside it (as edited.yaml); whatever changes files works on a copy."""
    if shutil.which("apertium") is None:
        pytest.skip("apertium is not installed (make setup installs it)")
    workdir = tmp_path_factory.mktemp("workflow")
    result = run_workflow(workdir, small_config(mirror_dir), cores=2)
    assert result.returncode == 0, result.stdout[-5000:]
    return workdir
