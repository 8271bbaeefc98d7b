# Sentiment branch (paper Section 5, Tables 2, 4, 6): one classifier per training domain of the Amazon
# reviews, tested on every test domain; robustness = consistency of its domain-level accuracies.

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


rule sentiment_robustness:
    """Metrics I-III of one classifier's domain-level accuracies: whole pool, bagging, design bagging, each
    test domain left out in turn (every block's domain accuracies written out for audit)."""
    input:
        unpack(sentiment_robustness_inputs),
    output:
        summary="results/sentiment/robustness/{classifier}.summary.tsv",
        gamma="results/sentiment/robustness/{classifier}.gamma.tsv",
        block_scores="results/sentiment/robustness/{classifier}.blocks.tsv",
    log:
        "logs/sentiment_robustness/{classifier}.log",
    params:
        job=sentiment_robustness_job,
        row_label="classifier",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_statistics.py"


rule sentiment_robustness_tables:
    """Tables shaped like the paper's Tables 2, 4 and 6 (rows = training domain, column groups = left-out test domain)."""
    input:
        expand("results/sentiment/robustness/{classifier}.summary.tsv", classifier=SENTIMENT_CLASSIFIERS),
    output:
        csv="results/tables/sentiment/robustness_{method}.csv",
        html=report(
            "results/tables/sentiment/robustness_{method}.html",
            caption="../report/sentiment_robustness_table.rst", category=SENTIMENT_SECTION, subcategory="robustness",
        ),
        markdown="results/tables/sentiment/robustness_{method}.md",
        latex="results/tables/sentiment/robustness_{method}.tex",
    log:
        "logs/sentiment_robustness_tables/{method}.log",
    params:
        summaries=row_files("results/sentiment/robustness/{row}.summary.tsv", SENTIMENT_CLASSIFIERS),
        row_label="training domain",
        leave_out=SENTIMENT_LEAVE_OUT,
        branch="sentiment",
        scores="Domain-level accuracy (%) of sentiment classifiers",
        pool="test domain",
        note=(
            "COV is sigma/mu as in the MT tables; the paper's sentiment tables print 100*Var/Mean under that name."
        ),
        latex_label="sentiment-robustness",
        decimals=3,
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/robustness_tables.py"


rule sentiment_accuracy_table:
    """Each classifier's chosen C, validation accuracy and accuracy on every test domain."""
    input:
        training=expand("results/sentiment/models/{classifier}/training.json", classifier=SENTIMENT_CLASSIFIERS),
        accuracy=expand("results/sentiment/accuracy/{classifier}.tsv", classifier=SENTIMENT_CLASSIFIERS),
    output:
        csv="results/tables/sentiment/accuracy.csv",
        html=report(
            "results/tables/sentiment/accuracy.html",
            caption="../report/sentiment_accuracy.rst", category=SENTIMENT_SECTION, subcategory="accuracy",
        ),
        markdown="results/tables/sentiment/accuracy.md",
    log:
        "logs/sentiment_accuracy_table.log",
    params:
        accuracy=row_files("results/sentiment/accuracy/{row}.tsv", SENTIMENT_CLASSIFIERS),
        test_domains=lambda wildcards: SENTIMENT["test"]["domains"],
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/sentiment_accuracy_table.py"


rule sentiment_gamma_curves:
    """(epsilon, gamma)-Robustness of every classifier's domain-level accuracies on the whole pool."""
    input:
        expand("results/sentiment/robustness/{classifier}.gamma.tsv", classifier=SENTIMENT_CLASSIFIERS),
    output:
        png=report(
            "results/figures/sentiment/gamma_curves.png",
            caption="../report/sentiment_gamma_curves.rst", category=SENTIMENT_SECTION, subcategory="robustness",
        ),
        pdf="results/figures/sentiment/gamma_curves.pdf",
    log:
        "logs/sentiment_gamma_curves.log",
    params:
        curves=row_files("results/sentiment/robustness/{row}.gamma.tsv", SENTIMENT_CLASSIFIERS),
        metric="accuracy",
        scores="domain-level accuracy (%) on the pooled test domains",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/gamma_curves.py"
