"""The word-order branch in the shared small run: perturbed test sets, pair scores and tables, checked by value.

Every number of the BLEU means table is recomputed here from the workflow's intermediate files with
sacrebleu and rapidfuzz directly (not through the package's scoring code).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import yaml
from rapidfuzz.distance import Levenshtein

from tests.e2e.workflow_runner import TINY_TRANSLATOR, run_workflow, small_config, with_profile

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

FAMILY = "word_order"
TESTSETS = ["wmt14", "wmt15", "iwslt17", "bio18"]
SYSTEMS = ["apertium-en-es-fr", "apertium-en-ca-fr", "convs2s-tatoeba", TINY_TRANSLATOR]  # the paper study's, but copy-source
SAMPLE = 12


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def functions(workdir: Path) -> list[str]:
    config = yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8"))
    return list(config["perturbations"]["families"][FAMILY]["functions"])


def test_perturbed_test_sets_permute_the_sampled_segments_and_record_every_skip(finished_run: Path) -> None:
    testsets = {name: read(finished_run / f"results/testsets/{name}.tsv") for name in TESTSETS}
    for name in TESTSETS:
        sample = read(finished_run / f"results/perturbations/{FAMILY}/samples/{name}.tsv")
        assert len(sample) == SAMPLE and set(sample["segment_id"]) <= set(testsets[name]["segment_id"])
    for function in functions(finished_run):
        derived = read(finished_run / f"results/testsets/perturbed/{FAMILY}/{function}/pooled.tsv")
        status = read(finished_run / f"results/perturbations/{FAMILY}/{function}/pooled.segments.tsv")
        assert len(status) == SAMPLE * len(TESTSETS)  # every sampled segment: kept, or skipped with a reason
        assert (status.loc[status["kept"] == "False", "reason"] != "").all()
        assert list(zip(derived["testset"], derived["segment_id"])) == list(
            zip(*status.loc[status["kept"] == "True", ["testset", "segment_id"]].to_numpy().T)
        )
        for row in derived.itertuples():
            original = testsets[row.testset].set_index("segment_id").loc[row.segment_id]
            assert row.original_source == original["source"] and row.reference == original["reference"]
            assert sorted(row.source.split(" ")) == sorted(row.source_tokens.split(" ")), (function, row.segment_id)
            assert row.source != row.source_tokens


def test_means_table_matches_independent_computation(finished_run: Path) -> None:
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    means = pd.read_csv(finished_run / f"results/tables/perturbations/{FAMILY}/bleu/means.csv")
    assert list(means["system"].unique()) == SYSTEMS and list(means["function"].unique()) == functions(finished_run)
    testsets = {name: read(finished_run / f"results/testsets/{name}.tsv").set_index("segment_id") for name in TESTSETS}
    for (system, function), row in means.set_index(["system", "function"]).iterrows():
        derived = read(finished_run / f"results/testsets/perturbed/{FAMILY}/{function}/pooled.tsv")
        status = read(finished_run / f"results/perturbations/{FAMILY}/{function}/pooled.segments.tsv")
        translations = lines(finished_run / f"results/translations/{system}/perturbed/{FAMILY}/{function}/pooled.txt")
        original = {}
        for name in TESTSETS:
            hypotheses = lines(finished_run / f"results/translations/{system}/{name}.txt")
            original.update({(name, segment_id): h for segment_id, h in zip(testsets[name].index, hypotheses)})
        beta = [bleu.sentence_score(original[(t, s)], [testsets[t].loc[s, "reference"]]).score
                for t, s in zip(derived["testset"], derived["segment_id"])]
        beta1 = [bleu.sentence_score(h, [r]).score for h, r in zip(translations, derived["reference"])]
        beta2 = [bleu.sentence_score(h, [r]).score for h, r in zip(translations, derived["perturbed_reference"])]
        alpha = [bleu.sentence_score(p, [s]).score for p, s in zip(derived["source"], derived["source_tokens"])]
        assert row["sampled"] == len(status) and row["kept"] == len(derived) == (status["kept"] == "True").sum()
        assert row["kept_fraction"] == pytest.approx(len(derived) / len(status))
        for column, values in (("beta", beta), ("beta1", beta1), ("beta2", beta2), ("alpha", alpha)):
            assert row[column] == pytest.approx(np.mean(values), abs=1e-6), (system, function, column)
        assert row["beta2_minus_beta1"] == pytest.approx(np.mean(beta2) - np.mean(beta1), abs=1e-6)
        # a flip gains more than the configured margin (sentence BLEU's noise at low scores), which the table reports
        assert row["flip_margin"] == 1.0
        assert row["flips"] == sum(b1 > b + row["flip_margin"] for b1, b in zip(beta1, beta))
        # every mean carries its segment-bootstrap interval, around it
        for column in ("beta", "beta1", "beta2", "alpha", "beta2_minus_beta1"):
            assert row[f"{column}_lo"] <= row[column] + 1e-9 and row[column] - 1e-9 <= row[f"{column}_hi"], (system, function, column)


def test_levenshtein_pair_scores_match_rapidfuzz(finished_run: Path) -> None:
    function, system = "Reversed", "convs2s-tatoeba"
    derived = read(finished_run / f"results/testsets/perturbed/{FAMILY}/{function}/pooled.tsv")
    translations = lines(finished_run / f"results/translations/{system}/perturbed/{FAMILY}/{function}/pooled.txt")
    scores = pd.read_csv(finished_run / f"results/perturbations/{FAMILY}/{function}/scores/{system}.tsv", sep="\t")
    expected = [100 * Levenshtein.normalized_similarity(h, r) for h, r in zip(translations, derived["perturbed_reference"])]
    assert scores["beta2_levenshtein"].to_numpy() == pytest.approx(expected)
    # Reversed moves every token: the perturbed source is far from the source
    assert (scores["alpha_levenshtein"] < 100).all()


def test_consistency_across_perturbations_uses_the_engine_with_functions_as_domains(finished_run: Path) -> None:
    """The pool table of beta1 with the functions as domains: every pool's mean and variance recomputed."""
    names = functions(finished_run)
    blocks = read(finished_run / f"results/blocks/perturbations/{FAMILY}.tsv")
    assert set(blocks["domain"]) == set(names) and set(blocks["left_out"]) == {"none", *names}
    pool = pd.read_csv(finished_run / f"results/tables/perturbations/{FAMILY}/bleu/robustness_pool.csv", index_col="system")
    assert list(pool.index) == SYSTEMS
    for system in SYSTEMS:
        beta1 = {
            function: pd.read_csv(finished_run / f"results/perturbations/{FAMILY}/{function}/scores/{system}.tsv", sep="\t")["beta1_bleu"].to_numpy()
            for function in names
        }
        for left_out in ["none", *names]:
            values = np.concatenate([beta1[function] for function in names if function != left_out])
            group = "whole_pool" if left_out == "none" else f"without_{left_out}"
            assert pool.at[system, f"{group}_Mean"] == pytest.approx(values.mean(), rel=1e-5, abs=1e-4)
            assert pool.at[system, f"{group}_Var"] == pytest.approx(values.var(), rel=1e-5, abs=1e-4)


def _rules(output: str) -> dict[str, str]:
    return dict(re.findall(r"^(\w+)\s+(\d+)$", output, flags=re.MULTILINE))


def test_editing_one_function_reruns_only_that_function(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["perturbations"]["families"][FAMILY]["functions"]["VerbSwaps"] = {"verb_pos": ["VERB"]}
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    planned = re.findall(r"wildcards: (.*)", result.stdout)
    per_function = [wildcards for wildcards in planned if "function=" in wildcards]
    assert per_function and all("function=VerbSwaps" in wildcards for wildcards in per_function)
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    # one perturbed test set; every system translates, scores and pair-scores the family's sets in one job
    # (translation_jobs: per_family, one start-up), so those jobs rerun for the whole family
    assert _rules(result.stdout) == with_profile({
        "perturb_testset": "1", "translate_apertium_word_order": "2", "translate_fairseq_word_order": "1",
        "translate_huggingface_word_order": "1", "score_sentences_word_order": "4", "perturbation_scores_word_order": "4",
        "study_blocks": "1", "robustness_statistics": "12",
        "robustness_tables": "9", "robustness_comparisons": "3", "gamma_curves": "3", "perturbation_tables": "3",
        "perturbation_similarity": "3", "perturbation_figures": "3", "all": "1", "total": "51",
    })


def test_a_hypotheses_system_translates_perturbed_test_sets_from_its_files(finished_run: Path) -> None:
    """A user's hypotheses files stand for the translations of perturbed test sets, one line per kept row."""
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    files = config["systems"]["copy-source"]["files"]
    for function in functions(finished_run):
        derived = read(finished_run / f"results/testsets/perturbed/{FAMILY}/{function}/pooled.tsv")
        copied = finished_run / "hypotheses" / f"{function}.txt"
        copied.parent.mkdir(exist_ok=True)
        copied.write_text("".join(f"{source}\n" for source in derived["source"]), encoding="utf-8")
        # relative to the working directory, as a user writes it (no result may name the run's directory)
        files[f"perturbed/{FAMILY}/{function}/pooled"] = str(copied.relative_to(finished_run))
    config["perturbations"]["families"][FAMILY]["systems"] = ["copy-source"]
    target = f"results/perturbations/{FAMILY}/Reversed/scores/copy-source.tsv"
    # another config in the shared run's directory, replacing its copy-source files on purpose (nlp_robustness.run_owner)
    result = run_workflow(finished_run, config, target, "--config", "allow_mixed_run_directory=True", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    # every set of the family for copy-source: its files imported, then scored and pair-scored in one job each
    # (translation_jobs: per_family)
    assert sorted(re.findall(r"^(?:local)?rule (\w+):", result.stdout, flags=re.MULTILINE)) == sorted(
        ["import_hypotheses"] * len(functions(finished_run)) + ["score_sentences_word_order", "perturbation_scores_word_order"])
    derived = read(finished_run / f"results/testsets/perturbed/{FAMILY}/Reversed/pooled.tsv")
    scores = pd.read_csv(finished_run / target, sep="\t")
    chrf = sacrebleu.metrics.CHRF()
    # the "translation" is the perturbed source itself: beta1 scores it against the reference
    assert scores["beta1_chrf"].to_numpy() == pytest.approx(
        [chrf.sentence_score(s, [r]).score for s, r in zip(derived["source"], derived["reference"])])
