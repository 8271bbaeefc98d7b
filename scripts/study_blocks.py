"""Draw the blocks of bagging (Algorithm 5) and design bagging (Algorithm 6) over every pool of one study."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.statistics.blocks import draw_study_blocks, write_blocks  # noqa: E402
from nlp_robustness.studies.registry import study_module  # noqa: E402

job = snakemake.params.job
keys = study_module(job["study"]).unit_keys(job["unit_files"], job["domains"], job["options"])
blocks = draw_study_blocks(
    keys, job["domains"], job["leave_out"], seed=job["seed"], namespace=job["namespace"],
    n_blocks=job["blocks"], fraction=job["fraction"], study=f"block set {snakemake.wildcards.block_set}",
)
with atomic_write(snakemake.output[0]) as handle:
    write_blocks(blocks, handle)  # what blocks.to_csv(handle, sep="\t", index=False, lineterminator="\n") writes
sizes = blocks.groupby(["method", "left_out", "block"], sort=False).size().groupby(["method", "left_out"], sort=False).first()
logging.info("%d unit keys; blocks of %d per pool and method, of sizes:\n%s", len(keys), job["blocks"], sizes.to_string())
