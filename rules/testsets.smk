rule prepare_testset:
    """One test set: its parsed manifest dataset, or a configured pair of files (empty segments refused
    unless allowed), segments whose source equals the reference dropped on request, cut to max_segments;
    the provenance file says where it came from and counts what was found, dropped and kept."""
    input:
        unpack(testset_input_files),
    output:
        table="results/testsets/{testset}.tsv",
        provenance="results/testsets/{testset}.provenance.json",
    log:
        "logs/prepare_testset/{testset}.log",
    benchmark:
        "logs/benchmarks/prepare_testset/{testset}.tsv",
    wildcard_constraints:
        testset=_alternation(TESTSETS),  # perturbed test sets come from rules/perturbations.smk
    params:
        spec=testset_spec,  # with allow_empty_segments and drop_source_equals_reference
        max_segments=MAX_SEGMENTS,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/prepare_testset.py"
