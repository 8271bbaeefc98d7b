"""Figure 4 (MT) or its sentiment analog: gamma-epsilon curves of every system on the whole pool, raw and normalised."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.statistics.pools import WHOLE_POOL  # noqa: E402
from nlp_robustness.outputs.gamma_figures import plot_gamma_curves  # noqa: E402

curves = {}
for row, path in snakemake.params.curves.items():
    gamma = pd.read_csv(path, sep="\t", keep_default_na=False)
    curves[row] = gamma[(gamma["left_out"] == WHOLE_POOL) & (gamma["method"] == "pool")]
plot_gamma_curves(
    curves, snakemake.params.metric, {"png": snakemake.output.png, "pdf": snakemake.output.pdf}, scores=snakemake.params.scores
)
