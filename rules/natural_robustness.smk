# Natural Robustness (paper 001) of every MT system and sentiment classifier: the share of benign
# perturbations (the functions of the families in natural_robustness.families: punctuation, casing,
# natural typos, paraphrases) that leave the response unchanged, 1.0 = robust. The MT side reads the
# perturbed test sets and translations that rules/perturbations.smk and the translation rules made; the
# sentiment side perturbs the reviews the classifiers answer, with the same family functions. Then the
# scores with binomial intervals (pooled: on an effective number of perturbations) on nested record
# samples, and their consistency across perturbation types through the one robustness engine.

from nlp_robustness.outputs.report_sections import NATURAL as NATURAL_SECTION


# The identity and control test sets are perturbed test sets' names (function "identity" is reserved): made here.
ruleorder: natural_identity_testset > perturb_testset


# A checkpoint: which control test sets hold records (and so are translated) is known once they are written.
checkpoint natural_identity_testset:
    """An identity test set: one part of a record sample (shared by the families that draw it) unperturbed, in the
    layout of its perturbed test sets, the originals every perturbation is compared with, translated among the same
    neighbours (like with like); or a type's control test set: its records unperturbed in its perturbed test set's
    layout when it has fewer than type_noise_floor_below perturbations (its own noise floor), else empty."""
    input:
        natural_identity_inputs,
    output:
        "results/testsets/{identity_testset}.tsv",
    log:
        "logs/natural_identity_testset/{identity_testset}.log",
    benchmark:
        "logs/benchmarks/natural_identity_testset/{identity_testset}.tsv",
    wildcard_constraints:
        identity_testset=_alternation(NATURAL_IDENTITY_JOBS),
    params:
        job=natural_identity_job,
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_identity_testset.py"


rule natural_review_records:
    """The reviews every classifier was tested on, as a test-set table (source = the document a classifier
    reads, reference = the label), a seeded nested sample per test domain."""
    input:
        unpack(natural_review_record_inputs),
    output:
        "results/natural_robustness/sentiment/records.tsv",
    log:
        "logs/natural_review_records.log",
    benchmark:
        "logs/benchmarks/natural_review_records.tsv",
    params:
        job=natural_review_record_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_review_records.py"


rule perturb_reviews:
    """One function of a family applied to the sampled reviews (seeded per review, as for test segments)."""
    input:
        unpack(perturb_review_inputs),
    output:
        perturbed="results/natural_robustness/sentiment/perturbed/{family}/{function}.tsv",
        status="results/natural_robustness/sentiment/perturbed/{family}/{function}.segments.tsv",
    log:
        "logs/perturb_reviews/{family}/{function}.log",
    benchmark:
        "logs/benchmarks/perturb_reviews/{family}/{function}.tsv",
    params:
        job=perturb_review_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/perturb_reviews.py"


rule natural_responses_mt:
    """One MT system's translation of every perturbed segment against its translation of the original:
    same after normalisation (exact), and sentence chrF of the one against the other (chrf)."""
    input:
        natural_mt_response_inputs,
        natural_mt_control_translations,
    output:
        "results/natural_robustness/responses/mt/{system}.tsv",
    log:
        "logs/natural_responses_mt/{system}.log",
    benchmark:
        "logs/benchmarks/natural_responses_mt/{system}.tsv",
    params:
        job=natural_mt_response_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_responses_mt.py"


rule natural_responses_sentiment:
    """One classifier's label for every perturbed review against its label for the original review."""
    input:
        unpack(natural_sentiment_response_inputs),
    output:
        "results/natural_robustness/responses/sentiment/{classifier}.tsv",
    log:
        "logs/natural_responses_sentiment/{classifier}.log",
    benchmark:
        "logs/benchmarks/natural_responses_sentiment/{classifier}.tsv",
    params:
        job=natural_sentiment_response_job,
    threads: 1
    resources:
        mem_mb=4000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_responses_sentiment.py"


rule natural_responses_sentiment_model:
    """One Hugging Face model's label for every perturbed review against its label for the original review."""
    input:
        unpack(natural_sentiment_model_response_inputs),
    output:
        "results/natural_robustness/responses/sentiment/{sentiment_model}.tsv",
    log:
        "logs/natural_responses_sentiment_model/{sentiment_model}.log",
    benchmark:
        "logs/benchmarks/natural_responses_sentiment_model/{sentiment_model}.tsv",
    params:
        job=natural_sentiment_response_job,
        model=sentiment_model_spec,
    threads: lambda wildcards: sentiment_model_spec(wildcards)["cpu_threads"]
    resources:
        mem_mb=8000,
        runtime=60,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_responses_sentiment.py"


rule natural_robustness_scores:
    """The Natural Robustness score (share unchanged, 1.0 = robust) of every system and classifier, per
    perturbation type and overall, and its identity controls (one per record sample, one per type with few
    perturbations), on every record sample, with binomial intervals
    (the pooled share's on its perturbations over the records' design effect); and the MT systems' chrF
    criterion at every threshold of chrf_thresholds."""
    input:
        unpack(natural_score_inputs),
    output:
        scores="results/natural_robustness/scores.tsv",
        thresholds="results/natural_robustness/chrf_thresholds.tsv",
    log:
        "logs/natural_robustness_scores.log",
    benchmark:
        "logs/benchmarks/natural_robustness_scores.tsv",
    params:
        job=natural_score_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_robustness_scores.py"


rule natural_robustness_tables:
    """The scores per system and perturbation type (each record sample side by side) with each system's noise
    floor (and a small type's own, beside it), the chrF criterion's scores against its threshold, and how much each perturbation type changed its
    inputs (share perturbed, rejected by the meaning check, chrF of the perturbed input to the original)."""
    input:
        unpack(natural_table_inputs),
    output:
        scores="results/tables/natural_robustness/scores.csv",
        scores_html=report(
            "results/tables/natural_robustness/scores.html",
            caption="../report/natural_robustness_scores.rst", category=NATURAL_SECTION, subcategory="scores",
        ),
        scores_markdown="results/tables/natural_robustness/scores.md",
        scores_latex="results/tables/natural_robustness/scores.tex",
        changes="results/tables/natural_robustness/perturbation_changes.csv",
        changes_html=report(
            "results/tables/natural_robustness/perturbation_changes.html",
            caption="../report/natural_robustness_changes.rst", category=NATURAL_SECTION, subcategory="perturbation changes",
        ),
        changes_markdown="results/tables/natural_robustness/perturbation_changes.md",
        thresholds="results/tables/natural_robustness/chrf_thresholds.csv",
        thresholds_html=report(
            "results/tables/natural_robustness/chrf_thresholds.html",
            caption="../report/natural_robustness_thresholds.rst", category=NATURAL_SECTION, subcategory="scores",
        ),
        thresholds_markdown="results/tables/natural_robustness/chrf_thresholds.md",
    log:
        "logs/natural_robustness_tables.log",
    benchmark:
        "logs/benchmarks/natural_robustness_tables.tsv",
    params:
        job=natural_table_job,
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_robustness_tables.py"


rule natural_robustness_figure:
    """Every score with its interval, one panel per way of comparing responses; filled: every record, open:
    the smallest record sample."""
    input:
        "results/natural_robustness/scores.tsv",
    output:
        png=report(
            "results/figures/natural_robustness/scores.png",
            caption="../report/natural_robustness_figure.rst", category=NATURAL_SECTION, subcategory="scores",
        ),
        pdf="results/figures/natural_robustness/scores.pdf",
    log:
        "logs/natural_robustness_figure.log",
    benchmark:
        "logs/benchmarks/natural_robustness_figure.tsv",
    params:
        chrf_threshold=lambda wildcards: NATURAL["same_response"]["chrf_threshold"],
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        "../envs/python.yaml"
    script:
        "../scripts/natural_robustness_figure.py"
