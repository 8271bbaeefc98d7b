"""Kind ``apertium``: a chain of Apertium modes over a whole test set (:mod:`nlp_robustness.systems.apertium`).

A chain's translation of a segment depends a little on the segments batched around it (docs/paper-001-natural-robustness.md:
the identity control is its noise floor), so every test set is its own Apertium run, exactly as if it were translated alone. A
family's job with ``translation_jobs: per_family`` runs its sets one after the other in one job: one Python
start-up instead of one per set, the same translations.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from nlp_robustness.systems.registry import JobNeeds, SystemContext, TranslationBatch, write_report, write_translations

RULE = "translate_apertium"
CONDA_ENV = "apertium.yaml"
BATCHES_FAMILIES = True  # a family's sets in one job, each its own run
GPU = False


def needs(system: str, spec: Mapping[str, Any], testsets: Sequence[str], context: SystemContext) -> JobNeeds:
    """No files besides the test set (the modes are installed language pairs); one core."""
    return JobNeeds(inputs={}, params={"modes": spec["modes"], "mark_unknown": spec["mark_unknown"]}, threads=1, mem_mb=2000, runtime=60)


def translate(batch: TranslationBatch) -> None:
    """Each test set through the chain in its own run (one batch of its segments); its report is the chain's
    report (non-ASCII kept)."""
    from nlp_robustness.data.testsets import read_testset_table
    from nlp_robustness.systems.apertium import translate_with_apertium

    for testset, testset_file, translation_file, report_file in zip(
        batch.testsets, batch.testset_files, batch.translation_files, batch.report_files, strict=True
    ):
        table = read_testset_table(testset_file)
        translations, report = translate_with_apertium(
            table["source"].tolist(), batch.params["modes"], mark_unknown=batch.params["mark_unknown"]
        )
        logging.info("%s", report.summary())
        write_translations(translations, translation_file)
        write_report({"system": batch.system, "testset": testset, **report.as_dict()}, report_file, ensure_ascii=False)
