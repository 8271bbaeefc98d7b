"""Write one paper-shaped robustness table (MT: Table 1, 3 or 5; sentiment: Table 2, 4 or 6) as CSV, HTML, Markdown and LaTeX."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.tables import robustness_table, table_caption, to_csv_text, to_latex_text, to_markdown_text  # noqa: E402
from nlp_robustness.statistics.engine import pool_label  # noqa: E402

method = snakemake.wildcards.method
summaries = {row: pd.read_csv(path, sep="\t", keep_default_na=False) for row, path in snakemake.params.summaries.items()}
table = robustness_table(summaries, method, snakemake.params.leave_out, row_label=snakemake.params.row_label)
caption = table_caption(snakemake.params.branch, method, snakemake.params.scores, snakemake.params.pool, snakemake.params.note)
for path, text in (
    (snakemake.output.csv, to_csv_text(table)),
    (snakemake.output.markdown, to_markdown_text(table, caption, snakemake.params.decimals)),
    (snakemake.output.latex, to_latex_text(table, caption, f"tab:{snakemake.params.latex_label}-{method}", snakemake.params.decimals)),
):
    with atomic_write(path) as handle:
        handle.write(text)
# column groups named as a reader names the pools ("whole pool", "w/o wmt14"), as in Markdown and LaTeX
write_html_table(table.rename(columns=pool_label, level="left_out"), snakemake.output.html, caption,
                 decimals=snakemake.params.decimals, index=True)
logging.info("\n%s", table.round(3).to_string())
