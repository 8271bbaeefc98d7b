"""The Natural Robustness score (share of perturbations leaving the response unchanged; 1.0 = robust) of every
system and classifier, per perturbation type and overall, and its identity control (noise floor), on every record sample,
with intervals (binomial; pooled: on an effective number of perturbations); and the MT systems' chrF criterion at every
threshold of chrf_thresholds."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.text_files import write_table  # noqa: E402
from nlp_robustness.sampling import RECORD_COLUMNS  # noqa: E402
from nlp_robustness.studies.natural_robustness_responses import mt_records, read_responses, record_id  # noqa: E402
from nlp_robustness.studies.natural_robustness_scores import SCORE_COLUMNS, natural_scores  # noqa: E402
from nlp_robustness.studies.natural_robustness_controls import THRESHOLD_COLUMNS, threshold_scores  # noqa: E402

job = snakemake.params.job
records = {"mt": mt_records([(testset, read_testset_table(path)) for testset, path in job["mt_samples"]])}
if job["review_records"] is not None:
    reviews = read_testset_table(job["review_records"])
    records["sentiment"] = pd.DataFrame({
        "record": record_id(reviews["doc_id"], reviews["segment_id"]), "part": reviews["doc_id"], "item": reviews["segment_id"],
    })[list(RECORD_COLUMNS)]
responses = {kind: {row: read_responses(path) for row, path in rows.items()} for kind, rows in job["responses"].items()}
scores = natural_scores(records, responses, job["types"], job["sizes"], job["bootstrap"], job["seed"], job["interval"])
# a type that no sampled record kept has no score: an empty field, as the engine writes a COV without a value
write_table(scores.astype(object).where(scores.notna(), ""), snakemake.output.scores, SCORE_COLUMNS)
thresholds = threshold_scores({"mt": records["mt"]}, responses["mt"], job["types"], job["chrf_thresholds"], job["sizes"],
                              job["bootstrap"], job["seed"], job["interval"])
write_table(thresholds.astype(object).where(thresholds.notna(), ""), snakemake.output.thresholds, THRESHOLD_COLUMNS)
overall = scores[(scores["type"] == "all") | (scores["family"] == "control")]
logging.info("\n%s", overall[["responder", "criterion", "sample", "type", "records", "score", "ci_low", "ci_high"]].to_string(index=False))
