"""The robustness profile of the shared small run, recomputed from the branch tables by independent code,
and its reruns: an edit of one branch's setting reruns that branch and the profile, nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from tests.e2e.workflow_runner import run_workflow, with_profile

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]



def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", keep_default_na=False, na_values=[""])


def _expected(run: Path, config: dict) -> dict[tuple[str, str], float]:
    """Every (system, measure) value of the MT group of the paper study, straight from the branch tables the README names."""
    tables, expected = run / "results/tables", {}
    metric = config["robustness_profile"]["metric"]
    for method in ("pool", "design_bagging"):
        table = _csv(tables / f"paper/{metric}/robustness_{method}.csv").set_index("system")
        for system in table.index:  # the paper study's systems (every system no other study names)
            if method == "pool":
                expected[(system, f"mean_{metric}")] = table.loc[system, "whole_pool_Mean"]
                expected[(system, f"var_{metric}_pool")] = table.loc[system, "whole_pool_Var"]
                expected[(system, f"between_sd_{metric}")] = table.loc[system, "whole_pool_between_SD"]
                expected[(system, f"between_share_{metric}")] = table.loc[system, "whole_pool_between_share_pct"]
            expected[(system, f"cov_{metric}_{method}")] = table.loc[system, "whole_pool_COV"]
            curve = _csv(run / f"results/robustness/paper/{metric}/{system}.gamma.tsv")
            whole = curve[(curve["left_out"] == "none") & (curve["method"] == method)]
            expected[(system, f"gamma_area_{metric}_{method}")] = whole["gamma"].sum() / len(whole)
    means = _csv(tables / f"perturbations/word_order/{metric}/means.csv")
    for system, rows in means.groupby("system"):
        for column in ("beta1", "beta2", "beta2_minus_beta1"):
            kept = rows[column].dropna()
            expected[(system, f"{column}_{metric}")] = kept.sum() / len(kept)
    attacks = _csv(tables / f"perturbations/character_attacks/{metric}/means.csv")
    for row in attacks.itertuples():
        expected[(row.system, f"drop_{row.function}_{metric}")] = row.beta - row.beta1
    natural = _csv(tables / "natural_robustness/scores.csv")
    overall = natural[(natural["family"] == "all") & (natural["type"] == "all") & (natural["sample"] == "all")
                      & (natural["criterion"].isin(["exact", "chrf"]))]
    for row in overall.itertuples():
        expected[(row.responder, f"natural_{row.criterion}")] = row.score
    return expected


def test_the_profile_table_recomputes_from_the_branch_tables(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    profile = _csv(finished_run / "results/profile/profile.tsv")
    mt = profile[profile["group"] == "mt"]
    expected = _expected(finished_run, config)
    found = {(row.system, row.measure): row.value for row in mt.itertuples()}
    assert found.keys() == expected.keys()
    for key, value in expected.items():
        assert found[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    # ranks: 1 = best in the column's direction, ties share the better rank
    for measure, rows in mt.groupby("measure"):
        values = rows["value"].to_numpy()
        higher = rows["orientation"].iloc[0] == "higher"
        assert higher == (measure.startswith(("mean_", "beta", "natural_")))
        ranks = stats.rankdata(-values if higher else values, method="min")
        assert rows["rank"].tolist() == ranks.astype(int).tolist(), measure
    # the other groups: sentiment classifiers and the WMT'21 systems, from their own tables
    sentiment = _csv(finished_run / "results/tables/sentiment/robustness_design_bagging.csv").set_index("classifier (training domain or model)")
    cov = profile[(profile["group"] == "sentiment") & (profile["measure"] == "cov_accuracy_design_bagging")]
    assert dict(zip(cov["system"], cov["value"])) == pytest.approx(sentiment["whole_pool_COV"].to_dict())
    human = _csv(finished_run / "results/tables/human/wmt21-mqm/human/robustness_pool.csv").set_index("system")
    mqm = profile[(profile["group"] == "wmt21-mqm") & (profile["measure"] == "mean_human")]
    assert dict(zip(mqm["system"], mqm["value"])) == pytest.approx(human["whole_pool_Mean"].to_dict())


def test_the_json_holds_the_same_numbers_the_taus_and_the_config_hash(finished_run: Path) -> None:
    document = json.loads((finished_run / "results/profile.json").read_text(encoding="utf-8"))
    profile = _csv(finished_run / "results/profile/profile.tsv")
    assert re.fullmatch(r"[0-9a-f]{64}", document["config_hash"])
    assert document["config_hash"] in (finished_run / "results/profile/report.rst").read_text(encoding="utf-8")
    assert [group["name"] for group in document["groups"]] == ["mt", "mt-wmt22-de-fr", "sentiment", "wmt21-mqm", "wmt22-de-en", "wmt22-ja-en"]
    for group in document["groups"]:
        for measure in group["measures"]:
            rows = profile[(profile["group"] == group["name"]) & (profile["measure"] == measure["key"])]
            assert {system: cell["value"] for system, cell in measure["systems"].items()} == pytest.approx(
                dict(zip(rows["system"], rows["value"])))
        # Kendall tau between two columns, recomputed from the profile with scipy on the better-up values
        first, second = group["kendall"][0]["first"], group["kendall"][0]["second"]
        oriented = {}
        for key in (first, second):
            rows = profile[(profile["group"] == group["name"]) & (profile["measure"] == key)].set_index("system")
            oriented[key] = rows["value"] * (1 if rows["orientation"].iloc[0] == "higher" else -1)
        shared = oriented[first].index.intersection(oriented[second].index)
        tau = stats.kendalltau(oriented[first][shared], oriented[second][shared]).statistic
        assert group["kendall"][0]["tau"] == pytest.approx(tau) or (np.isnan(tau) and group["kendall"][0]["tau"] is None)
    assert len(document["reading"]) == 6 and all(paragraph.split(" (")[0] for paragraph in document["reading"])


def test_editing_one_branch_reruns_that_branch_and_the_profile(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["sentiment"]["epsilon"]["stop"] = 12
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE))
    assert jobs == with_profile({"robustness_statistics": "5", "robustness_tables": "3", "robustness_comparisons": "1", "gamma_curves": "1",
                                 "all": "1", "total": "11"})  # the four classifiers trained here and the Hugging Face one
    # the profile's own setting reruns the profile only
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["robustness_profile"]["families"] = {"word_order": "faithfulness"}
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE))
    assert jobs == with_profile({"all": "1", "total": "1"})
