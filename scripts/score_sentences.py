"""Sentence-level scores of one system on one test set, with each metric's sacrebleu signature."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.errors import InputError  # noqa: E402
from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.studies.domains import write_score_table  # noqa: E402
from nlp_robustness.scoring.sentence_scores import corpus_score, metric_signature, sentence_scores  # noqa: E402
from nlp_robustness.data.testsets import read_plain_lines, read_testset_table  # noqa: E402

table = read_testset_table(snakemake.input.testset)
hypotheses = read_plain_lines(snakemake.input.translations)
if len(hypotheses) != len(table):
    raise InputError(f"{snakemake.input.translations}: {len(hypotheses)} lines, test set has {len(table)} segments")
references = table["reference"].tolist()

scores = pd.DataFrame({"segment_id": table["segment_id"]})
record = {"system": snakemake.wildcards.system, "testset": snakemake.wildcards.testset, "segments": len(table)}
tokenize = snakemake.params.bleu_tokenize  # the language pair's (nlp_robustness.studies.mt_studies)
for metric in snakemake.params.metrics:
    scores[metric] = sentence_scores(hypotheses, references, metric, tokenize)
    record[metric] = {"signature": metric_signature(metric, tokenize=tokenize), "corpus": corpus_score(hypotheses, references, metric, tokenize),
                      "sentence_mean": float(scores[metric].mean())}
    logging.info("%s: mean sentence %s %.2f", snakemake.wildcards.testset, metric, scores[metric].mean())

write_score_table(scores, snakemake.output.scores)
with atomic_write(snakemake.output.signatures) as handle:
    json.dump(record, handle, indent=2)
