"""An mtme human study through Snakemake: a bad metric file fails the dry run naming file, line and config key
(nothing runs), and a further metric file is a config edit only (the dry run plans its engine rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.workflow_runner import run_workflow, small_config
from tests.unit.test_human_mtme import METRIC, _study

pytestmark = pytest.mark.e2e


def _config(tmp_path: Path, mirror_dir: Path, metric_text: str = METRIC) -> dict:
    files = tmp_path / "files"
    files.mkdir(exist_ok=True)
    config = small_config(mirror_dir)
    config["human_studies"] = {"toy": _study(files, metric_text)}
    return config


def test_a_metric_none_on_a_rated_segment_fails_the_dry_run_naming_file_line_and_key(tmp_path: Path, mirror_dir: Path) -> None:
    config = _config(tmp_path, mirror_dir, METRIC.replace("B\t0.3", "B\tNone"))
    result = run_workflow(tmp_path / "run", config, "--dry-run")
    assert result.returncode != 0
    assert "metric.seg.score: line 10: no score (None) for system B, segment 4, which people rated " \
           "(human_studies.toy.metric_files.toy-metric.file" in result.stdout, result.stdout[-3000:]
    assert not (tmp_path / "run" / "results").exists()


def test_a_further_metric_file_is_a_config_edit_that_plans_its_rows(tmp_path: Path, mirror_dir: Path) -> None:
    config = _config(tmp_path, mirror_dir)
    extra = tmp_path / "files" / "extra.seg.score"
    extra.write_text(METRIC.replace("\t0.", "\t-0."), encoding="utf-8")
    config["human_studies"]["toy"]["metric_files"]["extra-metric"] = {
        "format": "mtme", "file": str(extra), "higher_is_better": False, "epsilon": {"start": 0.1, "stop": 1, "step": 0.1}}
    result = run_workflow(tmp_path / "run", config, "--dry-run", "results/tables/human/toy/rankings.csv")
    assert result.returncode == 0, result.stdout[-3000:]
    for row in ("A", "B"):
        assert f"results/human/toy/robustness/extra-metric/{row}.summary.tsv" in result.stdout
    assert "results/tables/human/toy/extra-metric/comparisons.csv" in result.stdout
    assert "human_mtme_segments" in result.stdout
