rule prepare_testset:
    """One test set: its parsed manifest dataset, or a configured pair of files, cut to max_segments."""
    input:
        unpack(testset_input_files),
    output:
        "results/testsets/{testset}.tsv",
    log:
        "logs/prepare_testset/{testset}.log",
    params:
        spec=testset_spec,
        max_segments=config.get("max_segments"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/prepare_testset.py"
