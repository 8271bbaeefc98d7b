rule score_sentences:
    """Score every segment of one system's translation of one test set (sacrebleu, rapidfuzz): with the MT
    metrics, and with the perturbation metrics (a perturbed test set is scored like any other)."""
    input:
        testset="results/testsets/{testset}.tsv",
        translations="results/translations/{system}/{testset}.txt",
    output:
        scores="results/scores/{system}/{testset}.tsv",
        signatures="results/scores/{system}/{testset}.signatures.json",
    log:
        "logs/score_sentences/{system}/{testset}.log",
    benchmark:
        "logs/benchmarks/score_sentences/{system}/{testset}.tsv",
    params:
        metrics=SCORED_METRICS,
        bleu_tokenize=bleu_tokenizer_of,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/score_sentences.py"
