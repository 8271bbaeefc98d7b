# The MT test-domain branch of the report: its tables and figures, grouped by metric.
from nlp_robustness.outputs.report_sections import DOMAINS as DOMAINS_SECTION


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
