"""Tables 7 and 8 analogs: rankings by BLEU/chrF and by humans, pairwise consistency verdicts, agreement."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write, markdown_table  # noqa: E402
from nlp_robustness.studies.human import ranking_tables  # noqa: E402

def read_tables(paths):
    """score -> system -> table, from score -> system -> path."""
    return {score: {system: pd.read_csv(path, sep="\t", keep_default_na=False) for system, path in by_system.items()}
            for score, by_system in paths.items()}


summaries, gammas = read_tables(snakemake.params.summaries), read_tables(snakemake.params.gamma)
metrics = [score for score in summaries if score != "human"]
rankings, pairwise, agreement = ranking_tables(summaries, gammas, metrics, snakemake.params.ranking, snakemake.params.seed)
# CSV at full precision; Markdown rounded for reading.
for table, csv_path, markdown_path, decimals in (
    (rankings, snakemake.output.rankings, snakemake.output.rankings_markdown, 6),
    (pairwise, snakemake.output.pairwise, snakemake.output.pairwise_markdown, None),
    (agreement, snakemake.output.agreement, snakemake.output.agreement_markdown, 4),
):
    with atomic_write(csv_path) as handle:
        table.to_csv(handle, index=False, lineterminator="\n")
    with atomic_write(markdown_path) as handle:
        handle.write(markdown_table(table if decimals is None else table.round(decimals)))
logging.info("\n%s\n%s", rankings.round(3).to_string(index=False), agreement.round(3).to_string(index=False))
