# Perturbations (paper 004: word order; the family modules of nlp_robustness.perturbations): a seeded
# sample of every test set, parsed once per side, perturbed by every function into perturbed test sets
# that rules/translate.smk, rules/fairseq.smk and rules/score.smk translate and score like any other;
# then beta, beta1, beta2, alpha per segment, the family's tables and figures, and the consistency of
# beta1 across functions through the one robustness engine (rules/robustness.smk draws its blocks).

from types import SimpleNamespace

# A family's tables and figures go to its paper's section of the report (family_section).
from nlp_robustness.outputs.report_sections import family_section


rule perturbation_sample:
    """The segments of one test set a family perturbs: a seeded, nested sample (or all of them)."""
    input:
        "results/testsets/{base_testset}.tsv",
    output:
        "results/perturbations/{family}/samples/{base_testset}.tsv",
    log:
        "logs/perturbation_sample/{family}/{base_testset}.log",
    benchmark:
        "logs/benchmarks/perturbation_sample/{family}/{base_testset}.tsv",
    params:
        sample=perturbation_sample_params,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturbation_sample.py"


rule parse_perturbation_sample:
    """Parse one side of a family's sample once (spaCy, batched); every function reuses the parse."""
    input:
        "results/perturbations/{family}/samples/{base_testset}.tsv",
    output:
        parse="results/perturbations/{family}/parses/{base_testset}.{side}.tsv",
        provenance="results/perturbations/{family}/parses/{base_testset}.{side}.json",
    log:
        "logs/parse_perturbation_sample/{family}/{base_testset}.{side}.log",
    benchmark:
        "logs/benchmarks/parse_perturbation_sample/{family}/{base_testset}/{side}.tsv",
    params:
        parser=parse_params,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/parse_perturbation_sample.py"


rule perturb_testset:
    """One function applied to the sampled segments of one part (a test set, or all of them pooled): the
    perturbed test set, and the status of every sampled segment (kept, or skipped and why)."""
    input:
        unpack(perturb_inputs),
    output:
        testset="results/testsets/perturbed/{family}/{function}/{part}.tsv",
        status="results/perturbations/{family}/{function}/{part}.segments.tsv",
    log:
        "logs/perturb_testset/{family}/{function}/{part}.log",
    benchmark:
        "logs/benchmarks/perturb_testset/{family}/{function}/{part}.tsv",
    params:
        job=perturb_job,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturb_testset.py"


for _family, _family_spec in FAMILIES.items():

    rule:
        """beta, beta1, beta2 and alpha of every kept segment of every function of a family, for one system and
        every metric (one job per system: one start-up for the family's functions)."""
        name:
            f"perturbation_scores_{_family}"
        input:
            lambda wildcards, family=_family: [
                path for function in FAMILIES[family]["functions"]
                for path in pair_score_inputs(SimpleNamespace(family=family, function=function, system=wildcards.system))
            ],
        output:
            [f"results/perturbations/{_family}/{function}/scores/{{system}}.tsv" for function in _family_spec["functions"]],
        log:
            f"logs/perturbation_scores/{_family}/{{system}}.log",
        benchmark:
            f"logs/benchmarks/perturbation_scores_{_family}/{{system}}.tsv",
        params:
            functions=list(_family_spec["functions"]),
            jobs=lambda wildcards, family=_family: {
                function: pair_score_job(SimpleNamespace(family=family, function=function, system=wildcards.system))
                for function in FAMILIES[family]["functions"]
            },
        threads: 1
        resources:
            mem_mb=1000,
            runtime=10,
        conda:
            "../envs/python.yaml"
        script:
            "../scripts/perturbation_scores.py"


rule perturbation_tables:
    """Mean beta, beta1, beta2, alpha and beta2 - beta1 with segment-bootstrap intervals and the paired test
    of beta2 = beta1, kept fraction and flips (beta1 > beta + flip margin) per system and function, the means
    per system over the functions, and the flips with the largest gain as examples (paper Table 3)."""
    input:
        family_report_inputs("pair_scores", "status", "derived", "translations", "testsets", "testset_translations"),
    output:
        means="results/tables/perturbations/{family}/{perturbation_metric}/means.csv",
        means_html=report(
            "results/tables/perturbations/{family}/{perturbation_metric}/means.html",
            caption="../report/perturbation_means.rst",
            category=lambda wildcards: family_section(wildcards.family), subcategory="{perturbation_metric}",
        ),
        means_markdown="results/tables/perturbations/{family}/{perturbation_metric}/means.md",
        means_latex="results/tables/perturbations/{family}/{perturbation_metric}/means.tex",
        over_functions="results/tables/perturbations/{family}/{perturbation_metric}/means_over_functions.csv",
        over_functions_markdown="results/tables/perturbations/{family}/{perturbation_metric}/means_over_functions.md",
        flips="results/tables/perturbations/{family}/{perturbation_metric}/flip_examples.csv",
        flips_markdown="results/tables/perturbations/{family}/{perturbation_metric}/flip_examples.md",
    log:
        "logs/perturbation_tables/{family}/{perturbation_metric}.log",
    benchmark:
        "logs/benchmarks/perturbation_tables/{family}/{perturbation_metric}.tsv",
    params:
        job=family_report_job,
        uncertainty=UNCERTAINTY,
        flip_margin=lambda wildcards: config["perturbations"]["flip_margin"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturbation_tables.py"


rule perturbation_similarity:
    """Mutual similarity of the functions, kappa(Psi_i(s), Psi_j(s)) on the segments both keep (paper Figure 10)."""
    input:
        family_report_inputs("derived"),
    output:
        "results/tables/perturbations/{family}/{perturbation_metric}/function_similarity.csv",
    log:
        "logs/perturbation_similarity/{family}/{perturbation_metric}.log",
    benchmark:
        "logs/benchmarks/perturbation_similarity/{family}/{perturbation_metric}.tsv",
    params:
        job=family_report_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturbation_similarity.py"


rule perturbation_figures:
    """Figures 1 (beta2 - beta1), 5 (heatmaps of beta1 and beta2), 7 and 11 (against alpha and length) and 10
    (similarity of the functions) of paper 004, for one metric."""
    input:
        family_report_inputs("pair_scores"),
        means="results/tables/perturbations/{family}/{perturbation_metric}/means.csv",
        similarity="results/tables/perturbations/{family}/{perturbation_metric}/function_similarity.csv",
    output:
        robust_vs_faithful=report(
            "results/figures/perturbations/{family}/{perturbation_metric}/robust_vs_faithful.png",
            caption="../report/perturbation_figures.rst",
            category=lambda wildcards: family_section(wildcards.family), subcategory="{perturbation_metric}",
        ),
        robust_vs_faithful_pdf="results/figures/perturbations/{family}/{perturbation_metric}/robust_vs_faithful.pdf",
        heatmaps=report(
            "results/figures/perturbations/{family}/{perturbation_metric}/beta_heatmaps.png",
            caption="../report/perturbation_figures.rst",
            category=lambda wildcards: family_section(wildcards.family), subcategory="{perturbation_metric}",
        ),
        heatmaps_pdf="results/figures/perturbations/{family}/{perturbation_metric}/beta_heatmaps.pdf",
        scatter=report(
            "results/figures/perturbations/{family}/{perturbation_metric}/scores_vs_alpha_and_length.png",
            caption="../report/perturbation_figures.rst",
            category=lambda wildcards: family_section(wildcards.family), subcategory="{perturbation_metric}",
        ),
        scatter_pdf="results/figures/perturbations/{family}/{perturbation_metric}/scores_vs_alpha_and_length.pdf",
        similarity=report(
            "results/figures/perturbations/{family}/{perturbation_metric}/function_similarity.png",
            caption="../report/perturbation_figures.rst",
            category=lambda wildcards: family_section(wildcards.family), subcategory="{perturbation_metric}",
        ),
        similarity_pdf="results/figures/perturbations/{family}/{perturbation_metric}/function_similarity.pdf",
    log:
        "logs/perturbation_figures/{family}/{perturbation_metric}.log",
    benchmark:
        "logs/benchmarks/perturbation_figures/{family}/{perturbation_metric}.tsv",
    params:
        job=family_report_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturbation_figures.py"


rule perturbation_attack_rates:
    """The rates a family's attacks achieved on the sampled sources (families that measure them: the
    character attacks), per attack and level."""
    input:
        family_report_inputs("derived"),
    output:
        csv="results/tables/perturbations/{family}/attack_rates.csv",
        markdown="results/tables/perturbations/{family}/attack_rates.md",
    log:
        "logs/perturbation_attack_rates/{family}.log",
    benchmark:
        "logs/benchmarks/perturbation_attack_rates/{family}.tsv",
    params:
        job=family_report_job,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturbation_attack_rates.py"
