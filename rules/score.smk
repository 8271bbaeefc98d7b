# Sentence scores of every translation: one job per (system, test set), and one per (system, family) for the
# families translated in one job (translation_jobs: per_family...): one start-up for the family's sets.

# Family -> its perturbed test sets scored in one job per system (its identity sets are never scored).
FAMILY_SCORE_JOBS = {family: derived_testsets(family, FAMILIES[family]) for family in FAMILY_TRANSLATION_JOBS}
SINGLY_SCORED_TESTSETS = [
    name for name in TESTSETS + DERIVED_TESTSETS if not any(name in names for names in FAMILY_SCORE_JOBS.values())
]


rule score_sentences:
    """Score every segment of one system's translation of one test set (sacrebleu, rapidfuzz): with the MT
    metrics, and with the perturbation metrics (a perturbed test set is scored like any other)."""
    input:
        testsets=["results/testsets/{testset}.tsv"],
        translations=["results/translations/{system}/{testset}.txt"],
    output:
        scores=["results/scores/{system}/{testset}.tsv"],
        signatures=["results/scores/{system}/{testset}.signatures.json"],
    log:
        "logs/score_sentences/{system}/{testset}.log",
    benchmark:
        "logs/benchmarks/score_sentences/{system}/{testset}.tsv",
    wildcard_constraints:
        testset=_alternation(SINGLY_SCORED_TESTSETS),
    params:
        testsets=lambda wildcards: [wildcards.testset],
        metrics=SCORED_METRICS,
        bleu_tokenize=lambda wildcards: {wildcards.testset: bleu_tokenizer_of(wildcards)},
    threads: 1
    resources:
        mem_mb=1000,
        runtime=20,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/score_sentences.py"


for _family, _testsets in FAMILY_SCORE_JOBS.items():

    rule:
        """Score every perturbed test set of a family translated by one system, in one job."""
        name:
            f"score_sentences_{_family}"
        input:
            testsets=[f"results/testsets/{name}.tsv" for name in _testsets],
            translations=[f"results/translations/{{system}}/{name}.txt" for name in _testsets],
        output:
            scores=[f"results/scores/{{system}}/{name}.tsv" for name in _testsets],
            signatures=[f"results/scores/{{system}}/{name}.signatures.json" for name in _testsets],
        log:
            f"logs/score_sentences/{{system}}/perturbed/{_family}.log",
        benchmark:
            f"logs/benchmarks/score_sentences_{_family}/{{system}}.tsv",
        params:
            testsets=_testsets,
            metrics=SCORED_METRICS,
            bleu_tokenize={name: bleu_tokenizer(name) for name in _testsets},
        threads: 1
        resources:
            mem_mb=1000,
            runtime=20,
        conda:
            "../envs/python.yaml"
        script:
            "../scripts/score_sentences.py"


rule metric_file_scores:
    """Align one system's scores of one test set under a metric read from files (mt_studies.<study>.metric_files)
    with the prepared test set's segments, by segment id: a sentence score table the robustness engine reads like a
    computed metric's (nlp_robustness.studies.metric_files)."""
    input:
        unpack(metric_file_inputs),
    output:
        "results/metric_files/{mt_study}/{file_metric}/{system}/{testset}.tsv",
    log:
        "logs/metric_file_scores/{mt_study}/{file_metric}/{system}/{testset}.log",
    benchmark:
        "logs/benchmarks/metric_file_scores/{mt_study}/{file_metric}/{system}/{testset}.tsv",
    wildcard_constraints:
        file_metric=_alternation(FILE_METRIC_NAMES),
    params:
        job=metric_file_job,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/metric_file_scores.py"
