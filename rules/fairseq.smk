# fairseq ConvS2S systems: a pretrained model from the manifest, or one trained here (in-house). Their
# translation is rules/translate.smk's (kind fairseq); here, training and dev scores. Training and
# translation declare a GPU resource so that a cluster profile places them on GPU
# nodes; they run on the CPU wherever torch sees no GPU (config key device: auto).

from nlp_robustness.outputs.report_sections import DATA as DATA_SECTION
from nlp_robustness.systems.kinds.fairseq import FairseqModels


FAIRSEQ_MODELS = FairseqModels(config["systems"], SYSTEM_CONTEXT)
INHOUSE_MODELS = FAIRSEQ_MODELS.inhouse()
INHOUSE_SYSTEMS = _alternation(INHOUSE_MODELS)


rule fairseq_training_data:
    """Training corpus of an in-house model: dev split, Moses tokenization, joint BPE, fairseq-preprocess."""
    input:
        unpack(FAIRSEQ_MODELS.training_corpus_inputs),
    output:
        bpe_codes="results/models/{system}/bpecodes",
        dev="results/models/{system}/dev.tsv",
        statistics="results/models/{system}/corpus.json",
        data_bin=directory("results/models/{system}/data-bin"),
    log:
        "logs/fairseq_training_data/{system}.log",
    benchmark:
        "logs/benchmarks/fairseq_training_data/{system}.tsv",
    wildcard_constraints:
        system=INHOUSE_SYSTEMS,
    params:
        corpus=FAIRSEQ_MODELS.training_corpus_params,
    priority: 10  # the longest chain of the run (training, then every translation): start it first
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
    benchmark:
        "logs/benchmarks/fairseq_train/{system}.tsv",
    wildcard_constraints:
        system=INHOUSE_SYSTEMS,
    params:
        training=FAIRSEQ_MODELS.training_params,
        languages=FAIRSEQ_MODELS.languages,
        device=lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["device"],
        cpu_threads=lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["cpu_threads"],
    priority: 10  # the longest chain of the run (training, then every translation): start it first
    threads: lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["cpu_threads"]
    resources:
        mem_mb=lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["mem_mb"],
        gpu=lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["gpus"],
        runtime=24 * 60,
    conda:
        "../envs/fairseq.yaml"
    script:
        "../scripts/fairseq_train.py"


rule fairseq_dev_scores:
    """Corpus BLEU and chrF of an in-house model on its development set (beam search as for the test sets)."""
    input:
        unpack(FAIRSEQ_MODELS.model_inputs),
        dev="results/models/{system}/dev.tsv",
        training="results/models/{system}/training.json",
        statistics="results/models/{system}/corpus.json",
    output:
        "results/models/{system}/dev_scores.json",
    log:
        "logs/fairseq_dev_scores/{system}.log",
    benchmark:
        "logs/benchmarks/fairseq_dev_scores/{system}.tsv",
    wildcard_constraints:
        system=INHOUSE_SYSTEMS,
    params:
        translation=FAIRSEQ_MODELS.translation_settings,
    threads: FAIRSEQ_MODELS.translation_threads
    resources:
        mem_mb=lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["mem_mb"],
        gpu=lambda wildcards: FAIRSEQ_MODELS.spec(wildcards)["gpus"],
        runtime=120,
    conda:
        "../envs/fairseq.yaml"
    script:
        "../scripts/fairseq_dev_scores.py"


rule fairseq_model_summary:
    """One row per in-house model: corpus size, epochs, dev loss, dev BLEU and chrF (its training time: training.json
    and the benchmark files, so that two runs of one config write the same table)."""
    input:
        expand("results/models/{system}/dev_scores.json", system=INHOUSE_MODELS),
    output:
        csv="results/tables/models.csv",
        html=report("results/tables/models.html", caption="../report/models.rst", category=DATA_SECTION, subcategory="in-house models"),
        markdown="results/tables/models.md",
    log:
        "logs/fairseq_model_summary.log",
    benchmark:
        "logs/benchmarks/fairseq_model_summary.tsv",
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/fairseq_model_summary.py"
