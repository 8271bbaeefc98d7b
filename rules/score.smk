rule score_sentences:
    """Score every segment of one system's translation of one test set (sacrebleu)."""
    input:
        testset="results/testsets/{testset}.tsv",
        translations="results/translations/{system}/{testset}.txt",
    output:
        scores="results/scores/{system}/{testset}.tsv",
        signatures="results/scores/{system}/{testset}.signatures.json",
    log:
        "logs/score_sentences/{system}/{testset}.log",
    params:
        metrics=METRICS,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/score_sentences.py"
