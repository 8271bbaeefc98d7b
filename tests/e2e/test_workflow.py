"""The whole workflow on a small real subset (first 40 segments of each mirrored test set), checked by value.

The run is the session's shared ``finished_run`` (tests/e2e/conftest.py) of tests/config/small.yaml.

Real Apertium translations, real sacrebleu scores; every number in the tables is recomputed here
independently from the workflow's intermediate files.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import yaml

from nlp_robustness.outputs.planned_jobs import parse_dry_run
from nlp_robustness.outputs.verdict_check import check_run
from nlp_robustness.run_owner import ALLOW_KEY
from nlp_robustness.statistics.pools import csv_group
from tests.e2e.workflow_runner import TINY_CLASSIFIER, TINY_TRANSLATOR, REPOSITORY, SNAKEMAKE, run_workflow, small_config, with_profile
from tests.tools.compare_results import JOB_DETAILS_ONLY, TIMINGS_ONLY, compare_trees, report

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

MAX_SEGMENTS = 40
TESTSETS = ["wmt14", "wmt15", "iwslt17", "bio18"]
SYSTEMS = ["apertium-en-es-fr", "apertium-en-ca-fr", "convs2s-tatoeba", "copy-source", TINY_TRANSLATOR]  # the paper study's rows


@functools.cache
def sentence_bleu(workdir: Path, system: str, testset: str) -> np.ndarray:
    """Sentence BLEU recomputed from the translation file and the test-set table, straight with sacrebleu."""
    table = pd.read_csv(workdir / f"results/testsets/{testset}.tsv", sep="\t", keep_default_na=False, dtype=str)
    hypotheses = (workdir / f"results/translations/{system}/{testset}.txt").read_text(encoding="utf-8").splitlines()
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    return np.array([bleu.sentence_score(h, [r]).score for h, r in zip(hypotheses, table["reference"])])


def test_every_testset_and_translation_is_aligned(finished_run: Path) -> None:
    for testset in TESTSETS:
        table = pd.read_csv(finished_run / f"results/testsets/{testset}.tsv", sep="\t", keep_default_na=False, dtype=str)
        assert len(table) == MAX_SEGMENTS
        assert table["source"].str.len().gt(0).all() and table["reference"].str.len().gt(0).all()
        for system in SYSTEMS:
            lines = (finished_run / f"results/translations/{system}/{testset}.txt").read_text(encoding="utf-8").splitlines()
            assert len(lines) == MAX_SEGMENTS
    # the copy-source system really is the source text
    wmt14 = pd.read_csv(finished_run / "results/testsets/wmt14.tsv", sep="\t", keep_default_na=False, dtype=str)
    copied = (finished_run / "results/translations/copy-source/wmt14.txt").read_text(encoding="utf-8").splitlines()
    assert [line.strip() for line in copied] == wmt14["source"].tolist()
    # Apertium translated into French: its output differs from the source on nearly every segment
    translated = (finished_run / "results/translations/apertium-en-es-fr/wmt14.txt").read_text(encoding="utf-8").splitlines()
    assert sum(a != b for a, b in zip(translated, wmt14["source"])) >= MAX_SEGMENTS - 2


def test_pool_table_matches_independent_computation(finished_run: Path) -> None:
    table = pd.read_csv(finished_run / "results/tables/paper/bleu/robustness_pool.csv", index_col="system")
    assert list(table.index) == SYSTEMS
    for system in SYSTEMS:
        scores = {testset: sentence_bleu(finished_run, system, testset) for testset in TESTSETS}
        for left_out in ["none", *TESTSETS]:
            pool = np.concatenate([scores[t] for t in TESTSETS if t != left_out])
            mean, variance = pool.mean(), pool.var()
            assert table.at[system, f"{csv_group(left_out)}_Mean"] == pytest.approx(mean, rel=1e-5, abs=1e-4)
            assert table.at[system, f"{csv_group(left_out)}_Var"] == pytest.approx(variance, rel=1e-5, abs=1e-4)
            assert table.at[system, f"{csv_group(left_out)}_COV"] == pytest.approx(np.sqrt(variance) / mean, rel=1e-4)


def test_apertium_beats_copying_the_source(finished_run: Path) -> None:
    table = pd.read_csv(finished_run / "results/tables/paper/bleu/robustness_pool.csv", index_col="system")
    assert table.at["apertium-en-es-fr", "whole_pool_Mean"] > table.at["copy-source", "whole_pool_Mean"]
    assert table.at["apertium-en-ca-fr", "whole_pool_Mean"] > table.at["copy-source", "whole_pool_Mean"]
    means = pd.read_csv(finished_run / "results/tables/paper/chrf/testset_means.csv", index_col="system")
    assert (means.loc["apertium-en-es-fr"] > means.loc["copy-source"]).all()


@pytest.mark.parametrize("method", ["bagging", "design_bagging"])
def test_blocks_are_auditable_and_drive_the_bagged_tables(finished_run: Path, method: str) -> None:
    table = pd.read_csv(finished_run / f"results/tables/paper/bleu/robustness_{method}.csv", index_col="system")
    scores = {
        system: {testset: sentence_bleu(finished_run, system, testset) for testset in TESTSETS} for system in SYSTEMS
    }
    all_blocks = pd.read_csv(finished_run / "results/blocks/domains/paper.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert list(all_blocks.columns) == ["method", "left_out", "block", "domain", "unit_id"]
    all_blocks["block"] = all_blocks["block"].astype(int)
    for left_out in ["none", *TESTSETS]:
        members = [t for t in TESTSETS if t != left_out]
        pool_size = MAX_SEGMENTS * len(members)
        block_size = int(np.floor(0.6 * pool_size + 0.5))
        blocks = all_blocks[(all_blocks["method"] == method) & (all_blocks["left_out"] == left_out)]
        assert sorted(blocks["block"].unique()) == list(range(1, 31))
        assert set(blocks["domain"]) <= set(members)
        sizes = blocks.groupby("block").apply(lambda block: block[["domain", "unit_id"]].drop_duplicates().shape[0])
        assert (sizes == block_size).all() and (blocks.groupby("block").size() == block_size).all()
        if method == "design_bagging":
            frequency = blocks.groupby(["domain", "unit_id"]).size()
            assert len(frequency) == pool_size  # b * M >= N: every segment is used
            assert frequency.max() - frequency.min() <= 1
        for system in SYSTEMS:
            lookup = {(t, str(i + 1)): value for t in members for i, value in enumerate(scores[system][t])}
            values = np.array([lookup[key] for key in zip(blocks["domain"], blocks["unit_id"])]).reshape(30, block_size)
            mean, variance = values.mean(axis=1).mean(), values.var(axis=1).mean()
            assert table.at[system, f"{csv_group(left_out)}_Mean"] == pytest.approx(mean, rel=1e-5, abs=1e-4)
            assert table.at[system, f"{csv_group(left_out)}_Var"] == pytest.approx(variance, rel=1e-5, abs=1e-4)
            assert table.at[system, f"{csv_group(left_out)}_COV"] == pytest.approx(np.sqrt(variance) / mean, rel=1e-4)


def test_gamma_curves_follow_algorithm_4(finished_run: Path) -> None:
    for system in SYSTEMS:
        gamma = pd.read_csv(finished_run / f"results/robustness/paper/bleu/{system}.gamma.tsv", sep="\t", keep_default_na=False)
        assert set(gamma["epsilon"]) == set(range(1, 101))
        assert (gamma["gamma"] <= 1 + 1e-9).all() and (gamma["gamma"] >= 0).all()
        pool = np.concatenate([sentence_bleu(finished_run, system, t) for t in TESTSETS])
        mu, sigma2 = pool.mean(), pool.var(ddof=1)
        whole = gamma[(gamma["left_out"] == "none") & (gamma["method"] == "pool")].set_index("epsilon")
        for epsilon in (1, 5, 20, 50):
            expected = (1 - np.mean(np.abs(pool - mu) < epsilon)) * epsilon**2 / sigma2
            assert whole.at[epsilon, "gamma"] == pytest.approx(expected, rel=1e-4, abs=1e-6)


# --------------------------------------------------------------------------------------------
# sentiment branch (real reviews, full size)
# --------------------------------------------------------------------------------------------

ACL_DOMAINS = ["books", "dvd", "electronics", "kitchen_&_housewares"]


def sentiment_predictions(workdir: Path, classifier: str) -> pd.DataFrame:
    return pd.read_csv(workdir / f"results/sentiment/predictions/{classifier}.tsv", sep="\t", keep_default_na=False,
                       dtype={"review_id": str})


def test_sentiment_classifiers_are_tested_on_every_domain(finished_run: Path) -> None:
    reviews = pd.read_csv(finished_run / "results/datasets/amazon-sentiment-acl.tsv", sep="\t", keep_default_na=False, dtype=str)
    reviews["document"] = [f"{t}\n{r}" if t else r for t, r in zip(reviews["title"], reviews["review_text"])]
    documents = reviews.set_index("review_id")["document"]
    accuracy = pd.read_csv(finished_run / "results/tables/sentiment/accuracy.csv", index_col="classifier")
    assert list(accuracy.index) == [*ACL_DOMAINS, TINY_CLASSIFIER]  # trained here, then the models (tests/e2e/test_huggingface.py)
    for classifier in ACL_DOMAINS:
        training = json.loads((finished_run / f"results/sentiment/models/{classifier}/training.json").read_text())
        split = pd.read_csv(finished_run / f"results/sentiment/models/{classifier}/split.tsv", sep="\t", dtype=str)
        predictions = sentiment_predictions(finished_run, classifier)
        held_out = predictions[predictions["test_domain"] == classifier]
        assert set(held_out["source"]) == {"held-out"}
        assert set(held_out["review_id"]) == set(split.loc[split["split"] == "validation", "review_id"])
        assert len(held_out) == training["validation_reviews"] and 290 <= len(held_out) <= 310
        # no test review was seen in training
        seen = set(documents[split["review_id"]])
        cross = predictions[predictions["source"] == "cross-domain"]
        assert not set(documents[cross["review_id"]]) & seen
        assert set(cross["test_domain"]) == set(ACL_DOMAINS) - {classifier}
        # accuracies recomputed from the predictions; floors: see tests/unit/test_sentiment.py
        by_domain = predictions.groupby("test_domain")["correct"].mean() * 100
        for domain in ACL_DOMAINS:
            assert accuracy.at[classifier, domain] == pytest.approx(by_domain[domain], abs=1e-4)
        assert accuracy.at[classifier, "validation_accuracy"] == pytest.approx(by_domain[classifier], abs=1e-4)
        assert by_domain[classifier] >= 76
        assert by_domain.drop(classifier).min() >= 66


def test_sentiment_tables_match_independent_computation(finished_run: Path) -> None:
    from nlp_robustness.sampling import block_size, rng_for
    from nlp_robustness.statistics.bagging import bagging_blocks, design_bagging_blocks

    tables = {method: pd.read_csv(finished_run / f"results/tables/sentiment/robustness_{method}.csv", index_col=0)
              for method in ("pool", "bagging", "design_bagging")}
    assert tables["pool"].index.name == "classifier (training domain or model)"
    assert list(tables["pool"].index) == [*ACL_DOMAINS, TINY_CLASSIFIER]
    for classifier in ACL_DOMAINS:
        predictions = sentiment_predictions(finished_run, classifier)
        for left_out in ["none", *ACL_DOMAINS]:
            members = [domain for domain in ACL_DOMAINS if domain != left_out]
            pool = predictions[predictions["test_domain"].isin(members)].reset_index(drop=True)
            accuracies = pool.groupby("test_domain")["correct"].mean().to_numpy() * 100
            expected = {"pool": (accuracies.mean(), accuracies.var())}
            for method, draw in (("bagging", bagging_blocks), ("design_bagging", design_bagging_blocks)):
                blocks = draw(len(pool), block_size(len(pool), 0.6), 30, rng_for(0, "sentiment", method, left_out))
                means, variances = [], []
                for members_ in blocks:
                    block = pool.iloc[members_].groupby("test_domain")["correct"].mean().to_numpy() * 100
                    means.append(block.mean())
                    variances.append(block.var())
                expected[method] = (np.mean(means), np.mean(variances))
            for method, (mean, variance) in expected.items():
                row = tables[method].loc[classifier]
                assert row[f"{csv_group(left_out)}_Mean"] == pytest.approx(mean, rel=1e-5)
                assert row[f"{csv_group(left_out)}_Var"] == pytest.approx(variance, rel=1e-4, abs=1e-4)
                assert row[f"{csv_group(left_out)}_COV"] == pytest.approx(np.sqrt(variance) / mean, rel=1e-4)
    markdown = (finished_run / "results/tables/sentiment/robustness_design_bagging.md").read_text(encoding="utf-8")
    assert markdown.startswith("| classifier (training domain or model) |") and "100*Var/Mean" in markdown and "(paper Table 6)" in markdown
    latex = (finished_run / "results/tables/sentiment/robustness_pool.tex").read_text(encoding="utf-8")
    assert r"\multicolumn{3}{c}{without kitchen\_\&\_housewares}" in latex and r"\multicolumn{3}{c}{whole pool}" in latex
    assert (finished_run / "results/figures/sentiment/gamma_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------------------------
# human judgements (real WMT'21 MQM scores and system outputs)
# --------------------------------------------------------------------------------------------

HUMAN_SYSTEMS = ["Facebook-AI", "HuaweiTSC", "NVIDIA-NeMo", "Online-W", "UEdin", "VolcTrans-AT", "VolcTrans-GLAT", "eTranslation"]


def human_segments(workdir: Path, domain: str) -> pd.DataFrame:
    return pd.read_csv(workdir / f"results/human/wmt21-mqm/segments/{domain}.tsv", sep="\t", keep_default_na=False,
                       dtype={"segment_id": str})


def test_human_segments_join_outputs_and_published_scores(finished_run: Path, mirror_dir: Path) -> None:
    from nlp_robustness.data.mqm import read_mqm_segment_scores

    news, ted = human_segments(finished_run, "news"), human_segments(finished_run, "ted")
    assert news.groupby("system", sort=False).size().to_dict() == dict.fromkeys(HUMAN_SYSTEMS, 527)
    assert ted.groupby("system", sort=False).size().to_dict() == dict.fromkeys(HUMAN_SYSTEMS, 529)
    published = read_mqm_segment_scores(
        str(mirror_dir / "wmt21-news-humaneval/google-mqm/newstest2021/ende/mqm_newstest2021_ende.avg_seg_scores.tsv")
    ).set_index(["system", "segment_id"])["mqm"]
    nemo = news[news["system"] == "NVIDIA-NeMo"]
    assert np.allclose(nemo["human"], [published[("Nemo", segment)] for segment in nemo["segment_id"]])
    outputs = (mirror_dir / "wmt21-news-humaneval/txt/system-outputs/newstest2021.en-de.hyp.NVIDIA-NeMo.de").read_text(
        encoding="utf-8").split("\n")
    assert nemo["hypothesis"].tolist() == [outputs[int(segment) - 1] for segment in nemo["segment_id"]]
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    for _, row in ted.sample(20, random_state=0).iterrows():
        assert row["bleu"] == pytest.approx(bleu.sentence_score(row["hypothesis"], [row["reference"]]).score, abs=1e-4)


def test_human_rankings_and_agreement_follow_the_segment_scores(finished_run: Path) -> None:
    from scipy import stats

    pooled = pd.concat([human_segments(finished_run, "news"), human_segments(finished_run, "ted")])
    rankings = pd.read_csv(finished_run / "results/tables/human/wmt21-mqm/rankings.csv", index_col="system")
    assert list(rankings.index) == HUMAN_SYSTEMS
    means = pooled.groupby("system")[["bleu", "human"]].mean()
    for system in HUMAN_SYSTEMS:
        assert rankings.at[system, "mean_bleu"] == pytest.approx(means.at[system, "bleu"], abs=1e-5)
        assert rankings.at[system, "mean_human"] == pytest.approx(means.at[system, "human"], abs=1e-5)
        gamma = pd.read_csv(finished_run / f"results/human/wmt21-mqm/robustness/human/{system}.gamma.tsv",
                            sep="\t", keep_default_na=False)
        whole = gamma[(gamma["left_out"] == "none") & (gamma["method"] == "pool")]
        assert rankings.at[system, "mean_gamma_human"] == pytest.approx(whole["gamma"].mean(), rel=1e-12)
    assert rankings["mean_bleu_rank"].tolist() == stats.rankdata(-rankings["mean_bleu"], method="min").astype(int).tolist()
    assert rankings["mean_gamma_human_rank"].tolist() == stats.rankdata(rankings["mean_gamma_human"], method="min").astype(int).tolist()
    agreement = pd.read_csv(finished_run / "results/tables/human/wmt21-mqm/agreement.csv").set_index(["ranking", "reference"])
    row = agreement.loc[("mean_bleu", "mean_human")]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(rankings["mean_bleu"], rankings["mean_human"]).statistic, abs=1e-4)
    assert row["position_agreement"] == pytest.approx(100 * np.mean(rankings["mean_bleu_rank"] == rankings["mean_human_rank"]))
    assert 0 <= row["p_value"] <= 1
    pairwise = pd.read_csv(finished_run / "results/tables/human/wmt21-mqm/pairwise.csv")
    assert len(pairwise) == 28
    agrees = pairwise["mean_gamma_bleu_point_agrees"].mean() * 100
    assert agreement.loc[("mean_gamma_bleu", "mean_gamma_human"), "pairwise_agreement"] == pytest.approx(agrees)
    # cross-domain consistency: leaving out news leaves the TED segments alone
    table = pd.read_csv(finished_run / "results/tables/human/wmt21-mqm/bleu/robustness_pool.csv", index_col="system")
    ted = human_segments(finished_run, "ted").groupby("system")["bleu"]
    for system in HUMAN_SYSTEMS:
        assert table.at[system, "without_news_Mean"] == pytest.approx(ted.mean()[system], abs=1e-4)
        assert table.at[system, "without_news_Var"] == pytest.approx(ted.apply(lambda v: np.var(v.to_numpy()))[system], rel=1e-4)
    assert (finished_run / "results/figures/human/wmt21-mqm/gamma_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reports_are_written_in_every_format(finished_run: Path) -> None:
    for metric in ("bleu", "chrf"):
        for method in ("pool", "bagging", "design_bagging"):
            markdown = (finished_run / f"results/tables/paper/{metric}/robustness_{method}.md").read_text(encoding="utf-8")
            latex = (finished_run / f"results/tables/paper/{metric}/robustness_{method}.tex").read_text(encoding="utf-8")
            for system in SYSTEMS:
                assert system in markdown and system.replace("_", r"\_") in latex
            assert "Mean (without iwslt17)" in markdown and r"\multicolumn{3}{c}{without bio18}" in latex
            assert "Mean (whole pool)" in markdown and "without none" not in markdown
        assert (finished_run / f"results/figures/paper/{metric}/gamma_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (finished_run / f"results/figures/paper/{metric}/gamma_curves.pdf").read_bytes()[:5] == b"%PDF-"
    report = (finished_run / "results/translations/apertium-en-ca-fr/wmt14.report.json").read_text(encoding="utf-8")
    assert '"segments": 40' in report


def test_every_verdict_interval_and_holm_p_agree(finished_run: Path) -> None:
    """One truth (issue 52): in every table of the run, a verdict, its Holm-adjusted interval and its Holm p say
    the same; no zero difference is separated; every claim of the profile's reading is in its verdict rows."""
    assert check_run(finished_run, 0.05) == []


#: More cores than any job of the small run asks for: a dry run given this many shows each job's threads as its rule
#: declares them (Snakemake scales a job's threads down to --cores).
AMPLE_CORES = 64


def _threaded_jobs(output: str) -> list[tuple[str, tuple[str, ...]]]:
    """The jobs of a dry run (without --quiet) that Snakemake plans with more than one thread: (rule, outputs) each."""
    return [(job.rule, job.outputs) for job in parse_dry_run(output) if job.threads > 1]


def test_the_jobs_that_could_see_the_core_count_give_the_same_bytes_on_one_core(finished_run: Path, tmp_path: Path) -> None:
    """Same config, same results, for any --cores (docs/reliability.md, "Determinism"), checked where --cores can
    reach a job's outputs, on a copy of the shared run (made with --cores 2).

    A job sees --cores only through its threads, which Snakemake scales down to --cores: ``snakemake.threads`` and
    the thread variables it sets for the job (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` ...);
    no rule or script reads the core count otherwise (``resources._cores``, ``os.cpu_count``), and job order and
    concurrency do not enter a job's outputs (each reads only its declared inputs). A job planned with one thread
    gets one at any --cores. So the jobs rerun are those a dry run plans with more than one thread (the rules'
    ``threads:`` evaluated on this config, a rule added later included): in the small run fairseq_training_data
    (fairseq-preprocess's ``--workers``), fairseq_train (torch's threads fixed by ``cpu_threads``, Snakemake's
    scaled), metric_consistency (the resampling's thread pool) and score_attacked_references (BERTScore, torch's
    threads fixed by ``metric_robustness.bertscore.threads``); the Hugging Face systems of the tests run on one
    thread (``cpu_threads: 1``). Each is forced with --cores 1; it must run, rewrite its outputs, and leave every
    file under results/ as the shared run wrote it (``tests.tools.compare_results``: timing files in their
    timings only, fairseq-preprocess's log in its staging folder and worker count only). Jobs after them read
    the same bytes, so they would write the same bytes: they are not rerun.
    """
    copy = tmp_path / "one-core"
    shutil.copytree(finished_run, copy, symlinks=True)  # file times kept: the copy is a finished run too
    config = yaml.safe_load((copy / "config.yaml").read_text(encoding="utf-8"))
    planned = run_workflow(copy, config, "--dry-run", "--forceall", cores=AMPLE_CORES)
    assert planned.returncode == 0, planned.stdout[-3000:]
    threaded = _threaded_jobs(planned.stdout)
    assert threaded, "no job of the small run is planned with more than one thread: there would be nothing to check"
    outputs = [path for _, paths in threaded for path in paths]
    assert all(path.startswith("results/") for path in outputs), outputs  # all of them compared below
    # their outputs as targets (not `all`): only they run, not the jobs after them (`--until <rules>` instead left
    # fairseq_train unscheduled in Snakemake 9.27: "Out of jobs ready to be started"). The shared run's directory may
    # belong to another config of the tests by now (test_perturbations.py runs one there): the key lets this run
    # replace its files, and changes no result (nlp_robustness.run_owner)
    rerun = run_workflow(copy, config, *outputs, "--forcerun", *sorted({rule for rule, _ in threaded}),
                         "--config", f"{ALLOW_KEY}=True", cores=1)
    assert rerun.returncode == 0, rerun.stdout[-5000:]
    ran = Counter(re.findall(r"^Finished jobid: \d+ \(Rule: (\w+)\)$", rerun.stdout, flags=re.MULTILINE))
    assert ran == Counter(rule for rule, _ in threaded), rerun.stdout[-5000:]  # each of them, and nothing else
    for path in outputs:
        assert (copy / path).stat().st_mtime_ns != (finished_run / path).stat().st_mtime_ns, f"{path} was not rewritten"
    comparison = compare_trees(finished_run / "results", copy / "results")
    assert not (comparison.only_before or comparison.only_after or comparison.tables), report(comparison)
    assert set(comparison.others.values()) <= {TIMINGS_ONLY, JOB_DETAILS_ONLY}, report(comparison)


def _planned_jobs(output: str) -> dict[str, list[dict[str, str]]]:
    """Jobs of a dry run (without --quiet): rule -> the wildcards of each of its jobs."""
    jobs: dict[str, list[dict[str, str]]] = {}
    for block in output.split("\nrule ")[1:] + output.split("\nlocalrule ")[1:]:
        rule = block.split(":", 1)[0].strip()
        match = re.search(r"wildcards: (.*)", block)
        wildcards = dict(item.split("=", 1) for item in match.group(1).split(", ")) if match else {}
        jobs.setdefault(rule, []).append(wildcards)
    return jobs


def test_editing_the_bagging_fraction_reruns_only_what_it_touches(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["robustness"]["bagging"]["fraction"] = 0.5
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    # the blocks and everything measured on them, in all three branches; no translation, score or model
    assert {rule: len(jobs) for rule, jobs in _planned_jobs(result.stdout).items()} == with_profile({
        # every study's rows (MT: paper 10, WMT22 de-fr 12; sentiment 5; human: MQM 8 x 3 scores, de-en 10 x 3 + 10 x 2
        # on every segment, ja-en 14 x 3 = 116; perturbation families 24, Natural Robustness 13), tables (6 + 6 + 3 +
        # 33: the human studies' 3 + 5 + 3 score tables in 3 methods each, + 18 + 3), comparisons (one per score table)
        # and gamma figures (2 + 2 + 1 + 3 + 6 + 1)
        "study_blocks": 15, "robustness_statistics": 180, "robustness_tables": 69, "robustness_comparisons": 23, "gamma_curves": 15,
        "human_rankings": 3,
        "all": 1})
    # the metric-robustness study draws its own blocks (metric_robustness.bagging): untouched


def test_editing_the_sentiment_classifier_reruns_only_the_sentiment_branch(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["sentiment"]["classifier"]["c_grid"] = [1, 10]
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE))
    # the classifiers, and their Natural Robustness (the reviews they all answer, the perturbed reviews, their
    # responses, the scores and the consistency of the classifiers' rows); no MT job
    # (robustness statistics, tables and gamma figures: the sentiment study's 4 + 3 + 1, Natural Robustness's 5 + 3 + 1:
    # the Hugging Face classifier's predictions stay, its responses to the re-drawn reviews follow)
    assert jobs == with_profile({"sentiment_train": "4", "sentiment_evaluate": "4", "study_blocks": "5", "robustness_statistics": "9",
                    "robustness_tables": "6", "robustness_comparisons": "2", "sentiment_accuracy_table": "1", "gamma_curves": "2",
                    "natural_review_records": "1", "perturb_reviews": "5", "natural_responses_sentiment": "4",
                    "natural_responses_sentiment_model": "1", "natural_robustness_scores": "1", "natural_robustness_tables": "1",
                    "natural_robustness_figure": "1", "all": "1", "total": "48"})
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["sentiment"]["leave_out"] = ["dvd"]
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE))
    # the four classifiers trained here and the Hugging Face one, each on its own blocks
    assert jobs == with_profile({"study_blocks": "5", "robustness_statistics": "5", "robustness_tables": "3", "robustness_comparisons": "1",
                                 "gamma_curves": "1", "all": "1", "total": "16"})


def test_a_rerun_with_the_same_config_does_nothing(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Nothing to be done" in result.stdout and _planned_jobs(result.stdout) == {}


def test_reordering_keys_or_writing_out_a_default_reruns_nothing(finished_run: Path) -> None:
    """Params are compared by their repr: the planned config is canonical (records' keys sorted, defaults filled)."""
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    train_args = config["systems"]["convs2s-tatoeba"]["training"]["train_args"]
    dropout, optimizer = train_args.pop("dropout"), train_args.pop("optimizer")
    train_args["optimizer"], train_args["dropout"] = optimizer, dropout  # two keys swapped
    classifier = config["sentiment"]["classifier"]
    assert classifier.pop("sublinear_tf") is True  # equals its schema default
    config["sentiment"]["classifier"] = dict(reversed(list(classifier.items())))
    config["robustness"] = dict(reversed(list(config["robustness"].items())))
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Nothing to be done" in result.stdout and _planned_jobs(result.stdout) == {}, result.stdout[-3000:]
    # a real change still reruns: the order of the systems is the order of the tables' rows
    config["systems"] = dict(reversed(list(config["systems"].items())))
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    assert "robustness_tables" in result.stdout and "translate_apertium" not in result.stdout, result.stdout[-3000:]


def test_changing_one_system_reruns_only_its_jobs(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["systems"]["apertium-en-ca-fr"]["mark_unknown"] = True
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    jobs = _planned_jobs(result.stdout)
    # its translations of the test sets, of the 13 perturbed test sets (6 word-order, 2 attacked, 2 natural,
    # 2 paraphrased, 1 restructured: one job per family, translation_jobs per_family(_joint); the last three
    # families write no beta reports, so only their responses follow), of the one identity test set the three
    # Natural Robustness families share (in the natural family's job), of the control test set of each type with
    # few perturbations (one translate_apertium job each), and what is measured on them
    families = ("word_order", "character_attacks", "natural", "paraphrase", "structure")
    controls = [path for path in (finished_run / "results/testsets/perturbed").glob("*/*/identity/*.tsv")
                if len(path.read_text(encoding="utf-8").splitlines()) > 1]  # an empty control is not translated
    assert {rule: len(items) for rule, items in jobs.items()} == with_profile({
        # robustness statistics: its rows in the MT (2), perturbation (6) and Natural Robustness (2) studies; every
        # table (6 + 18 + 3) and gamma figure (2 + 6 + 1) of those studies
        "translate_apertium": 4 + len(controls), **{f"translate_apertium_{family}": 1 for family in families},
        "score_sentences": 4, "score_sentences_word_order": 1, "score_sentences_character_attacks": 1,
        "robustness_statistics": 10, "robustness_tables": 27, "robustness_comparisons": 9,
        "testset_means": 2, "corpus_scores": 1, "gamma_curves": 9, "perturbation_scores_word_order": 1, "perturbation_scores_character_attacks": 1,
        "perturbation_tables": 6, "perturbation_figures": 6, "natural_responses_mt": 1, "natural_robustness_scores": 1,
        "natural_robustness_tables": 1, "natural_robustness_figure": 1, "all": 1})
    for rule in ("translate_apertium", *(f"translate_apertium_{family}" for family in families), "score_sentences",
                 "score_sentences_word_order", "perturbation_scores_word_order", "natural_responses_mt"):
        assert {job["system"] for job in jobs[rule]} == {"apertium-en-ca-fr"}
    assert {job["study_row"].rsplit("/", 1)[1] for job in jobs["robustness_statistics"]} == {"apertium-en-ca-fr"}


def test_adding_a_testset_reruns_its_jobs_and_the_pooled_ones(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["testsets"]["tatoeba"] = {"dataset": "tatoeba-v2021-08-07-enfr", "domain": "everyday"}
    config["mt_studies"]["paper"]["testsets"].append("tatoeba")
    del config["systems"]["copy-source"]  # its files cover the four old test sets only
    for family in ("word_order", "character_attacks", "natural", "paraphrase", "structure"):
        config["perturbations"]["families"][family]["testsets"] = TESTSETS  # (default: every test set)
    result = run_workflow(finished_run, config, "--dry-run", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    jobs = _planned_jobs(result.stdout)
    assert {rule: len(items) for rule, items in jobs.items()} == with_profile({
        "prepare_testset": 1, "translate_apertium": 2, "translate_fairseq": 1, "translate_huggingface": 1, "score_sentences": 4,
        "study_blocks": 1, "robustness_statistics": 8, "robustness_tables": 6, "robustness_comparisons": 2, "testset_means": 2,
        "corpus_scores": 1, "gamma_curves": 2, "all": 1})
    # only the new test set is translated and scored; the other test sets' translations stand
    for rule in ("prepare_testset", "translate_apertium", "translate_fairseq", "translate_huggingface", "score_sentences"):
        assert {job["testset"] for job in jobs[rule]} == {"tatoeba"}


def test_editing_the_human_ranking_reruns_only_the_rankings_and_the_profile(finished_run: Path) -> None:
    config = yaml.safe_load((finished_run / "config.yaml").read_text(encoding="utf-8"))
    config["human_studies"]["wmt21-mqm"]["ranking"] = {"gamma": "at", "gamma_at": {"human": 2, "bleu": 10, "chrf": 10}}
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    assert result.returncode == 0, result.stdout[-3000:]
    assert dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE)) == with_profile({
        "human_rankings": "1", "all": "1", "total": "2"})
    config["human_studies"]["wmt21-mqm"]["epsilon"]["stop"] = 20
    result = run_workflow(finished_run, config, "--dry-run", "--quiet", "rules", config_name="edited.yaml")
    assert dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout, flags=re.MULTILINE)) == with_profile({
        "robustness_statistics": "8", "robustness_tables": "3", "robustness_comparisons": "1", "human_rankings": "1", "gamma_curves": "1",
        "metric_consistency": "1", "all": "1", "total": "16"})  # the meta-evaluation's gamma area uses the human epsilon


def test_a_run_killed_mid_job_reruns_to_identical_results(
    wait_for_finished_run: Callable[[], Path], tmp_path: Path, mirror_dir: Path, tiny_models: Path
) -> None:
    """SIGKILL to the whole run while a classifier trains; unlock, rerun: the same files as an uninterrupted
    run, and no temporary file of the killed job survives."""
    workdir = tmp_path / "killed"
    config = small_config(mirror_dir, tiny_models)
    targets = ["results/tables/sentiment/accuracy.csv", "results/tables/sentiment/robustness_design_bagging.csv"]
    run_workflow(workdir, config, "--dry-run", *targets)  # writes the config
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--directory", str(workdir),
               "--configfile", str(workdir / "config.yaml"), "--cores", "2", *targets]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    training_log = workdir / "logs/sentiment_train/books.log"
    deadline = time.monotonic() + 300
    while not training_log.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # inside the job: reading and splitting the reviews, training
    assert process.poll() is None, "the run ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (workdir / "results/tables/sentiment/accuracy.csv").exists()
    assert run_workflow(workdir, config, "--unlock").returncode == 0
    result = run_workflow(workdir, config, "--rerun-incomplete", *targets)
    assert result.returncode == 0, result.stdout[-3000:]
    compared = [*targets,
                *(f"results/sentiment/predictions/{classifier}.tsv" for classifier in ACL_DOMAINS),
                *(f"results/sentiment/models/{classifier}/split.tsv" for classifier in ACL_DOMAINS)]
    finished_run = wait_for_finished_run()
    for path in compared:
        assert (workdir / path).read_bytes() == (finished_run / path).read_bytes(), path
    assert not list((workdir / "results").rglob("*.part"))
