# Lookup tables and input functions of the sentiment branch (rules/sentiment.smk); included by rules/common.smk.


def sentiment_training_table(wildcards):
    return f"results/datasets/{SENTIMENT['training']['dataset']}.tsv"


def sentiment_evaluation_inputs(wildcards):
    """A classifier, its split, the training reviews (for its held-out split and seen texts) and the test reviews."""
    prefix = f"results/sentiment/models/{wildcards.classifier}"
    return {
        "model": f"{prefix}/model.joblib",
        "split": f"{prefix}/split.tsv",
        "training_reviews": sentiment_training_table(wildcards),
        "test_reviews": f"results/datasets/{SENTIMENT['test']['dataset']}.tsv",
    }


def sentiment_outputs():
    """The sentiment branch's accuracy table (its robustness tables and figure are the study plan's)."""
    if not SENTIMENT:
        return []
    return [
        *expand("results/tables/sentiment/accuracy.{extension}", extension=["csv", "md", "html"]),
    ]
