# One robustness profile per system: every branch's published numbers side by side (reads, never recomputes).

from nlp_robustness.outputs.report_sections import PROFILE as PROFILE_SECTION


rule robustness_profile:
    """Per system: quality, consistency across test domains, each perturbation family, Natural Robustness;
    ranks per column, Kendall tau between every two columns and between axes, the verdicts (the studies'
    comparisons tables; the axis scores' rows computed alike into results/profile/comparisons.csv), the
    generated reading and results/profile.json (every number, the reading's claims and the hash of the config)."""
    input:
        profile_inputs,
    output:
        profile="results/profile/profile.tsv",
        kendall="results/profile/kendall.tsv",
        axes="results/profile/axes.tsv",
        axes_kendall="results/profile/axes_kendall.tsv",
        comparisons="results/profile/comparisons.csv",
        json="results/profile.json",
        tables=expand("results/tables/profile/{profile_group}.{extension}", profile_group=PROFILE_GROUPS, extension=["csv", "md"]),
        html=report(
            expand("results/tables/profile/{profile_group}.html", profile_group=PROFILE_GROUPS),
            caption="../report/profile_table.rst", category=PROFILE_SECTION, subcategory="tables",
        ),
        kendall_tables=expand("results/tables/profile/{profile_group}_kendall.csv", profile_group=PROFILE_GROUPS),
        kendall_html=report(
            expand("results/tables/profile/{profile_group}_kendall.html", profile_group=PROFILE_GROUPS),
            caption="../report/profile_kendall.rst", category=PROFILE_SECTION, subcategory="Kendall tau",
        ),
    log:
        "logs/robustness_profile.log",
    benchmark:
        "logs/benchmarks/robustness_profile.tsv",
    params:
        plan=PROFILE_PLAN,
        permutations=lambda wildcards: PROFILE["permutations"],
        seed=lambda wildcards: PROFILE["seed"],
        uncertainty=UNCERTAINTY,
        config_hash=CONFIG_HASH,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_profile.py"


rule robustness_profile_figure:
    """One group's profile: a panel per axis, systems as rows, measures as columns (colour: place in column;
    faded: place not separated at the run's confidence)."""
    input:
        "results/profile/profile.tsv",
    output:
        png=report(
            "results/figures/profile/{profile_group}.png",
            caption="../report/profile_figure.rst", category=PROFILE_SECTION, subcategory="figures",
        ),
        pdf="results/figures/profile/{profile_group}.pdf",
    log:
        "logs/robustness_profile_figure/{profile_group}.log",
    benchmark:
        "logs/benchmarks/robustness_profile_figure/{profile_group}.tsv",
    params:
        label=lambda wildcards: PROFILE_LABELS[wildcards.profile_group],
        confidence=UNCERTAINTY["confidence"],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_profile_figure.py"


rule robustness_profile_overview:
    """Every group's axis rankings in one compact figure (rank intervals; faded: place not separated): the
    report's opening page shows it."""
    input:
        "results/profile/axes.tsv",
    output:
        png=report(
            "results/figures/profile/overview.png",
            caption="../report/profile_overview.rst", category=PROFILE_SECTION, subcategory="figures",
        ),
        pdf="results/figures/profile/overview.pdf",
    log:
        "logs/robustness_profile_overview.log",
    benchmark:
        "logs/benchmarks/robustness_profile_overview.tsv",
    params:
        labels=PROFILE_LABELS,
        confidence=UNCERTAINTY["confidence"],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_profile_overview.py"


rule robustness_profile_report:
    """The report's opening page (Snakemake's workflow description): the introduction, the overview figure
    embedded and the generated reading; `snakemake --report` uses it once it exists."""
    input:
        profile="results/profile.json",
        overview="results/figures/profile/overview.png",
    output:
        "results/profile/report.rst",
    log:
        "logs/robustness_profile_report.log",
    benchmark:
        "logs/benchmarks/robustness_profile_report.tsv",
    params:
        introduction=lambda wildcards: PROFILE_INTRODUCTION,  # a function: Snakemake would format a string (its Jinja braces)
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_profile_report.py"
