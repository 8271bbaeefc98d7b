"""Corpus BLEU and chrF of an in-house model on its development set, with its corpus and training records."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import sacrebleu  # noqa: E402

from nlp_robustness.systems.fairseq.translate import translate_with_settings  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.fileio.text_files import read_json_records, read_table  # noqa: E402

dev = read_table(snakemake.input.dev, ["source", "reference"], "development set")
references = dev["reference"].tolist()
translations, report = translate_with_settings(
    dev["source"].tolist(),
    references,
    **snakemake.params.translation,
    log_path=snakemake.log[0],
)
logging.info("%s", report.summary())
corpus, training = read_json_records([snakemake.input.statistics, snakemake.input.training])
record = {
    "system": snakemake.wildcards.system,
    "corpus": corpus,
    "training": training,
    "dev_bleu": sacrebleu.corpus_bleu(translations, [references]).score,
    "dev_chrf": sacrebleu.corpus_chrf(translations, [references]).score,
    "dev_translation": report.as_dict(),
}
logging.info("dev BLEU %.2f, chrF %.2f", record["dev_bleu"], record["dev_chrf"])
with atomic_write(snakemake.output[0]) as handle:
    json.dump(record, handle, indent=2)
