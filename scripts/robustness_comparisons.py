"""Paired comparisons of every pair of rows of one study table (whole pool), within each family of rows: differences
of each statistic with Holm-adjusted intervals and p-values, verdict matrices, and the units per domain a difference
would need."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.comparisons import comparisons_markdown, to_csv_text  # noqa: E402
from nlp_robustness.statistics.comparisons import COMPARED_STATISTICS, compare_rows  # noqa: E402
from nlp_robustness.statistics.engine import read_summary  # noqa: E402
from nlp_robustness.statistics.pool_uncertainty import read_replicates  # noqa: E402
from nlp_robustness.statistics.pools import WHOLE_POOL  # noqa: E402

spec = snakemake.params.table
settings = snakemake.params.uncertainty
summaries = {row: read_summary(path) for row, path in spec["summaries"].items()}
replicates = {row: read_replicates(path) for row, path in spec["replicates"].items()}
# no COV where the table prints none (a human score whose mean is near or below 0: the COV means nothing)
compared = [statistic for statistic in COMPARED_STATISTICS if statistic != "cov" or spec["with_cov"]]
comparisons = compare_rows(summaries, replicates, WHOLE_POOL, settings["confidence"], settings["power"], settings["seed"],
                           spec["families"], compared)
with atomic_write(snakemake.output.csv) as handle:
    handle.write(to_csv_text(comparisons))
with atomic_write(snakemake.output.markdown) as handle:
    handle.write(comparisons_markdown(comparisons, list(summaries), spec["scores"], settings["confidence"], spec["decimals"],
                                      settings["resamples"], spec["aggregation"], note=snakemake.params.resampling_note,
                                      higher_is_better=spec.get("higher_is_better", True)))
logging.info("%d comparisons, %d told apart", len(comparisons), int((comparisons["verdict"] != "not distinguishable").sum()))
