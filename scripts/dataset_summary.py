"""One row per dataset the config uses: origin, size, canonical URL and checksum source."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.acquisition import summary_markdown, summary_table  # noqa: E402
from nlp_robustness.fileio import atomic_write  # noqa: E402

records = []
for path in snakemake.input:
    with open(path, encoding="utf-8") as handle:
        records.append(json.load(handle))
table = summary_table(records)
with atomic_write(snakemake.output.csv) as handle:
    table.to_csv(handle, index=False, lineterminator="\n")
with atomic_write(snakemake.output.markdown) as handle:
    handle.write(summary_markdown(table))
logging.info("%d datasets summarised", len(table))
