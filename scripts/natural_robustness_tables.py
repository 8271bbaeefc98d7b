"""The Natural Robustness scores per system and perturbation type (each record sample), and what the perturbations changed."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.statistics.natural_robustness import FEW_PERTURBATIONS  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.natural_robustness import (  # noqa: E402
    changes_markdown,
    changes_with_circular,
    perturbation_changes,
    read_scores,
    read_thresholds,
    scores_latex,
    scores_markdown,
    thresholds_markdown,
    thresholds_wide,
    with_marks,
)

job = snakemake.params.job
scores = read_scores(snakemake.input.scores)
threshold, circular = job["chrf_threshold"], job["circular"]
changes = changes_with_circular(perturbation_changes(job["inputs"]), circular)
thresholds = read_thresholds(snakemake.input.thresholds)
for path, text in (
    (snakemake.output.scores, with_marks(scores, circular).to_csv(index=False, lineterminator="\n")),
    (snakemake.output.scores_markdown, scores_markdown(scores, threshold, circular)),
    (snakemake.output.scores_latex, scores_latex(scores, threshold, circular)),
    (snakemake.output.thresholds, with_marks(thresholds, circular).to_csv(index=False, lineterminator="\n")),
    (snakemake.output.thresholds_markdown, thresholds_markdown(thresholds, circular)),
    (snakemake.output.changes, changes.to_csv(index=False, lineterminator="\n")),
    (snakemake.output.changes_markdown, changes_markdown(changes)),
):
    with atomic_write(path) as handle:
        handle.write(text)
write_html_table(with_marks(scores, circular), snakemake.output.scores_html,
                 "Natural Robustness: share of perturbations leaving the response unchanged (1.0 = robust); type "
                 "identity/<sample>: the identity control of a record sample (noise floor = 1 - score); identity/<type>: "
                 "a type's own control (its records unperturbed in its perturbed test set's layout); circular: a round trip through an "
                 f"Apertium mode the system uses; few_perturbations: fewer than {FEW_PERTURBATIONS} perturbations of "
                 "the type, a conservative interval")
write_html_table(thresholds_wide(thresholds, circular).reset_index(), snakemake.output.thresholds_html,
                 "Natural Robustness (chrF criterion) against its threshold, with each system's noise floor; "
                 "\u2020 circular pair (round trip through an Apertium mode the system uses); "
                 f"\u2021 fewer than {FEW_PERTURBATIONS} perturbations of the type (a conservative interval)")
write_html_table(changes, snakemake.output.changes_html,
                 "What each perturbation type changed in its inputs (chrF and Levenshtein similarity, 100 = unchanged)")
logging.info("\n%s", changes.to_string(index=False))
