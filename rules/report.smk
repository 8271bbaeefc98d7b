# The MT test-domain branch of the report: its tables and figures, grouped by metric.
from nlp_robustness.outputs.report_sections import DOMAINS as DOMAINS_SECTION


rule robustness_tables:
    """Tables shaped like the paper's Tables 1, 3 and 5 (rows = systems, column groups = left-out test set)."""
    input:
        expand("results/robustness/{{metric}}/{system}.summary.tsv", system=SYSTEMS),
    output:
        csv="results/tables/{metric}/robustness_{method}.csv",
        html=report(
            "results/tables/{metric}/robustness_{method}.html",
            caption="../report/robustness_table.rst", category=DOMAINS_SECTION, subcategory="{metric}",
        ),
        markdown="results/tables/{metric}/robustness_{method}.md",
        latex="results/tables/{metric}/robustness_{method}.tex",
    log:
        "logs/robustness_tables/{metric}/{method}.log",
    params:
        summaries=lambda wildcards: row_files("results/robustness/{metric}/{row}.summary.tsv", SYSTEMS, metric=wildcards.metric),
        row_label="system",
        leave_out=LEAVE_OUT,
        branch="mt",
        scores=lambda wildcards: f"Sentence {wildcards.metric}",
        pool="test set",
        note="",
        latex_label=lambda wildcards: f"robustness-{wildcards.metric}",
        decimals=2,
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_tables.py"


rule testset_means:
    """Mean sentence score of every system on every test set (the accuracy view, for comparison)."""
    input:
        expand("results/scores/{system}/{testset}.tsv", system=SYSTEMS, testset=TESTSETS),
    output:
        csv="results/tables/{metric}/testset_means.csv",
        html=report(
            "results/tables/{metric}/testset_means.html",
            caption="../report/testset_means.rst", category=DOMAINS_SECTION, subcategory="{metric}",
        ),
    log:
        "logs/testset_means/{metric}.log",
    params:
        score_tables={system: mt_score_files(system) for system in SYSTEMS},
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/testset_means.py"


rule gamma_curves:
    """Figure 4: gamma against epsilon per system on the whole pool, raw and normalised."""
    input:
        expand("results/robustness/{{metric}}/{system}.gamma.tsv", system=SYSTEMS),
    output:
        png=report(
            "results/figures/{metric}/gamma_curves.png",
            caption="../report/gamma_curves.rst", category=DOMAINS_SECTION, subcategory="{metric}",
        ),
        pdf="results/figures/{metric}/gamma_curves.pdf",
    log:
        "logs/gamma_curves/{metric}.log",
    params:
        curves=lambda wildcards: row_files("results/robustness/{metric}/{row}.gamma.tsv", SYSTEMS, metric=wildcards.metric),
        metric=lambda wildcards: wildcards.metric,
        scores=None,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/gamma_curves.py"
