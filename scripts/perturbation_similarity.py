"""Mutual similarity of a family's functions: mean kappa(Psi_i(s), Psi_j(s)) over the segments both keep (paper 004, Figure 10)."""

import functools
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.perturbation_tables import function_similarity  # noqa: E402
from nlp_robustness.perturbations.collect import read_perturbed_sources  # noqa: E402
from nlp_robustness.scoring.sentence_scores import sentence_scores  # noqa: E402

job = snakemake.params.job
metric = snakemake.wildcards.perturbation_metric
matrix = function_similarity(
    read_perturbed_sources(job["derived"]), job["functions"], functools.partial(sentence_scores, metric=metric)
)
with atomic_write(snakemake.output[0]) as handle:
    matrix.to_csv(handle, index_label="function", lineterminator="\n")
logging.info("\n%s", matrix.round(1).to_string())
