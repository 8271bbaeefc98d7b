"""The workflow on a real single-node SLURM cluster through profiles/slurm, against a local run.

The cluster is started by ../shared/tools/local-slurm/start-local-slurm.sh (Debian's slurmctld, slurmd,
munge; as root) unless one is already answering, and only the daemons this test started are stopped.
Without accounting (no slurmdbd) the plugin checks job states with squeue.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from nlp_robustness.outputs.benchmarks import is_measured_output
from tests.e2e.workflow_runner import DEFAULT_CONFIG, REPOSITORY, run_workflow

pytestmark = [pytest.mark.e2e, pytest.mark.apertium, pytest.mark.slurm]

LOCAL_SLURM = REPOSITORY.parent / "shared" / "tools" / "local-slurm"
#: The local cluster has no accounting database and no account: status by squeue, no --account.
LOCAL_CLUSTER_ARGUMENTS = ("--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5",
                           "--slurm-no-account", "--jobs", "4")


def _cluster_answers() -> bool:
    return shutil.which("sinfo") is not None and subprocess.run(["sinfo"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory):
    if shutil.which("apertium") is None:
        pytest.skip("apertium is not installed (make setup installs it)")
    if _cluster_answers():
        yield "already running"
        return
    if os.geteuid() != 0 or not (LOCAL_SLURM / "start-local-slurm.sh").is_file():
        pytest.skip("starting a local SLURM cluster needs root and ../shared/tools/local-slurm")
    environment = {**os.environ, "SLURM_LOCAL_DBD": "0", "SLURM_LOCAL_VENV": "0",
                   "SLURM_LOCAL_BASE": str(tmp_path_factory.mktemp("local-slurm"))}
    started = subprocess.run(["bash", str(LOCAL_SLURM / "start-local-slurm.sh")], env=environment,
                             capture_output=True, text=True, timeout=600)
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    try:
        yield "started"
    finally:
        subprocess.run(["bash", str(LOCAL_SLURM / "stop-local-slurm.sh")], env=environment, capture_output=True, timeout=120)


def small_real_config(mirror_dir: Path) -> dict:
    """Two real test sets (20 segments each), one Apertium system, sentence BLEU."""
    config = copy.deepcopy(DEFAULT_CONFIG)
    config["mirror_dir"] = str(mirror_dir)
    config["testsets"] = {name: spec for name, spec in config["testsets"].items() if name in ("wmt14", "iwslt17")}
    config["max_segments"] = 20
    config["systems"] = {"apertium-en-es-fr": config["systems"]["apertium-en-es-fr"]}
    config["metrics"] = ["bleu"]
    config["mt_studies"] = {"paper": {"leave_out": ["wmt14", "iwslt17"]}}  # every test set and system
    config["robustness"]["bagging"]["blocks"] = 10  # a pool needs at least as many units as blocks (20 here)
    config["extra_datasets"] = []
    # the perturbation and metric-robustness branches' rules are plain rules too; every sbatch job starts a
    # Snakemake, and their ~90 jobs would double this test's time
    for branch in ("sentiment", "human_studies", "perturbations", "metric_robustness", "natural_robustness", "robustness_profile"):
        config.pop(branch)
    return config


def _without_seconds(value):
    """A JSON value with every ``seconds`` entry (a wall-clock time) removed, at any depth."""
    if isinstance(value, dict):
        return {key: _without_seconds(item) for key, item in value.items() if key != "seconds"}
    if isinstance(value, list):
        return [_without_seconds(item) for item in value]
    return value


def _result_files(workdir: Path) -> dict[str, bytes]:
    """Every result file but the measurements (benchmarks); translation run reports without their wall-clock times."""
    files = {}
    for path in sorted((workdir / "results").rglob("*")):
        if not path.is_file() or is_measured_output(path.relative_to(workdir).as_posix()):
            continue  # benchmark files and their summary: wall times, different on every run
        data = path.read_bytes()
        if path.name.endswith(".report.json"):
            data = json.dumps(_without_seconds(json.loads(data)), sort_keys=True).encode()
        files[str(path.relative_to(workdir))] = data
    return files


def test_slurm_profile_gives_the_local_results(slurm_cluster: str, tmp_path: Path, mirror_dir: Path) -> None:
    config = small_real_config(mirror_dir)
    start = time.monotonic()
    cluster = run_workflow(tmp_path / "slurm", config, "--profile", str(REPOSITORY / "profiles" / "slurm"), "--workflow-profile", "none",
                           *LOCAL_CLUSTER_ARGUMENTS, cores=None)
    cluster_seconds = time.monotonic() - start
    assert cluster.returncode == 0, cluster.stdout[-5000:]
    submitted = cluster.stdout.count("has been submitted with SLURM jobid")
    assert submitted >= 15  # every job but the local download rule and `all` went through sbatch
    start = time.monotonic()
    local = run_workflow(tmp_path / "local", config, "--profile", str(REPOSITORY / "profiles" / "default"), cores=2)
    local_seconds = time.monotonic() - start
    assert local.returncode == 0, local.stdout[-5000:]
    on_cluster, here = _result_files(tmp_path / "slurm"), _result_files(tmp_path / "local")
    assert sorted(on_cluster) == sorted(here) and "results/tables/paper/bleu/robustness_design_bagging.csv" in here
    for path, data in here.items():
        assert on_cluster[path] == data, path
    print(f"\nSLURM ({slurm_cluster}): {submitted} jobs in {cluster_seconds:.0f} s; local --cores 2: {local_seconds:.0f} s")
