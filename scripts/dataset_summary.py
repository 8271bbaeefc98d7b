"""One row per dataset the config uses: origin, size, canonical URL and checksum source."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.acquisition import summary_table  # noqa: E402
from nlp_robustness.fileio.text_files import read_json_records  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table, write_summary_table  # noqa: E402

table = summary_table(read_json_records(snakemake.input))
write_summary_table(table, snakemake.output.csv, snakemake.output.markdown)
write_html_table(table, snakemake.output.html, "Datasets: origin (mirror or download), rows, canonical URL and checksum source")
logging.info("%d datasets summarised", len(table))
