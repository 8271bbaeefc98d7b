"""A DA study's check table: organisers' system scores recomputed, per-domain means on the rated segments."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.wmt_da import read_da_segment_scores, read_da_system_scores  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import markdown_table, write_html_table  # noqa: E402
from nlp_robustness.studies.human import read_segments  # noqa: E402
from nlp_robustness.studies.human_da import da_domain_means  # noqa: E402

params = snakemake.params
segments = {domain: read_segments(path) for domain, path in zip(params.domains, snakemake.input.segments)}
for frame in segments.values():
    for column in ("human", *params.metrics):
        frame[column] = frame[column].astype(float)
system_scores = read_da_system_scores(snakemake.input.system_scores) if "system_scores" in snakemake.input.keys() else None
table = da_domain_means(read_da_segment_scores(snakemake.input.scores), segments, params.rows, params.metrics, system_scores)
with atomic_write(snakemake.output.csv) as handle:
    table.to_csv(handle, index=False, lineterminator="\n")
with atomic_write(snakemake.output.markdown) as handle:
    handle.write(markdown_table(table.round(4)))
write_html_table(table, snakemake.output.html,
                 f"{snakemake.wildcards.human_study}: organisers' system scores recomputed; per-domain means on the rated segments")
logging.info("\n%s", table.round(4).to_string(index=False))
