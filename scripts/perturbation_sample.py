"""The segments of one test set a perturbation family perturbs: a seeded, nested sample, or all of them."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table, write_testset_table  # noqa: E402
from nlp_robustness.sampling import sample_segments  # noqa: E402

table = read_testset_table(snakemake.input[0])
sample = sample_segments(
    table, snakemake.params.sample["sample_size"], snakemake.params.sample["seed"],
    snakemake.params.sample.get("group", snakemake.wildcards.family), snakemake.wildcards.base_testset,
)  # families that share their samples draw them under one group name
write_testset_table(sample, snakemake.output[0])
logging.info("%d of %d segments of %s sampled for %s", len(sample), len(table), snakemake.wildcards.base_testset, snakemake.wildcards.family)
