"""A family's means table (beta, beta1, beta2, alpha, kept fraction, flips per system and function) and flip examples, for one metric."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.perturbation_tables import SCORE_COLUMNS, flip_examples, means_table, write_flip_examples, write_means_tables  # noqa: E402
from nlp_robustness.perturbations.collect import read_family_scores, read_flip_texts, read_status  # noqa: E402

job = snakemake.params.job
family, metric = snakemake.wildcards.family, snakemake.wildcards.perturbation_metric
scores = read_family_scores(job["pair_scores"], [metric])
status = read_status(job["status"])
means = means_table(scores, status, job["functions"], job["categories"], job["systems"], metric)
means_caption = (
    f"{family} perturbations, sentence {metric}: mean beta (source), beta1 (perturbed source vs reference: "
    "robustness), beta2 (perturbed source vs perturbed reference: faithfulness), alpha (perturbed vs original "
    "source), kept fraction of the sampled segments, and flips (beta1 > beta)"
)
write_means_tables(
    means, snakemake.output.means, snakemake.output.means_markdown, snakemake.output.means_latex,
    caption=means_caption, label=f"perturbations-{family}-{metric}-means",
)
# scores with 2 decimals and fractions with 3, as in Markdown and LaTeX
write_html_table(means, snakemake.output.means_html, means_caption, column_decimals=dict.fromkeys(SCORE_COLUMNS, 2))
texts = read_flip_texts(job["derived"], job["translations"], job["testsets"], job["testset_translations"])
examples = flip_examples(scores, texts, metric, systems=job["systems"], functions=job["functions"])
write_flip_examples(
    examples, snakemake.output.flips, snakemake.output.flips_markdown,
    caption=f"{family} perturbations, sentence {metric}: segments translated better from the perturbed source (beta1 > beta), largest gains first",
)
logging.info("\n%s", means.to_string(index=False))
