"""One row per in-house fairseq model: corpus, epochs, dev loss, dev BLEU and chrF (no wall-clock time)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.fairseq.training_log import model_summary_table  # noqa: E402
from nlp_robustness.fileio.text_files import read_json_records  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table, write_summary_table  # noqa: E402

table = model_summary_table(read_json_records(snakemake.input))
write_summary_table(table, snakemake.output.csv, snakemake.output.markdown)
write_html_table(table, snakemake.output.html, "In-house fairseq models: corpus, training, development loss, BLEU and chrF")
logging.info("%d models summarised", len(table))
