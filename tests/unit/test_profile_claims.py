"""The profile says what its verdict rows say (issue 52, items 1 and 2) and its claims are checked against them.

Planted studies with a known truth (bootstrap replicates and summaries written as the engine writes them) run
through the profile stage; the claims it writes to profile.json are re-read by check_claims against the CSVs
they name, and a planted contradiction must be caught."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.outputs.comparisons import to_csv_text
from nlp_robustness.outputs.profile_claims import check_claims
from nlp_robustness.outputs.profile_reading import read_out
from nlp_robustness.studies.profile import build_profile, profile_document
from nlp_robustness.studies.profile_verdicts import PROFILE_COMPARISONS, computed_table
from tests.unit.test_profile_reading import CLUSTERS, _planted


def _run(tmp_path: Path, plan: dict) -> tuple[list[str], list[dict], dict]:
    """The profile stage on ``plan`` in ``tmp_path`` as its script runs it: profile.json with the claims and
    results/profile/comparisons.csv with the rows it computed. Returns the reading, claims and verdicts."""
    profile, kendall, axes, axes_kendall, verdicts = build_profile(plan, permutations=100, seed=0)
    paragraphs, claims = read_out(axes, axes_kendall, profile, {group["name"]: group for group in plan["groups"]}, 0.95, verdicts)
    (tmp_path / "results/profile").mkdir(parents=True, exist_ok=True)
    (tmp_path / PROFILE_COMPARISONS).write_text(to_csv_text(computed_table(verdicts)), encoding="utf-8")
    document = profile_document(plan, profile, kendall, axes, axes_kendall, paragraphs, "hash", claims)
    (tmp_path / "results/profile.json").write_text(json.dumps(document, allow_nan=False), encoding="utf-8")
    return paragraphs, claims, verdicts


@pytest.fixture
def groups_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str], list[dict], dict]:
    """Six systems in three clear tiers of two (tied within a tier): pairs across tiers are separated, no
    system is separated from every other one -- the ja-en between-domain SD's situation (issue 52, item 1)."""
    monkeypatch.chdir(tmp_path)
    plan = _planted(tmp_path, list("ABCDEF"), [
        {"key": "between_sd", "axis": "test domains", "orientation": "lower", "values": [1.0, 1.02, 3.0, 3.02, 5.0, 5.02],
         "noise": 0.2, "answers_evenness": True, "label": "between-domain SD planted"},
    ])
    paragraphs, claims, verdicts = _run(tmp_path, plan)
    return tmp_path, paragraphs, claims, verdicts


def test_separated_pairs_are_counted_and_grouped_not_called_indistinguishable(groups_case) -> None:
    _, [paragraph], claims, verdicts = groups_case
    rows = verdicts[("g", "between_sd")].rows
    assert int((rows["verdict"] != "not distinguishable").sum()) == 12  # every pair across tiers, none within
    assert "distinguishable" not in paragraph
    assert ("lowest A 1, highest F 5.02; 12 of 15 pairs separated (Holm over the 15 pairs at 0.05); significance "
            "groups (systems sharing a letter are not separated): A a, B a, C b, D b, E c, F c.") in paragraph
    kinds = {(claim["statistic"], claim["kind"]) for claim in claims}
    assert {("between_sd", "pairs separated"), ("between_sd", "groups")} <= kinds
    assert not any(claim["kind"] in ("best named", "worst named") for claim in claims)


def test_check_claims_accepts_the_run_and_catches_planted_contradictions(groups_case, tmp_path_factory) -> None:
    run, _, _, _ = groups_case
    assert check_claims(run) == []
    assert check_claims(tmp_path_factory.mktemp("no-profile")) == []  # a run without a profile claims nothing
    comparisons = run / PROFILE_COMPARISONS
    rows = pd.read_csv(comparisons, keep_default_na=False, na_values=[""])
    # the table no longer separates A from C: the count, the largest p and the letters are now wrong
    planted = rows.index[(rows["row_a"] == "A") & (rows["row_b"] == "C") & (rows["statistic"] == "between_sd")]
    rows.loc[planted, "verdict"] = "not distinguishable"
    rows.to_csv(comparisons, index=False)
    messages = check_claims(run)
    assert any("claims 12 of 15 pairs separated; the rows separate 11 of 15" in message for message in messages)
    assert all(PROFILE_COMPARISONS in message for message in messages)
    # a claim edited in profile.json: "none separated" where the rows separate pairs
    rows.loc[planted, "verdict"] = "more consistent"
    rows.to_csv(comparisons, index=False)
    document = json.loads((run / "results/profile.json").read_text(encoding="utf-8"))
    [pairs_claim] = [claim for claim in document["claims"] if claim["kind"] == "pairs separated" and claim["label"] == "between-domain SD planted"]
    pairs_claim.update(kind="none separated", pairs_separated=0)
    (run / "results/profile.json").write_text(json.dumps(document), encoding="utf-8")
    assert any("claims 0 of 15 pairs separated" in message for message in check_claims(run))


def test_a_named_best_that_the_rows_do_not_support_is_caught(groups_case) -> None:
    run, _, _, _ = groups_case
    document = json.loads((run / "results/profile.json").read_text(encoding="utf-8"))
    [groups] = [claim for claim in document["claims"] if claim["kind"] == "groups" and claim["label"] == "between-domain SD planted"]
    document["claims"].append({**groups, "kind": "best named", "systems": ["A"], "letters": None})
    groups["letters"]["B"] = ["b"]  # B would be separated from A
    (run / "results/profile.json").write_text(json.dumps(document), encoding="utf-8")
    messages = check_claims(run)
    assert any("claims A separated as best from every other system; the rows do not separate it in that direction from B"
               in message for message in messages)
    assert any("letters A ['a'], B ['b'] say separated; the rows say not distinguishable" in message for message in messages)


def test_an_axis_named_separated_says_which_column_separates_and_that_the_evenness_one_does_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two systems (issue 52, item 2): the γ-area and the share separate them, the between-domain SD does not.
    The axis sentence names the separating columns and says the between-domain SD does not separate them; two
    systems make one pair, so "no system is distinguishable as least robust" cannot be said."""
    monkeypatch.chdir(tmp_path)
    plan = _planted(tmp_path, ["pivot-a", "pivot-b"], [
        {"key": "between_sd", "axis": "test domains", "orientation": "lower", "values": [1.0, 1.1], "noise": 0.5,
         "answers_evenness": True, "label": "between-domain SD planted"},
        {"key": "gamma_area", "axis": "test domains", "orientation": "lower", "values": [1.0, 2.0], "noise": 0.01, "label": "γ-area planted"},
        {"key": "between_share", "axis": "test domains", "orientation": "lower", "values": [10.0, 20.0], "noise": 0.1,
         "label": "between-domain share planted"},
    ])
    [paragraph], claims, verdicts = _run(tmp_path, plan)
    assert verdicts[("g", "between_sd")].separated_pairs() == []
    assert verdicts[("g", "axis: test domains")].separated_pairs() == [("pivot-a", "pivot-b")]
    assert "no pair of systems is separated (Holm over the 1 pair at 0.05" in paragraph  # the between-domain SD
    sentence = next(sentence for sentence in paragraph.split(". ") if sentence.startswith("Test domains ("))
    assert sentence.startswith("Test domains (3 columns): most robust pivot-a, "
                               "least robust pivot-b: the pair is separated on the axis score (the mean rank over its tested columns; Holm p ")
    assert ("by column: pivot-a is most robust and separated from every other system on γ-area planted and between-domain "
            "share planted, not on between-domain SD planted (0 of 1 pairs separated)") in sentence
    assert "distinguishable as" not in paragraph
    assert {claim["kind"] for claim in claims if claim["statistic"] == "between_sd" and claim["axis"] == "test domains"} >= {
        "none separated", "column does not name the end"}
    assert check_claims(tmp_path) == []


@pytest.mark.parametrize("statistic", ["mean", "between_sd"])
def test_computed_rows_are_the_comparisons_tables_rows(tmp_path: Path, statistic: str) -> None:
    """A score the tables do not compare goes through the tables' own compare_rows: fed a statistic the tables
    do compare, it gives their rows number for number (higher-is-better scores too), verdicts in plain words."""
    import math

    import numpy as np

    from nlp_robustness.statistics.comparisons import compare_rows
    from nlp_robustness.statistics.engine import SUMMARY_COLUMNS, read_summary
    from nlp_robustness.statistics.pool_uncertainty import read_replicates, write_replicates
    from nlp_robustness.studies.profile_verdicts import computed_rows

    rng = np.random.default_rng(3)
    units = pd.DataFrame({"domain": ["a"], "unit_id": ["1"]})
    points = {"A": 10.0, "B": 10.4, "C": 12.0}
    for system, point in points.items():
        write_replicates(str(tmp_path / f"{system}.replicates.npz"), {"none": {statistic: point + rng.normal(0, 0.3, 400)}}, units)
        row = {column: math.nan for column in SUMMARY_COLUMNS} | {"left_out": "none", "method": "pool", "domains": 3,
                                                                   "units": 90, statistic: point} | CLUSTERS
        pd.DataFrame([row]).assign(system=system)[["system", *SUMMARY_COLUMNS]].to_csv(
            tmp_path / f"{system}.summary.tsv", sep="\t", index=False)
    summaries = {system: str(tmp_path / f"{system}.summary.tsv") for system in points}
    archives = {system: read_replicates(str(tmp_path / f"{system}.replicates.npz")) for system in points}
    table = compare_rows({system: read_summary(path) for system, path in summaries.items()}, archives, "none", 0.95, 0.8, 0)
    table = table[table["statistic"] == statistic].reset_index(drop=True)
    computed = computed_rows(points, {system: archive[0]["none"][statistic] for system, archive in archives.items()}, summaries,
                             {system: archive[1] for system, archive in archives.items()}, "planted", "g",
                             statistic == "mean", 0.95, 0.8, 0)
    for column in ("difference", "standard_error", "lo", "hi", "p", "p_holm", "lo_unadjusted", "hi_unadjusted"):
        assert computed[column].to_numpy() == pytest.approx(table[column].to_numpy(), rel=1e-12), column
    words = {"higher": "better", "lower": "worse", "more consistent": "better", "less consistent": "worse"}
    assert computed["verdict"].tolist() == [words.get(verdict, verdict) for verdict in table["verdict"]]
    assert set(computed["statistic"]) == {"planted"} and set(computed["family"]) == {"g"}
    assert (table["verdict"] != "not distinguishable").sum() == 2  # A and B apart from C, not from each other
