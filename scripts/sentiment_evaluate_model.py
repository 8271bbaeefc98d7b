"""Predict every review of every test domain with one Hugging Face sequence classifier; accuracy per domain, report."""

import json
import logging
import sys
import time

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.studies.sentiment import ACCURACY_COLUMNS, accuracy_by_domain  # noqa: E402
from nlp_robustness.systems.hf_classifier import ModelSettings, load_classifier  # noqa: E402
from nlp_robustness.systems.sentiment_classifier import PREDICTION_COLUMNS, predict_test_domains, read_reviews  # noqa: E402

started = time.monotonic()
settings = ModelSettings.from_config(snakemake.wildcards.sentiment_model, snakemake.params.model)
classifier = load_classifier(settings)
test_domains = snakemake.params.test_domains
# trained elsewhere: no training domain, no seen texts; every review of every test domain, all cross-domain
predictions, excluded = predict_test_domains(
    classifier, read_reviews(snakemake.input.test_reviews), test_domains, None, None, set(), settings.fields,
    snakemake.input.test_reviews,
)
accuracy = accuracy_by_domain(predictions, test_domains, excluded)
write_table(predictions, snakemake.output.predictions, list(PREDICTION_COLUMNS))
write_table(accuracy, snakemake.output.accuracy, list(ACCURACY_COLUMNS))
reviews_per_domain = predictions.groupby("test_domain", sort=False).size().to_dict()
report = classifier.report({domain: int(count) for domain, count in reviews_per_domain.items()}, time.monotonic() - started)
with atomic_write(snakemake.output.report) as handle:
    json.dump(report, handle, indent=2, ensure_ascii=False)
    handle.write("\n")
logging.info("%s on %s\n%s", settings.model, classifier.device, accuracy.to_string(index=False))
