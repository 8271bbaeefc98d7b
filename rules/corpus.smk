from nlp_robustness.scoring.corpus_scores import CORPUS_METRICS

# The corpus metrics of the config's metrics (bleu, chrf; levenshtein has no corpus-level score here).
CORPUS_TABLE_METRICS = [metric for metric in METRICS if metric in CORPUS_METRICS]


rule corpus_scores:
    """Corpus BLEU and chrF (sacrebleu, with signatures) of every system of an MT study, per test set and on the pool,
    with intervals from a bootstrap of whole documents and paired tests between the systems (Holm over the pairs)."""
    input:
        unpack(mt_study_corpus_inputs),
    output:
        scores_csv="results/tables/{mt_study}/corpus_scores.csv",
        scores_md="results/tables/{mt_study}/corpus_scores.md",
        scores_html=report(
            "results/tables/{mt_study}/corpus_scores.html",
            caption="../report/corpus_scores.rst", category=DOMAINS_SECTION, subcategory="{mt_study}: corpus scores",
        ),
        comparisons_csv="results/tables/{mt_study}/corpus_comparisons.csv",
        comparisons_md="results/tables/{mt_study}/corpus_comparisons.md",
        comparisons_html=report(
            "results/tables/{mt_study}/corpus_comparisons.html",
            caption="../report/corpus_comparisons.rst", category=DOMAINS_SECTION, subcategory="{mt_study}: corpus scores",
        ),
    log:
        "logs/corpus_scores/{mt_study}.log",
    benchmark:
        "logs/benchmarks/corpus_scores/{mt_study}.tsv",
    params:
        testsets=lambda wildcards: MT_STUDIES[wildcards.mt_study]["testsets"],
        systems=lambda wildcards: MT_STUDIES[wildcards.mt_study]["systems"],
        metrics=CORPUS_TABLE_METRICS,
        tokenize=lambda wildcards: bleu_tokenizer(MT_STUDIES[wildcards.mt_study]["testsets"][0]),
        resamples=UNCERTAINTY["resamples"],
        seed=UNCERTAINTY["seed"],
        confidence=UNCERTAINTY["confidence"],
        resampling_note=lambda wildcards: resampling_note(MT_STUDIES[wildcards.mt_study]["testsets"]),
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/corpus_scores.py"
