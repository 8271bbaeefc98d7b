"""The reviews every classifier answers, sampled per test domain, as the records of the classifiers' Natural Robustness."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import write_testset_table  # noqa: E402
from nlp_robustness.studies.natural_robustness_responses import review_records  # noqa: E402
from nlp_robustness.studies.sentiment import read_predictions  # noqa: E402
from nlp_robustness.systems.sentiment_classifier import read_reviews, review_documents  # noqa: E402

job = snakemake.params.job
reviews = read_reviews(snakemake.input.reviews)
reviews = reviews[reviews["domain"].isin(job["test_domains"])]
records = review_records(
    {classifier: read_predictions(path) for classifier, path in job["predictions"].items()},
    reviews, review_documents(reviews, job["fields"]), job["test_domains"], job["reviews_per_domain"], job["seed"], job["group"],
)
write_testset_table(records, snakemake.output[0])
logging.info("records per test domain:\n%s", records["doc_id"].value_counts(sort=False).to_string())
