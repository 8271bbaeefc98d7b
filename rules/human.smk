# Human judgements (paper Section 4.2, Tables 7, 8, Figure 5): consistency on human scores beside that of BLEU/chrF,
# on several domains, and the agreement of the rankings they give. One study kind, many studies (human_studies):
# Google's MQM (WMT'21), WMT direct assessment (WMT22 de-en, ja-en) and MTME-layout studies (WMT22 zh-en MQM with
# the Metrics task's scores) by config.

from nlp_robustness.outputs.report_sections import HUMAN as HUMAN_SECTION
from nlp_robustness.studies.study_settings import human_rows


rule human_mqm_segments:
    """One domain of an MQM study: rated segments, source, reference, every system's output, its human score (the
    published MQM score: 0 = perfect, higher = better), sentence BLEU and chrF."""
    input:
        unpack(human_domain_inputs),
    output:
        "results/human/{human_study}/segments/{human_domain}.tsv",
    log:
        "logs/human_segments/{human_study}/{human_domain}.log",
    benchmark:
        "logs/benchmarks/human_segments/{human_study}/{human_domain}.tsv",
    wildcard_constraints:
        human_study=human_study_pattern("mqm"),
    params:
        systems=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["systems"],
        reference_system=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["domains"][wildcards.human_domain].get("reference_system"),
        metrics=METRICS,
        metric_files=lambda wildcards: human_metric_files(wildcards.human_study),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_mqm_segments.py"


rule human_da_segments:
    """One domain of a WMT direct-assessment study: every row's own rated segments (placeholders dropped if asked)
    with its DA score, sentence BLEU and chrF; and every segment of the domain with BLEU and chrF."""
    input:
        unpack(human_domain_inputs),
    output:
        rated="results/human/{human_study}/segments/{human_domain}.tsv",
        every="results/human/{human_study}/all_segments/{human_domain}.tsv",
    log:
        "logs/human_segments/{human_study}/{human_domain}.log",
    benchmark:
        "logs/benchmarks/human_segments/{human_study}/{human_domain}.tsv",
    wildcard_constraints:
        human_study=human_study_pattern("wmt-da"),
    params:
        rows=lambda wildcards: human_rows(HUMAN_STUDIES[wildcards.human_study]),
        ignore_systems=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["ignore_systems"],
        score=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["score"],
        drop_placeholders=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["drop_placeholders"],
        metrics=METRICS,
        metric_files=lambda wildcards: human_metric_files(wildcards.human_study),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_da_segments.py"


rule human_mtme_segments:
    """One domain of an MTME study (mt-metrics-eval layout): every system's own rated segments (all of them when the
    human score is fully crossed, like MQM) with its human score, sentence BLEU and chrF, and each file metric."""
    input:
        unpack(human_domain_inputs),
    output:
        "results/human/{human_study}/segments/{human_domain}.tsv",
    log:
        "logs/human_segments/{human_study}/{human_domain}.log",
    benchmark:
        "logs/benchmarks/human_segments/{human_study}/{human_domain}.tsv",
    wildcard_constraints:
        human_study=human_study_pattern("mtme"),
    params:
        metrics=METRICS,
        metric_files=lambda wildcards: human_metric_files(wildcards.human_study),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_mtme_segments.py"


rule human_domain_means:
    """A DA study's check table: each row's organisers' system z and raw recomputed from all its DA rows (beside the
    published values), and per domain its rated segments, mean human score and mean BLEU/chrF on them."""
    input:
        unpack(human_domain_means_inputs),
    output:
        csv="results/tables/human/{human_study}/domain_means.csv",
        markdown="results/tables/human/{human_study}/domain_means.md",
        html=report(
            "results/tables/human/{human_study}/domain_means.html", caption="../report/human_domain_means.rst",
            category=HUMAN_SECTION, subcategory="{human_study}: rankings",
        ),
    log:
        "logs/human_domain_means/{human_study}.log",
    benchmark:
        "logs/benchmarks/human_domain_means/{human_study}.tsv",
    wildcard_constraints:
        human_study=human_study_pattern("wmt-da"),
    params:
        rows=lambda wildcards: human_rows(HUMAN_STUDIES[wildcards.human_study]),
        domains=lambda wildcards: human_study_domains(wildcards.human_study),
        metrics=METRICS,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_domain_means.py"


rule human_rankings:
    """Table 7 (each system's value, rank and rank interval by mean, COV, gamma and between-domain SD of BLEU, chrF
    and the human score), Table 8 (every pair of systems: the paired verdicts by COV and gamma of each metric and by
    people, agree / disagree / undetermined) and Kendall tau of each automatic consistency ranking with the human
    one, with permutation p-values and bootstrap intervals (the same document resamples for every system)."""
    input:
        unpack(human_rankings_inputs),
    output:
        rankings="results/tables/human/{human_study}/rankings.csv",
        rankings_html=report(
            "results/tables/human/{human_study}/rankings.html", caption="../report/human_rankings.rst", category=HUMAN_SECTION,
            subcategory="{human_study}: rankings",
        ),
        rankings_markdown="results/tables/human/{human_study}/rankings.md",
        pairwise="results/tables/human/{human_study}/pairwise.csv",
        pairwise_html=report(
            "results/tables/human/{human_study}/pairwise.html", caption="../report/human_pairwise.rst", category=HUMAN_SECTION,
            subcategory="{human_study}: rankings",
        ),
        pairwise_markdown="results/tables/human/{human_study}/pairwise.md",
        agreement="results/tables/human/{human_study}/agreement.csv",
        agreement_html=report(
            "results/tables/human/{human_study}/agreement.html", caption="../report/human_agreement.rst", category=HUMAN_SECTION,
            subcategory="{human_study}: rankings",
        ),
        agreement_markdown="results/tables/human/{human_study}/agreement.md",
    log:
        "logs/human_rankings/{human_study}.log",
    benchmark:
        "logs/benchmarks/human_rankings/{human_study}.tsv",
    params:
        job=lambda wildcards: human_rankings_job(wildcards.human_study),
        ranking=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["ranking"],
        uncertainty=UNCERTAINTY,
        seed=ROBUSTNESS["seed"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_rankings.py"
