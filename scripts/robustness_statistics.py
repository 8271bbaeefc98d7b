"""Metrics I-III of one row of a study (a system under a metric, a classifier) on every pool, plain and bagged,
with their intervals and the whole pool's bootstrap replicates (for the paired comparisons of rows)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.statistics.blocks import read_blocks  # noqa: E402
from nlp_robustness.statistics.engine import evaluate_study  # noqa: E402
from nlp_robustness.statistics.pool_uncertainty import UncertaintyOptions, write_replicates  # noqa: E402
from nlp_robustness.statistics.robustness_metrics import epsilon_grid  # noqa: E402
from nlp_robustness.studies.registry import study_module  # noqa: E402

job = snakemake.params.job
study = study_module(job["study"])
units = study.units(job["unit_files"], job["domains"], job["row"], job["score"], job["options"])
design = study.resampling_design(job["unit_files"], job["domains"], job["row"], job["score"], job["options"])
epsilon = job["epsilon"]
evaluation = evaluate_study(
    units, job["domains"], job["leave_out"], read_blocks(snakemake.input.blocks),
    epsilon_grid(epsilon["start"], epsilon["stop"], epsilon["step"]), design, job["aggregation"],
    study=f"{job['label']} study, {job['row']} ({job['score']})",
    variance_components=study.has_variance_components(job["options"]),
    uncertainty=UncertaintyOptions(**job["uncertainty"], threads=snakemake.threads),
    seed_labels=[job["label"]],
)
outputs = {"summary": evaluation.summary, "gamma": evaluation.gamma, "block_scores": evaluation.block_scores}
for name, frame in outputs.items():
    frame.insert(0, job["row_label"], job["row"])
    with atomic_write(snakemake.output[name]) as handle:
        frame.to_csv(handle, sep="\t", index=False, lineterminator="\n")  # full precision
# the digest names what was resampled: rows with the same digest are paired (the documents, when drawn from a universe)
write_replicates(snakemake.output.replicates, evaluation.replicates, design.resampled_keys(units))
logging.info("\n%s", evaluation.summary.to_string(index=False))
