"""Apply one perturbation function to the sampled reviews: the perturbed reviews and every review's status."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, STATUS_COLUMNS, derive_for_job  # noqa: E402
from nlp_robustness.perturbations.spacy_parsing import parse_samples  # noqa: E402

job = snakemake.params.job
records = read_testset_table(snakemake.input.records)
# each test domain is a test set: a review's perturbation is seeded by (seed, family, function, domain, review id)
samples = {domain: records[records["doc_id"] == domain].reset_index(drop=True) for domain in records["doc_id"].unique()}
parses = parse_samples(samples, job["parser"]["models"], job["parser"]["batch_size"]) if "parser" in job else None
derived, status = derive_for_job(job, samples, parses)
write_table(derived, snakemake.output.perturbed, DERIVED_COLUMNS)
write_table(status, snakemake.output.status, STATUS_COLUMNS)
logging.info("%s: kept %d of %d sampled reviews", job["function"], len(derived), len(status))
