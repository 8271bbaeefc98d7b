"""Metrics I-III of one classifier's domain-level accuracies, on every leave-one-out pool, plain and bagged."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.statistics.robustness_metrics import epsilon_grid  # noqa: E402
from nlp_robustness.studies.sentiment import domain_level_robustness  # noqa: E402

predictions = pd.read_csv(snakemake.input.predictions, sep="\t", dtype={"review_id": str, "test_domain": str},
                          keep_default_na=False)
epsilon = snakemake.params.epsilon
summary, gamma, blocks = domain_level_robustness(
    predictions, snakemake.params.test_domains, snakemake.params.leave_out,
    seed=snakemake.params.seed, n_blocks=snakemake.params.blocks, fraction=snakemake.params.fraction,
    epsilons=epsilon_grid(epsilon["start"], epsilon["stop"], epsilon["step"]), unit=snakemake.params.bagging_unit,
)
for frame in (summary, gamma, blocks):
    frame.insert(0, "classifier", snakemake.wildcards.classifier)
for path, frame in ((snakemake.output.summary, summary), (snakemake.output.gamma, gamma), (snakemake.output.blocks, blocks)):
    with atomic_write(path) as handle:
        frame.to_csv(handle, sep="\t", index=False, float_format="%.6f", lineterminator="\n")
logging.info("\n%s", summary.to_string(index=False))
