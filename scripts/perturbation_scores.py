"""beta, beta1, beta2 and alpha of every kept segment of every perturbation function of a family, for one system."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.data.testset_formats import read_plain_lines  # noqa: E402
from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS  # noqa: E402
from nlp_robustness.perturbations.pair_scores import pair_score_columns, pair_scores  # noqa: E402
from nlp_robustness.studies.domains import read_score_table  # noqa: E402

for function, output in zip(snakemake.params.functions, snakemake.output, strict=True):
    job = snakemake.params.jobs[function]
    testset_scores = {testset: read_score_table(path) for testset, path in job["testset_scores"].items()}
    tables = []
    for part, path in job["derived"].items():
        tables.append(pair_scores(
            read_table(path, DERIVED_COLUMNS, "perturbed test set"),
            read_score_table(job["derived_scores"][part]),
            read_plain_lines(job["translations"][part]),
            testset_scores,
            job["metrics"],
            where=path,
            tokenize=job.get("bleu_tokenize"),  # beta1's BLEU tokeniser (None: 13a, sacrebleu's default)
        ))
    scores = pd.concat(tables, ignore_index=True)
    write_table(scores, output, pair_score_columns(job["metrics"]))
    logging.info("%s:\n%s", function, scores.drop(columns=["testset", "segment_id"]).mean().to_string())
