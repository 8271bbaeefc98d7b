"""Tables 7 and 8 of one human study: rankings with rank intervals, paired verdicts per system pair, agreement (tau)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import markdown_table, write_html_table  # noqa: E402
from nlp_robustness.statistics.pool_uncertainty import read_replicates  # noqa: E402
from nlp_robustness.studies.human_rankings import ranking_tables  # noqa: E402

job = snakemake.params.job


def read_tables(paths):
    """score -> system -> table, from score -> system -> path."""
    return {score: {system: pd.read_csv(path, sep="\t", keep_default_na=False, dtype={"left_out": str}) for system, path in by_system.items()}
            for score, by_system in paths.items()}


summaries, gammas = read_tables(job["summaries"]), read_tables(job["gamma"])
replicates = {score: {system: read_replicates(path)[0] for system, path in by_system.items()} for score, by_system in job["replicates"].items()}
comparisons = {score: pd.read_csv(path, keep_default_na=False, dtype={"left_out": str}) for score, path in job["comparisons"].items()}
metrics = [score for score in summaries if score != "human"]
rankings, pairwise, agreement = ranking_tables(summaries, gammas, replicates, comparisons, metrics, snakemake.params.ranking,
                                               snakemake.params.seed, snakemake.params.uncertainty["confidence"],
                                               job["higher_is_better"])
study = snakemake.wildcards.human_study
output = snakemake.output
for table, name, title, markdown_decimals in (  # CSV at full precision; Markdown and HTML rounded for reading
    (rankings, "rankings", f"{study}: rankings by mean, COV, gamma and between-domain SD of each score, with rank intervals (paper Table 7)", 4),
    (pairwise, "pairwise", f"{study}: every pair of systems, the more consistent by each measure and the paired verdicts (paper Table 8)", None),
    (agreement, "agreement", f"{study}: agreement of each automatic ranking with a human one (Kendall tau with bootstrap interval)", 3),
):
    with atomic_write(output[name]) as handle:
        table.to_csv(handle, index=False, lineterminator="\n")
    with atomic_write(output[f"{name}_markdown"]) as handle:
        handle.write(markdown_table(table if markdown_decimals is None else table.round(markdown_decimals)))
    write_html_table(table, output[f"{name}_html"], title)
logging.info("\n%s\n%s", rankings.round(3).to_string(index=False), agreement.round(3).to_string(index=False))
