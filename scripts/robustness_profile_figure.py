"""The robustness profile of one group of systems as a figure: a panel per axis, systems as rows."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.profile import plot_profile, read_profile_table  # noqa: E402

plot_profile(read_profile_table(snakemake.input[0]), snakemake.wildcards.profile_group, snakemake.params.label,
             {"png": snakemake.output.png, "pdf": snakemake.output.pdf}, snakemake.params.confidence)
