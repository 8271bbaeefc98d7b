"""Metrics of an MT study read from files (nlp_robustness.studies.metric_files): config completion, alignment with the
prepared test set by segment id, and bad input named when the workflow is planned (prepare_config), before any job."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.planning import prepare_config
from nlp_robustness.studies.metric_files import aligned_score_table, complete_metric_files
from nlp_robustness.studies.plan import study_plan
from tests.paths import REPOSITORY

# Six segments: lines 1-3 of domain a (document a1), lines 4-6 of domain b (document b1).
DOMAINS = ["a\ta1"] * 3 + ["b\tb1"] * 3
SYSTEMS = ("S1", "S2")
KEY = "mt_studies.s.metric_files.comet"


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


def _own_config(tmp_path: Path, metric: dict | None = None) -> dict:
    """Two test sets selected by domain from one plain file pair, two hypotheses systems, one study."""
    files = {side: _write(tmp_path / f"{side}.txt", [f"{side} {number}" for number in range(1, 7)]) for side in ("source", "reference")}
    files["domain_file"] = _write(tmp_path / "domains.tsv", DOMAINS)
    testsets = {name: {**files, "format": "plain", "select": {"domain": name}, "domain": name} for name in ("a", "b")}
    systems = {system: {"kind": "hypotheses", "files": {name: _write(tmp_path / f"{system}.txt", [f"h{n}" for n in range(6)])
                                                         for name in testsets}} for system in SYSTEMS}
    study = {"testsets": ["a", "b"], "language_pair": "de-fr"}
    if metric is not None:
        study["metric_files"] = {"comet": metric}
    return {"testsets": testsets, "systems": systems, "mt_studies": {"s": study}, "mirror_dir": None, "metrics": ["bleu"]}


def _plain(tmp_path: Path, scores: dict[str, list[str]], **extra) -> dict:
    """A plain file metric: the same per-system files for both test sets (one line per line of the whole file)."""
    files = {system: _write(tmp_path / f"{system}.comet", lines) for system, lines in scores.items()}
    return {"higher_is_better": True, "testsets": {name: {"format": "plain", "files": dict(files)} for name in ("a", "b")}, **extra}


def _mtme(tmp_path: Path, lines: list[str], **entry) -> dict:
    path = _write(tmp_path / "de-fr.COMET-refA.seg.score", lines)
    return {"higher_is_better": False, "testsets": {name: {"format": "mtme", "file": path, **entry} for name in ("a", "b")}}


GOOD = {system: [f"0.{number}{index}" for number in range(1, 7)] for index, system in enumerate(SYSTEMS)}


def _plans(config: dict) -> dict:
    prepare_config(config, REPOSITORY)
    return config


def test_a_plain_file_metric_plans_and_joins_the_study_as_another_score(tmp_path: Path) -> None:
    config = _plans(_own_config(tmp_path, _plain(tmp_path, GOOD, description="COMET-22", epsilon={"start": 0.01, "stop": 0.1, "step": 0.01})))
    metric = config["mt_studies"]["s"]["metric_files"]["comet"]
    assert metric["decimals"] == 3 and metric["cov_meaningful"] is True and metric["epsilon"]["step"] == 0.01
    plan = study_plan(config, {"domains": "MT"})
    table = plan.tables["s/comet"]
    assert list(table.rows) == list(SYSTEMS) and table.higher_is_better and table.decimals == 3
    assert "COMET-22; read from files; higher is better" in table.scores
    row = plan.statistics[table.rows["S1"]]
    assert row.unit_files == {"a": "results/metric_files/s/comet/S1/a.tsv", "b": "results/metric_files/s/comet/S1/b.tsv"}
    assert row.epsilon == {"start": 0.01, "stop": 0.1, "step": 0.01} and row.block_set == "domains/s"
    assert "s/comet" in plan.gamma_figures and "s/bleu" in plan.tables  # the computed metric as before


def test_a_config_without_file_metrics_plans_as_before(tmp_path: Path) -> None:
    config = _plans(_own_config(tmp_path))
    assert "metric_files" not in config["mt_studies"]["s"]  # no default written: every job's params as before
    assert list(study_plan(config, {"domains": "MT"}).tables) == ["s/bleu"]


def test_an_mtme_file_maps_our_system_names_to_the_files(tmp_path: Path) -> None:
    lines = [f"S1\t{value}" for value in GOOD["S1"]] + [f"other-name\t{value}" for value in GOOD["S2"]]
    config = _plans(_own_config(tmp_path, _mtme(tmp_path, lines, systems={"S2": "other-name"})))
    entry = config["mt_studies"]["s"]["metric_files"]["comet"]["testsets"]["b"]
    assert entry["systems"] == {"S1": "S1", "S2": "other-name"}
    assert not study_plan(config, {"domains": "MT"}).tables["s/comet"].higher_is_better


def _fails(tmp_path: Path, metric: dict, **config_edits) -> str:
    config = _own_config(tmp_path, metric) | config_edits
    with pytest.raises(InputError) as error:
        prepare_config(copy.deepcopy(config), REPOSITORY)
    return str(error.value)


def test_a_system_missing_is_named_with_its_key(tmp_path: Path) -> None:
    message = _fails(tmp_path, _plain(tmp_path, {"S1": GOOD["S1"]}))
    assert f"'{KEY}.testsets.a.files'" in message and "no score file for system(s) S2" in message
    message = _fails(tmp_path, _mtme(tmp_path, [f"S1\t{value}" for value in GOOD["S1"]]))
    assert message.startswith(f"{KEY}.testsets.a.file: system 'S2' has no scores in ") and "(its systems: S1)" in message


def test_the_wrong_number_of_lines_is_named_with_both_layouts(tmp_path: Path) -> None:
    message = _fails(tmp_path, _plain(tmp_path, {**GOOD, "S2": GOOD["S2"][:5]}))
    assert message.startswith(f"{KEY}.testsets.a.files.S2: {tmp_path / 'S2.comet'}: system 'S2' has 5 scores, but test set a "
                              "is made from 6 segments (one score per segment, picked by segment id, or 3: one per segment "
                              "the prepared test set keeps)"), message


def test_a_non_number_is_named_with_file_and_line(tmp_path: Path) -> None:
    message = _fails(tmp_path, _plain(tmp_path, {**GOOD, "S1": [*GOOD["S1"][:3], "n/a", *GOOD["S1"][4:]]}))
    assert message == f"{KEY}.testsets.a.files.S1: {tmp_path / 'S1.comet'}: line 4: score 'n/a' is not a number (a missing score is written None)"


def test_none_is_refused_where_the_test_set_needs_a_score_and_allowed_where_it_does_not(tmp_path: Path) -> None:
    lines = [f"S1\t{value}" for value in GOOD["S1"]] + [f"S2\t{value}" for value in GOOD["S2"][:5]] + ["S2\tNone"]
    message = _fails(tmp_path, _mtme(tmp_path, lines))
    # line 12 of the file: S2's sixth score, segment 6 = the third of test set b
    assert message.endswith(": line 12: no score (None or empty) for system 'S2' on segment 6 of test set b; every segment "
                            "of the study needs one") and message.startswith(f"{KEY}.testsets.b.file: ")
    # max_segments 2 keeps segments 4 and 5 of b: segment 6 needs no score
    _plans(_own_config(tmp_path, _mtme(tmp_path, lines)) | {"max_segments": 2})


def test_a_computed_metrics_name_and_a_test_set_left_out_are_refused(tmp_path: Path) -> None:
    config = _own_config(tmp_path)
    config["mt_studies"]["s"]["metric_files"] = {"chrf": _plain(tmp_path, GOOD)}
    with pytest.raises(InputError, match="'mt_studies.s.metric_files.chrf': 'chrf' is a metric the workflow computes"):
        prepare_config(config, REPOSITORY)
    metric = _plain(tmp_path, GOOD)
    del metric["testsets"]["b"]
    assert "no score file for test set(s) b of the study" in _fails(tmp_path, metric)
    metric = _plain(tmp_path, GOOD)
    metric["testsets"]["a"]["file"] = "x"
    assert f"'{KEY}.testsets.a.file': not a key of format plain" in _fails(tmp_path, metric)


def test_a_file_metric_where_only_computed_metrics_work_is_refused(tmp_path: Path) -> None:
    message = _fails(tmp_path, _plain(tmp_path, GOOD), robustness_profile={"metric": "comet"})
    assert "'comet' is not one of metrics (bleu)" in message


def test_the_job_aligns_scores_by_segment_id_or_by_the_prepared_test_sets_lines(tmp_path: Path) -> None:
    table = pd.DataFrame({"segment_id": ["4", "6"], "doc_id": ["b1", "b1"]})  # a selection with a gap (a drop)
    whole = {"format": "plain", "files": {"S1": _write(tmp_path / "whole.txt", ["1", "2", "", "4", "5", "6"])}}
    scores = aligned_score_table(table, 6, whole, "S1", "comet", "b", "key")
    assert scores.to_dict("list") == {"segment_id": ["4", "6"], "doc_id": ["b1", "b1"], "comet": [4.0, 6.0]}
    prepared = {"format": "plain", "files": {"S1": _write(tmp_path / "kept.txt", ["40", "60"])}}
    assert aligned_score_table(table, 6, prepared, "S1", "comet", "b", "key")["comet"].tolist() == [40.0, 60.0]
    with pytest.raises(InputError, match="key: .*whole.txt: line 3: no score .* segment 3 of test set b"):
        aligned_score_table(pd.DataFrame({"segment_id": ["3"], "doc_id": [""]}), 6, whole, "S1", "comet", "b", "key")
    with pytest.raises(InputError, match="has 2 scores, but test set b is made from 5 segments"):
        aligned_score_table(pd.DataFrame({"segment_id": ["1", "2", "3"], "doc_id": [""] * 3}), 5, prepared, "S1", "comet", "b", "key")
    assert np.isfinite(scores["comet"]).all()


def test_completion_fills_epsilon_and_description(tmp_path: Path) -> None:
    config = {"robustness": {"epsilon": {"start": 1, "stop": 100, "step": 1}},
              "mt_studies": {"s": {"testsets": ["a"], "systems": ["S1"], "metric_files": {"m": {
                  "higher_is_better": True, "testsets": {"a": {"format": "mtme", "file": "f"}}}}}}}
    complete_metric_files(config)
    metric = config["mt_studies"]["s"]["metric_files"]["m"]
    assert metric["description"] == "m" and metric["epsilon"]["stop"] == 100 and metric["testsets"]["a"]["systems"] == {"S1": "S1"}
