"""One domain of a WMT direct-assessment study: every row's rated segments (human score, sentence BLEU, chrF) and
every segment of the domain (BLEU, chrF), for the engine."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.wmt_da import rated_segments, read_da_segment_scores, read_line_domains  # noqa: E402
from nlp_robustness.fileio.text_files import read_text_lines, write_table  # noqa: E402
from nlp_robustness.scoring.sentence_scores import sentence_scores  # noqa: E402
from nlp_robustness.studies.human_files import add_file_metrics  # noqa: E402
from nlp_robustness.studies.human import SEGMENT_COLUMNS  # noqa: E402
from nlp_robustness.studies.human_da import ALL_SEGMENT_COLUMNS, check_da_rows, da_domain_tables  # noqa: E402

params = snakemake.params
where = f"human_studies.{snakemake.wildcards.human_study}"
source, reference = read_text_lines(snakemake.input.source, segments=True), read_text_lines(snakemake.input.reference, segments=True)
domains = read_line_domains(snakemake.input.domain_file, source)
scores = read_da_segment_scores(snakemake.input.scores)
check_da_rows(scores, params.rows, params.ignore_systems, snakemake.input.scores, where)
scores = rated_segments(scores, domains, where)
outputs = {row: read_text_lines(path, segments=True) for row, path in zip(params.rows, snakemake.input.outputs)}
rated, every = da_domain_tables(scores, domains, outputs, reference, source, snakemake.wildcards.human_domain,
                                params.score, params.drop_placeholders, where)
for metric in params.metrics:  # each segment scored once; the rated rows take their segment's score
    every[metric] = sentence_scores(every["hypothesis"].tolist(), every["reference"].tolist(), metric)
    lookup = every.set_index(["system", "segment_id"])[metric]
    rated[metric] = lookup.reindex(list(zip(rated["system"], rated["segment_id"]))).to_numpy()
file_metrics = add_file_metrics(rated, params.metric_files["spec"], params.metric_files["paths"], where, len(source))
write_table(rated, snakemake.output.rated, [*SEGMENT_COLUMNS, *params.metrics, *file_metrics])
write_table(every, snakemake.output.every, [*ALL_SEGMENT_COLUMNS, *params.metrics])
logging.info("%s: %d rated rows of %d systems; %d segments", snakemake.wildcards.human_domain, len(rated), len(outputs),
             every["segment_id"].nunique())
logging.info("\n%s", rated.groupby("system", sort=False)[["human", *params.metrics]].agg(["count", "mean"]).round(3))
