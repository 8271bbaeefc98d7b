"""One row per sentiment classifier: chosen C, validation accuracy, accuracy on every test domain."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import read_json_records, read_table  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.sentiment import accuracy_summary_markdown  # noqa: E402
from nlp_robustness.studies.sentiment import ACCURACY_COLUMNS, accuracy_summary  # noqa: E402

records = read_json_records(snakemake.input.training)
accuracies = {}
for classifier, path in snakemake.params.accuracy.items():
    table = read_table(path, ACCURACY_COLUMNS, "accuracy table")
    table["accuracy"] = table["accuracy"].astype(float)
    accuracies[classifier] = table
test_domains = snakemake.params.test_domains
summary = accuracy_summary(records, accuracies, test_domains)
with atomic_write(snakemake.output.csv) as handle:
    summary.to_csv(handle, index=False, float_format="%.6g", lineterminator="\n")
with atomic_write(snakemake.output.markdown) as handle:
    handle.write(accuracy_summary_markdown(summary, accuracies, test_domains))
write_html_table(summary, snakemake.output.html,
                 "Sentiment classifiers: chosen C, validation accuracy and accuracy (%) on every test domain", decimals=2)
logging.info("\n%s", summary.round(2).to_string(index=False))
