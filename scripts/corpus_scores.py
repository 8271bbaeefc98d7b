"""Corpus BLEU and chrF of every system of an MT study, per test set and on the pool, with intervals and paired tests."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.document_ids import segments_as_units_note  # noqa: E402
from nlp_robustness.outputs.corpus_tables import lacking_document_ids, write_corpus_tables  # noqa: E402
from nlp_robustness.statistics.corpus_uncertainty import corpus_bootstrap  # noqa: E402
from nlp_robustness.studies.corpus_scores import read_study_corpus  # noqa: E402

params = snakemake.params
testsets, systems = list(params.testsets), list(params.systems)
testset_files = dict(zip(testsets, snakemake.input.testsets, strict=True))
translations = iter(snakemake.input.translations)  # system-major, as rules/common.smk lists them
translation_files = {system: {testset: next(translations) for testset in testsets} for system in systems}
study = read_study_corpus(testset_files, translation_files, list(params.metrics), params.tokenize)
scores, comparisons = corpus_bootstrap(study, resamples=params.resamples, seed=params.seed, confidence=params.confidence,
                                       name=snakemake.wildcards.mt_study)
output = snakemake.output
without = lacking_document_ids(study.doc_ids)
if without:
    logging.warning("%s", segments_as_units_note(without))
write_corpus_tables(
    scores, comparisons, snakemake.wildcards.mt_study, list(params.metrics), params.confidence, params.resamples,
    {"csv": output.scores_csv, "md": output.scores_md, "html": output.scores_html},
    {"csv": output.comparisons_csv, "md": output.comparisons_md, "html": output.comparisons_html}, without,
)
logging.info("\n%s", scores.drop(columns=[column for column in scores if column.endswith("_signature")]).round(2).to_string())
