"""WMT19 DARR tau of every metric variant per pair and condition, tau at every BERTScore layer, best layers, agreement units."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.metric_robustness import tau_markdown, tau_latex  # noqa: E402
from nlp_robustness.studies.metric_attack_scoring import DARR_COLUMNS, SCORE_KEY_COLUMNS, tau_tables  # noqa: E402
from nlp_robustness.studies.metric_attacks import AGREEMENT_KEY_COLUMNS  # noqa: E402

job = snakemake.params.job
darr = {}
for pair, path in job["darr"].items():
    darr[pair] = read_table(path, DARR_COLUMNS, "DARR sample")
    darr[pair][["line", "sid"]] = darr[pair][["line", "sid"]].astype(int)
scores = pd.concat([read_table(path, SCORE_KEY_COLUMNS, "score table") for path in job["scores"].values()], ignore_index=True)
scores["sid"] = scores["sid"].astype(int)
agreement, tau, tau_by_layer, best = tau_tables(darr, scores, job["conditions"], job["sentence_metrics"], job["layers"])
write_table(agreement, snakemake.output.agreement, AGREEMENT_KEY_COLUMNS)
with atomic_write(snakemake.output.tau) as handle:
    tau.to_csv(handle, index=False)
write_html_table(tau, snakemake.output.tau_html, "WMT19 DARR tau of every metric per condition and pair (paper 002 Tables 5, 8, 9)")
with atomic_write(snakemake.output.tau_by_layer) as handle:
    tau_by_layer.to_csv(handle, index=False)
with atomic_write(snakemake.output.best_layers) as handle:
    best.to_csv(handle, index=False)
with atomic_write(snakemake.output.tau_markdown) as handle:
    handle.write(tau_markdown(tau, best))
with atomic_write(snakemake.output.tau_latex) as handle:
    handle.write(tau_latex(tau))
logging.info("best layers: %s", best.to_dict("records"))
logging.info("\n%s", tau[tau["pair"] == "average"].pivot(index="condition", columns="metric", values="tau").round(3).to_string())
