# Sentiment branch (paper Section 5, Tables 2, 4, 6): one classifier per training domain of the Amazon
# reviews, tested on every test domain, and every Hugging Face model of sentiment.models, tested on every
# review of every test domain; robustness = consistency of each one's domain-level accuracies.

from nlp_robustness.outputs.report_sections import SENTIMENT as SENTIMENT_SECTION


rule sentiment_train:
    """Train one classifier on one domain: seeded 15 % validation split (stratified, grouped by text), TF-IDF
    n-grams + logistic regression, C chosen on the validation split."""
    input:
        reviews=sentiment_training_table,
    output:
        model="results/sentiment/models/{classifier}/model.joblib",
        split="results/sentiment/models/{classifier}/split.tsv",
        training="results/sentiment/models/{classifier}/training.json",
    log:
        "logs/sentiment_train/{classifier}.log",
    benchmark:
        "logs/benchmarks/sentiment_train/{classifier}.tsv",
    params:
        dataset=lambda wildcards: SENTIMENT["training"]["dataset"],
        validation_fraction=lambda wildcards: SENTIMENT["training"]["validation_fraction"],
        seed=lambda wildcards: SENTIMENT["training"]["seed"],
        classifier=lambda wildcards: SENTIMENT["classifier"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/sentiment_train.py"


rule sentiment_evaluate:
    """Predict every test domain with one classifier (its own domain: the held-out split); accuracy per domain."""
    input:
        unpack(sentiment_evaluation_inputs),
    output:
        predictions="results/sentiment/predictions/{classifier}.tsv",
        accuracy="results/sentiment/accuracy/{classifier}.tsv",
    log:
        "logs/sentiment_evaluate/{classifier}.log",
    benchmark:
        "logs/benchmarks/sentiment_evaluate/{classifier}.tsv",
    params:
        training_dataset=lambda wildcards: SENTIMENT["training"]["dataset"],
        test_dataset=lambda wildcards: SENTIMENT["test"]["dataset"],
        test_domains=lambda wildcards: SENTIMENT["test"]["domains"],
        classifier=lambda wildcards: SENTIMENT["classifier"],
    threads: 1
    resources:
        mem_mb=8000,
        runtime=60,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/sentiment_evaluate.py"


rule sentiment_evaluate_model:
    """Predict every review of every test domain with a Hugging Face sequence classifier (trained elsewhere:
    every domain is cross-domain for it); accuracy per domain and a report of the model's files and run."""
    input:
        unpack(sentiment_model_evaluation_inputs),
    output:
        predictions="results/sentiment/predictions/{sentiment_model}.tsv",
        accuracy="results/sentiment/accuracy/{sentiment_model}.tsv",
        report="results/sentiment/predictions/{sentiment_model}.report.json",
    log:
        "logs/sentiment_evaluate_model/{sentiment_model}.log",
    benchmark:
        "logs/benchmarks/sentiment_evaluate_model/{sentiment_model}.tsv",
    params:
        model=sentiment_model_spec,
        test_domains=lambda wildcards: SENTIMENT["test"]["domains"],
    threads: lambda wildcards: sentiment_model_spec(wildcards)["cpu_threads"]
    resources:
        mem_mb=8000,
        runtime=120,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/sentiment_evaluate_model.py"


rule sentiment_accuracy_table:
    """Each classifier's chosen C, validation accuracy and accuracy on every test domain (a Hugging Face
    model: its accuracies only)."""
    input:
        training=expand("results/sentiment/models/{classifier}/training.json", classifier=SENTIMENT_CLASSIFIERS),
        accuracy=expand("results/sentiment/accuracy/{classifier}.tsv", classifier=SENTIMENT_ROWS),
    output:
        csv="results/tables/sentiment/accuracy.csv",
        html=report(
            "results/tables/sentiment/accuracy.html",
            caption="../report/sentiment_accuracy.rst", category=SENTIMENT_SECTION, subcategory="accuracy",
        ),
        markdown="results/tables/sentiment/accuracy.md",
    log:
        "logs/sentiment_accuracy_table.log",
    benchmark:
        "logs/benchmarks/sentiment_accuracy_table.tsv",
    params:
        accuracy=row_files("results/sentiment/accuracy/{row}.tsv", SENTIMENT_ROWS),
        test_domains=lambda wildcards: SENTIMENT["test"]["domains"],
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/sentiment_accuracy_table.py"
