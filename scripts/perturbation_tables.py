"""A family's means tables (beta, beta1, beta2, alpha with intervals, the test of beta2 = beta1, kept fraction, flips
per system and function; the means per system over the functions) and flip examples, for one metric."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.perturbation_table_writer import (  # noqa: E402
    SCORE_COLUMNS, write_flip_examples, write_means_tables, write_over_functions_tables,
)
from nlp_robustness.outputs.perturbation_tables import flip_examples, means_table, over_functions_table  # noqa: E402
from nlp_robustness.perturbations.collect import read_family_scores, read_flip_texts, read_status  # noqa: E402
from nlp_robustness.statistics.perturbation_intervals import family_intervals  # noqa: E402

job = snakemake.params.job
family, metric = snakemake.wildcards.family, snakemake.wildcards.perturbation_metric
scores = read_family_scores(job["pair_scores"], [metric])
status = read_status(job["status"])
uncertainty, margin = snakemake.params.uncertainty, snakemake.params.flip_margin
intervals = family_intervals(scores, job["functions"], job["systems"], metric, resamples=uncertainty["resamples"],
                             confidence=uncertainty["confidence"], seed=uncertainty["seed"], labels=("perturbations", family))
means = means_table(scores, status, job["functions"], job["categories"], job["systems"], metric, intervals, margin)
level = f"{100 * uncertainty['confidence']:g} %"
means_caption = (
    f"{family} perturbations, sentence {metric}: mean beta (source), beta1 (perturbed source vs reference: "
    "robustness), beta2 (perturbed source vs perturbed reference: faithfulness), alpha (perturbed vs original "
    f"source), each with its {level} percentile interval from {uncertainty['resamples']} bootstrap resamples of the "
    "segments (a segment brings its rows under every function), and beta2 - beta1 with the paired bootstrap test of "
    "beta2 = beta1 (p; p Holm: adjusted over the functions of the system). The interval of beta2 - beta1 beside "
    "p Holm is Holm-adjusted: it excludes 0 exactly when p Holm is below the level (CSV/HTML: beta2_minus_beta1_lo, "
    f"_hi); its unadjusted {level} interval, which ignores the other functions' tests, follows under its own name "
    "(beta2_minus_beta1_lo_unadjusted, _hi_unadjusted). Kept fraction of the sampled segments, and flips "
    f"(beta1 > beta + {margin:g} points, the flip margin)"
)
write_means_tables(
    means, snakemake.output.means, snakemake.output.means_markdown, snakemake.output.means_latex,
    caption=means_caption, label=f"perturbations-{family}-{metric}-means",
)
# scores with 2 decimals and fractions with 3, as in Markdown and LaTeX
write_html_table(means, snakemake.output.means_html, means_caption, column_decimals=dict.fromkeys(SCORE_COLUMNS, 2))
write_over_functions_tables(
    over_functions_table(intervals), snakemake.output.over_functions, snakemake.output.over_functions_markdown,
    caption=f"{family} perturbations, sentence {metric}: means per system over its functions (each function weighing "
    f"the same) with {level} segment-bootstrap intervals; p: paired test of beta2 = beta1, p Holm: adjusted over the "
    "systems; the interval of beta2 - beta1 is Holm-adjusted (it excludes 0 exactly when p Holm is below the level), "
    "its unadjusted interval follows under its own name",
)
texts = read_flip_texts(job["derived"], job["translations"], job["testsets"], job["testset_translations"])
examples = flip_examples(scores, texts, metric, systems=job["systems"], functions=job["functions"], flip_margin=margin)
write_flip_examples(
    examples, snakemake.output.flips, snakemake.output.flips_markdown,
    caption=f"{family} perturbations, sentence {metric}: segments translated better from the perturbed source by more "
    f"than the flip margin of {margin:g} points (beta1 > beta + {margin:g}), largest gains first",
)
logging.info("\n%s", means.to_string(index=False))
