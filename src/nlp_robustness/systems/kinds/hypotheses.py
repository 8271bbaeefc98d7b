"""Kind ``hypotheses``: existing translations, one file per test set (``files``), checked to align with it."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from nlp_robustness.errors import InputError
from nlp_robustness.systems.registry import JobNeeds, SystemContext, TranslationBatch, write_report, write_translations

RULE = "import_hypotheses"
CONDA_ENV = "python.yaml"
BATCHES_FAMILIES = False
GPU = False


def needs(system: str, spec: Mapping[str, Any], testsets: Sequence[str], context: SystemContext) -> JobNeeds:
    """The test set's file of ``files``, and how many of its lines the test set takes: ``max_segments``
    for a test set (its file translates the whole test set), all of them for a perturbed one (its file
    has one line per kept row)."""
    (testset,) = testsets
    max_segments = None if testset in context.derived_testsets else context.max_segments
    return JobNeeds(inputs={"hypotheses": spec["files"][testset]}, params={"max_segments": max_segments}, threads=1, mem_mb=1000, runtime=10)


def translate(batch: TranslationBatch) -> None:
    """Copy the hypotheses of the batch's one test set, cut to ``max_segments``.

    Raises:
        InputError: A file whose line count differs from the test set's segment count, naming both.
    """
    from nlp_robustness.data.testsets import read_plain_lines, read_testset_table

    (testset,), (testset_file,) = batch.testsets, batch.testset_files
    hypotheses_file = batch.inputs["hypotheses"]
    table = read_testset_table(testset_file)
    hypotheses = read_plain_lines(hypotheses_file)
    if batch.params["max_segments"] is not None:
        hypotheses = hypotheses[: batch.params["max_segments"]]
    if len(hypotheses) != len(table):
        raise InputError(f"{hypotheses_file}: {len(hypotheses)} lines but test set {testset} has {len(table)} segments")
    write_translations(hypotheses, batch.translation_files[0])
    write_report(
        {"system": batch.system, "testset": testset, "hypotheses_file": hypotheses_file, "segments": len(hypotheses)},
        batch.report_files[0],
    )
    logging.info("%d hypotheses imported from %s", len(hypotheses), hypotheses_file)
