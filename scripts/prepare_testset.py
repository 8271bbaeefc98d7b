"""One test set into results/testsets/{testset}.tsv: a parsed manifest dataset or a configured pair of files."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import limit_segments, load_parallel_files, read_testset_table, write_testset_table  # noqa: E402

spec = snakemake.params.spec
if "dataset" in spec:
    table = limit_segments(read_testset_table(snakemake.input.dataset), snakemake.params.max_segments)
else:
    table = load_parallel_files(
        snakemake.input.source, snakemake.input.reference, spec["format"], limit=snakemake.params.max_segments
    )
write_testset_table(table, snakemake.output[0])
logging.info("%s: %d segments, %d documents", snakemake.wildcards.testset, len(table), table["doc_id"].nunique())
