"""Translate every perturbed test set of one family with a fairseq model in one run (one model start-up)."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.fairseq.translate import translate_with_settings  # noqa: E402
from nlp_robustness.fileio import atomic_write, write_lines  # noqa: E402
from nlp_robustness.data.testsets import read_testset_table  # noqa: E402

tables = [read_testset_table(path) for path in snakemake.input.testsets]
translations, report = translate_with_settings(
    [source for table in tables for source in table["source"]],
    [reference for table in tables for reference in table["reference"]],
    **snakemake.params.translation,
    log_path=snakemake.log[0],
)
logging.info("%s", report.summary())
start = 0
for name, table, translation_path, report_path in zip(
    snakemake.params.testsets, tables, snakemake.output.translations, snakemake.output.reports, strict=True
):
    write_lines(translations[start:start + len(table)], translation_path)
    start += len(table)
    with atomic_write(report_path) as handle:
        record = {"system": snakemake.wildcards.system, "testset": name, "segments": len(table),
                  "translated_with": snakemake.params.testsets, "job": report.as_dict()}
        json.dump(record, handle, indent=2)
