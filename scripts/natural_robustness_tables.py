"""The Natural Robustness scores per system and perturbation type (each record sample), and what the perturbations changed."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.natural_robustness import (  # noqa: E402
    changes_markdown,
    perturbation_changes,
    read_scores,
    scores_latex,
    scores_markdown,
)

job = snakemake.params.job
scores = read_scores(snakemake.input.scores)
changes = perturbation_changes(job["inputs"])
threshold = job["chrf_threshold"]
for path, text in (
    (snakemake.output.scores, scores.to_csv(index=False, lineterminator="\n")),
    (snakemake.output.scores_markdown, scores_markdown(scores, threshold)),
    (snakemake.output.scores_latex, scores_latex(scores, threshold)),
    (snakemake.output.changes, changes.to_csv(index=False, lineterminator="\n")),
    (snakemake.output.changes_markdown, changes_markdown(changes)),
):
    with atomic_write(path) as handle:
        handle.write(text)
write_html_table(scores, snakemake.output.scores_html,
                 "Natural Robustness: share of perturbations leaving the response unchanged (1.0 = robust)")
write_html_table(changes, snakemake.output.changes_html,
                 "What each perturbation type changed in its inputs (chrF and Levenshtein similarity, 100 = unchanged)")
logging.info("\n%s", changes.to_string(index=False))
