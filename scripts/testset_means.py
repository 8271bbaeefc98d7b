"""Mean sentence score of every system on every test set (rows = systems, columns = test sets)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.studies.domains import testset_means  # noqa: E402

metric, study = snakemake.wildcards.metric, snakemake.wildcards.mt_study
means = testset_means(snakemake.params.score_tables, metric)
with atomic_write(snakemake.output.csv) as handle:
    means.to_csv(handle, float_format="%.4f", lineterminator="\n")
write_html_table(means, snakemake.output.html, f"Study {study}: mean sentence {metric} of every system on every test set", decimals=2, index=True)
logging.info("\n%s", means.round(2).to_string())
