"""Translate the job's test sets with its system's kind (nlp_robustness.systems.registry): one test set, or
every perturbed test set of a family in one job (each set its own run, or with `joint` one run over all)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.registry import TranslationBatch, system_kind  # noqa: E402

batch = TranslationBatch(
    system=snakemake.wildcards.system,
    testsets=tuple(snakemake.params.testsets),
    testset_files=tuple(snakemake.input.testsets),
    translation_files=tuple(snakemake.output.translations),
    report_files=tuple(snakemake.output.reports),
    inputs={name: value for name, value in snakemake.input.items() if name != "testsets"},
    params=snakemake.params.settings,
    log=snakemake.log[0],
    family=snakemake.params.family,
    joint=snakemake.params.joint,
)
system_kind(snakemake.params.kind).translate(batch)
