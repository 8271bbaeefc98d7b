"""Intervals of every metric variant's DARR tau (segment bootstrap) and paired tests of tau differences between variants."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.text_files import read_table  # noqa: E402
from nlp_robustness.outputs.metric_robustness import tau_difference_markdown, tau_interval_markdown  # noqa: E402
from nlp_robustness.outputs.table_writer import csv_text, write_text  # noqa: E402
from nlp_robustness.studies.metric_attacks import AGREEMENT_KEY_COLUMNS  # noqa: E402
from nlp_robustness.studies.metric_tau_uncertainty import tau_uncertainty_tables  # noqa: E402

job = snakemake.params.job
agreement = read_table(snakemake.input.agreement, AGREEMENT_KEY_COLUMNS, "agreement table")
intervals, differences = tau_uncertainty_tables(
    agreement, job["variants"], job["conditions"], job["resamples"], job["confidence"], job["seed"]
)
write_text(csv_text(intervals), snakemake.output.intervals)
write_text(tau_interval_markdown(intervals, job["confidence"]), snakemake.output.intervals_markdown)
write_text(csv_text(differences), snakemake.output.differences)
write_text(tau_difference_markdown(differences, job["confidence"]), snakemake.output.differences_markdown)
logging.info("\n%s", differences[differences["pair"] == "average"].round(3).to_string())
