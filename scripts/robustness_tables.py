"""Write one study's paper-shaped robustness table (MT: Table 1, 3 or 5; sentiment: Table 2, 4 or 6; the same
layout for every other study of the plan) as CSV, HTML, Markdown and LaTeX."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.tables import (  # noqa: E402
    has_between_domains,
    interval_cells,
    robustness_intervals,
    robustness_table,
    table_caption,
    to_csv_text,
    to_html_text,
    to_latex_text,
    to_markdown_text,
)
from nlp_robustness.display_names import INTERVAL_NOTE  # noqa: E402

method = snakemake.wildcards.method
spec = snakemake.params.table
summaries = {row: pd.read_csv(path, sep="\t", keep_default_na=False) for row, path in spec["summaries"].items()}
table = robustness_table(summaries, method, spec["leave_out"], row_label=spec["row_label"], with_cov=spec["with_cov"])
low, high = robustness_intervals(table, summaries, method)
cells = interval_cells(table, low, high, spec["decimals"])
caption = table_caption(spec["branch"], method, spec["scores"], spec["pool"], spec["note"], has_between_domains(table), spec["leave_out"])
caption = " ".join(part for part in (caption, INTERVAL_NOTE[method], snakemake.params.resampling_note) if part)
for path, text in (
    (snakemake.output.csv, to_csv_text(table, low, high)),
    (snakemake.output.markdown, to_markdown_text(cells, caption, spec["decimals"])),
    (snakemake.output.latex, to_latex_text(cells, caption, f"tab:{spec['latex_label']}-{method}", spec["decimals"])),
    (snakemake.output.html, to_html_text(cells, caption, spec["decimals"])),
):
    with atomic_write(path) as handle:
        handle.write(text)
logging.info("\n%s", table.round(3).to_string())
