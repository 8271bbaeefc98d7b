"""One WMT19 pair's judged segments: a seeded sample of its DARR segments, their references and judged outputs."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.studies.metric_attack_scoring import DARR_COLUMNS, HYPOTHESIS_COLUMNS, SEGMENT_COLUMNS, sample_pair  # noqa: E402

files = snakemake.params.files
darr, segments, hypotheses = sample_pair(
    snakemake.wildcards.wmt19_pair, files["darr"], files["reference"], files["outputs"],
    snakemake.params.sample_size, snakemake.params.seed,
)
write_table(darr, snakemake.output.darr, DARR_COLUMNS)
write_table(segments, snakemake.output.segments, SEGMENT_COLUMNS)
write_table(hypotheses, snakemake.output.hypotheses, HYPOTHESIS_COLUMNS)
logging.info(
    "%s: %d segments, %d judgements, %d judged outputs of %d systems",
    snakemake.wildcards.wmt19_pair, len(segments), len(darr), len(hypotheses), hypotheses["system"].nunique(),
)
