"""Metrics I-III of one system and metric on every leave-one-out pool, without sampling and bagged."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.statistics.robustness_metrics import epsilon_grid  # noqa: E402
from nlp_robustness.statistics.engine import evaluate_pools, read_blocks  # noqa: E402

testsets = snakemake.params.testsets
scores = {
    name: pd.read_csv(path, sep="\t", dtype={"segment_id": str}, keep_default_na=False)
    for name, path in zip(testsets, snakemake.input.scores)
}
block_paths = iter(snakemake.input.blocks)  # ordered as bagging_block_files(): method-major, then left_out
blocks = {
    (method, left_out): read_blocks(next(block_paths))
    for method in ("bagging", "design_bagging")
    for left_out in snakemake.params.leave_out
}
epsilon = snakemake.params.epsilon
summary, gamma = evaluate_pools(
    scores, testsets, snakemake.params.leave_out, blocks,
    epsilon_grid(epsilon["start"], epsilon["stop"], epsilon["step"]), snakemake.wildcards.metric,
)
summary.insert(0, "system", snakemake.wildcards.system)
gamma.insert(0, "system", snakemake.wildcards.system)
with atomic_write(snakemake.output.summary) as handle:
    summary.to_csv(handle, sep="\t", index=False, float_format="%.6f", lineterminator="\n")
with atomic_write(snakemake.output.gamma) as handle:
    gamma.to_csv(handle, sep="\t", index=False, float_format="%.6f", lineterminator="\n")
logging.info("\n%s", summary.to_string(index=False))
