# The one robustness engine, for every study of the plan (nlp_robustness.studies.plan): blocks drawn once per
# block set, Metrics I-III per row, the paper-shaped tables and the gamma figures of every group of rows.


rule study_blocks:
    """Draw the M blocks of Algorithm 5 (bagging) and Algorithm 6 (design bagging) over every pool of one study.

    Blocks depend only on the study's units and the seed, so every row of the study (every system and
    metric) is measured on the same blocks; one file per block set (method, left_out, block, domain,
    unit_id) lets a reader audit them.
    """
    input:
        block_set_files,
    output:
        "results/blocks/{block_set}.tsv",
    log:
        "logs/study_blocks/{block_set}.log",
    benchmark:
        "logs/benchmarks/study_blocks/{block_set}.tsv",
    params:
        job=lambda wildcards: STUDY_PLAN.block_set_job(wildcards.block_set, ROBUSTNESS["seed"]),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/study_blocks.py"


rule robustness_statistics:
    """Metrics I-III of one row of a study (a system under a metric, a classifier, a metric variant, ...) on the
    whole pool, by bagging and by design bagging, with each domain left out in turn; every block's domain
    scores are written out for audit; every number gets its interval (a bootstrap of the whole pool, the blocks'
    jackknife for the bagged rows), and the whole-pool replicates are kept for the paired comparisons of rows."""
    input:
        unpack(lambda wildcards: STUDY_PLAN.statistics_inputs(wildcards.study_row)),
    output:
        summary="results/{study_row}.summary.tsv",
        gamma="results/{study_row}.gamma.tsv",
        block_scores="results/{study_row}.blocks.tsv",
        replicates="results/{study_row}.replicates.npz",
    log:
        "logs/robustness_statistics/{study_row}.log",
    benchmark:
        "logs/benchmarks/robustness_statistics/{study_row}.tsv",
    params:
        job=lambda wildcards: STUDY_PLAN.statistics_job(wildcards.study_row),
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_statistics.py"


rule robustness_tables:
    """A study's tables shaped like the paper's Tables 1-6 (rows = systems or classifiers, column groups = the
    whole pool, then each domain left out in turn), for one method."""
    input:
        lambda wildcards: STUDY_PLAN.table_summaries(wildcards.study_table).values(),
    output:
        csv="results/tables/{study_table}/robustness_{method}.csv",
        html=report(
            "results/tables/{study_table}/robustness_{method}.html",
            caption="../report/study_table.rst",
            category=lambda wildcards: STUDY_PLAN.tables[wildcards.study_table].section,
            subcategory=lambda wildcards: STUDY_PLAN.tables[wildcards.study_table].subcategory,
        ),
        markdown="results/tables/{study_table}/robustness_{method}.md",
        latex="results/tables/{study_table}/robustness_{method}.tex",
    log:
        "logs/robustness_tables/{study_table}/{method}.log",
    benchmark:
        "logs/benchmarks/robustness_tables/{study_table}/{method}.tsv",
    params:
        table=lambda wildcards: study_table_job(STUDY_PLAN, wildcards.study_table),
        caption=lambda wildcards: study_caption(STUDY_PLAN.tables[wildcards.study_table], method=wildcards.method),
        resampling_note=lambda wildcards: resampling_note(study_testsets(STUDY_PLAN, STUDY_PLAN.tables[wildcards.study_table].rows)),
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_tables.py"


rule robustness_comparisons:
    """Every pair of rows of a study table compared on the whole pool: the difference of each statistic with its
    interval and Holm-adjusted p-value from the paired bootstrap, verdict matrices, units per domain to detect."""
    input:
        summaries=lambda wildcards: STUDY_PLAN.table_summaries(wildcards.study_table).values(),
        replicates=lambda wildcards: STUDY_PLAN.table_replicates(wildcards.study_table).values(),
    output:
        csv="results/tables/{study_table}/comparisons.csv",
        markdown="results/tables/{study_table}/comparisons.md",
    log:
        "logs/robustness_comparisons/{study_table}.log",
    benchmark:
        "logs/benchmarks/robustness_comparisons/{study_table}.tsv",
    params:
        table=lambda wildcards: study_comparisons_job(STUDY_PLAN, wildcards.study_table),
        uncertainty=UNCERTAINTY,
        resampling_note=lambda wildcards: resampling_note(study_testsets(STUDY_PLAN, STUDY_PLAN.tables[wildcards.study_table].rows)),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_comparisons.py"


rule gamma_curves:
    """Gamma against epsilon of every row of a group on the whole pool (paper Figures 4 and 5), raw and normalised."""
    input:
        lambda wildcards: STUDY_PLAN.figure_curves(wildcards.gamma_figure).values(),
    output:
        png=report(
            "results/figures/{gamma_figure}/gamma_curves.png",
            caption="../report/study_gamma_curves.rst",
            category=lambda wildcards: STUDY_PLAN.gamma_figures[wildcards.gamma_figure].section,
            subcategory=lambda wildcards: STUDY_PLAN.gamma_figures[wildcards.gamma_figure].subcategory,
        ),
        pdf="results/figures/{gamma_figure}/gamma_curves.pdf",
    log:
        "logs/gamma_curves/{gamma_figure}.log",
    benchmark:
        "logs/benchmarks/gamma_curves/{gamma_figure}.tsv",
    params:
        curves=lambda wildcards: STUDY_PLAN.figure_curves(wildcards.gamma_figure),
        metric=lambda wildcards: STUDY_PLAN.gamma_figures[wildcards.gamma_figure].metric,
        scores=lambda wildcards: STUDY_PLAN.gamma_figures[wildcards.gamma_figure].scores,
        caption=lambda wildcards: study_caption(STUDY_PLAN.gamma_figures[wildcards.gamma_figure]),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/gamma_curves.py"
