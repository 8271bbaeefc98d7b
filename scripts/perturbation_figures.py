"""Figures 1, 5, 7/11 and 10 of paper 004 for one family and metric."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.outputs.perturbation_figures import (  # noqa: E402
    plot_beta_heatmaps,
    plot_function_similarity,
    plot_robust_vs_faithful,
    plot_scores_vs_alpha_and_length,
)
from nlp_robustness.perturbations.collect import read_family_scores  # noqa: E402

job = snakemake.params.job
metric = snakemake.wildcards.perturbation_metric
output = snakemake.output
scores = read_family_scores(job["pair_scores"], [metric])
means = pd.read_csv(snakemake.input.means, keep_default_na=False, na_values=[""])
similarity = pd.read_csv(snakemake.input.similarity, index_col="function")
plot_robust_vs_faithful(scores, job["functions"], job["categories"], job["systems"], metric,
                        {"png": output.robust_vs_faithful, "pdf": output.robust_vs_faithful_pdf})
plot_beta_heatmaps(means, job["functions"], job["systems"], metric, {"png": output.heatmaps, "pdf": output.heatmaps_pdf})
plot_scores_vs_alpha_and_length(scores, job["systems"], metric, {"png": output.scatter, "pdf": output.scatter_pdf})
plot_function_similarity(similarity, job["categories"], metric, {"png": output.similarity, "pdf": output.similarity_pdf})
logging.info("figures written for %d systems and %d functions", len(job["systems"]), len(job["functions"]))
