"""The one full run of the small test configuration (tests/config/small.yaml) with the tiny Hugging Face models
the tests build, shared by the end-to-end tests."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from nlp_robustness.fileio.atomic import locked_directory
from tests.e2e.workflow_runner import run_workflow, small_config


#: A directory holding a finished shared run (``workflow/``, ``workflow.outcome.json``) and its ``tiny-models/``
#: from an earlier session (a pytest basetemp): set it to rerun end-to-end tests on that run instead of making
#: a new one, while fixing a test. CI never sets it.
REUSE_RUN = os.environ.get("NLP_ROBUSTNESS_REUSE_RUN")


def _session_directory(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's directory, above the pytest-xdist workers' own (one per session, shared by the workers)."""
    if REUSE_RUN:
        return Path(REUSE_RUN)
    session_directory = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # a pytest-xdist worker: its basetemp is one per worker
        session_directory = session_directory.parent
    return session_directory


@pytest.fixture(scope="session")
def tiny_models(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Path:
    """The tiny Hugging Face models of the shared run (``marian/``, ``classifier/``: tests/tiny_models/), built once per
    session in the session's directory (every worker's runs name the same files)."""
    from tests.tiny_models.classifier import build_tiny_classifier
    from tests.tiny_models.marian import build_tiny_marian

    session_directory = _session_directory(request, tmp_path_factory)
    directory, built = session_directory / "tiny-models", session_directory / "tiny-models.built"
    with locked_directory(session_directory):
        if not built.exists():
            build_tiny_marian(directory / "marian")
            build_tiny_classifier(directory / "classifier", mirror=mirror_dir)
            built.touch()
    return directory


@pytest.fixture(scope="session")
def finished_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path,
                 tiny_models: Path) -> Path:
    """A temporary working directory in which the whole workflow ran on the small test configuration
    (its config.yaml, results/, logs/, resources/downloads/ and .snakemake/). Tests read it and dry-run
    edited configs beside it (as edited.yaml); whatever changes files works on a copy.

    One run per pytest session. Under pytest-xdist the first worker that needs it makes it in the session's
    directory above the workers' own, and a worker that needs it meanwhile waits for it (pytest-xdist's
    "Making session-scoped fixtures execute only once"). The tests that use it run on one worker
    (tests/conftest.py); tests that only compare their own run with it (``wait_for_finished_run``) may run
    on another, at the same time as it."""
    if shutil.which("apertium") is None:
        pytest.skip("apertium is not installed (make setup installs it)")
    session_directory = _session_directory(request, tmp_path_factory)
    workdir, outcome = session_directory / "workflow", session_directory / "workflow.outcome.json"
    with locked_directory(session_directory):  # the other workers wait here
        if not outcome.exists():
            recorded = {"returncode": None, "output": "the run raised (see the first test that needed it)"}
            try:
                result = run_workflow(workdir, small_config(mirror_dir, tiny_models), cores=2)
                recorded = {"returncode": result.returncode, "output": result.stdout[-5000:]}
            finally:  # recorded even when it raises (a timeout): nobody waits to start it again
                outcome.write_text(json.dumps(recorded), encoding="utf-8")
        recorded = json.loads(outcome.read_text(encoding="utf-8"))
    assert recorded["returncode"] == 0, recorded["output"]
    return workdir


@pytest.fixture
def wait_for_finished_run(request: pytest.FixtureRequest) -> Callable[[], Path]:
    """``finished_run`` for a test that makes a run of its own and then compares it with the shared run: the
    test calls this when its own run is done. It does not wait for the shared run before that, and under
    pytest-xdist it may run on another worker, handed out after the other end-to-end tests, by when the shared
    run is made (tests/conftest.py)."""
    return lambda: request.getfixturevalue("finished_run")
