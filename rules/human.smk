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


rule human_robustness:
    """Metrics I-III of one system on one score (human, BLEU or chrF): whole pool, bagging, design bagging,
    each domain left out in turn (the same seeded blocks for every score and system)."""
    input:
        unpack(human_robustness_inputs),
    output:
        summary="results/human/robustness/{human_score}/{human_system}.summary.tsv",
        gamma="results/human/robustness/{human_score}/{human_system}.gamma.tsv",
    log:
        "logs/human_robustness/{human_score}/{human_system}.log",
    params:
        job=human_robustness_job,
        row_label="system",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_statistics.py"


rule human_robustness_tables:
    """Robustness of every system on one score, with each domain left out in turn (Tables 1/3/5 layout)."""
    input:
        lambda wildcards: expand("results/human/robustness/{human_score}/{system}.summary.tsv", human_score=wildcards.human_score, system=HUMAN_SYSTEMS),
    output:
        csv="results/tables/human/{human_score}/robustness_{method}.csv",
        html=report(
            "results/tables/human/{human_score}/robustness_{method}.html",
            caption="../report/human_robustness_table.rst", category=HUMAN_SECTION, subcategory="scored by {human_score}",
        ),
        markdown="results/tables/human/{human_score}/robustness_{method}.md",
        latex="results/tables/human/{human_score}/robustness_{method}.tex",
    log:
        "logs/human_robustness_tables/{human_score}/{method}.log",
    params:
        summaries=lambda wildcards: row_files("results/human/robustness/{human_score}/{row}.summary.tsv", HUMAN_SYSTEMS, human_score=wildcards.human_score),
        row_label="system",
        leave_out=HUMAN_LEAVE_OUT,
        branch="human",
        scores=lambda wildcards: "Segment MQM score (0 = perfect, higher = better; COV < 0 as the mean is negative)"
        if wildcards.human_score == "human" else f"Sentence {wildcards.human_score} on the human-rated segments",
        pool="domain",
        note="",
        latex_label=lambda wildcards: f"human-{wildcards.human_score}",
        decimals=3,
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_tables.py"


rule human_rankings:
    """Table 7 (ranks by mean BLEU, COV, gamma and by humans, agreement), Table 8 (every system pair: which is
    more consistent by COV, by gamma, by humans) and Kendall tau with permutation p-values."""
    input:
        summaries=expand("results/human/robustness/{human_score}/{system}.summary.tsv", human_score=HUMAN_SCORES, system=HUMAN_SYSTEMS),
        gamma=expand("results/human/robustness/{human_score}/{system}.gamma.tsv", human_score=HUMAN_SCORES, system=HUMAN_SYSTEMS),
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
    params:
        summaries={score: row_files(f"results/human/robustness/{score}/{{row}}.summary.tsv", HUMAN_SYSTEMS) for score in HUMAN_SCORES},
        gamma={score: row_files(f"results/human/robustness/{score}/{{row}}.gamma.tsv", HUMAN_SYSTEMS) for score in HUMAN_SCORES},
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


rule human_gamma_curves:
    """Figure 5: gamma against epsilon on human scores, per system, on all domains pooled."""
    input:
        expand("results/human/robustness/human/{system}.gamma.tsv", system=HUMAN_SYSTEMS),
    output:
        png=report(
            "results/figures/human/gamma_curves.png",
            caption="../report/human_gamma_curves.rst", category=HUMAN_SECTION, subcategory="scored by human",
        ),
        pdf="results/figures/human/gamma_curves.pdf",
    log:
        "logs/human_gamma_curves.log",
    params:
        curves=row_files("results/human/robustness/human/{row}.gamma.tsv", HUMAN_SYSTEMS),
        metric="MQM",
        scores="segment MQM scores (0 = perfect) on the pooled domains",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/gamma_curves.py"
