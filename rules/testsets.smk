rule prepare_testset:
    """Parse one test set (from the mirror, checksummed and counted) into an aligned table."""
    input:
        unpack(testset_input_files),
        manifest=DATASET_MANIFEST,
    output:
        "results/testsets/{testset}.tsv",
    log:
        "logs/prepare_testset/{testset}.log",
    params:
        spec=testset_spec,
        mirror_dir=config["mirror_dir"],
        max_segments=config.get("max_segments"),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/prepare_testset.py"
