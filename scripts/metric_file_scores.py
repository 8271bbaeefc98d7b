"""One system's scores of one test set under a metric read from files, aligned with the prepared test set's segments."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.studies.domains import write_score_table  # noqa: E402
from nlp_robustness.studies.metric_files import aligned_score_table  # noqa: E402

job, wildcards = snakemake.params.job, snakemake.wildcards
table = read_testset_table(snakemake.input.testset)
with open(snakemake.input.provenance, encoding="utf-8") as handle:
    whole = int(json.load(handle)["segments_read"])  # the segments of the file or dataset the test set is made from
scores = aligned_score_table(table, whole, job["entry"], wildcards.system, wildcards.file_metric, wildcards.testset,
                             job["where"])
write_score_table(scores, snakemake.output[0])
logging.info("%s: %d segments, mean %s %.4f", wildcards.testset, len(scores), wildcards.file_metric,
             scores[wildcards.file_metric].mean())
