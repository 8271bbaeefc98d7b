"""A run directory belongs to the config of its last run with jobs, told by its resolved config's digest; a run of
another config whose jobs would replace its files is refused, unless allowed (nlp_robustness.run_owner).

The rule's calls as rules/common.smk makes them (its onstart handler hands over the planned jobs' outputs that exist);
tests/e2e/test_own_data_configs.py runs it through Snakemake.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.planning import prepare_config
from nlp_robustness.run_owner import (
    ALLOW_KEY,
    NOT_RESULTS,
    OWNER_RECORD,
    allowed,
    claim_run_directory,
    config_file_names,
    recorded_owner,
    run_owner,
)
from tests.e2e.workflow_runner import small_config
from tests.paths import REPOSITORY

SMALL = small_config()
REPLACED = ["results/testsets/wmt14.tsv"]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run directory ``runs/a`` of the launch directory ``tmp_path``, as the working directory."""
    directory = tmp_path / "runs" / "a"
    directory.mkdir(parents=True)
    monkeypatch.chdir(directory)
    return directory


def _resolved(config: dict) -> dict:
    config = copy.deepcopy(config)
    prepare_config(config, REPOSITORY)
    return config


def test_the_digest_is_the_resolved_configs_less_where_results_go() -> None:
    resolved = _resolved(SMALL)
    written_out = copy.deepcopy(SMALL)
    written_out["robustness"]["bagging"] = dict(reversed(resolved["robustness"]["bagging"].items()))  # defaults, reordered
    written_out |= {"run_directory": "runs/b", "download": {"retries": 7}}
    assert run_owner(_resolved(written_out), ["b.yaml"]).digest == run_owner(resolved, ["a.yaml"]).digest
    for edit in ({"max_segments": 30}, {"systems": dict(reversed(SMALL["systems"].items()))}):  # a value; the rows' order
        assert run_owner(_resolved(SMALL | edit), ["a.yaml"]).digest != run_owner(resolved, ["a.yaml"]).digest


def test_the_allowing_key_is_taken_out_of_the_config() -> None:
    config = {"max_segments": 3, ALLOW_KEY: True}
    assert allowed(config) and config == {"max_segments": 3}
    assert not allowed(config)


def test_a_first_run_claims_its_directory_silently(run: Path, tmp_path: Path) -> None:
    owner = run_owner({"max_segments": 3}, config_file_names(["a.yaml"], tmp_path))
    assert owner.config_files == ("../../a.yaml",)
    assert claim_run_directory(owner, REPLACED, tmp_path) is None
    assert recorded_owner() == owner and json.loads(OWNER_RECORD.read_text(encoding="utf-8"))["digest"] == owner.digest


def test_the_same_config_renamed_edited_or_replacing_nothing_goes_on_silently(run: Path, tmp_path: Path) -> None:
    claim_run_directory(run_owner({"max_segments": 3}, ["../../a.yaml"]), REPLACED, tmp_path)
    renamed = run_owner({"max_segments": 3}, ["../../b.yaml"])  # the same content under another name
    assert claim_run_directory(renamed, REPLACED, tmp_path) is None and recorded_owner() == renamed
    edited = run_owner({"max_segments": 4}, ["../../b.yaml"])  # the owner's file edited: its jobs update the results
    assert claim_run_directory(edited, REPLACED, tmp_path) is None and recorded_owner() == edited
    beside = run_owner({"max_segments": 5}, ["../../c.yaml"])  # another config whose jobs write new files only
    assert claim_run_directory(beside, [], tmp_path) is None and recorded_owner() == beside


def test_another_configs_run_that_would_replace_files_is_refused_unless_allowed(run: Path, tmp_path: Path) -> None:
    first = run_owner({"max_segments": 3, "metrics": ["bleu"]}, ["../../config.yaml"])
    claim_run_directory(first, REPLACED, tmp_path)
    record = OWNER_RECORD.read_bytes()
    other = run_owner({"max_segments": 3, "metrics": ["chrf"]}, ["../../tests/config/small.yaml"])
    replaced = [f"results/{name}" for name in ("d", "c", "b", "a")]
    with pytest.raises(InputError) as refused:
        claim_run_directory(other, replaced, tmp_path)
    assert str(refused.value) == (
        "run directory runs/a holds the results of config file config.yaml; this run's config (tests/config/small.yaml) "
        "is another one (it differs in metrics) and its jobs would replace 4 of those files (results/a, results/b, "
        "results/c, ...), mixing two configs' results. Nothing was run. Give each config its own run_directory "
        '(docs/own-data.md, "Several configs in one checkout"), or let this run replace them: --config '
        "allow_mixed_run_directory=True"
    )
    assert OWNER_RECORD.read_bytes() == record  # still the first config's
    note = claim_run_directory(other, replaced, tmp_path, allow=True)
    assert note == "run directory runs/a: this run replaces 4 files of config file config.yaml's results (allow_mixed_run_directory)"
    assert recorded_owner() == other


def test_the_launch_directory_as_run_directory_is_named_by_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    claim_run_directory(run_owner({"max_segments": 3}, ["config.yaml"]), REPLACED, tmp_path)
    with pytest.raises(InputError) as refused:
        claim_run_directory(run_owner({"max_segments": 4}, ["tests/config/small.yaml"]), REPLACED, tmp_path)
    assert str(refused.value).startswith(f"run directory {Path.cwd()} holds the results of config file config.yaml; this "
                                         "run's config (tests/config/small.yaml) is another one (it differs in max_segments)")


def test_the_docs_name_every_key_the_digest_leaves_out() -> None:
    text = (REPOSITORY / "docs" / "own-data.md").read_text(encoding="utf-8")
    paragraph = text[text.index("Two configs that do share a run directory"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    assert all(f"`{path[-1]}`" in paragraph for path in NOT_RESULTS) and OWNER_RECORD.as_posix() in paragraph
