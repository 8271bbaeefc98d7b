# Lookup tables and input functions of the sentiment branch (rules/sentiment.smk); included by rules/common.smk.


def sentiment_training_table(wildcards):
    return f"results/datasets/{SENTIMENT['training']['dataset']}.tsv"


def sentiment_evaluation_inputs(wildcards):
    """A TF-IDF classifier, its split, the training reviews (for its held-out split and seen texts) and the test reviews."""
    prefix = f"results/sentiment/models/{wildcards.classifier}"
    return {
        "model": f"{prefix}/model.joblib",
        "split": f"{prefix}/split.tsv",
        "training_reviews": sentiment_training_table(wildcards),
        "test_reviews": f"results/datasets/{SENTIMENT['test']['dataset']}.tsv",
    }


def sentiment_model_spec(wildcards):
    """The config entry of a Hugging Face model (sentiment.models.<name>), defaults filled in."""
    return SENTIMENT["models"][wildcards.sentiment_model]


def sentiment_model_files(wildcards):
    """The files of a model given as a local directory (so replacing them reruns its jobs); none for a hub id."""
    directory = Path(sentiment_model_spec(wildcards)["model"]).expanduser()
    if not directory.is_dir():
        return []
    return sorted(str(path) for path in directory.rglob("*")
                  if path.is_file() and not any(part.startswith(".") for part in path.relative_to(directory).parts))


def sentiment_model_evaluation_inputs(wildcards):
    """A model's files (a local directory's) and the test reviews."""
    return {
        "model_files": sentiment_model_files(wildcards),
        "test_reviews": f"results/datasets/{SENTIMENT['test']['dataset']}.tsv",
    }


def sentiment_outputs():
    """The sentiment branch's accuracy table (its robustness tables and figure are the study plan's)."""
    if not SENTIMENT:
        return []
    return [
        *expand("results/tables/sentiment/accuracy.{extension}", extension=["csv", "md", "html"]),
    ]
