"""Unknown tokens per segment (paper Figure 1, Table 4) and the achieved attack rates, per pair, attack and level."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import read_table  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.metric_robustness import RATE_CAPTION, attack_rate_table, frame_markdown, unknown_token_latex, unknown_token_table  # noqa: E402
from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer  # noqa: E402
from nlp_robustness.studies.metric_attack_scoring import REFERENCE_COLUMNS  # noqa: E402

references = pd.concat(
    [read_table(path, REFERENCE_COLUMNS, "reference table") for path in snakemake.params.references.values()], ignore_index=True
)
unknown = unknown_token_table(references)
rates = attack_rate_table(references, load_wordpiece_tokenizer())
with atomic_write(snakemake.output.unknown) as handle:
    unknown.to_csv(handle, index=False)
with atomic_write(snakemake.output.rates) as handle:
    rates.to_csv(handle, index=False)
unknown_title = "Average unknown tokens per segment (Algorithm 1 of paper 002, WordPiece of bert-base-uncased) by attack, level and pair"
with atomic_write(snakemake.output.unknown_markdown) as handle:
    handle.write(frame_markdown(unknown, unknown_title))
write_html_table(unknown, snakemake.output.unknown_html, unknown_title)
with atomic_write(snakemake.output.unknown_latex) as handle:
    handle.write(unknown_token_latex(unknown))
with atomic_write(snakemake.output.rates_markdown) as handle:
    handle.write(frame_markdown(rates, RATE_CAPTION.format(texts="references")))
logging.info("\n%s", rates.to_string())
