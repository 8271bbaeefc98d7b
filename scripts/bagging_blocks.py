"""Draw the blocks of bagging (Algorithm 5) or design bagging (Algorithm 6) over one leave-one-out pool."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.statistics.bagging import draw_blocks, rng_for  # noqa: E402
from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.statistics.engine import blocks_frame, pool_keys  # noqa: E402
from nlp_robustness.data.testsets import read_testset_table  # noqa: E402

testsets = snakemake.params.pool_testsets
tables = dict(zip(testsets, (read_testset_table(path) for path in snakemake.input)))
keys = pool_keys({name: table["segment_id"].tolist() for name, table in tables.items()}, testsets)

method = snakemake.wildcards.bagging_method
rng = rng_for(snakemake.params.seed, method, snakemake.wildcards.left_out)
indices = draw_blocks(method, len(keys), snakemake.params.fraction, snakemake.params.blocks, rng)

with atomic_write(snakemake.output[0]) as handle:
    blocks_frame(indices, keys).to_csv(handle, sep="\t", index=False, lineterminator="\n")
logging.info("%s, left out %s: pool %d segments, %d blocks of %d",
             method, snakemake.wildcards.left_out, len(keys), indices.shape[0], indices.shape[1])
