"""Figures of the metric-robustness branch: unknown tokens against p, tau against p per metric, tau per BERTScore layer."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.outputs.metric_robustness import plot_tau_by_layer, plot_tau_vs_level, plot_unknown_tokens  # noqa: E402

unknown = pd.read_csv(snakemake.input.unknown)
tau = pd.read_csv(snakemake.input.tau, keep_default_na=False)
tau_by_layer = pd.read_csv(snakemake.input.tau_by_layer, keep_default_na=False)
plot_unknown_tokens(unknown, snakemake.output.unknown, snakemake.output.unknown_pdf)
intervals = pd.read_csv(snakemake.input.intervals, keep_default_na=False, na_values=[""])
plot_tau_vs_level(tau, snakemake.output.tau, snakemake.output.tau_pdf, intervals)
plot_tau_by_layer(tau_by_layer, snakemake.output.layers, snakemake.output.layers_pdf)
