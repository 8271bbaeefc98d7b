"""Write one study's paper-shaped robustness table (MT: Table 1, 3 or 5; sentiment: Table 2, 4 or 6; the same
layout for every other study of the plan) as CSV, HTML, Markdown and LaTeX."""

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
spec = snakemake.params.table
summaries = {row: pd.read_csv(path, sep="\t", keep_default_na=False) for row, path in spec["summaries"].items()}
table = robustness_table(summaries, method, spec["leave_out"], row_label=spec["row_label"])
caption = table_caption(spec["branch"], method, spec["scores"], spec["pool"], spec["note"])
for path, text in (
    (snakemake.output.csv, to_csv_text(table)),
    (snakemake.output.markdown, to_markdown_text(table, caption, spec["decimals"])),
    (snakemake.output.latex, to_latex_text(table, caption, f"tab:{spec['latex_label']}-{method}", spec["decimals"])),
):
    with atomic_write(path) as handle:
        handle.write(text)
# column groups named as a reader names the pools ("whole pool", "w/o wmt14"), as in Markdown and LaTeX
write_html_table(table.rename(columns=pool_label, level="left_out"), snakemake.output.html, caption,
                 decimals=spec["decimals"], index=True)
logging.info("\n%s", table.round(3).to_string())
