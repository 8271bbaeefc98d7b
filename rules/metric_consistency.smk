# Which metric's consistency agrees with people's? The meta-evaluation of every metric of a human study (its own
# BLEU/chrF and every file metric) on cross-domain consistency (README "What the default run finds";
# docs/metric-consistency.md; nlp_robustness.statistics.metric_consistency).

from nlp_robustness.outputs.metric_consistency import metric_names
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.studies.study_settings import human_rows, human_unit


rule metric_consistency:
    """Per metric and consistency measure (between-domain SD, system x domain interaction SD, gamma area) and for
    quality: Kendall tau-b and pairwise accuracy of the metric's system ranking with people's, with intervals from one
    document bootstrap shared by people and every metric; paired tests between metrics (Holm) and significance
    clusters; per domain, each metric's agreement with people's ranking inside it; and the figure."""
    input:
        segments=lambda wildcards: human_segment_tables(wildcards.human_study),
    output:
        agreement="results/tables/human/{human_study}/metric_consistency.csv",
        agreement_markdown="results/tables/human/{human_study}/metric_consistency.md",
        agreement_html=report(
            "results/tables/human/{human_study}/metric_consistency.html", caption="../report/metric_consistency.rst",
            category=HUMAN_SECTION, subcategory="{human_study}: which metric's consistency agrees with people's",
        ),
        pairs="results/tables/human/{human_study}/metric_consistency_pairs.csv",
        pairs_markdown="results/tables/human/{human_study}/metric_consistency_pairs.md",
        pairs_html=report(
            "results/tables/human/{human_study}/metric_consistency_pairs.html", caption="../report/metric_consistency_pairs.rst",
            category=HUMAN_SECTION, subcategory="{human_study}: which metric's consistency agrees with people's",
        ),
        per_domain="results/tables/human/{human_study}/metric_consistency_per_domain.csv",
        per_domain_html=report(
            "results/tables/human/{human_study}/metric_consistency_per_domain.html",
            caption="../report/metric_consistency_per_domain.rst",
            category=HUMAN_SECTION, subcategory="{human_study}: which metric's consistency agrees with people's",
        ),
        consistency="results/tables/human/{human_study}/consistency_by_score.csv",
        figure=report(
            "results/figures/human/{human_study}/metric_consistency.png", caption="../report/metric_consistency_figure.rst",
            category=HUMAN_SECTION, subcategory="{human_study}: which metric's consistency agrees with people's",
        ),
        figure_pdf="results/figures/human/{human_study}/metric_consistency.pdf",
    log:
        "logs/metric_consistency/{human_study}.log",
    benchmark:
        "logs/benchmarks/metric_consistency/{human_study}.tsv",
    params:
        domains=lambda wildcards: human_study_domains(wildcards.human_study),
        rows=lambda wildcards: human_rows(HUMAN_STUDIES[wildcards.human_study]),
        scores=lambda wildcards: human_scores(HUMAN_STUDIES[wildcards.human_study], METRICS),
        epsilons=lambda wildcards: human_score_epsilons_of(wildcards.human_study),
        higher_is_better=lambda wildcards: human_score_directions(HUMAN_STUDIES[wildcards.human_study], METRICS),
        names=lambda wildcards: metric_names(HUMAN_STUDIES[wildcards.human_study].get("metric_files", {}), METRICS),
        human_label=lambda wildcards: human_unit(HUMAN_STUDIES[wildcards.human_study]),
        measures=lambda wildcards: HUMAN_STUDIES[wildcards.human_study]["meta_evaluation"]["measures"],
        uncertainty=UNCERTAINTY,
        labels=lambda wildcards: [f"human/{wildcards.human_study}", WHOLE_POOL],
    threads: 2
    resources:
        mem_mb=3000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_consistency.py"
