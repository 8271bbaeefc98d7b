"""The cost plan: per-rule rates fitted on measured jobs, Snakemake's dry run read into a DAG, and list
scheduling over it on small graphs whose makespans are known by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from snakemake.benchmark import BenchmarkRecord, print_benchmark_tsv

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.benchmarks import collect_jobs
from nlp_robustness.outputs.benchmarks import testset_segments as segments_of_testsets
from nlp_robustness.outputs.cost_estimate import (
    RuleCost,
    Scenario,
    duration_text,
    estimate_cost,
    fit_rule_cost,
    fit_rule_costs,
    segments_from_jobs,
    simulate_makespan,
)
from nlp_robustness.outputs.planned_jobs import (
    BASE,
    DEFAULT,
    KNOWN,
    PlannedJob,
    PlannedSizes,
    is_family_job,
    job_dependencies,
    parse_dry_run,
    perturbed_parts,
    planned_job_units,
    planned_units,
)

DRY_RUN = """\
Building DAG of jobs...
Job stats:
job          count
---------  -------
all              1
score            2
translate        2
total            5

[Thu Nov 26 01:32:00 2026]
rule translate:
    input: results/testsets/wmt14.tsv
    output: results/translations/sys/wmt14.txt, results/translations/sys/wmt14.report.json
    log: logs/translate/sys/wmt14.log
    jobid: 3
    benchmark: results/benchmarks/translate/sys/wmt14.tsv
    reason: Forced execution
    wildcards: system=sys, testset=wmt14
    threads: 2
    resources: tmpdir=/tmp, runtime=60, mem_mb=2000, mem=2 GB, mem_mib=1908
Shell command: None

[Thu Nov 26 01:32:00 2026]
rule translate:
    input: results/testsets/news.tsv
    output: results/translations/sys/news.txt
    jobid: 4
    wildcards: system=sys, testset=news
    resources: tmpdir=/tmp
Shell command: None

[Thu Nov 26 01:32:00 2026]
rule score:
    input: results/translations/sys/wmt14.txt, results/testsets/wmt14.tsv
    output: results/scores/sys/wmt14.tsv
    jobid: 1
    wildcards: system=sys, testset=wmt14
Shell command: None

[Thu Nov 26 01:32:00 2026]
rule score:
    input: results/translations/sys/news.txt, results/testsets/news.tsv
    output: results/scores/sys/news.tsv
    jobid: 2
    wildcards: system=sys, testset=news
Shell command: None

[Thu Nov 26 01:32:00 2026]
localrule all:
    input: results/scores/sys/wmt14.tsv, results/scores/sys/news.tsv
    jobid: 0
    reason: Forced execution
    resources: tmpdir=/tmp
Shell command: None
Job stats:
job          count
---------  -------
total            5
This was a dry-run (flag -n). The order of jobs does not reflect the order of execution.
"""


def test_fit_recovers_start_up_and_rate() -> None:
    cost = fit_rule_cost([100, 200, 400], [11.0, 12.0, 14.0])
    assert cost.start_up_s == pytest.approx(10.0) and cost.seconds_per_unit == pytest.approx(0.01) and cost.jobs == 3
    assert cost.seconds(1000) == pytest.approx(20.0)


def test_fit_keeps_both_terms_non_negative() -> None:
    assert fit_rule_cost([1, 1, 1], [2.0, 4.0, 6.0]) == RuleCost(4.0, 0.0, 3)  # one size: the mean, no rate
    assert fit_rule_cost([10, 20], [5.0, 3.0]) == RuleCost(4.0, 0.0, 2)  # a negative slope: the mean
    through_origin = fit_rule_cost([10, 20, 30], [0.5, 2.0, 3.0])  # a negative intercept: a line through 0
    assert through_origin.start_up_s == 0.0
    assert through_origin.seconds_per_unit == pytest.approx((5 + 40 + 90) / (100 + 400 + 900))
    with pytest.raises(InputError, match="cannot fit"):
        fit_rule_cost([], [])


def test_rule_costs_from_a_jobs_table() -> None:
    jobs = pd.DataFrame({"rule": ["a", "a", "b"], "units": [10, 30, 1], "wall_s": [2.0, 4.0, 7.5]})
    costs = fit_rule_costs(jobs)
    assert costs["a"].seconds_per_unit == pytest.approx(0.1) and costs["a"].start_up_s == pytest.approx(1.0)
    assert costs["b"] == RuleCost(7.5, 0.0, 1)
    with pytest.raises(InputError, match="lacks the columns \\['wall_s'\\]"):
        fit_rule_costs(jobs.drop(columns="wall_s"))


def test_dry_run_is_read_into_jobs_and_dependencies() -> None:
    jobs = {job.jobid: job for job in parse_dry_run(DRY_RUN)}
    assert sorted(jobs) == [0, 1, 2, 3, 4]
    assert jobs[3] == PlannedJob(3, "translate", {"system": "sys", "testset": "wmt14"}, 2, ("results/testsets/wmt14.tsv",),
                                 ("results/translations/sys/wmt14.txt", "results/translations/sys/wmt14.report.json"))
    assert jobs[4].threads == 1 and jobs[0].rule == "all" and jobs[0].outputs == ()
    assert job_dependencies(list(jobs.values())) == {0: {1, 2}, 1: {3}, 2: {4}, 3: set(), 4: set()}
    with pytest.raises(InputError, match="no job listed"):
        parse_dry_run("Nothing to be done.\n")


def test_chain_takes_the_sum_and_independent_jobs_share_the_cores() -> None:
    chain = {1: set(), 2: {1}, 3: {2}}
    assert simulate_makespan({1: 1.0, 2: 2.0, 3: 3.0}, {}, chain, cores_per_node=4) == 6.0
    independent = {job: set() for job in range(6)}
    assert simulate_makespan({job: 5.0 for job in range(6)}, {}, independent, cores_per_node=2) == 15.0
    assert simulate_makespan({job: 5.0 for job in range(6)}, {}, independent, cores_per_node=16) == 5.0
    # two nodes of 2 cores: 4 at once
    assert simulate_makespan({job: 5.0 for job in range(6)}, {}, independent, nodes=2, cores_per_node=2) == 10.0


def test_critical_path_goes_first() -> None:
    # job 1 (1 s) leads to job 2 (10 s); jobs 3 and 4 (5 s each) are independent. On 1 core, starting 1 first
    # gives 1 + 10 + 5 + 5 = 21 either way, so use 2 cores: critical path first: 1 and 3 at 0; 2 at 1 (ends
    # 11); 4 at 5 (ends 10): 11. Shortest-first or input order (3, 4 first) would give 5 + 1 + 10 = 16.
    durations = {3: 5.0, 4: 5.0, 1: 1.0, 2: 10.0}
    dependencies = {1: set(), 2: {1}, 3: set(), 4: set()}
    assert simulate_makespan(durations, {}, dependencies, cores_per_node=2) == 11.0


def test_threads_hold_cores_and_are_cut_to_a_node() -> None:
    # two 2-thread jobs of 4 s on 2 cores run one after the other; a 1-thread job of 4 s beside each cannot
    dependencies = {job: set() for job in range(3)}
    assert simulate_makespan({0: 4.0, 1: 4.0, 2: 4.0}, {0: 2, 1: 2, 2: 1}, dependencies, cores_per_node=2) == 12.0
    assert simulate_makespan({0: 4.0}, {0: 32}, {0: set()}, cores_per_node=2) == 4.0  # 32 threads run on 2 cores


def test_slurm_latency_delays_each_level_and_max_jobs_limits_parallelism() -> None:
    chain = {1: set(), 2: {1}}
    assert simulate_makespan({1: 10.0, 2: 10.0}, {}, chain, nodes=3, cores_per_node=16, latency_s=30.0) == 80.0
    independent = {job: set() for job in range(4)}
    assert simulate_makespan({job: 10.0 for job in range(4)}, {}, independent, nodes=2, cores_per_node=16, max_jobs=2) == 20.0
    with pytest.raises(InputError, match="cycle"):
        simulate_makespan({1: 1.0, 2: 1.0}, {}, {1: {2}, 2: {1}})


def test_estimate_uses_the_measured_sizes_and_names_the_guesses() -> None:
    measured = pd.DataFrame({
        "rule": ["translate", "translate", "score", "score"],
        "wildcards": ["system=sys;testset=wmt14", "system=sys;testset=iwslt", "system=sys;testset=wmt14", "system=sys;testset=iwslt"],
        "units": [100, 300, 100, 300],
        "wall_s": [12.0, 16.0, 1.0, 1.0],
    })
    assert segments_from_jobs(measured) == {"wmt14": 100, "iwslt": 300}
    planned = parse_dry_run(DRY_RUN)
    assert planned_units({"testset": "news"}, {"wmt14": 100}, 7) == (7, DEFAULT)
    assert planned_units({"testset": "perturbed/natural/typos/wmt14"}, {"wmt14": 100}, 7) == (100, BASE)
    assert planned_units({"base_testset": "wmt14"}, {"wmt14": 100}, 7) == (100, KNOWN)
    assert planned_units({"system": "sys"}, {"wmt14": 100}, 7) == (1, KNOWN)
    estimate = estimate_cost(measured, planned, [Scenario("2 cores", 1, 2), Scenario("1 core", 1, 1)],
                             segments={"news": 500})
    # translate: 10 s + 0.02 s/segment: wmt14 12 s, news 20 s; score 1 s each; both translations need 2 cores
    assert estimate.makespans == {"2 cores": pytest.approx(33.0), "1 core": pytest.approx(34.0)}
    rules = estimate.rules.set_index("rule")
    assert rules.loc["translate", "job_seconds"] == pytest.approx(32.0) and rules.loc["translate", "units"] == 600
    assert estimate.unmeasured_rules == [] and estimate.unknown_testsets == []
    unknown = estimate_cost(measured, planned, [Scenario("2 cores", 1, 2)])
    assert unknown.unknown_testsets == ["news"] and unknown.default_segments == 200  # the median of 100 and 300
    assert unknown.makespans["2 cores"] == pytest.approx(27.0)  # news 10 s + 200 x 0.02 s, wmt14 12 s, both scores 1 s
    assert duration_text(3725.4) == "1:02:05"


FAMILY_DRY_RUN = """\
rule perturb_testset:
    input: results/perturbations/word_order/samples/wmt14.tsv
    output: results/testsets/perturbed/word_order/swap/wmt14.tsv, results/perturbations/word_order/swap/wmt14.segments.tsv
    jobid: 1
    wildcards: family=word_order, function=swap, part=wmt14
Shell command: None

rule perturb_testset:
    input: results/perturbations/word_order/samples/wmt14.tsv
    output: results/testsets/perturbed/word_order/shuffle/wmt14.tsv, results/perturbations/word_order/shuffle/wmt14.segments.tsv
    jobid: 2
    wildcards: family=word_order, function=shuffle, part=wmt14
Shell command: None

rule perturb_testset:
    input: results/perturbations/natural/samples/wmt14.tsv, results/perturbations/natural/samples/news.tsv
    output: results/testsets/perturbed/natural/typos/pooled.tsv, results/perturbations/natural/typos/pooled.segments.tsv
    jobid: 3
    wildcards: family=natural, function=typos, part=pooled
Shell command: None

rule score_sentences_word_order:
    input: results/testsets/perturbed/word_order/swap/wmt14.tsv, results/testsets/perturbed/word_order/shuffle/wmt14.tsv, results/translations/sys/perturbed/word_order/swap/wmt14.txt, results/translations/sys/perturbed/word_order/shuffle/wmt14.txt
    output: results/scores/sys/perturbed/word_order/swap/wmt14.tsv, results/scores/sys/perturbed/word_order/shuffle/wmt14.tsv
    jobid: 4
    wildcards: system=sys
Shell command: None

rule score_sentences_natural:
    input: results/testsets/perturbed/natural/typos/pooled.tsv, results/translations/sys/perturbed/natural/typos/pooled.txt
    output: results/scores/sys/perturbed/natural/typos/pooled.tsv
    jobid: 5
    wildcards: system=sys
Shell command: None

rule score_sentences:
    input: results/testsets/wmt14.tsv, results/translations/sys/wmt14.txt
    output: results/scores/sys/wmt14.tsv
    jobid: 6
    wildcards: system=sys, testset=wmt14
Shell command: None
"""


def _write_testset(path: Path, segments: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("segment_id\tsource\n" + "".join(f"{i}\ts{i}\n" for i in range(segments)), encoding="utf-8")


def _write_benchmark(path: Path, seconds: float) -> None:
    record = BenchmarkRecord(running_time=seconds, cpu_time=seconds, cpu_usage=seconds)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        print_benchmark_tsv([record], handle, extended_fmt=False)


def test_a_family_job_counts_every_test_set_it_reads_in_the_measured_run_and_in_the_plan(tmp_path: Path) -> None:
    # The measured run: per-set scoring of wmt14 (100 segments, 2 s) and news (300, 4 s), and one job scoring the
    # word_order family's two perturbed sets of 50 sampled segments each (100 units, 2 s): one line, 1 s + 0.01 s/unit.
    testsets = tmp_path / "testsets"
    for name, segments in {"wmt14": 100, "news": 300, "perturbed/word_order/swap/wmt14": 50,
                           "perturbed/word_order/shuffle/wmt14": 50}.items():
        _write_testset(testsets / f"{name}.tsv", segments)
    benchmarks = tmp_path / "benchmarks"
    _write_benchmark(benchmarks / "score_sentences/sys/wmt14.tsv", 2.0)
    _write_benchmark(benchmarks / "score_sentences/sys/news.tsv", 4.0)
    _write_benchmark(benchmarks / "score_sentences_word_order/sys.tsv", 2.0)
    family_sets = ["perturbed/word_order/swap/wmt14", "perturbed/word_order/shuffle/wmt14"]
    measured = collect_jobs(benchmarks, {"score_sentences": "score_sentences/{system}/{testset}.tsv",
                                         "score_sentences_word_order": "score_sentences_word_order/{system}.tsv"},
                            segments_of_testsets(testsets), {"score_sentences_word_order": family_sets}).jobs.set_index("job")
    assert measured.loc["score_sentences_word_order/sys", "units"] == 100  # both sets it reads
    assert measured.loc["score_sentences_word_order/sys", "rate_group"] == "score_sentences"
    assert measured.loc["score_sentences/sys/news", "rate_group"] == "score_sentences"
    cost = fit_rule_costs(measured.reset_index())["score_sentences"]
    assert (cost.start_up_s, cost.seconds_per_unit) == (pytest.approx(1.0), pytest.approx(0.01))

    # The plan: whole test sets for word_order (sample_size: null), 30 segments of each test set for natural,
    # pooled over wmt14 and news.
    planned = parse_dry_run(FAMILY_DRY_RUN)
    jobs = {job.jobid: job for job in planned}
    assert perturbed_parts(planned)["perturbed/natural/typos/pooled"] == ["wmt14", "news"]
    assert is_family_job(jobs[4]) and not is_family_job(jobs[6]) and not is_family_job(jobs[1])
    sizes = PlannedSizes({"wmt14": 100, "news": 300, "perturbed/word_order/swap/wmt14": 50}, 7,
                         parts=perturbed_parts(planned), sample_sizes={"word_order": None, "natural": 30})
    assert sizes.size("perturbed/word_order/swap/wmt14") == (100, BASE, [])  # the config's whole set, not the measured 50
    assert sizes.size("perturbed/natural/typos/pooled") == (60, BASE, [])
    assert sizes.size("perturbed/other/f/unknown") == (7, DEFAULT, ["unknown"])
    assert planned_job_units(jobs[4], sizes)[0] == 200
    assert planned_job_units(jobs[1], sizes)[0] == 100  # perturb_testset: the perturbed set it writes
    assert planned_job_units(jobs[3], sizes)[0] == 60
    estimate = estimate_cost(measured.reset_index(), planned, [Scenario("1 core", 1, 1)],
                             sample_sizes={"word_order": None, "natural": 30})
    rules = estimate.rules.set_index("rule")
    # twice the measured family job's segments: its start-up once, twice its per-unit part (1 s + 2 x 1 s)
    assert rules.loc["score_sentences_word_order", "units"] == 200
    assert rules.loc["score_sentences_word_order", "job_seconds"] == pytest.approx(1.0 + 2 * 1.0)
    assert rules.loc["score_sentences_natural", "job_seconds"] == pytest.approx(1.0 + 60 * 0.01)
    assert rules.loc["score_sentences", "job_seconds"] == pytest.approx(2.0)
    assert rules.loc["score_sentences_word_order", "measured_jobs"] == 3  # the rate group's jobs
    assert estimate.unmeasured_rules == ["perturb_testset"] and estimate.unknown_testsets == []
    assert estimate.base_sized_testsets == ["perturbed/natural/typos/pooled", *sorted(family_sets)]
