"""An identity test set (a record sample's part unperturbed, in the layout of its perturbed test sets) or a type's
control test set (its records unperturbed in its perturbed test set's layout when it has few perturbations, else empty)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS  # noqa: E402
from nlp_robustness.studies.natural_robustness_controls import identity_testset, type_control  # noqa: E402

job = snakemake.params.job
if "samples" in job:
    samples = {testset: read_testset_table(path) for testset, path in job["samples"].items()}
    table = identity_testset(samples)
    logging.info("%d unperturbed segments of %s", len(table), ", ".join(samples))
else:
    perturbed = {part: read_table(path, DERIVED_COLUMNS, "perturbed test set") for part, path in job["perturbed"].items()}
    table = type_control(perturbed, job["part"], job["below"])
    logging.info("%d of %d perturbed segments unperturbed (control below %d perturbations)", len(table),
                 sum(len(frame) for frame in perturbed.values()), job["below"])
write_table(table, snakemake.output[0], DERIVED_COLUMNS)
