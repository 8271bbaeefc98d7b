"""Every group's axis rankings in one compact figure (the report opens with it)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.outputs.profile import plot_axes_overview  # noqa: E402

plot_axes_overview(pd.read_csv(snakemake.input[0], sep="\t", keep_default_na=False), snakemake.params.labels,
                   {"png": snakemake.output.png, "pdf": snakemake.output.pdf})
