rule bagging_blocks:
    """Draw the M blocks of Algorithm 5 (bagging) or 6 (design bagging) over one leave-one-out pool.

    Blocks depend only on the pool's segments and the seed, so every system is measured on the
    same blocks; they are written out so a reader can audit them.
    """
    input:
        pool_testset_tables,
    output:
        "results/blocks/{bagging_method}/{left_out}.tsv",
    log:
        "logs/bagging_blocks/{bagging_method}/{left_out}.log",
    params:
        seed=ROBUSTNESS["seed"],
        blocks=ROBUSTNESS["bagging"]["blocks"],
        fraction=ROBUSTNESS["bagging"]["fraction"],
        pool_testsets=lambda wildcards: pool_testsets(config, wildcards.left_out),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/bagging_blocks.py"


rule robustness_statistics:
    """Metrics I-III of one system and metric, on the pool, by bagging and by design bagging, per left-out set."""
    input:
        scores=system_scores,
        blocks=bagging_block_files,
    output:
        summary="results/robustness/{metric}/{system}.summary.tsv",
        gamma="results/robustness/{metric}/{system}.gamma.tsv",
    log:
        "logs/robustness_statistics/{metric}/{system}.log",
    params:
        testsets=TESTSETS,
        leave_out=LEAVE_OUT,
        epsilon=ROBUSTNESS["epsilon"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_statistics.py"
