# The MT test-domain branch of the report: its tables and figures, grouped by study and metric.
from nlp_robustness.outputs.report_sections import DOMAINS as DOMAINS_SECTION


rule testset_means:
    """Mean sentence score of every system of an MT study on every test set of it (the accuracy view, for comparison)."""
    input:
        unpack(mt_study_score_files),
    output:
        csv="results/tables/{mt_study}/{metric}/testset_means.csv",
        html=report(
            "results/tables/{mt_study}/{metric}/testset_means.html",
            caption="../report/testset_means.rst", category=DOMAINS_SECTION, subcategory="{mt_study}: {metric}",
        ),
    log:
        "logs/testset_means/{mt_study}/{metric}.log",
    benchmark:
        "logs/benchmarks/testset_means/{mt_study}/{metric}.tsv",
    params:
        score_tables=lambda wildcards: mt_study_score_tables(wildcards.mt_study),
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/testset_means.py"
