"""The profile's reading and figures say only what the tests support: planted studies with a known truth
(simulated bootstrap replicates written as the engine writes them) run through the profile stage."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nlp_robustness.outputs.profile as profile_figures
from nlp_robustness.outputs.profile import (
    faded_cells,
    plot_axes_overview,
    plot_profile,
    read_axes_table,
    read_profile_table,
)
from nlp_robustness.outputs.profile_reading import rank_text, reading
from nlp_robustness.statistics.pool_uncertainty import write_replicates
from nlp_robustness.studies.profile import build_profile
from nlp_robustness.statistics.engine import SUMMARY_COLUMNS

SIX = ["A", "B", "C", "D", "E", "F"]
#: The cluster counts the engine records in a pool row (documents and their degrees of freedom), which the
#: paired comparisons read for their few-cluster treatment: 100 documents in 3 domains.
CLUSTERS = {"smallest_stratum_clusters": 30, "cluster_degrees_of_freedom": 97}
RESAMPLES = 1000


def _planted(tmp_path: Path, systems: list[str], measures: list[dict], seed: int = 0) -> dict:
    """A plan over one table of ``systems`` with ``measures`` (key, axis, role, orientation, values per system,
    ``noise``: the SD of each system's bootstrap replicates around its value, None: no replicates), the table
    and the replicates written in the branches' formats; independent noise per system."""
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"system": systems})
    replicates: dict[str, dict[str, np.ndarray]] = {system: {} for system in systems}
    plan_measures = []
    for measure in measures:
        table[measure["key"]] = measure["values"]
        source = {"kind": "table_column", "path": str(tmp_path / "table.csv"), "column": measure["key"]}
        if measure.get("noise") is not None:
            for system, value in zip(systems, measure["values"]):
                replicates[system][measure["key"]] = value + rng.normal(0.0, measure["noise"], RESAMPLES)
            source.update(replicates={system: str(tmp_path / f"{system}.replicates.npz") for system in systems},
                          statistic=measure["key"])
        plan_measures.append({"key": measure["key"], "axis": measure["axis"], "label": measure.get("label", measure["key"]),
                              "metric": "planted", "role": measure.get("role", "robustness"), "orientation": measure["orientation"],
                              "source": source, "tracks_quality": measure.get("tracks_quality", False),
                              "answers_evenness": measure.get("answers_evenness", False)})
    table.to_csv(tmp_path / "table.csv", index=False)
    units = pd.DataFrame({"domain": ["a"], "unit_id": ["1"]})
    summary = pd.DataFrame([{column: math.nan for column in SUMMARY_COLUMNS} | {"left_out": "none", "method": "pool",
                                                                                 "domains": 3, "units": 300} | CLUSTERS])
    for system in systems:
        write_replicates(str(tmp_path / f"{system}.replicates.npz"), {"none": replicates[system]}, units)
        summary.assign(system=system)[["system", *SUMMARY_COLUMNS]].to_csv(tmp_path / f"{system}.summary.tsv", sep="\t", index=False)
    return {"metric": "planted", "groups": [{"name": "g", "label": "Planted systems", "scores": "planted scores",
                                             "systems": systems, "measures": plan_measures}]}


def _six_systems(tmp_path: Path) -> dict:
    """Quality clearly ordered A > ... > F; the between-domain SD clearly reversed (F the most even); a
    quality-tracking Var that agrees with quality; word order: equal systems whose point values happen to
    reverse quality (noise of SD 1 around values 0.01 apart); character attacks without replicates."""
    return _planted(tmp_path, SIX, [
        {"key": "mean", "axis": "quality", "role": "quality", "orientation": "higher", "values": [60, 50, 40, 30, 20, 10], "noise": 1.0},
        {"key": "var", "axis": "test domains", "orientation": "lower", "values": [1, 2, 3, 4, 5, 6], "noise": 0.05,
         "tracks_quality": True, "label": "Var planted"},
        {"key": "between_sd", "axis": "test domains", "orientation": "lower", "values": [6, 5, 4, 3, 2, 1], "noise": 0.05,
         "answers_evenness": True, "label": "between-domain SD planted"},
        {"key": "beta1", "axis": "word order", "orientation": "higher", "values": [5.00, 5.01, 5.02, 5.03, 5.04, 5.05], "noise": 1.0},
        {"key": "drop", "axis": "character attacks", "orientation": "lower", "values": [6, 5, 4, 3, 2, 1]},
    ])


def _read(plan: dict) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, str]:
    profile, _, axes, axes_kendall, verdicts = build_profile(plan, permutations=1000, seed=0)
    [paragraph] = reading(axes, axes_kendall, profile, {group["name"]: group for group in plan["groups"]}, 0.95, verdicts)
    return profile, axes, axes_kendall, paragraph


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, str]:
    """The six planted systems' profile, axes, axis taus and reading (read only by the tests)."""
    return _read(_six_systems(tmp_path_factory.mktemp("six")))


def test_a_clearly_separated_best_and_worst_are_named(six) -> None:
    _, axes, _, paragraph = six
    assert "Quality: best A, worst F, each separated from every other system; 15 of 15 pairs separated" in paragraph
    quality = axes[axes["axis"] == "quality"].set_index("system")
    assert quality["separated"].all() and (quality["rank_lo"] == quality["rank_hi"]).all()


def test_an_inseparable_axis_names_nobody_and_gives_the_rank_intervals(six) -> None:
    _, axes, _, paragraph = six
    assert ("Word order (1 column): no pair of systems is separated (Holm over the 15 pairs at 0.05; rank interval of "
            "every system: 1–6).") in paragraph
    word_order = axes[axes["axis"] == "word order"].set_index("system")
    assert not word_order["separated"].any() and (word_order["rank_lo"] == 1).all() and (word_order["rank_hi"] == 6).all()


def test_the_between_domain_sd_leads_and_quality_tracking_columns_name_nobody(six) -> None:
    profile, axes, _, paragraph = six
    lead = paragraph.index("Between-domain SD planted (the spread of the domains' true mean scores")
    assert "lowest F 1, highest A 6; most even F, least even A, each separated from every other system; 15 of 15" in paragraph
    assert lead < paragraph.index("Pooled Var and COV of sentence scores mostly restate quality") < paragraph.index("Test domains (")
    # Var is separated on its own column, and agrees with quality: it is neither named nor in the axis
    assert profile[profile["measure"] == "var"]["separated"].all()
    assert "Var planted" not in paragraph and "test domains" in set(axes["axis"])
    assert set(axes[axes["axis"] == "test domains"]["measures"]) == {1}
    assert "Test domains (1 column): most robust F, least robust A, each separated from every other system; 15 of 15" in paragraph


def test_only_a_tau_whose_interval_excludes_0_is_a_disagreement(six) -> None:
    _, _, axes_kendall, paragraph = six
    pairs = axes_kendall.set_index(["first", "second"])
    # word order's point values reverse quality (tau -1), but its noise makes the interval reach 0
    assert pairs.loc[("quality", "word order"), "tau"] == pytest.approx(-1.0)
    assert pairs.loc[("quality", "word order"), "tau_hi"] >= 0
    assert pairs.loc[("quality", "test domains"), "tau_hi"] < 0
    assert ("The axes disagree beyond noise on 1 of 6 pairs (τ interval below 0, permutation p below 0.05): "
            "quality vs test domains (τ = -1.00 [-1.00, -1.00], p = 0.003).") in paragraph
    assert "quality vs word order" not in paragraph and "quality vs character attacks" not in paragraph
    # character attacks have no replicates: their taus are untested, whatever the interval of the other axis
    assert ("No other pair of axes disagrees beyond noise: 2 within noise (τ interval reaching 0, or permutation p "
            "at least 0.05), 3 untested (an axis without bootstrap replicates).") in paragraph
    assert "No bootstrap replicates behind character attacks (1 column; F, E, D, C, B, A)" in paragraph


@pytest.mark.parametrize(("systems", "orderings", "p_text"), [(3, 6, "0.33"), (4, 24, "0.08")])
def test_with_few_systems_no_tau_is_told_from_0(tmp_path: Path, systems: int, orderings: int, p_text: str) -> None:
    names = SIX[:systems]
    plan = _planted(tmp_path, names, [
        {"key": "mean", "axis": "quality", "role": "quality", "orientation": "higher", "values": list(range(systems, 0, -1)), "noise": 0.01},
        {"key": "between_sd", "axis": "test domains", "orientation": "higher", "values": list(range(1, systems + 1)), "noise": 0.01},
    ])
    _, _, axes_kendall, paragraph = _read(plan)
    assert axes_kendall["tau_hi"].iloc[0] == pytest.approx(-1.0)  # a clear reversal in every replicate...
    assert (f"With {systems} systems no Kendall τ between two axes can be told from 0: a full reversal is as extreme as "
            f"2 of the {systems}! = {orderings} orderings, so the smallest two-sided permutation p is {p_text}") in paragraph
    assert "disagree beyond noise" not in paragraph  # ...is still not a finding


def test_the_separated_flags_are_the_comparison_rows_verdicts(tmp_path: Path) -> None:
    """A place is separated exactly when every row of its system in the verdict rows separates it (no rank
    interval or test of the profile's own): a tie is never separated."""
    plan = _planted(tmp_path, ["A", "B", "C", "D"], [
        {"key": "mean", "axis": "quality", "role": "quality", "orientation": "higher", "values": [40.0, 40.0, 20.0, 0.0], "noise": 1.0},
    ])
    profile, _, _, _, verdicts = build_profile(plan, permutations=100, seed=0)
    rows = verdicts[("g", "mean")].rows
    for system in "ABCD":
        own = rows[(rows["row_a"] == system) | (rows["row_b"] == system)]
        flag = bool(profile[(profile["measure"] == "mean") & (profile["system"] == system)]["separated"].iloc[0])
        assert flag == bool((own["verdict"] != "not distinguishable").all()), system
    assert profile.set_index("system").loc[["A", "B"], "separated"].tolist() == [False, False]
    assert profile.set_index("system").loc[["C", "D"], "separated"].tolist() == [True, True]


def test_the_figures_fade_exactly_the_places_not_separated(six, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    profile, axes, _, _ = six
    faded = dict(zip(zip(axes["axis"], axes["system"]), faded_cells(axes)))
    assert not any(faded[("quality", system)] for system in SIX)
    assert all(faded[("word order", system)] for system in SIX)
    assert all(faded[("character attacks", system)] for system in SIX)  # untested: no replicates
    assert rank_text(2, 1.0, 6.0) == "#2 (1–6)" and rank_text(1, 1.0, 1.0) == "#1" and rank_text(3, math.nan, math.nan) == "#3"
    # the figure jobs read the tables back from TSV: the same cells fade
    profile.to_csv(tmp_path / "profile.tsv", sep="\t", index=False)
    axes.to_csv(tmp_path / "axes.tsv", sep="\t", index=False)
    assert faded_cells(read_profile_table(tmp_path / "profile.tsv")) == faded_cells(profile)
    assert faded_cells(read_axes_table(tmp_path / "axes.tsv")) == faded_cells(axes)
    drawn = []
    original = profile_figures._heatmap

    def recording(panel, scaled, faded_cells_, texts, columns, rows, title, *args, **kwargs):
        drawn.append((title, list(columns), list(rows), faded_cells_.copy(), texts))
        return original(panel, scaled, faded_cells_, texts, columns, rows, title, *args, **kwargs)

    monkeypatch.setattr(profile_figures, "_heatmap", recording)
    plot_axes_overview(axes, {"g": "Planted systems"}, {"png": tmp_path / "overview.png"})
    [(_, columns, rows, matrix, texts)] = drawn
    for column, axis in enumerate(columns):
        for row, system in enumerate(rows):
            assert matrix[row, column] == faded[(axis, system)], (axis, system)
    word_order = axes[(axes["axis"] == "word order") & (axes["system"] == "A")].iloc[0]
    assert texts[rows.index("A")][columns.index("word order")] == rank_text(word_order["rank"], word_order["rank_lo"], word_order["rank_hi"])
    assert "(" in texts[rows.index("A")][columns.index("word order")]
    # the significance letters of a column whose rows separate a pair, none where none is separated
    assert texts[rows.index("A")][columns.index("quality")] == "#1\na" and texts[rows.index("F")][columns.index("quality")] == "#6\nf"
    assert "\n" not in texts[rows.index("A")][columns.index("word order")]
    drawn.clear()
    plot_profile(profile, "g", "Planted systems", {"png": tmp_path / "g.png"})
    cells = dict(zip(zip(profile["measure"], profile["system"]), faded_cells(profile)))
    labels = dict(zip(profile["label"], profile["measure"]))
    for _, columns, rows, matrix, _ in drawn:
        for column, label in enumerate(columns):
            measure = labels[label.removesuffix(" †")]
            assert label.endswith(" †") == (measure == "var")  # the quality-tracking column is marked
            for row, system in enumerate(rows):
                assert matrix[row, column] == cells[(measure, system)], (measure, system)
    assert sum(matrix.sum() for *_, matrix, _ in drawn) == 12  # word order and character attacks only


def test_only_the_separated_end_is_named_and_the_others_get_their_intervals(tmp_path: Path) -> None:
    plan = _planted(tmp_path, ["A", "B", "C"], [
        {"key": "mean", "axis": "quality", "role": "quality", "orientation": "higher", "values": [30.0, 10.0, 10.1], "noise": 1.0},
    ])
    _, axes, _, paragraph = _read(plan)
    assert ("Quality: best A, separated from every other system; 2 of 3 pairs separated (Holm over the 3 pairs at 0.05); "
            "significance groups (systems sharing a letter are not separated): A a, C b, B b.") in paragraph
    assert "distinguishable" not in paragraph
    assert axes.set_index("system")["separated"].tolist() == [True, False, False]
