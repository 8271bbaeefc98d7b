"""Tables 7 and 8 analogs: rankings by BLEU/chrF and by humans, pairwise consistency verdicts, agreement."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import write_summary_table  # noqa: E402
from nlp_robustness.studies.human import ranking_tables  # noqa: E402

systems, scores = snakemake.params.systems, snakemake.params.scores
summary_paths, gamma_paths = iter(snakemake.input.summaries), iter(snakemake.input.gamma)  # score-major, then system
summaries, gammas = {}, {}
for score in scores:
    summaries[score] = {system: pd.read_csv(next(summary_paths), sep="\t", keep_default_na=False) for system in systems}
    gammas[score] = {system: pd.read_csv(next(gamma_paths), sep="\t", keep_default_na=False) for system in systems}
metrics = [score for score in scores if score != "human"]
rankings, pairwise, agreement = ranking_tables(summaries, gammas, metrics, snakemake.params.ranking, snakemake.params.seed)
write_summary_table(rankings.round(6), snakemake.output.rankings, snakemake.output.rankings_markdown)
write_summary_table(pairwise, snakemake.output.pairwise, snakemake.output.pairwise_markdown)
write_summary_table(agreement.round(4), snakemake.output.agreement, snakemake.output.agreement_markdown)
logging.info("\n%s\n%s", rankings.round(3).to_string(index=False), agreement.round(3).to_string(index=False))
