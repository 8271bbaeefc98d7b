"""Take an existing translation file of a test set, checking it aligns with the test set."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.errors import InputError  # noqa: E402
from nlp_robustness.fileio import atomic_write, write_lines  # noqa: E402
from nlp_robustness.data.testsets import read_plain_lines, read_testset_table  # noqa: E402

table = read_testset_table(snakemake.input.testset)
hypotheses = read_plain_lines(snakemake.input.hypotheses)
if snakemake.params.max_segments is not None:
    hypotheses = hypotheses[: snakemake.params.max_segments]
if len(hypotheses) != len(table):
    raise InputError(
        f"{snakemake.input.hypotheses}: {len(hypotheses)} lines but test set "
        f"{snakemake.wildcards.testset} has {len(table)} segments"
    )
write_lines(hypotheses, snakemake.output.translations)
with atomic_write(snakemake.output.report) as handle:
    json.dump({"system": snakemake.wildcards.system, "testset": snakemake.wildcards.testset,
               "hypotheses_file": snakemake.input.hypotheses, "segments": len(hypotheses)}, handle, indent=2)
logging.info("%d hypotheses imported from %s", len(hypotheses), snakemake.input.hypotheses)
