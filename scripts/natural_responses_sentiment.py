"""One classifier's labels for the perturbed reviews against its labels for the originals: a TF-IDF
classifier trained here (input ``model``) or a Hugging Face model (params ``model``, its config entry)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS  # noqa: E402
from nlp_robustness.studies.natural_robustness_responses import (  # noqa: E402
    SENTIMENT_RESPONSE_COLUMNS,
    sentiment_responses,
)

model = getattr(snakemake.params, "model", None)  # a Hugging Face model's entry (rule natural_responses_sentiment_model)
if model is not None:
    from nlp_robustness.systems.hf_classifier import ModelSettings, load_classifier

    predict = load_classifier(ModelSettings.from_config(snakemake.wildcards.sentiment_model, model)).predict
else:
    import joblib

    predict = joblib.load(snakemake.input.model).predict  # written by the sentiment_train rule of this workflow
records = read_testset_table(snakemake.input.records)
derived = {
    perturbation_type: read_table(path, DERIVED_COLUMNS, "perturbed reviews")
    for perturbation_type, path in snakemake.params.job["perturbed"].items()
}
responses = sentiment_responses(predict, records, derived)
write_table(responses, snakemake.output[0], SENTIMENT_RESPONSE_COLUMNS)
logging.info("share unchanged per type:\n%s", responses.groupby("type", sort=False)["same_label"].mean().to_string())
