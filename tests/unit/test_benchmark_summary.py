"""The benchmark summary: Snakemake's own benchmark files read into jobs, rule and branch tables, every rule of
the workflow writing one and belonging to a branch."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from snakemake.benchmark import BenchmarkRecord, print_benchmark_tsv

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.benchmark_figures import time_by_rule_figure
from nlp_robustness.outputs.benchmarks import (
    BENCHMARK_COLUMNS,
    BRANCHES,
    PERTURBATIONS,
    SCORING,
    TRANSLATION,
    benchmark_wildcards,
    branch_of,
    branch_summary,
    collect_jobs,
    job_units,
    rate_group,
    read_benchmark,
    rule_summary,
    testset_segments as segments_of_testsets,
)
from nlp_robustness.outputs.figures import plt

REPOSITORY = Path(__file__).resolve().parents[2]

PATTERNS = {
    "score_sentences": "score_sentences/{system}/{testset}.tsv",
    "translate_apertium": "translate_apertium/{system}/{testset}.tsv",
    "translate_fairseq_natural": "translate_fairseq_natural/{system}.tsv",
    "parse_perturbation_sample": "parse_perturbation_sample/{family}/{base_testset}/{side}.tsv",
    "dataset_summary": "dataset_summary.tsv",
}


def write_benchmark(path: Path, seconds: float, cpu: float, rss: float | None, repeats: int = 1) -> None:
    """A benchmark file written by Snakemake's own writer (``rss`` None: a job too short to sample)."""
    records = []
    for _ in range(repeats):
        record = BenchmarkRecord(running_time=seconds, max_rss=rss, max_vms=rss, max_uss=rss, max_pss=rss, io_in=1.5,
                                 io_out=0.25, cpu_usage=cpu, cpu_time=cpu)
        record.data_collected = rss is not None
        records.append(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        print_benchmark_tsv(records, handle, extended_fmt=False)


@pytest.fixture()
def measured(tmp_path: Path) -> Path:
    benchmarks = tmp_path / "results" / "benchmarks"
    write_benchmark(benchmarks / "score_sentences/apertium-en-es-fr/wmt14.tsv", 2.0, 1.5, 120.0)
    write_benchmark(benchmarks / "score_sentences/apertium-en-es-fr/iwslt17.tsv", 4.0, 3.5, 180.0)
    write_benchmark(benchmarks / "translate_apertium/apertium-en-es-fr/wmt14.tsv", 10.0, 12.0, 60.0, repeats=2)
    write_benchmark(benchmarks / "translate_fairseq_natural/inhouse.tsv", 30.0, 55.0, 900.0)
    write_benchmark(benchmarks / "parse_perturbation_sample/word_order/wmt14/source.tsv", 1.0, 0.9, None)
    write_benchmark(benchmarks / "dataset_summary.tsv", 0.5, 0.4, 80.0)
    write_benchmark(benchmarks / "renamed_rule/x.tsv", 1.0, 1.0, 1.0)  # a rule the workflow no longer has
    (benchmarks / "summary.tsv").write_text("rule\tjobs\n", encoding="utf-8")  # the collection's own output
    testsets = tmp_path / "results" / "testsets"
    testsets.mkdir(parents=True)
    (testsets / "wmt14.tsv").write_text("segment_id\tsource\n" + "".join(f"{i}\ts{i}\n" for i in range(30)), encoding="utf-8")
    (testsets / "iwslt17.tsv").write_text("segment_id\tsource\n" + "".join(f"{i}\ts{i}\n" for i in range(50)), encoding="utf-8")
    return tmp_path / "results"


def test_snakemakes_benchmark_file_is_read_with_na_as_missing(measured: Path) -> None:
    table = read_benchmark(measured / "benchmarks/parse_perturbation_sample/word_order/wmt14/source.tsv")
    assert tuple(table.columns) == BENCHMARK_COLUMNS
    assert table.loc[0, "s"] == 1.0  # the wall time is always measured; memory and CPU only when sampled
    assert pd.isna(table.loc[0, "max_rss"]) and pd.isna(table.loc[0, "cpu_time"])


def test_a_file_that_is_not_a_benchmark_is_rejected_by_name(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("seconds\tmemory\n1\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad.tsv: not a Snakemake benchmark file"):
        read_benchmark(path)


def test_wildcards_come_from_the_rules_pattern() -> None:
    assert benchmark_wildcards("score_sentences/sys/wmt14.tsv", PATTERNS["score_sentences"]) == {"system": "sys", "testset": "wmt14"}
    assert benchmark_wildcards("score_sentences/sys/word_order/wmt14.tsv", "score_sentences/{system,[^/]+}/{testset}.tsv") == {
        "system": "sys", "testset": "word_order/wmt14"}
    assert benchmark_wildcards("dataset_summary.tsv", PATTERNS["dataset_summary"]) == {}
    assert benchmark_wildcards("dataset_summary/x.tsv", PATTERNS["dataset_summary"]) is None


def test_testset_segments_count_data_lines(measured: Path) -> None:
    assert segments_of_testsets(measured / "testsets") == {"iwslt17": 50, "wmt14": 30}


def test_jobs_table_has_one_row_per_benchmark_file(measured: Path) -> None:
    collected = collect_jobs(measured / "benchmarks", PATTERNS, segments_of_testsets(measured / "testsets"))
    jobs = collected.jobs.set_index("job")
    assert collected.skipped == ["renamed_rule/x.tsv"]
    assert len(jobs) == 6
    assert jobs.loc["score_sentences/apertium-en-es-fr/iwslt17", "units"] == 50
    assert jobs.loc["score_sentences/apertium-en-es-fr/iwslt17", "branch"] == SCORING
    assert jobs.loc["parse_perturbation_sample/word_order/wmt14/source", "units"] == 30  # base_testset's segments
    assert jobs.loc["parse_perturbation_sample/word_order/wmt14/source", "branch"] == PERTURBATIONS
    assert pd.isna(jobs.loc["parse_perturbation_sample/word_order/wmt14/source", "max_rss_mb"])
    assert jobs.loc["translate_fairseq_natural/inhouse", "units"] == 1  # names no test set: a per-job cost
    assert jobs.loc["translate_fairseq_natural/inhouse", "branch"] == TRANSLATION
    assert jobs.loc["translate_apertium/apertium-en-es-fr/wmt14", "wildcards"] == "system=apertium-en-es-fr;testset=wmt14"
    assert jobs.loc["dataset_summary", "wall_s"] == 0.5


def test_rule_summary_sums_and_ranks_rules_by_wall_time(measured: Path) -> None:
    jobs = collect_jobs(measured / "benchmarks", PATTERNS, segments_of_testsets(measured / "testsets")).jobs
    summary = rule_summary(jobs).set_index("rule")
    assert list(summary.index[:2]) == ["translate_fairseq_natural", "translate_apertium"]
    scores = summary.loc["score_sentences"]
    assert (scores["jobs"], scores["wall_s_sum"], scores["wall_s_mean"], scores["wall_s_max"]) == (2, 6.0, 3.0, 4.0)
    assert scores["cpu_s_sum"] == pytest.approx(5.0) and scores["max_rss_mb"] == 180.0 and scores["units_sum"] == 80
    assert summary.loc["translate_apertium", "wall_s_sum"] == 10.0  # two repeats of 10 s: their mean


def test_branch_summary_follows_the_branch_order_and_shares_the_wall_time(measured: Path) -> None:
    jobs = collect_jobs(measured / "benchmarks", PATTERNS, segments_of_testsets(measured / "testsets")).jobs
    branches = branch_summary(jobs)
    assert list(branches["branch"]) == [branch for branch in BRANCHES if branch in set(jobs["branch"])]
    assert branches["wall_share"].sum() == pytest.approx(1.0)
    translation = branches.set_index("branch").loc[TRANSLATION]
    assert (translation["rules"], translation["jobs"], translation["wall_s_sum"]) == (2, 2, 40.0)
    assert translation["wall_share"] == pytest.approx(40.0 / 47.5)


def test_figure_has_one_bar_per_rule(measured: Path) -> None:
    jobs = collect_jobs(measured / "benchmarks", PATTERNS, segments_of_testsets(measured / "testsets")).jobs
    figure = time_by_rule_figure(rule_summary(jobs))
    try:
        labels = [label.get_text() for label in figure.axes[0].get_yticklabels()]
        assert labels[-1] == "translate_fairseq_natural" and len(labels) == 5
    finally:
        plt.close(figure)


def test_a_rule_of_no_branch_is_an_error() -> None:
    with pytest.raises(InputError, match="'new_rule' belongs to no branch"):
        collect_jobs(Path("/nonexistent"), {"new_rule": "new_rule.tsv"}, {})
    assert branch_of("translate_huggingface_paraphrase") == TRANSLATION


def _rule_blocks() -> dict[str, str]:
    """Rule name -> its text, for every rule of rules/*.smk (the loop rules by their ``name:``)."""
    blocks = {}
    for path in sorted((REPOSITORY / "rules").glob("*.smk")):
        text = path.read_text(encoding="utf-8")
        for block in re.split(r"\n(?=[ \t]*rule\b)", text)[1:]:
            named = re.match(r"\s*rule (\w+):", block) or re.search(r"name:\s*\n\s*(\S+)\n", block)
            assert named, block[:200]
            blocks[f"{path.name}:{named.group(1)}"] = block
    return blocks


def test_every_rule_writes_a_benchmark_after_its_log_and_belongs_to_a_branch() -> None:
    blocks = _rule_blocks()
    assert len(blocks) >= 50
    for name, block in blocks.items():
        match = re.search(r"\n(\s*)log:\n\s*(\S.*)\n\1benchmark:\n\s*f?\"logs/benchmarks/([^\"]+)\.tsv\",", block)
        assert match, f"{name}: no benchmark: right after log:"
        rule = name.split(":")[1]
        if re.fullmatch(r"\w+", rule):  # not a loop rule named by an expression (rules/translate.smk)
            assert match.group(3).split("/")[0] in (rule, rule.replace("_mqm", "").replace("_da", "").replace("_mtme", "")), name
            branch_of(rule)


def test_a_per_family_rule_counts_the_sets_it_reads_and_is_fitted_with_its_base_rule() -> None:
    family_sets = ["perturbed/word_order/swap/wmt14", "perturbed/word_order/swap/iwslt17", "natural_identity/wmt14"]
    segments = {"perturbed/word_order/swap/wmt14": 30, "perturbed/word_order/swap/iwslt17": 50, "natural_identity/wmt14": 5}
    assert job_units({"system": "sys"}, segments, family_sets) == 85
    assert job_units({"system": "sys"}, segments, ["perturbed/gone/f/x"]) == 1  # none known: a per-job cost
    assert job_units({"family": "word_order", "function": "swap", "part": "iwslt17"}, segments) == 50  # perturb_testset's
    assert job_units({"family": "word_order", "function": "swap"}, segments) == 1
    assert rate_group("translate_fairseq_word_order", family_sets) == "translate_fairseq"
    assert rate_group("perturbation_scores_word_order", family_sets) == "perturbation_scores"
    assert rate_group("translate_fairseq", ["wmt14"]) == "translate_fairseq"
    assert rate_group("perturbation_tables_other", family_sets) == "perturbation_tables_other"  # not this family's rule
