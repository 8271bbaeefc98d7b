"""Write one paper-shaped robustness table (Table 1, 3 or 5) as CSV, Markdown and LaTeX."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.tables import METHOD_CAPTIONS, robustness_table, to_csv_text, to_latex_text, to_markdown_text  # noqa: E402

method, metric = snakemake.wildcards.method, snakemake.wildcards.metric
summaries = {
    system: pd.read_csv(path, sep="\t", keep_default_na=False)
    for system, path in zip(snakemake.params.systems, snakemake.input)
}
table = robustness_table(summaries, method, snakemake.params.leave_out)
caption = f"Sentence {metric}. {METHOD_CAPTIONS[method]} Column groups: test set left out (none = whole pool)."
for path, text in (
    (snakemake.output.csv, to_csv_text(table)),
    (snakemake.output.markdown, to_markdown_text(table, caption)),
    (snakemake.output.latex, to_latex_text(table, caption, label=f"tab:robustness-{metric}-{method}")),
):
    with atomic_write(path) as handle:
        handle.write(text)
logging.info("\n%s", table.round(3).to_string())
