"""A family part's sampled segments unperturbed, in the layout of its perturbed test sets."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio import write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS  # noqa: E402
from nlp_robustness.studies.natural_robustness_controls import identity_testset  # noqa: E402

samples = {testset: read_testset_table(path) for testset, path in snakemake.params.job["samples"].items()}
table = identity_testset(samples)
write_table(table, snakemake.output[0], DERIVED_COLUMNS)
logging.info("%d unperturbed segments of %s", len(table), ", ".join(samples))
