"""Bad input fails with a message naming the file or config key, and leaves no partial output."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.workflow_runner import without_system, REPOSITORY, SNAKEMAKE, run_workflow, small_config

pytestmark = pytest.mark.e2e


def _log_text(workdir: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((workdir / "logs").rglob("*.log")))


def _results(workdir: Path) -> list[Path]:
    results = workdir / "results"
    return sorted(path for path in results.rglob("*") if path.is_file()) if results.exists() else []


# Bad configs are checked in-process by tests/unit/test_bad_config.py (the same planning code Snakemake runs);
# this one pins that the message reaches the user through Snakemake.
def test_misspelt_config_key_is_rejected(tmp_path: Path, mirror_dir: Path) -> None:
    config = small_config(mirror_dir)
    config["robustness"]["bagging"]["blocs"] = config["robustness"]["bagging"].pop("blocks")
    result = run_workflow(tmp_path, config, "--dry-run")
    assert result.returncode != 0
    assert "robustness.bagging" in result.stdout and "blocs" in result.stdout
    # one line, the user's: no traceback through the workflow's files, which would read as a bug of the workflow
    assert "\nInputError: invalid configuration at key 'robustness.bagging'" in result.stdout
    assert "rules/common.smk" not in result.stdout and "planning.py" not in result.stdout


def test_a_tab_in_config_yaml_is_named_with_line_and_column(tmp_path: Path) -> None:
    """Snakemake's own reader says only "not valid JSON or YAML"; the Snakefile checks its config file first."""
    (tmp_path / "config.yaml").write_text("max_segments: 40\nrobustness:\n\tseed: 0\n", encoding="utf-8")
    result = subprocess.run([str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--directory", str(tmp_path),
                             "--dry-run", "--cores", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode != 0
    assert "InputError: config.yaml: line 3, column 1: not valid YAML: " in result.stdout, result.stdout[-2000:]
    assert "(a tab in the indentation: YAML indents with spaces only)" in result.stdout


def test_a_hypotheses_file_one_line_long_is_refused_by_its_job_although_max_segments_cuts_it(tmp_path: Path, mirror_dir: Path) -> None:
    """A domain selected from a dataset has a size known only once prepared: the import job compares the whole file
    with the whole test set before max_segments (40) cuts it; cut first, 41 lines passed and every hypothesis after
    an inserted line was scored against the wrong reference."""
    config = small_config(mirror_dir)
    study = config["mt_studies"]["wmt22-de-fr"]
    files = {}
    for testset in study["testsets"]:
        files[testset] = str(tmp_path / f"{testset}.fr")
        Path(files[testset]).write_text("".join(f"phrase {number}\n" for number in range(41)), encoding="utf-8")
    config["systems"]["mine"] = {"kind": "hypotheses", "files": files}
    study["systems"].append("mine")
    target = "results/translations/mine/defr-news.txt"
    result = run_workflow(tmp_path / "run", config, target)
    assert result.returncode != 0
    log = result.stdout + _log_text(tmp_path / "run")
    assert re.search(rf"{re.escape(files['defr-news'])}: 41 lines but test set defr-news has \d+ segments "
                     r"\(max_segments 40 keeps the first 40\): a hypotheses file translates the whole test set", log), log[-3000:]
    assert not (tmp_path / "run" / target).exists()
    assert (tmp_path / "run" / "results/testsets/defr-news.tsv").exists()  # the test set itself was fine


def test_hypotheses_with_too_few_lines_fail_and_leave_nothing(tmp_path: Path, mirror_dir: Path) -> None:
    short = tmp_path / "short.fr"
    short.write_text("".join(f"phrase {number}\n" for number in range(25)), encoding="utf-8")
    config = small_config(mirror_dir)
    config["systems"]["copy-source"]["files"]["wmt15"] = str(short)
    target = "results/translations/copy-source/wmt15.txt"
    result = run_workflow(tmp_path / "run", config, target)
    assert result.returncode != 0
    # a whole manifest test set's size is in the manifest: caught when the workflow is planned, before any job
    assert f"systems.copy-source.files.wmt15: {short} has 25 lines" in result.stdout and "1500 segments" in result.stdout
    assert not (tmp_path / "run" / target).exists() and not (tmp_path / "run" / "results").exists()
    assert not (tmp_path / "run" / "results/translations/copy-source/wmt15.report.json").exists()


def _prepare_custom_testset(tmp_path: Path, mirror_dir: Path, source: str, reference: str) -> tuple[int, str]:
    """Configure a user-defined plain-text test set and try to prepare it; returns (exit code, what the user
    sees: Snakemake's output, where a file checked when the workflow is planned fails, and the job logs)."""
    (tmp_path / "src.en").write_text(source, encoding="utf-8")
    (tmp_path / "ref.fr").write_text(reference, encoding="utf-8")
    config = small_config(mirror_dir)
    without_system(config, "copy-source")  # it has no translation of the custom test set
    config["testsets"]["custom"] = {"domain": "toy", "source": str(tmp_path / "src.en"),
                                    "reference": str(tmp_path / "ref.fr"), "format": "plain"}
    result = run_workflow(tmp_path / "run", config, "results/testsets/custom.tsv")
    assert _results(tmp_path / "run") == []
    return result.returncode, result.stdout + _log_text(tmp_path / "run")


def test_source_and_reference_of_different_length_fail(tmp_path: Path, mirror_dir: Path) -> None:
    returncode, log = _prepare_custom_testset(tmp_path, mirror_dir, "one\ntwo\nthree\n", "un\ndeux\n")
    assert returncode != 0
    # checked when the workflow is planned, before any job: one line naming the key, both files and counts
    assert f"testsets.custom: source and reference differ in length: {tmp_path / 'src.en'} has 3 segments" in log
    assert "Select jobs to execute" not in log


def test_empty_testset_fails(tmp_path: Path, mirror_dir: Path) -> None:
    returncode, log = _prepare_custom_testset(tmp_path, mirror_dir, "", "")
    assert returncode != 0
    assert "testsets.custom: empty test set" in log


def test_mirror_missing_a_file_falls_back_to_downloads(tmp_path: Path, mirror_dir: Path) -> None:
    """A dataset the mirror holds only in part is downloaded whole; what the mirror has is copied from it."""
    partial_mirror = tmp_path / "mirror"
    shutil.copytree(mirror_dir / "wmt-biomedical-enfr", partial_mirror / "wmt-biomedical-enfr")
    (partial_mirror / "wmt-biomedical-enfr" / "medline18_en2fr.fr").unlink()
    config = small_config(partial_mirror)
    result = run_workflow(tmp_path / "run", config, "results/testsets/bio18.tsv", "--dry-run")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "holds only part of it (missing wmt-biomedical-enfr/medline18_en2fr.fr)" in result.stdout
    jobs = result.stdout.split("\nrule ")
    fetches = [job for job in jobs if job.startswith("fetch_download:")]
    assert len(fetches) == 2
    english = next(job for job in fetches if "download=biomedical-medline18-en" in job)
    french = next(job for job in fetches if "download=biomedical-medline18-fr" in job)
    assert f"input: {partial_mirror}/wmt-biomedical-enfr/medline18_en2fr.en" in english
    assert "input:" not in french  # fetched from its canonical URL
    assert _results(tmp_path / "run") == []


def test_corrupted_mirror_file_fails_its_checksum(tmp_path: Path, mirror_dir: Path) -> None:
    corrupted_mirror = tmp_path / "mirror"
    shutil.copytree(mirror_dir / "wmt-biomedical-enfr", corrupted_mirror / "wmt-biomedical-enfr")
    reference = corrupted_mirror / "wmt-biomedical-enfr" / "medline18_en2fr.fr"
    reference.chmod(0o644)
    reference.write_text(reference.read_text(encoding="utf-8").replace("psoriasis", "psoriasys", 1), encoding="utf-8")
    config = small_config(corrupted_mirror)
    result = run_workflow(tmp_path / "run", config, "results/testsets/bio18.tsv")
    assert result.returncode != 0
    log = _log_text(tmp_path / "run")
    assert "medline18_en2fr.fr" in log and "sha256" in log.lower()
    assert _results(tmp_path / "run") == []


def test_an_empty_line_in_a_file_pair_fails_naming_file_and_line(tmp_path: Path, mirror_dir: Path) -> None:
    returncode, log = _prepare_custom_testset(tmp_path, mirror_dir, "one\n\nthree\n", "un\ndeux\ntrois\n")
    assert returncode != 0
    assert f"testsets.custom.source: {tmp_path / 'src.en'} line 2: empty line" in log and "allow_empty_segments" in log


def test_empty_segments_allowed_are_counted_in_the_provenance(tmp_path: Path, mirror_dir: Path) -> None:
    (tmp_path / "src.en").write_text("one\n\nthree\nsame\n", encoding="utf-8")
    (tmp_path / "ref.fr").write_text("un\ndeux\n\nsame\n", encoding="utf-8")
    config = small_config(mirror_dir)
    without_system(config, "copy-source")  # it has no translation of the custom test set
    config["testsets"]["custom"] = {"domain": "toy", "source": str(tmp_path / "src.en"), "reference": str(tmp_path / "ref.fr"),
                                    "format": "plain", "allow_empty_segments": True, "drop_source_equals_reference": True}
    result = run_workflow(tmp_path / "run", config, "results/testsets/custom.tsv")
    assert result.returncode == 0, result.stdout[-3000:]
    provenance = json.loads((tmp_path / "run/results/testsets/custom.provenance.json").read_text(encoding="utf-8"))
    assert {key: provenance[key] for key in ("segments_read", "empty_segments", "dropped_source_equals_reference", "segments")} == {
        "segments_read": 4, "empty_segments": 2, "dropped_source_equals_reference": 1, "segments": 3,
    }
    assert provenance["options"] == {"allow_empty_segments": True, "drop_source_equals_reference": True, "max_segments": 40}


def test_a_test_set_written_twice_in_the_config_file_fails_the_dry_run(tmp_path: Path, mirror_dir: Path) -> None:
    """YAML keeps the last of two equal keys; the workflow refuses the file before planning anything."""
    text = yaml.safe_dump(small_config(mirror_dir), sort_keys=False)
    assert text.count("\ntestsets:\n  wmt14:\n") == 1
    duplicate = "  wmt15:\n    dataset: wmt17-biomedical-edp-enfr\n    domain: biomedical\n"
    config_path = tmp_path / "twice.yaml"
    config_path.write_text(text.replace("\ntestsets:\n", "\ntestsets:\n" + duplicate, 1), encoding="utf-8")
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--directory", str(tmp_path / "run"),
               "--configfile", str(config_path), "--cores", "1", "--dry-run"]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode != 0
    first, second = [number for number, line in enumerate(config_path.read_text(encoding="utf-8").splitlines(), start=1)
                     if line == "  wmt15:"]
    assert f"{config_path}: line {second}: key 'testsets.wmt15' is written twice (first on line {first})" in result.stdout
    assert not (tmp_path / "run" / "results").exists()



def test_a_metric_score_file_of_the_wrong_length_fails_when_planned_and_leaves_nothing(tmp_path: Path, mirror_dir: Path) -> None:
    """A metric read from files (mt_studies.<study>.metric_files) is checked when the workflow is planned, before any
    job: an MTME file without one of the study's systems, then one plain file per system of 25 lines where wmt14 (a
    whole manifest test set: its size is in the manifest) has 3003 segments and max_segments keeps 40."""
    config = small_config(mirror_dir)
    paper = config["mt_studies"]["paper"]
    systems = [system for system in config["systems"] if system not in config["mt_studies"]["wmt22-de-fr"]["systems"]]
    mtme = tmp_path / "en-fr.COMET-refA.seg.score"
    mtme.write_text("".join(f"Online-A\t0.{number}\n" for number in range(25)), encoding="utf-8")
    paper["metric_files"] = {"comet": {"higher_is_better": True, "testsets": {
        testset: {"format": "mtme", "file": str(mtme)} for testset in paper["testsets"]}}}
    result = run_workflow(tmp_path / "run", config, "--dry-run")
    assert result.returncode != 0
    assert (f"mt_studies.paper.metric_files.comet.testsets.wmt14.file: system '{systems[0]}' has no scores in {mtme} "
            "(its systems: Online-A)") in result.stdout, result.stdout[-3000:]
    short = tmp_path / "short.scores"
    short.write_text("".join(f"0.{number}\n" for number in range(25)), encoding="utf-8")
    paper["metric_files"]["comet"]["testsets"] = {
        testset: {"format": "plain", "files": {system: str(short) for system in systems}} for testset in paper["testsets"]}
    result = run_workflow(tmp_path / "run", config, "--dry-run")
    assert result.returncode != 0
    assert (f"mt_studies.paper.metric_files.comet.testsets.wmt14.files.{systems[0]}: {short}: system '{systems[0]}' has 25 "
            "scores, but test set wmt14 is made from 3003 segments (one score per segment, picked by segment id, or 40: one "
            "per segment the prepared test set keeps)") in result.stdout, result.stdout[-3000:]
    assert not (tmp_path / "run" / "results").exists()
