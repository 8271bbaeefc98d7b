"""Every group's axis rankings in one compact figure (the report opens with it)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.profile import plot_axes_overview, read_axes_table  # noqa: E402

plot_axes_overview(read_axes_table(snakemake.input[0]), snakemake.params.labels,
                   {"png": snakemake.output.png, "pdf": snakemake.output.pdf}, snakemake.params.confidence)
