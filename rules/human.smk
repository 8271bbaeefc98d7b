# Human judgements (paper Section 4.2, Tables 7, 8, Figure 5): robustness on human scores beside that of
# BLEU/chrF, on several domains, and the agreement of the system rankings they give.

from nlp_robustness.outputs.report_sections import HUMAN as HUMAN_SECTION


rule human_segments:
    """One domain's rated segments: source, reference, every system's output, its human score (the
    published MQM score: 0 = perfect, higher = better), sentence BLEU and chrF."""
    input:
        unpack(human_domain_inputs),
    output:
        "results/human/segments/{human_domain}.tsv",
    log:
        "logs/human_segments/{human_domain}.log",
    benchmark:
        "logs/benchmarks/human_segments/{human_domain}.tsv",
    params:
        systems=lambda wildcards: HUMAN["systems"],
        reference_system=lambda wildcards: HUMAN["domains"][wildcards.human_domain].get("reference_system"),
        metrics=METRICS,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_segments.py"


rule human_rankings:
    """Table 7 (ranks by mean BLEU, COV, gamma and by humans, agreement), Table 8 (every system pair: which is
    more consistent by COV, by gamma, by humans) and Kendall tau with permutation p-values."""
    input:
        summaries=lambda wildcards: [path for score in HUMAN_SCORES for path in STUDY_PLAN.table_summaries(f"human/{score}").values()],
        gamma=lambda wildcards: [path for score in HUMAN_SCORES for path in STUDY_PLAN.table_curves(f"human/{score}").values()],
    output:
        rankings="results/tables/human/rankings.csv",
        rankings_html=report(
            "results/tables/human/rankings.html", caption="../report/human_rankings.rst", category=HUMAN_SECTION, subcategory="rankings",
        ),
        rankings_markdown="results/tables/human/rankings.md",
        pairwise="results/tables/human/pairwise.csv",
        pairwise_html=report(
            "results/tables/human/pairwise.html", caption="../report/human_pairwise.rst", category=HUMAN_SECTION, subcategory="rankings",
        ),
        pairwise_markdown="results/tables/human/pairwise.md",
        agreement="results/tables/human/agreement.csv",
        agreement_html=report(
            "results/tables/human/agreement.html", caption="../report/human_agreement.rst", category=HUMAN_SECTION, subcategory="rankings",
        ),
        agreement_markdown="results/tables/human/agreement.md",
    log:
        "logs/human_rankings.log",
    benchmark:
        "logs/benchmarks/human_rankings.tsv",
    params:
        summaries=lambda wildcards: {score: STUDY_PLAN.table_summaries(f"human/{score}") for score in HUMAN_SCORES},
        gamma=lambda wildcards: {score: STUDY_PLAN.table_curves(f"human/{score}") for score in HUMAN_SCORES},
        ranking=lambda wildcards: HUMAN["ranking"],
        seed=ROBUSTNESS["seed"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/human_rankings.py"
