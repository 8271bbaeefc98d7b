"""Sentence-level scores of one system on one test set, or on every perturbed set of a family, with each
metric's sacrebleu signature."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.studies.sentence_score_files import score_translation_file  # noqa: E402

for testset, testset_file, translations_file, scores_file, signatures_file in zip(
    snakemake.params.testsets, snakemake.input.testsets, snakemake.input.translations,
    snakemake.output.scores, snakemake.output.signatures, strict=True,
):
    score_translation_file(
        testset_file, translations_file, scores_file, signatures_file,
        system=snakemake.wildcards.system, testset=testset, metrics=snakemake.params.metrics,
        tokenize=snakemake.params.bleu_tokenize[testset],  # the language pair's (nlp_robustness.studies.mt_studies)
    )
