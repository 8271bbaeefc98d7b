"""Every Natural Robustness score with its interval: one panel per way of comparing responses."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.natural_robustness import plot_scores, read_scores  # noqa: E402

plot_scores(read_scores(snakemake.input[0]), snakemake.params.chrf_threshold, {"png": snakemake.output.png, "pdf": snakemake.output.pdf})
