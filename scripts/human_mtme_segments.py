"""One domain of an MTME human study: every system's own rated segments with its human score, sentence BLEU and chrF
(the workflow's own scoring) and every metric of its metric files."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.mtme import read_mtme_documents, read_mtme_segment_scores, system_scores  # noqa: E402
from nlp_robustness.fileio.text_files import read_text_lines, write_table  # noqa: E402
from nlp_robustness.scoring.sentence_scores import sentence_scores  # noqa: E402
from nlp_robustness.studies.human import SEGMENT_COLUMNS  # noqa: E402
from nlp_robustness.studies.human_files import add_file_metrics, mtme_domain_segments, score_file_name  # noqa: E402

params, files = snakemake.params, snakemake.input
where, domain = f"human_studies.{snakemake.wildcards.human_study}", snakemake.wildcards.human_domain
spec = params.metric_files["spec"]
rows = list(spec["systems"])
documents = read_mtme_documents(files.documents)
human = system_scores(read_mtme_segment_scores(files.scores, len(documents)),
                      {row: score_file_name(spec, row) for row in rows}, files.scores, f"{where}.scores")
outputs = {row: read_text_lines(path, segments=True) for row, path in zip(rows, files.outputs)}
source, reference = read_text_lines(files.source, segments=True), read_text_lines(files.reference, segments=True)
segments = mtme_domain_segments(human, documents, source, reference, outputs, domain, where)
for metric in params.metrics:  # sacrebleu's defaults (13a for BLEU): the target is English
    segments[metric] = sentence_scores(segments["hypothesis"].tolist(), segments["reference"].tolist(), metric)
file_metrics = add_file_metrics(segments, spec, params.metric_files["paths"], where, len(documents), domain)
write_table(segments, snakemake.output[0], [*SEGMENT_COLUMNS, *params.metrics, *file_metrics])
logging.info("%s: %d rated rows of %d systems", domain, len(segments), len(rows))
logging.info("\n%s", segments.groupby("system", sort=False)[["human", *params.metrics, *file_metrics]].agg(["count", "mean"]).round(3))
