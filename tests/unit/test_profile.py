"""The robustness profile: its config, its plan, reading the branch outputs, ranks, Kendall taus, its reading
and the report's opening page."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import docutils.core
import jinja2
import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.comparisons import to_csv_text
from nlp_robustness.statistics.comparisons import compare_rows
from nlp_robustness.statistics.engine import SUMMARY_COLUMNS, read_summary
from nlp_robustness.statistics.pool_uncertainty import read_replicates, write_replicates
from nlp_robustness.outputs.profile import (
    plot_axes_overview,
    panel_rows,
    plot_profile,
    profile_display,
    profile_markdown,
    report_description,
    rst_text,
)
from nlp_robustness.outputs.profile_reading import reading
from nlp_robustness.studies.profile import (
    axis_kendall,
    axis_rankings,
    build_profile,
    kendall_matrix,
    kendall_square,
    profile_document,
    wide_table,
)
from nlp_robustness.studies.profile_plan import complete_profile, config_hash, plan_files, profile_plan
from tests.unit.test_profile_reading import CLUSTERS

SYSTEMS = ["good", "weak", "mid"]


def _config(**sections) -> dict:
    """A completed config with what the profile reads: systems, metrics, two perturbation families, a
    natural-robustness section (and optionally sentiment and human sections)."""
    config = {
        "systems": {name: {"kind": "apertium"} for name in SYSTEMS},
        "mt_studies": {"paper": {"systems": SYSTEMS, "language_pair": "en-fr", "testsets": ["wmt14", "bio"]}},
        "metrics": ["bleu", "chrf"],
        "perturbations": {"families": {
            "word_order": {"metrics": ["bleu"], "functions": {"Reversed": {}, "WordShuffle": {}}, "systems": SYSTEMS},
            "character_attacks": {"metrics": ["bleu", "chrf"], "functions": {"visual-p0.1": {}, "intrude-p0.1": {}},
                                  "systems": SYSTEMS},
            "natural": {"metrics": [], "functions": {"casing": {}}, "systems": SYSTEMS},
        }},
        "natural_robustness": {"systems": SYSTEMS},
        "robustness_profile": {"permutations": 1000, "seed": 0},
    }
    config.update(sections)
    complete_profile(config)
    return config


def _gamma_curves(config: dict) -> dict[str, dict[str, str]]:
    """The gamma curves the study plan names for the tables the profile reads (its layout, written out)."""
    curves = {f"paper/{metric}": {system: f"results/robustness/paper/{metric}/{system}.gamma.tsv" for system in config["systems"]}
              for metric in config["metrics"]}
    if "sentiment" in config:
        curves["sentiment"] = {domain: f"results/sentiment/robustness/{domain}.gamma.tsv" for domain in config["sentiment"]["training"]["domains"]}
    for study, spec in config.get("human_studies", {}).items():
        for score in ["human", *config["metrics"]]:
            curves[f"human/{study}/{score}"] = {name: f"results/human/{study}/robustness/{score}/{name}.gamma.tsv" for name in spec["systems"]}
    return curves


def _plan(config: dict) -> dict:
    return profile_plan(config, _gamma_curves(config))


def test_defaults_take_the_first_metric_and_the_families_that_have_it() -> None:
    config = _config()
    assert config["robustness_profile"]["metric"] == "bleu"
    assert config["robustness_profile"]["families"] == {"word_order": "faithfulness", "character_attacks": "drop"}
    config = _config(metrics=["chrf", "bleu"])  # word_order writes no chrF tables: left out by default
    assert config["robustness_profile"]["families"] == {"character_attacks": "drop"}


@pytest.mark.parametrize(("section", "key"), [
    ({"metric": "ter"}, "robustness_profile.metric"),
    ({"families": {"typos": "drop"}}, "robustness_profile.families.typos"),
    ({"families": {"natural": "drop"}}, "robustness_profile.families.natural"),  # writes no bleu tables
])
def test_bad_settings_name_their_key(section: dict, key: str) -> None:
    config = _config()
    config["robustness_profile"] = section
    with pytest.raises(InputError, match=f"'{key}'"):
        complete_profile(config)


def test_the_plan_has_a_group_per_branch_configured() -> None:
    plan = _plan(_config())
    assert [group["name"] for group in plan["groups"]] == ["mt"]
    keys = [measure["key"] for measure in plan["groups"][0]["measures"]]
    assert keys == [
        "mean_bleu", "cov_bleu_pool", "gamma_area_bleu_pool", "cov_bleu_design_bagging", "gamma_area_bleu_design_bagging",
        "var_bleu_pool", "between_sd_bleu", "between_share_bleu", "beta1_bleu", "beta2_bleu", "beta2_minus_beta1_bleu", "drop_visual-p0.1_bleu", "drop_intrude-p0.1_bleu",
        "natural_exact", "natural_chrf",
    ]
    human = {"wmt21": {"format": "mqm", "systems": {"A": "A", "B": "B"}, "domains": ["news", "ted"]}}
    sentiment = {"training": {"domains": ["books", "dvd"]}, "test": {"domains": ["books", "dvd", "music"]}}
    plan = _plan(_config(human_studies=human, sentiment=sentiment))
    assert [group["name"] for group in plan["groups"]] == ["mt", "sentiment", "wmt21"]
    wmt21 = [measure["key"] for measure in plan["groups"][2]["measures"]]
    # the MQM score's COV is left out: its means are negative
    assert "human_cov_human_pool" not in wmt21 and "human_gamma_area_human_pool" in wmt21 and "metric_cov_bleu_pool" in wmt21
    axes = {measure["key"]: measure["axis"] for measure in plan["groups"][2]["measures"]}
    # people's consistency is an axis of its own, so the profile's axis tau asks whether BLEU's agrees with it
    assert axes["human_gamma_area_human_pool"] == axes["human_between_sd_human"] == "human judgements"
    assert axes["metric_gamma_area_bleu_pool"] == axes["metric_between_sd_bleu"] == "test domains"
    assert "results/sentiment/robustness/dvd.gamma.tsv" in plan_files(plan)


def _write(path: Path, frame: pd.DataFrame) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, sep="\t" if path.suffix == ".tsv" else ",", index=False)


@pytest.fixture
def branch_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Branch outputs of three systems in the branches' own formats, in a working directory."""
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "results"
    means = {"good": 30.0, "weak": 10.0, "mid": 20.0}
    covs = {"good": 0.5, "weak": 1.5, "mid": 1.0}
    between_sds = {"good": 1.0, "mid": 2.0, "weak": 3.0}
    variances = {"good": 100.0, "mid": 200.0, "weak": 300.0}
    for method, shift in (("pool", 0.0), ("design_bagging", 0.01)):
        _write(results / f"tables/paper/bleu/robustness_{method}.csv", pd.DataFrame({
            "system": SYSTEMS, "whole_pool_Mean": [means[s] + shift for s in SYSTEMS],
            "whole_pool_COV": [covs[s] + shift for s in SYSTEMS], "wmt14_COV": [9.0, 9.0, 9.0],
            "whole_pool_Var": [variances[s] for s in SYSTEMS],
            **({"whole_pool_between_SD": [between_sds[s] for s in SYSTEMS],
                "whole_pool_between_share_pct": [between_sds[s] ** 2 / variances[s] * 100 for s in SYSTEMS]}
               if method == "pool" else {}),
        }))
    for system in SYSTEMS:
        rows = []
        for left_out in ("none", "wmt14"):
            for method in ("pool", "bagging", "design_bagging"):
                for epsilon in (1.0, 2.0):
                    # whole pool by the pool: gamma 0.1 and 0.3 for "good" (area 0.2); others higher
                    gamma = {"good": 0.1, "mid": 0.2, "weak": 0.3}[system] * epsilon
                    gamma += 0.0 if (left_out, method) in (("none", "pool"), ("none", "design_bagging")) else 5.0
                    rows.append({"system": system, "left_out": left_out, "method": method, "epsilon": epsilon,
                                 "gamma": gamma, "sigma": 1.0})
        _write(results / f"robustness/paper/bleu/{system}.gamma.tsv", pd.DataFrame(rows))
    word_order = []
    for system in SYSTEMS:
        for function, beta1, beta2 in (("Reversed", 5.0, 7.0), ("WordShuffle", math.nan, math.nan), ("TreeMirrorIn", 9.0, 8.0)):
            scale = {"good": 1.0, "mid": 0.5, "weak": 0.25}[system]
            word_order.append({"system": system, "function": function, "beta": 10.0, "beta1": beta1 * scale,
                               "beta2": beta2 * scale, "beta2_minus_beta1": (beta2 - beta1) * scale})
    _write(results / "tables/perturbations/word_order/bleu/means.csv", pd.DataFrame(word_order))
    attacks = []
    for system in SYSTEMS:
        for function, drop in (("visual-p0.1", {"good": 9.0, "mid": 5.0, "weak": 1.0}), ("intrude-p0.1", {"good": 2.0, "mid": 2.0, "weak": 1.0})):
            attacks.append({"system": system, "function": function, "beta": means[system], "beta1": means[system] - drop[system],
                            "beta2": means[system] - drop[system], "beta2_minus_beta1": 0.0})
    _write(results / "tables/perturbations/character_attacks/bleu/means.csv", pd.DataFrame(attacks))
    natural = []
    for system, score in (("good", 0.9), ("weak", 0.1), ("mid", 0.5)):
        for criterion in ("exact", "chrf"):
            for family, sample, kind in (("all", "all", "all"), ("all", "5", "all"), ("natural", "all", "all"), ("all", "all", "casing")):
                natural.append({"responder": system, "criterion": criterion, "family": family, "sample": sample, "type": kind,
                                "score": score if (family, sample, kind) == ("all", "all", "all") else 0.0,
                                "ci_low": score - 0.05, "ci_high": score + 0.05})
    _write(results / "tables/natural_robustness/scores.csv", pd.DataFrame(natural))
    return tmp_path


def _profile(config: dict | None = None) -> tuple[dict, pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    plan = _plan(config or _config())
    return (plan, *build_profile(plan, permutations=1000, seed=0)[:4])


def _values(profile: pd.DataFrame, measure: str) -> dict[str, float]:
    rows = profile[profile["measure"] == measure]
    return dict(zip(rows["system"], rows["value"]))


def _ranks(profile: pd.DataFrame, measure: str) -> dict[str, int]:
    rows = profile[profile["measure"] == measure]
    return dict(zip(rows["system"], rows["rank"].astype(int)))


def test_the_profile_reads_each_branch_output_as_published(branch_outputs: Path) -> None:
    _, profile, _, _, _ = _profile()
    assert _values(profile, "mean_bleu") == {"good": 30.0, "weak": 10.0, "mid": 20.0}
    assert _values(profile, "cov_bleu_design_bagging") == pytest.approx({"good": 0.51, "weak": 1.51, "mid": 1.01})
    # gamma-area: the mean over the grid of the whole pool's curve by that method only
    assert _values(profile, "gamma_area_bleu_pool") == pytest.approx({"good": 0.15, "mid": 0.3, "weak": 0.45})
    # mean over the functions that kept segments (WordShuffle is NaN)
    assert _values(profile, "beta1_bleu") == pytest.approx({"good": 7.0, "mid": 3.5, "weak": 1.75})
    assert _values(profile, "beta2_minus_beta1_bleu") == pytest.approx({"good": 0.5, "mid": 0.25, "weak": 0.125})
    assert _values(profile, "drop_visual-p0.1_bleu") == pytest.approx({"good": 9.0, "mid": 5.0, "weak": 1.0})
    natural = profile[profile["measure"] == "natural_exact"].set_index("system")
    assert natural.loc["mid", ["value", "ci_low", "ci_high"]].tolist() == pytest.approx([0.5, 0.45, 0.55])


def test_ranks_follow_each_columns_direction_and_share_ties(branch_outputs: Path) -> None:
    _, profile, _, _, _ = _profile()
    assert _ranks(profile, "mean_bleu") == {"good": 1, "mid": 2, "weak": 3}  # higher is better
    assert _ranks(profile, "cov_bleu_pool") == {"good": 1, "mid": 2, "weak": 3}  # lower is better
    assert _ranks(profile, "drop_visual-p0.1_bleu") == {"weak": 1, "mid": 2, "good": 3}
    assert _ranks(profile, "drop_intrude-p0.1_bleu") == {"weak": 1, "good": 2, "mid": 2}


def test_kendall_tau_compares_rankings_with_better_up(branch_outputs: Path) -> None:
    _, profile, kendall, axes, axes_kendall = _profile()
    tau = {(row.first, row.second): row.tau for row in kendall.itertuples()}
    # COV (lower better) orders the systems as mean BLEU (higher better): agreement, not reversal
    assert tau[("mean_bleu", "cov_bleu_pool")] == pytest.approx(1.0)
    assert tau[("mean_bleu", "drop_visual-p0.1_bleu")] == pytest.approx(-1.0)
    p_value = kendall[(kendall["first"] == "mean_bleu") & (kendall["second"] == "drop_visual-p0.1_bleu")]["p_value"].iloc[0]
    assert p_value == pytest.approx(2 / 6)  # exact: 2 of the 3! orderings are as extreme
    # beta2 and beta2 - beta1 describe faithfulness: the word-order axis ranks by beta1 only
    word_order = axes[axes["axis"] == "word order"]
    assert set(word_order["measures"]) == {1}
    by_axis = {(row.first, row.second): row.tau for row in axes_kendall.itertuples()}
    assert by_axis[("quality", "character attacks")] < 0 and by_axis[("quality", "test domains")] == pytest.approx(1.0)
    square = kendall_square(kendall, profile, "mt").set_index("measure")
    assert square.loc["mean BLEU", "mean BLEU"] == 1.0
    assert square.loc["mean BLEU", "drop BLEU visual-p0.1"] == square.loc["drop BLEU visual-p0.1", "mean BLEU"] == pytest.approx(-1.0)


def test_a_constant_column_has_no_tau() -> None:
    profile = pd.DataFrame({
        "group": "g", "system": ["a", "b", "c"] * 2, "measure": ["x"] * 3 + ["y"] * 3, "orientation": "higher",
        "value": [1.0, 2.0, 3.0, 5.0, 5.0, 5.0],
    })
    assert math.isnan(kendall_matrix(profile, 100, 0)["tau"].iloc[0])


def test_missing_and_repeated_branch_rows_are_named(branch_outputs: Path) -> None:
    (branch_outputs / "results/tables/paper/bleu/robustness_pool.csv").unlink()
    with pytest.raises(InputError, match="results/tables/paper/bleu/robustness_pool.csv"):
        _profile()
    _write(branch_outputs / "results/tables/paper/bleu/robustness_pool.csv",
           pd.DataFrame({"system": ["good", "good"], "whole_pool_Mean": [1.0, 2.0], "whole_pool_COV": [1.0, 1.0]}))
    with pytest.raises(InputError, match="'good' appears twice"):
        _profile()


def test_a_system_outside_a_branch_has_no_value_there(branch_outputs: Path) -> None:
    config = _config()
    config["natural_robustness"]["systems"] = ["good", "mid"]
    _, profile, _, _, _ = _profile(config)
    assert set(_values(profile, "natural_exact")) == {"good", "mid"}
    wide = wide_table(profile, "mt").set_index("system")
    assert pd.isna(wide.loc["weak", "Natural Robustness (exact)"]) and pd.isna(wide.loc["weak", "Natural Robustness (exact) rank"])
    assert wide.loc["good", "Natural Robustness (exact) CI high"] == pytest.approx(0.95)


def test_the_config_hash_ignores_key_order_but_not_values() -> None:
    config = _config()
    reordered = dict(reversed(list(copy.deepcopy(config).items())))
    assert config_hash(config) == config_hash(reordered)
    edited = copy.deepcopy(config)
    edited["robustness_profile"]["seed"] = 1
    assert config_hash(config) != config_hash(edited)


def test_the_document_holds_every_number_and_is_strict_json(branch_outputs: Path) -> None:
    config = _config()
    plan, profile, kendall, axes, axes_kendall = _profile(config)
    document = profile_document(plan, profile, kendall, axes, axes_kendall, ["text"], config_hash(config))
    text = json.dumps(document, allow_nan=False)  # NaN would not be JSON
    loaded = json.loads(text)
    measures = {measure["key"]: measure for measure in loaded["groups"][0]["measures"]}
    assert len(measures) == len(plan["groups"][0]["measures"])
    assert measures["natural_exact"]["systems"]["mid"] == {"value": 0.5, "ci_low": 0.45, "ci_high": 0.55, "rank": 2, "rank_lo": None, "rank_hi": None,
                                                          "separated": None, "letters": None}  # untested: no replicates
    assert measures["mean_bleu"]["source"] == "results/tables/paper/bleu/robustness_pool.csv"
    assert loaded["config_hash"] == config_hash(config) and len(loaded["groups"][0]["kendall"]) == 15 * 14 // 2


def test_the_reading_names_best_worst_and_disagreements(branch_outputs: Path) -> None:
    plan, profile, _, axes, axes_kendall = _profile()
    [paragraph] = reading(axes, axes_kendall, profile, {group["name"]: group for group in plan["groups"]})
    assert paragraph.startswith("MT systems (paper, en-fr) (3 systems; sentence BLEU).")
    # no replicates beside the branch tables: nothing is tested, so nobody is named
    assert ("Between-domain SD BLEU (the spread of the domains' true mean scores with the noise of units taken out: is "
            "a system more even across these domains?): lowest good 1, highest weak 3; no paired comparisons behind "
            "it, so no system is named.") in paragraph
    assert ("No bootstrap replicates behind quality (1 column; good, mid, weak), test domains (4 columns; good, mid, weak), "
            "word order (1 column; good, mid, weak), character attacks (2 columns; weak, mid, good) and natural "
            "perturbations (2 columns; good, mid, weak): their ranks have no interval and no system is named") in paragraph
    assert "best good" not in paragraph and "most robust" not in paragraph
    assert "2 of the 3! = 6 orderings, so the smallest two-sided permutation p is 0.33" in paragraph


def _engine_outputs(values: dict[str, dict[str, float]], spread: float, seed: int = 0) -> None:
    """Replicates and summaries as the engine writes them (relative SD ``spread`` around ``values``), and the
    study's comparisons table written by the comparisons code itself (as the robustness_comparisons rule does)."""
    rng = np.random.default_rng(seed)
    units = pd.DataFrame({"domain": ["a"], "unit_id": ["1"]})
    summaries, replicates = {}, {}
    for system, statistics in values.items():
        statistics = {**statistics, "between_share": statistics["between_sd"] ** 2 / statistics["variance"]}
        stem = f"results/robustness/paper/bleu/{system}"
        drawn = {name: value * (1 + rng.normal(0.0, spread, 500)) for name, value in statistics.items()}
        write_replicates(f"{stem}.replicates.npz", {"none": drawn}, units)
        summary = pd.DataFrame([{column: math.nan for column in SUMMARY_COLUMNS} | statistics
                                | {"left_out": "none", "method": "pool", "domains": 2, "units": 200} | CLUSTERS])
        summary.assign(system=system)[["system", *SUMMARY_COLUMNS]].to_csv(f"{stem}.summary.tsv", sep="\t", index=False)
        summaries[system] = read_summary(f"{stem}.summary.tsv")
        replicates[system] = read_replicates(f"{stem}.replicates.npz")
    comparisons = compare_rows(summaries, replicates, "none", 0.95, 0.8, 0)
    Path("results/tables/paper/bleu/comparisons.csv").write_text(to_csv_text(comparisons), encoding="utf-8")


def test_with_replicates_beside_the_branch_tables_the_separated_ends_are_named(branch_outputs: Path) -> None:
    """Replicates as the engine writes them, tight around the published values: every end is separated."""
    _engine_outputs({"good": {"mean": 30.0, "cov": 0.5, "gamma_area": 0.15, "variance": 100.0, "between_sd": 1.0},
                     "mid": {"mean": 20.0, "cov": 1.0, "gamma_area": 0.3, "variance": 200.0, "between_sd": 2.0},
                     "weak": {"mean": 10.0, "cov": 1.5, "gamma_area": 0.45, "variance": 300.0, "between_sd": 3.0}}, 0.01)
    plan = _plan(_config())
    profile, _, axes, axes_kendall, verdicts = build_profile(plan, permutations=1000, seed=0)
    [paragraph] = reading(axes, axes_kendall, profile, {group["name"]: group for group in plan["groups"]}, 0.95, verdicts)
    assert "Quality: best good, worst weak, each separated from every other system; 3 of 3 pairs separated" in paragraph
    assert "lowest good 1, highest weak 3; most even good, least even weak, each separated from every other system; 3 of 3" in paragraph
    # COV and Var of sentence scores track quality: out of the axis (7 columns -> 4; the design-bagged γ-area untested)
    assert ("Test domains (4 columns; tested on the 3 with bootstrap replicates): most robust good, least robust weak, "
            "each separated from every other system on the axis score; 3 of 3 pairs separated (the mean rank over its tested "
            "columns; Holm over the 3 pairs at 0.05)") in paragraph
    assert set(profile[profile["tracks_quality"]]["measure"]) == {"cov_bleu_pool", "cov_bleu_design_bagging", "var_bleu_pool"}
    # a compared statistic's verdicts are its study's comparisons table, row for row
    assert verdicts[("mt", "between_sd_bleu")].where == {"path": "results/tables/paper/bleu/comparisons.csv", "statistic": "between_sd",
                                                         "left_out": "none", "family": "all rows"}
    assert verdicts[("mt", "axis: test domains")].where["path"] == "results/profile/comparisons.csv"
    # the table prints the significance letters of a column whose rows separate a pair
    display = profile_display(profile, "mt").set_index("measure")
    assert display.loc["mean BLEU", ["good", "mid", "weak"]].tolist() == ["30 (#1; a)", "20 (#2; b)", "10 (#3; c)"]


def test_a_study_of_one_test_set_is_left_out_of_the_test_domains_axis_with_its_reason(branch_outputs: Path) -> None:
    """Issue 52, item 8: one test set has no between-domain columns (the engine cannot split one domain); the
    profile leaves the test-domains axis out, says why, and keeps quality and the other axes."""
    table = pd.read_csv("results/tables/paper/bleu/robustness_pool.csv")
    table.drop(columns=["whole_pool_between_SD", "whole_pool_between_share_pct"]).to_csv(
        "results/tables/paper/bleu/robustness_pool.csv", index=False)
    config = _config()
    config["mt_studies"]["paper"]["testsets"] = ["wmt14"]
    plan = _plan(config)
    [group] = plan["groups"]
    assert {measure["axis"] for measure in group["measures"]} == {"quality", "word order", "character attacks", "natural perturbations"}
    assert group["left_out"] == [{"axis": "test domains", "reason": "study paper has one test set (wmt14): there are no domains "
                                  "to be consistent across (give it two or more test sets for this axis)"}]
    profile, kendall, axes, axes_kendall, verdicts = build_profile(plan, permutations=100, seed=0)
    assert "test domains" not in set(axes["axis"])
    [paragraph] = reading(axes, axes_kendall, profile, {group["name"]: group}, 0.95, verdicts)
    assert ("Test domains: left out of the profile, as study paper has one test set (wmt14): there are no domains to be "
            "consistent across (give it two or more test sets for this axis).") in paragraph
    document = profile_document(plan, profile, kendall, axes, axes_kendall, [paragraph], "hash")
    assert document["groups"][0]["left_out"] == group["left_out"]


def test_the_opening_page_renders_without_errors(branch_outputs: Path, tmp_path: Path) -> None:
    plan, profile, kendall, axes, axes_kendall = _profile()
    overview = tmp_path / "overview.png"
    plot_axes_overview(axes, {"mt": "MT systems"}, {"png": overview})
    plot_profile(profile, "mt", "MT systems", {"png": tmp_path / "mt.png", "pdf": tmp_path / "mt.pdf"})
    assert (tmp_path / "mt.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    paragraphs = ["A system named kitchen_&_housewares *wins* {{ not a template }}"]
    page = report_description("Introduction of {{ snakemake.config['name'] }}.", overview, paragraphs, "abc123")

    class Category:
        def __init__(self, name: str) -> None:
            self.name = name

    # as Snakemake renders it: Jinja (with link targets for the categories), then docutils
    categories = [Category("2. Domains"), Category("1. Profile")]
    links = "\n".join(f".. _{category.name}: javascript:void(0)" for category in categories)
    rendered = jinja2.Environment().from_string(page + "\n" + links).render(
        snakemake={"config": {"name": "the workflow"}}, categories=categories)
    assert "{{ not a template }}" in rendered and "Introduction of the workflow." in rendered
    html = docutils.core.publish_parts(rendered, writer="html", settings_overrides={"report_level": 1})["html_body"]
    assert "system-message" not in html and "System Message" not in html
    assert '<img alt="Robustness profile' in html and 'src="data:image/png;base64,' in html
    assert "kitchen_&amp;_housewares <em>" not in html and "kitchen_&amp;_housewares *wins*" in html
    assert html.index("1. Profile") < html.index("2. Domains")
    # the whole page scrolls in one box (the report centres a taller page and cuts off its top)
    assert html.count('<div class="robustness-profile"') == 1 and html.count("<div") == html.count("</div>")
    assert html.index('<div class="robustness-profile"') < html.index("Introduction of") < html.index("<img")


def test_the_display_shows_value_interval_and_rank_per_measure(branch_outputs: Path) -> None:
    config = _config()
    config["natural_robustness"]["systems"] = ["good", "mid"]
    _, profile, _, _, _ = _profile(config)
    display = profile_display(profile, "mt").set_index("measure")
    assert list(display.columns) == ["axis", "good", "weak", "mid"]
    assert display.loc["mean BLEU", "good"] == "30 (#1)"
    assert display.loc["Natural Robustness (exact)", "good"] == "0.9 [0.85, 0.95] (#1)"
    assert display.loc["Natural Robustness (exact)", "weak"] == "–"  # not in that branch
    assert "| test domains | COV BLEU (pool) | 0.5 (#1) | 1.5 (#3) | 1 (#2) |" in profile_markdown(display.reset_index()[
        ["axis", "measure", "good", "weak", "mid"]], "MT systems")
    assert rst_text("a_b*") == "a\\_b\\*"


def test_panels_wrap_into_rows_so_the_cell_text_can_be_read_in_the_report() -> None:
    """Issue 52: the default run's MT profile drew its 20 columns in one row, 18 inches wide: shown 900 px wide in the
    report its cell text was 4.8 px. Panels now wrap into rows of at most nine columns, an axis wider than that on a
    row of its own."""
    assert panel_rows([1, 7, 3, 5, 2]) == [[0, 1], [2, 3], [4]]
    assert panel_rows([12, 2, 2]) == [[0], [1, 2]]
    assert panel_rows([2, 2, 2, 2]) == [[0, 1, 2, 3]]


def test_a_wide_profile_keeps_its_text_readable_at_the_reports_width(branch_outputs: Path, tmp_path: Path) -> None:
    from PIL import Image

    from nlp_robustness.outputs.figures import DPI, MIN_SHOWN_TEXT_PX, REPORT_WIDTH_PX
    _, profile, _, _, _ = _profile()
    rows = profile[profile["group"] == "mt"]
    # the same panels four times over (other axis names): about 24 columns, as many as the default run's MT group
    wide = pd.concat([rows.assign(axis=rows["axis"] + suffix, measure=rows["measure"] + suffix) for suffix in ("", " 2", " 3", " 4")])
    plot_profile(wide, "mt", "MT systems", {"png": tmp_path / "wide.png"})
    width_inches = Image.open(tmp_path / "wide.png").size[0] / DPI
    assert wide["measure"].nunique() >= 20
    assert 7 * REPORT_WIDTH_PX / (72 * width_inches) >= MIN_SHOWN_TEXT_PX  # 7-point cell text at the report's width
