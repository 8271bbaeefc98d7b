"""Predict every test domain's reviews with one classifier; accuracy per test domain."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import joblib  # noqa: E402

from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.studies.sentiment import ACCURACY_COLUMNS, accuracy_by_domain  # noqa: E402
from nlp_robustness.systems.sentiment_classifier import (  # noqa: E402
    PREDICTION_COLUMNS,
    SPLIT_COLUMNS,
    ClassifierSettings,
    predict_test_domains,
    read_reviews,
    training_side,
)

settings = ClassifierSettings.from_config(snakemake.params.classifier)
pipeline = joblib.load(snakemake.input.model)  # written by the sentiment_train rule of this workflow
training_reviews = read_reviews(snakemake.input.training_reviews)
validation, seen = training_side(
    training_reviews, read_table(snakemake.input.split, SPLIT_COLUMNS, "split table"), settings, snakemake.input.split
)
same_dataset = snakemake.params.training_dataset == snakemake.params.test_dataset
test_reviews = training_reviews if same_dataset else read_reviews(snakemake.input.test_reviews)
predictions, excluded = predict_test_domains(
    pipeline, test_reviews, snakemake.params.test_domains, snakemake.wildcards.classifier,
    validation if same_dataset else None, seen, settings.fields, snakemake.input.test_reviews,
)
accuracy = accuracy_by_domain(predictions, snakemake.params.test_domains, excluded)
write_table(predictions, snakemake.output.predictions, list(PREDICTION_COLUMNS))
write_table(accuracy, snakemake.output.accuracy, list(ACCURACY_COLUMNS))
logging.info("\n%s", accuracy.to_string(index=False))
