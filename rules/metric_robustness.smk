# Robustness of evaluation metrics (paper 002): the references of WMT19 to-English pairs attacked at
# several levels, every system output scored against each version (sentence BLEU, chrF, BERTScore at
# several layers), the WMT19 DARR tau of every metric per pair and condition, and the consistency of
# each metric's agreement with humans across conditions through the one robustness engine.

from nlp_robustness.outputs.report_sections import METRIC_ROBUSTNESS as METRIC_ROBUSTNESS_SECTION


rule metric_darr_sample:
    """One pair's judged segments: a seeded sample of its DARR segments with all their judgements, the
    references, and the outputs the judgements compare (every named system checked against the files)."""
    input:
        wmt19_pair_inputs,
    output:
        darr="results/metric_robustness/darr/{wmt19_pair}.tsv",
        segments="results/metric_robustness/segments/{wmt19_pair}.tsv",
        hypotheses="results/metric_robustness/hypotheses/{wmt19_pair}.tsv",
    log:
        "logs/metric_darr_sample/{wmt19_pair}.log",
    benchmark:
        "logs/benchmarks/metric_darr_sample/{wmt19_pair}.tsv",
    params:
        files=wmt19_pair_files,
        seed=METRIC_ROBUSTNESS["seed"] if METRIC_ROBUSTNESS else None,
        sample_size=METRIC_ROBUSTNESS["sample_size"] if METRIC_ROBUSTNESS else None,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_darr_sample.py"


rule attack_references:
    """One condition (an attack at one level, or the clean references) on every pair's sampled
    references: the attacked text, the achieved rate and the unknown tokens (Algorithm 1) of each."""
    input:
        attacked_reference_inputs,
    output:
        "results/metric_robustness/references/{condition}.tsv",
    log:
        "logs/attack_references/{condition}.log",
    benchmark:
        "logs/benchmarks/attack_references/{condition}.tsv",
    params:
        job=attacked_reference_job,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/attack_references.py"


rule score_attacked_references:
    """Every judged output against the references of every condition at one level: sentence BLEU, chrF
    and BERTScore F1 at every layer (one forward pass; every distinct sentence embedded once)."""
    input:
        level_score_inputs,
    output:
        "results/metric_robustness/scores/{level}.tsv",
    log:
        "logs/score_attacked_references/{level}.log",
    benchmark:
        "logs/benchmarks/score_attacked_references/{level}.tsv",
    params:
        job=level_score_job,
    threads: lambda wildcards: METRIC_ROBUSTNESS["bertscore"]["threads"]
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/score_attacked_references.py"


rule metric_tau:
    """WMT19 DARR tau of every metric variant per pair and condition (paper Tables 5, 8, 9), BERTScore's
    tau at every layer, the best layer of each pair (chosen on the other pairs), and the +1 / -1
    agreements that are the units of the consistency study."""
    input:
        lambda wildcards: [path for files in (metric_tau_job()["scores"], metric_tau_job()["darr"]) for path in files.values()],
    output:
        agreement=METRIC_AGREEMENT,
        tau="results/tables/metric_robustness/tau.csv",
        tau_html=report(
            "results/tables/metric_robustness/tau.html",
            caption="../report/metric_tau.rst", category=METRIC_ROBUSTNESS_SECTION, subcategory="tau",
        ),
        tau_markdown="results/tables/metric_robustness/tau.md",
        tau_latex="results/tables/metric_robustness/tau.tex",
        tau_by_layer="results/tables/metric_robustness/tau_by_layer.csv",
        best_layers="results/tables/metric_robustness/best_layers.csv",
    log:
        "logs/metric_tau.log",
    benchmark:
        "logs/benchmarks/metric_tau.tsv",
    params:
        job=metric_tau_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_tau.py"


rule metric_tau_uncertainty:
    """How sure each tau is: percentile intervals from a bootstrap over segments (drawn within pairs, every
    judgement of a segment in every condition together), and paired tests of the tau difference between
    metric variants (first vs last layer, BERTScore vs chrF) per pair and averaged, Holm within a family."""
    input:
        agreement=METRIC_AGREEMENT,
    output:
        intervals="results/tables/metric_robustness/tau_intervals.csv",
        intervals_markdown="results/tables/metric_robustness/tau_intervals.md",
        differences="results/tables/metric_robustness/tau_differences.csv",
        differences_markdown="results/tables/metric_robustness/tau_differences.md",
    log:
        "logs/metric_tau_uncertainty.log",
    benchmark:
        "logs/benchmarks/metric_tau_uncertainty.tsv",
    params:
        job=metric_tau_uncertainty_job,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_tau_uncertainty.py"


rule metric_reference_tables:
    """Unknown tokens per segment (paper Figure 1, Table 4) and the achieved attack rates, per pair, attack and level."""
    input:
        lambda wildcards: list(metric_reference_files().values()),
    output:
        unknown="results/tables/metric_robustness/unknown_tokens.csv",
        unknown_html=report(
            "results/tables/metric_robustness/unknown_tokens.html",
            caption="../report/metric_unknown_tokens.rst", category=METRIC_ROBUSTNESS_SECTION, subcategory="unknown tokens",
        ),
        unknown_markdown="results/tables/metric_robustness/unknown_tokens.md",
        unknown_latex="results/tables/metric_robustness/unknown_tokens.tex",
        rates="results/tables/metric_robustness/attack_rates.csv",
        rates_markdown="results/tables/metric_robustness/attack_rates.md",
    log:
        "logs/metric_reference_tables.log",
    benchmark:
        "logs/benchmarks/metric_reference_tables.tsv",
    params:
        references=lambda wildcards: metric_reference_files(),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_reference_tables.py"


rule metric_figures:
    """Unknown tokens against p per attack (Figure 1), tau against p per metric and attack (Figures 2-4),
    and tau at every BERTScore layer against p (Figure 3's layer comparison)."""
    input:
        unknown="results/tables/metric_robustness/unknown_tokens.csv",
        tau="results/tables/metric_robustness/tau.csv",
        tau_by_layer="results/tables/metric_robustness/tau_by_layer.csv",
        intervals="results/tables/metric_robustness/tau_intervals.csv",
    output:
        unknown=report(
            "results/figures/metric_robustness/unknown_tokens.png",
            caption="../report/metric_figures.rst", category=METRIC_ROBUSTNESS_SECTION, subcategory="unknown tokens",
        ),
        unknown_pdf="results/figures/metric_robustness/unknown_tokens.pdf",
        tau=report(
            "results/figures/metric_robustness/tau_vs_level.png",
            caption="../report/metric_figures.rst", category=METRIC_ROBUSTNESS_SECTION, subcategory="tau",
        ),
        tau_pdf="results/figures/metric_robustness/tau_vs_level.pdf",
        layers=report(
            "results/figures/metric_robustness/tau_by_layer.png",
            caption="../report/metric_figures.rst", category=METRIC_ROBUSTNESS_SECTION, subcategory="tau",
        ),
        layers_pdf="results/figures/metric_robustness/tau_by_layer.pdf",
    log:
        "logs/metric_figures.log",
    benchmark:
        "logs/benchmarks/metric_figures.tsv",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_figures.py"
