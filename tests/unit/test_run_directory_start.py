"""A config in a run directory of its own, started the way a user starts it (docs/own-data.md, "Several configs in one
checkout"): a failed start leaves no run directory it created, Snakemake's log lands in the run directory, and an
error names a file as the config writes it, not as rebased onto the run directory (nlp_robustness.run_directory).

The Snakemake runs fail while the workflow is parsed (a second or two each).
"""

from __future__ import annotations

import copy
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nlp_robustness.errors import InputError
from nlp_robustness.planning import prepare_config
from nlp_robustness.run_directory import move_log_files
from tests.paths import REPOSITORY

SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def _snakemake(launch: Path, config: dict, *arguments: str) -> subprocess.CompletedProcess[str]:
    (launch / "my.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--configfile", "my.yaml", "--cores", "1", *arguments]
    return subprocess.run(command, cwd=launch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)


def _own_data(launch: Path, run_directory: str = "runs/mine") -> dict:
    """A config of one plain test set and one hypotheses file, files in ``launch`` (as the user names them)."""
    for path, text in {"data/own.en": "a\n", "data/own.fr": "b\n", "out/own.txt": "c\n"}.items():
        (launch / path).parent.mkdir(parents=True, exist_ok=True)
        (launch / path).write_text(text, encoding="utf-8")
    return {
        "run_directory": run_directory, "mirror_dir": None, "mt_studies": {"domains": {"language_pair": "en-fr"}},
        "testsets": {"own": {"source": "data/own.en", "reference": "data/own.fr", "format": "plain", "domain": "own"}},
        "systems": {"mine": {"kind": "hypotheses", "files": {"own": "out/own.txt"}}},
    }


def test_a_failed_dry_run_leaves_no_run_directory_it_created(tmp_path: Path) -> None:
    completed = _snakemake(tmp_path, {"run_directory": "runs/mine", "bogus_key": 1}, "-n")
    assert completed.returncode != 0 and "bogus_key" in completed.stdout, completed.stdout
    assert not (tmp_path / "runs").exists()  # neither runs/mine nor runs/, both made by this start
    assert not (tmp_path / ".snakemake").exists()


def test_a_failed_start_leaves_a_run_directory_that_existed_and_its_log_goes_there(tmp_path: Path) -> None:
    (tmp_path / "runs" / "mine").mkdir(parents=True)
    config = _own_data(tmp_path)
    (tmp_path / "data" / "own.en").write_text("a\nb\n", encoding="utf-8")  # a fault found while planning
    completed = _snakemake(tmp_path, config)  # not a dry run: Snakemake writes its log
    assert completed.returncode != 0, completed.stdout
    assert [path.name for path in (tmp_path / "runs" / "mine").iterdir()] == [".snakemake"]
    assert len(list((tmp_path / "runs" / "mine" / ".snakemake" / "log").glob("*.snakemake.log"))) == 1
    assert not (tmp_path / ".snakemake").exists()  # nothing left in the launch directory


def test_an_error_found_after_rebasing_names_the_file_as_the_config_writes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _own_data(tmp_path)
    (tmp_path / "data" / "own.en").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "runs" / "mine").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "runs" / "mine")  # as the Snakefile's workdir: leaves it
    with pytest.raises(InputError, match=r"^testsets\.own: source and reference differ in length: data/own\.en has 2 segments, "
                                         r"data/own\.fr has 1$"):
        prepare_config(copy.deepcopy(config), REPOSITORY, launch_directory=tmp_path)
    (tmp_path / "data" / "own.en").write_text("a\n", encoding="utf-8")
    (tmp_path / "out" / "own.txt").write_text("\xff\n", encoding="latin-1")
    with pytest.raises(InputError, match=r"^systems\.mine\.files\.own: out/own\.txt: line 1: invalid UTF-8"):
        prepare_config(copy.deepcopy(config), REPOSITORY, launch_directory=tmp_path)
    with pytest.raises(InputError, match=rf"^mirror_dir: mirror does not exist \(relative to {tmp_path}, where snakemake was launched\)"):
        prepare_config({**copy.deepcopy(config), "mirror_dir": "mirror"}, REPOSITORY, launch_directory=tmp_path)


def test_the_log_file_moves_with_its_open_handler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = tmp_path / ".snakemake" / "log" / "2026.snakemake.log"
    old.parent.mkdir(parents=True)
    handler = logging.FileHandler(old)
    handler.setFormatter(logging.Formatter("%(message)s"))
    record = {"name": "test", "level": logging.INFO, "pathname": __file__, "lineno": 1, "args": (), "exc_info": None}
    handler.emit(logging.LogRecord(msg="before", **record))
    handlers = {handler: str(old)}
    (tmp_path / "runs" / "mine").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "runs" / "mine")
    move_log_files(handlers, tmp_path)
    handler.emit(logging.LogRecord(msg="after", **record))
    handler.close()
    new = tmp_path / "runs" / "mine" / ".snakemake" / "log" / old.name
    assert handlers == {handler: str(new)} and new.read_text(encoding="utf-8") == "before\nafter\n"
    assert not (tmp_path / ".snakemake").exists()  # the launch directory's, emptied, removed
    move_log_files(handlers, os.getcwd())  # one directory: nothing moves
    assert handlers == {handler: str(new)}
