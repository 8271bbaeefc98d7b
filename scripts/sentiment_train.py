"""Train one sentiment classifier on one domain's reviews: seeded validation split, C chosen on it."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.systems.sentiment_classifier import (  # noqa: E402
    SPLIT_COLUMNS, ClassifierSettings, read_reviews, train_domain_classifier, write_pipeline,
)

settings = ClassifierSettings.from_config(snakemake.params.classifier)
trained, split, record = train_domain_classifier(
    read_reviews(snakemake.input.reviews),
    snakemake.wildcards.classifier,
    validation_fraction=snakemake.params.validation_fraction,
    seed=snakemake.params.seed,
    settings=settings,
    source=snakemake.input.reviews,
)
record["dataset"] = snakemake.params.dataset
write_pipeline(trained.pipeline, snakemake.output.model)
write_table(split, snakemake.output.split, list(SPLIT_COLUMNS))
with atomic_write(snakemake.output.training) as handle:
    json.dump(record, handle, indent=2)
    handle.write("\n")
logging.info("\n%s", trained.selection.to_string(index=False))
logging.info("%s: C = %g, validation accuracy %.2f%% (%d training, %d validation reviews, %d features)",
             record["classifier"], record["chosen_c"], record["validation_accuracy"],
             record["training_reviews"], record["validation_reviews"], record["vocabulary_size"])
