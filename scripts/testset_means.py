"""Mean sentence score of every system on every test set (rows = systems, columns = test sets)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402

systems, testsets, metric = snakemake.params.systems, snakemake.params.testsets, snakemake.wildcards.metric
paths = iter(snakemake.input)  # ordered as expand(): system-major, then test set
means = pd.DataFrame(
    {testset: [None] * len(systems) for testset in testsets}, index=pd.Index(systems, name="system"), dtype=float
)
for system in systems:
    for testset in testsets:
        means.at[system, testset] = pd.read_csv(next(paths), sep="\t", dtype={"segment_id": str})[metric].mean()
with atomic_write(snakemake.output[0]) as handle:
    means.to_csv(handle, float_format="%.4f", lineterminator="\n")
logging.info("\n%s", means.round(2).to_string())
