"""Translate one test set with a chain of Apertium modes, whole file per batch."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.apertium import translate_with_apertium  # noqa: E402
from nlp_robustness.fileio import atomic_write, write_lines  # noqa: E402
from nlp_robustness.data.testsets import read_testset_table  # noqa: E402

table = read_testset_table(snakemake.input[0])
translations, report = translate_with_apertium(
    table["source"].tolist(), snakemake.params.modes, mark_unknown=snakemake.params.mark_unknown
)
report_record = {"system": snakemake.wildcards.system, "testset": snakemake.wildcards.testset, **report.as_dict()}
logging.info("%s", report.summary())
write_lines(translations, snakemake.output.translations)
with atomic_write(snakemake.output.report) as handle:
    json.dump(report_record, handle, indent=2, ensure_ascii=False)
