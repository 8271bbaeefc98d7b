# fairseq ConvS2S systems: a pretrained model from the manifest, or one trained here (in-house).
# Training and translation declare a GPU resource so that a cluster profile places them on GPU
# nodes; they run on the CPU wherever torch sees no GPU (config key device: auto).

from nlp_robustness.outputs.report_sections import DATA as DATA_SECTION


rule fairseq_training_data:
    """Training corpus of an in-house model: dev split, Moses tokenization, joint BPE, fairseq-preprocess."""
    input:
        unpack(training_corpus_inputs),
    output:
        bpe_codes="results/models/{system}/bpecodes",
        dev="results/models/{system}/dev.tsv",
        statistics="results/models/{system}/corpus.json",
        data_bin=directory("results/models/{system}/data-bin"),
    log:
        "logs/fairseq_training_data/{system}.log",
    wildcard_constraints:
        system=INHOUSE_SYSTEMS,
    params:
        corpus=training_corpus_params,
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        "../envs/fairseq.yaml"
    script:
        "../scripts/fairseq_training_data.py"


rule fairseq_train:
    """Train an in-house ConvS2S with fairseq-train, early stopping on the dev loss."""
    input:
        data_bin="results/models/{system}/data-bin",
    output:
        checkpoint="results/models/{system}/checkpoint_best.pt",
        report="results/models/{system}/training.json",
    log:
        "logs/fairseq_train/{system}.log",
    wildcard_constraints:
        system=INHOUSE_SYSTEMS,
    params:
        training=training_params,
        languages=lambda wildcards: fairseq_languages(wildcards.system),
        device=lambda wildcards: system_spec(wildcards)["device"],
        cpu_threads=lambda wildcards: system_spec(wildcards)["cpu_threads"],
    threads: lambda wildcards: system_spec(wildcards)["cpu_threads"]
    resources:
        mem_mb=lambda wildcards: system_spec(wildcards)["mem_mb"],
        gpu=lambda wildcards: system_spec(wildcards)["gpus"],
        runtime=24 * 60,
    conda:
        "../envs/fairseq.yaml"
    script:
        "../scripts/fairseq_train.py"


rule fairseq_dev_scores:
    """Corpus BLEU and chrF of an in-house model on its development set (beam search as for the test sets)."""
    input:
        unpack(fairseq_model_inputs),
        dev="results/models/{system}/dev.tsv",
        training="results/models/{system}/training.json",
        statistics="results/models/{system}/corpus.json",
    output:
        "results/models/{system}/dev_scores.json",
    log:
        "logs/fairseq_dev_scores/{system}.log",
    wildcard_constraints:
        system=INHOUSE_SYSTEMS,
    params:
        translation=fairseq_translation_params,
    threads: lambda wildcards: system_spec(wildcards)["cpu_threads"]
    resources:
        mem_mb=lambda wildcards: system_spec(wildcards)["mem_mb"],
        gpu=lambda wildcards: system_spec(wildcards)["gpus"],
        runtime=120,
    conda:
        "../envs/fairseq.yaml"
    script:
        "../scripts/fairseq_dev_scores.py"


rule fairseq_model_summary:
    """One row per in-house model: corpus size, epochs, training time, dev loss, dev BLEU and chrF."""
    input:
        expand("results/models/{system}/dev_scores.json", system=INHOUSE_MODELS),
    output:
        csv="results/tables/models.csv",
        html=report("results/tables/models.html", caption="../report/models.rst", category=DATA_SECTION, subcategory="in-house models"),
        markdown="results/tables/models.md",
    log:
        "logs/fairseq_model_summary.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/fairseq_model_summary.py"


rule translate_fairseq:
    """Translate a whole test set with a fairseq model (batched beam search), aligned line for line."""
    input:
        unpack(fairseq_model_inputs),
        testset="results/testsets/{testset}.tsv",
    output:
        translations="results/translations/{system}/{testset}.txt",
        report="results/translations/{system}/{testset}.report.json",
    log:
        "logs/translate_fairseq/{system}/{testset}.log",
    wildcard_constraints:
        system=FAIRSEQ_SYSTEMS,
        testset=FAIRSEQ_SINGLE_TESTSETS,
    params:
        translation=fairseq_translation_params,
    threads: lambda wildcards: system_spec(wildcards)["cpu_threads"]
    resources:
        mem_mb=lambda wildcards: system_spec(wildcards)["mem_mb"],
        gpu=lambda wildcards: system_spec(wildcards)["gpus"],
        runtime=120,
    conda:
        "../envs/fairseq.yaml"
    script:
        "../scripts/translate_fairseq.py"


# A perturbation family with fairseq_translation: per_family has every one of its perturbed test sets
# translated by a fairseq system in one job, one rule per such family (its outputs are that family's sets).
for _family, _testsets in FAIRSEQ_FAMILY_JOBS.items():

    rule:
        name:
            f"translate_fairseq_{_family}"
        input:
            unpack(fairseq_model_inputs),
            testsets=[f"results/testsets/{name}.tsv" for name in _testsets],
        output:
            translations=[f"results/translations/{{system}}/{name}.txt" for name in _testsets],
            reports=[f"results/translations/{{system}}/{name}.report.json" for name in _testsets],
        log:
            f"logs/translate_fairseq/{{system}}/perturbed/{_family}.log",
        wildcard_constraints:
            system=FAIRSEQ_SYSTEMS,
        params:
            translation=fairseq_translation_params,
            testsets=_testsets,
        threads: lambda wildcards: system_spec(wildcards)["cpu_threads"]
        resources:
            mem_mb=lambda wildcards: system_spec(wildcards)["mem_mb"],
            gpu=lambda wildcards: system_spec(wildcards)["gpus"],
            runtime=120,
        conda:
            "../envs/fairseq.yaml"
        script:
            "../scripts/translate_fairseq_family.py"
