"""One domain of an MQM human-judgement study: rated segments of every system with human score, sentence BLEU and chrF."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.text_files import read_text_lines, write_table  # noqa: E402
from nlp_robustness.data.mqm import error_file_texts, read_mqm_error_texts, read_mqm_segment_scores  # noqa: E402
from nlp_robustness.studies.human import SEGMENT_COLUMNS  # noqa: E402
from nlp_robustness.studies.human_mqm import domain_segments  # noqa: E402
from nlp_robustness.scoring.sentence_scores import sentence_scores  # noqa: E402
from nlp_robustness.studies.human_files import add_file_metrics  # noqa: E402

domain = f"{snakemake.wildcards.human_study}, {snakemake.wildcards.human_domain}"
systems = snakemake.params.systems
scores = read_mqm_segment_scores(snakemake.input.scores)
if snakemake.params.reference_system is not None:
    source, reference, outputs = error_file_texts(
        read_mqm_error_texts(snakemake.input.errors), systems, snakemake.params.reference_system, snakemake.input.errors
    )
else:
    source, reference = read_text_lines(snakemake.input.source, segments=True), read_text_lines(snakemake.input.reference, segments=True)
    outputs = {system: read_text_lines(path, segments=True) for system, path in zip(systems, snakemake.input.outputs)}
    for system, lines in outputs.items():
        if len(lines) != len(source):
            raise ValueError(f"human domain {domain}: output of {system} has {len(lines)} lines, the source {len(source)}")
segments = domain_segments(scores, systems, source, reference, outputs, domain)
for metric in snakemake.params.metrics:
    segments[metric] = sentence_scores(segments["hypothesis"].tolist(), segments["reference"].tolist(), metric)
length = len(source) if isinstance(source, list) else None  # a per-error file holds only the rated segments' texts
file_metrics = add_file_metrics(segments, snakemake.params.metric_files["spec"], snakemake.params.metric_files["paths"],
                                f"human_studies.{snakemake.wildcards.human_study}", length, snakemake.wildcards.human_domain)
write_table(segments, snakemake.output[0], [*SEGMENT_COLUMNS, *snakemake.params.metrics, *file_metrics])
logging.info("%s: %d rated segments x %d systems", domain, segments["segment_id"].nunique(), len(systems))
logging.info("\n%s", segments.groupby("system", sort=False)[["human", *snakemake.params.metrics, *file_metrics]].mean().round(3))
