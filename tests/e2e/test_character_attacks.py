"""The character-attack branches in the shared small run (paper 002), checked by value.

* System robustness: attacked sources are perturbed test sets, translated and scored like any other.
* Metric robustness: WMT19 references attacked, outputs scored, DARR tau recomputed here from the
  workflow's intermediate files with sacrebleu directly and a plain loop over the judgements.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import yaml

from tests.e2e.workflow_runner import run_workflow, small_config

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

FAMILY = "character_attacks"
FUNCTIONS = ["keyboard-p0.3", "visual-p0.3"]
CONDITIONS = ["clean", "disemvowel-p0.3", "visual-p0.3"]
PAIRS = ["lt-en", "gu-en"]


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def _rules(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"^(\w+)\s+(\d+)$", stdout, flags=re.M))


def test_attacked_sources_keep_tokens_and_references(finished_run: Path) -> None:
    for function in FUNCTIONS:
        derived = read(finished_run / f"results/testsets/perturbed/{FAMILY}/{function}/pooled.tsv")
        assert len(derived) == 12 * 4  # every sampled segment is kept: an attack always applies
        for row in derived.itertuples():
            original, attacked = row.original_source.split(" "), row.source.split(" ")
            assert len(original) == len(attacked)  # no token added or removed, whitespace untouched
            assert row.perturbed_reference == row.reference  # the source alone is attacked
        for system in ("apertium-en-es-fr", "convs2s-tatoeba"):
            translations = (finished_run / f"results/translations/{system}/perturbed/{FAMILY}/{function}/pooled.txt").read_text(encoding="utf-8")
            assert translations.count("\n") == len(derived)
    rates = pd.read_csv(finished_run / f"results/tables/perturbations/{FAMILY}/attack_rates.csv").set_index("function")
    visual = read(finished_run / f"results/testsets/perturbed/{FAMILY}/visual-p0.3/pooled.tsv")
    pieces = [(a, b) for row in visual.itertuples() for a, b in zip(row.original_source.split(" "), row.source.split(" ")) if a]
    assert rates.at["visual-p0.3", "word_rate"] == pytest.approx(sum(a != b for a, b in pieces) / len(pieces))
    assert abs(rates.at["visual-p0.3", "character_rate"] - 0.3) < 0.08 and rates.at["keyboard-p0.3", "p"] == 0.3
    # p as paper 002's files have it: keyboard changes ceil(p · tokens) of each sentence's Zeroe tokens
    # (punctuation included), one key typo at a lowercase letter each; visual 30 % of the letters, only letters
    keyboard = read(finished_run / f"results/testsets/perturbed/{FAMILY}/keyboard-p0.3/pooled.tsv")
    words = [(a, b) for row in keyboard.itertuples() for a, b in zip(row.original_source.split(" "), row.source.split(" ")) if a]
    assert rates.at["keyboard-p0.3", "unit"] == "tokens" and 0.3 <= rates.at["keyboard-p0.3", "unit_rate"] < 0.36
    assert rates.at["keyboard-p0.3", "word_rate"] == pytest.approx(sum(a != b for a, b in words) / len(words))
    assert all(x == y or x.islower() for a, b in words if a != b for x, y in zip(a, b))  # key typos at lowercase letters
    assert abs(rates.at["visual-p0.3", "unit_rate"] - 0.3) < 0.03 and rates.at["visual-p0.3", "unit"] == "letters"
    for function in FUNCTIONS:  # beside the paper's rate on its own references
        assert abs(rates.at[function, "word_rate"] - rates.at[function, "paper_word_rate"]) < 0.08, function
    assert all(x == y or (x.isalpha() and ord(y) > 127) for a, b in pieces if a != b for x, y in zip(a, b))
    means = pd.read_csv(finished_run / f"results/tables/perturbations/{FAMILY}/bleu/means.csv")
    assert set(means["function"]) == set(FUNCTIONS)
    assert np.allclose(means["beta1"], means["beta2"])  # references are not attacked


def test_attacked_references_are_seeded_and_rates_reported(finished_run: Path) -> None:
    clean = read(finished_run / "results/metric_robustness/references/clean.tsv")
    assert (clean["reference"] == clean["original"]).all() and set(clean["pair"]) == set(PAIRS)
    for condition in CONDITIONS[1:]:
        attacked = read(finished_run / f"results/metric_robustness/references/{condition}.tsv")
        assert list(attacked["original"]) == list(clean["original"])
        assert all(len(a.split(" ")) == len(b.split(" ")) for a, b in zip(attacked["reference"], attacked["original"]))
        assert (attacked["reference"] != attacked["original"]).mean() > 0.5
    rates = pd.read_csv(finished_run / "results/tables/metric_robustness/attack_rates.csv")
    visual = rates[rates["attack"] == "visual"].iloc[0]
    assert abs(visual["character_rate"] - 0.3) < 0.08  # p = 0.3 of the non-space characters
    unknown = pd.read_csv(finished_run / "results/tables/metric_robustness/unknown_tokens.csv")
    average = unknown[unknown["pair"] == "average"].set_index("attack")["unknown_tokens"]
    assert average["visual"] > average["none"]


def test_tau_table_matches_independent_computation(finished_run: Path) -> None:
    """sentBLEU tau per pair and condition: sacrebleu on the judged outputs, then concordant/discordant by hand."""
    tau = pd.read_csv(finished_run / "results/tables/metric_robustness/tau.csv", keep_default_na=False)
    checked = 0
    for pair in PAIRS:
        darr = read(finished_run / f"results/metric_robustness/darr/{pair}.tsv")
        outputs = read(finished_run / f"results/metric_robustness/hypotheses/{pair}.tsv").set_index(["system", "sid"])["hypothesis"]
        for condition in CONDITIONS:
            references = read(finished_run / f"results/metric_robustness/references/{condition}.tsv")
            reference = references[references["pair"] == pair].set_index("sid")["reference"]
            concordant = discordant = 0
            for row in darr.itertuples():
                better = sacrebleu.sentence_bleu(outputs[(row.better, row.sid)], [reference[row.sid]]).score
                worse = sacrebleu.sentence_bleu(outputs[(row.worse, row.sid)], [reference[row.sid]]).score
                concordant, discordant = (concordant + 1, discordant) if better > worse else (concordant, discordant + 1)
            expected = (concordant - discordant) / (concordant + discordant)
            value = tau[(tau["pair"] == pair) & (tau["condition"] == condition) & (tau["metric"] == "bleu")]["tau"].item()
            assert value == pytest.approx(expected, abs=1e-6), (pair, condition)
            checked += 1
    assert checked == len(PAIRS) * len(CONDITIONS)
    best = pd.read_csv(finished_run / "results/tables/metric_robustness/best_layers.csv")
    layers = pd.read_csv(finished_run / "results/tables/metric_robustness/tau_by_layer.csv", keep_default_na=False)
    for row in best.itertuples():  # chosen on the other pair's clean references
        other = layers[(layers["pair"] != row.pair) & (layers["condition"] == "clean") & (layers["layer"] != "mean")]
        assert int(other.loc[other["tau"].idxmax(), "layer"]) == row.best_layer


def test_metric_consistency_uses_the_engine_with_conditions_as_domains(finished_run: Path) -> None:
    summary = read(finished_run / "results/metric_robustness/robustness/bleu.summary.tsv")
    whole = summary[(summary["method"] == "pool") & (summary["left_out"] == "none")].iloc[0]
    tau = pd.read_csv(finished_run / "results/tables/metric_robustness/tau.csv", keep_default_na=False)
    agreement = read(finished_run / "results/metric_robustness/agreement.tsv")
    pooled = agreement.groupby("condition", sort=False)["bleu"].apply(lambda values: values.astype(float).mean())
    assert list(pooled.index) == CONDITIONS
    assert float(whole["mean"]) == pytest.approx(pooled.mean(), abs=1e-9)
    assert float(whole["variance"]) == pytest.approx(pooled.var(ddof=0), rel=1e-6, abs=1e-12)
    for pair in PAIRS:  # a pair's tau is the mean agreement of its judgements
        rows = agreement[(agreement["pair"] == pair) & (agreement["condition"] == "clean")]
        value = tau[(tau["pair"] == pair) & (tau["condition"] == "clean") & (tau["metric"] == "bertscore_first")]["tau"].item()
        assert value == pytest.approx(rows["bertscore_first"].astype(float).mean())
    table = pd.read_csv(finished_run / "results/tables/metric_robustness/robustness_pool.csv")
    assert len(table) >= 6


def test_editing_a_level_reruns_only_the_jobs_of_that_level(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["metric_robustness"]["levels"] = [0.3, 0.2]
    config["perturbations"]["families"][FAMILY]["options"]["levels"] = [0.3, 0.2]
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    planned = re.findall(r"wildcards: (.*)", result.stdout)
    attacked = [wildcards for wildcards in planned if re.search(r"\b(condition|level|function)=", wildcards) and "family=word_order" not in wildcards]
    assert attacked and all("p0.2" in wildcards for wildcards in attacked), attacked
    rules = _rules(run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml").stdout)
    assert rules["attack_references"] == "2" and rules["score_attacked_references"] == "1" and rules["perturb_testset"] == "2"
    assert "metric_darr_sample" not in rules and "parse_perturbation_sample" not in rules


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda config: config["metric_robustness"]["attacks"].update({"leetspeak": {}}), "metric_robustness.attacks.leetspeak"),
        # the others are checked in-process (tests/unit/test_bad_config.py)
    ],
)
def test_bad_attack_config_fails_before_any_job(tmp_path: Path, mirror_dir: Path, edit, key: str) -> None:
    config = small_config(mirror_dir)
    edit(config)
    result = run_workflow(tmp_path, config, "--dry-run")
    assert result.returncode != 0 and key in result.stdout, result.stdout[-2000:]
    assert not (tmp_path / "results").exists()
