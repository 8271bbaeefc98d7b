rule translate_apertium:
    """Translate a whole test set in one batch through a chain of Apertium modes."""
    input:
        "results/testsets/{testset}.tsv",
    output:
        translations="results/translations/{system}/{testset}.txt",
        report="results/translations/{system}/{testset}.report.json",
    log:
        "logs/translate_apertium/{system}/{testset}.log",
    wildcard_constraints:
        system=APERTIUM_SYSTEMS,
    params:
        modes=apertium_modes,
        mark_unknown=apertium_mark_unknown,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        "../envs/apertium.yaml"
    script:
        "../scripts/translate_apertium.py"


rule import_hypotheses:
    """Take existing translations (one per line) of a test set, checking they align with it."""
    input:
        testset="results/testsets/{testset}.tsv",
        hypotheses=hypotheses_file,
    output:
        translations="results/translations/{system}/{testset}.txt",
        report="results/translations/{system}/{testset}.report.json",
    log:
        "logs/import_hypotheses/{system}/{testset}.log",
    wildcard_constraints:
        system=HYPOTHESES_SYSTEMS,
    params:
        max_segments=hypotheses_max_segments,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/import_hypotheses.py"
