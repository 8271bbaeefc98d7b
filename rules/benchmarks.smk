# Where the time goes: every rule's benchmark file (logs/benchmarks/<rule>/...) collected once everything
# else is built, into tables per job, rule and branch and a figure (nlp_robustness.outputs.benchmarks).
from nlp_robustness.outputs.report_sections import BENCHMARKS as BENCHMARKS_SECTION


rule benchmark_summary:
    """Wall time, CPU time and peak memory of every job, summed per rule and per branch. It reads every
    benchmark file present, also those of jobs run by an earlier invocation (still the measurement of the
    job that made the current output)."""
    input:
        lambda wildcards: non_benchmark_outputs(),
    output:
        jobs="results/benchmarks/jobs.tsv",
        summary="results/benchmarks/summary.tsv",
        branches="results/benchmarks/branches.tsv",
        csv="results/tables/benchmarks/rules.csv",
        markdown="results/tables/benchmarks/rules.md",
        html=report("results/tables/benchmarks/rules.html", caption="../report/benchmark_rules.rst",
                    category=BENCHMARKS_SECTION, subcategory="per rule"),
        branch_csv="results/tables/benchmarks/branches.csv",
        branch_markdown="results/tables/benchmarks/branches.md",
        branch_html=report("results/tables/benchmarks/branches.html", caption="../report/benchmark_branches.rst",
                           category=BENCHMARKS_SECTION, subcategory="per branch"),
        png=report("results/figures/benchmarks/time_by_rule.png", caption="../report/benchmark_figure.rst",
                   category=BENCHMARKS_SECTION, subcategory="per rule"),
        pdf="results/figures/benchmarks/time_by_rule.pdf",
    log:
        "logs/benchmark_summary.log",
    benchmark:
        "logs/benchmarks/benchmark_summary.tsv",
    params:
        directory=lambda wildcards: BENCHMARK_DIRECTORY,  # logs/benchmarks: every job's file
        testsets="results/testsets",  # test set sizes: a job's units (its test set's segments)
        patterns=lambda wildcards: benchmark_patterns(),
        rule_testsets=lambda wildcards: benchmark_rule_testsets(),  # per-family rules: the test sets they read
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/benchmark_summary.py"
