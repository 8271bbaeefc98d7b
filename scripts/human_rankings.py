"""Tables 7 and 8 analogs: rankings by BLEU/chrF and by humans, pairwise consistency verdicts, agreement."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import markdown_table, write_html_table  # noqa: E402
from nlp_robustness.studies.human import ranking_tables  # noqa: E402

def read_tables(paths):
    """score -> system -> table, from score -> system -> path."""
    return {score: {system: pd.read_csv(path, sep="\t", keep_default_na=False) for system, path in by_system.items()}
            for score, by_system in paths.items()}


summaries, gammas = read_tables(snakemake.params.summaries), read_tables(snakemake.params.gamma)
metrics = [score for score in summaries if score != "human"]
rankings, pairwise, agreement = ranking_tables(summaries, gammas, metrics, snakemake.params.ranking, snakemake.params.seed)
# CSV at full precision; Markdown and HTML rounded for reading.
output = snakemake.output
for table, name, title, markdown_decimals in (
    (rankings, "rankings", "Rankings by mean, COV and gamma of BLEU, chrF and human scores (paper Table 7 analog)", 6),
    (pairwise, "pairwise", "Every pair of systems: the more consistent by each measure, agreement with humans (paper Table 8 analog)",
     None),
    (agreement, "agreement", "Agreement of each automatic ranking with a human ranking", 4),
):
    with atomic_write(output[name]) as handle:
        table.to_csv(handle, index=False, lineterminator="\n")
    with atomic_write(output[f"{name}_markdown"]) as handle:
        handle.write(markdown_table(table if markdown_decimals is None else table.round(markdown_decimals)))
    write_html_table(table, output[f"{name}_html"], title)
logging.info("\n%s\n%s", rankings.round(3).to_string(index=False), agreement.round(3).to_string(index=False))
