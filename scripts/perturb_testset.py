"""Apply one perturbation function to the sampled segments of one part: the perturbed test set and every segment's status."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, STATUS_COLUMNS, derive_for_job  # noqa: E402
from nlp_robustness.perturbations.parse import read_parse_table  # noqa: E402

job = snakemake.params.job
samples = {testset: read_testset_table(path) for testset, path in job["samples"].items()}
parses = None
if job["parses"] is not None:
    parses = {testset: {side: read_parse_table(path) for side, path in sides.items()} for testset, sides in job["parses"].items()}
derived, status = derive_for_job(job, samples, parses)
write_table(derived, snakemake.output.testset, DERIVED_COLUMNS)
write_table(status, snakemake.output.status, STATUS_COLUMNS)
logging.info("%s: kept %d of %d sampled segments", job["function"], len(derived), len(status))
skipped = status.loc[~status["kept"], "reason"].value_counts()
if not skipped.empty:
    logging.info("skipped:\n%s", skipped.to_string())
