"""Translate one test set with a fairseq model (pretrained or in-house), one line per segment."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.fairseq.translate import translate_with_settings  # noqa: E402
from nlp_robustness.fileio import atomic_write, write_lines  # noqa: E402
from nlp_robustness.data.testsets import read_testset_table  # noqa: E402

table = read_testset_table(snakemake.input.testset)
translations, report = translate_with_settings(
    table["source"].tolist(),
    table["reference"].tolist(),
    **snakemake.params.translation,
    log_path=snakemake.log[0],
)
logging.info("%s", report.summary())
write_lines(translations, snakemake.output.translations)
with atomic_write(snakemake.output.report) as handle:
    json.dump({"system": snakemake.wildcards.system, "testset": snakemake.wildcards.testset, **report.as_dict()}, handle, indent=2)
