"""Parse one manifest dataset (mirror or downloaded copy) into results/datasets/{dataset}.tsv."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.acquisition import plan_from_params, provenance_record, read_dataset  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402

plan = plan_from_params(snakemake.params.plan)
logging.info("%s: reading the %s copy (%s format)", plan.dataset, plan.origin, plan.format)
table = read_dataset(plan)
record = provenance_record(plan, table, snakemake.params.canonical_downloads)
write_table(table, snakemake.output.table, list(table.columns))
with atomic_write(snakemake.output.provenance) as handle:
    json.dump(record, handle, indent=2, ensure_ascii=False)
    handle.write("\n")
expected = "not known in advance" if plan.segments is None else f"{plan.segments} expected"
logging.info("%s: %d rows (%s)", plan.dataset, len(table), expected)
