"""One classifier's labels for the perturbed reviews against its labels for the originals."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import joblib  # noqa: E402

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio import read_table, write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS  # noqa: E402
from nlp_robustness.studies.natural_robustness import SENTIMENT_RESPONSE_COLUMNS, sentiment_responses  # noqa: E402

pipeline = joblib.load(snakemake.input.model)  # written by the sentiment_train rule of this workflow
records = read_testset_table(snakemake.input.records)
derived = {
    perturbation_type: read_table(path, DERIVED_COLUMNS, "perturbed reviews")
    for perturbation_type, path in snakemake.params.job["perturbed"].items()
}
responses = sentiment_responses(pipeline.predict, records, derived)
write_table(responses, snakemake.output[0], SENTIMENT_RESPONSE_COLUMNS)
logging.info("share unchanged per type:\n%s", responses.groupby("type", sort=False)["same_label"].mean().to_string())
