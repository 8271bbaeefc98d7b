# The one robustness engine, for every study: blocks drawn once per block set, Metrics I-III per row.


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
    params:
        job=block_set_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/study_blocks.py"


rule robustness_statistics:
    """Metrics I-III of one MT system and metric, on the pool, by bagging and by design bagging, per left-out set."""
    input:
        unpack(mt_robustness_inputs),
    output:
        summary="results/robustness/{metric}/{system}.summary.tsv",
        gamma="results/robustness/{metric}/{system}.gamma.tsv",
    log:
        "logs/robustness_statistics/{metric}/{system}.log",
    params:
        job=mt_robustness_job,
        row_label="system",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_statistics.py"
