"""Parse one test set into the aligned table results/testsets/{testset}.tsv."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.testsets import load_manifest, load_parallel_files, load_parallel_testset, write_testset_table  # noqa: E402

spec = snakemake.params.spec
if "dataset" in spec:
    dataset = load_manifest(snakemake.input.manifest)[spec["dataset"]]
    table = load_parallel_testset(dataset, snakemake.params.mirror_dir, limit=snakemake.params.max_segments)
else:
    table = load_parallel_files(
        snakemake.input.source, snakemake.input.reference, spec["format"], limit=snakemake.params.max_segments
    )
write_testset_table(table, snakemake.output[0])
logging.info("%s: %d segments, %d documents", snakemake.wildcards.testset, len(table), table["doc_id"].nunique())
