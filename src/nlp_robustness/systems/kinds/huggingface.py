"""Kind ``huggingface``: a ``transformers`` sequence-to-sequence model, a hub id or a local directory
(:mod:`nlp_robustness.systems.huggingface`).

Like fairseq, one job may translate every perturbed test set of a family (``translation_jobs:
per_family``): one model start-up, each set in its own batched run (its translations are those of a job of
its own); with ``per_family_joint`` the sources of every set are one batched run and each set's report
records the whole job's report under ``job``. A local model directory is the job's input, file by file (an edit of its
weights or tokenizer reruns the translations); a hub id is a param (with its revision), not a file.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nlp_robustness.systems.huggingface import check_language_codes, is_local_model, local_model_type, model_files
from nlp_robustness.systems.registry import JobNeeds, SystemContext, TranslationBatch, write_batch, write_report, write_translations

RULE = "translate_huggingface"
CONDA_ENV = "huggingface.yaml"
BATCHES_FAMILIES = True
GPU = True
#: Minutes a cluster scheduler allows a translation job.
RUNTIME = 120
#: The config keys the translation reads (the job's params).
SETTINGS = ("model", "revision", "cache_dir", "source_language", "target_language", "prefix", "batch_size", "beam",
            "max_length", "dtype", "device", "cpu_threads")


def needs(system: str, spec: Mapping[str, Any], testsets: Sequence[str], context: SystemContext) -> JobNeeds:
    """A local model's directory and files as inputs; the settings as params; ``cpu_threads`` cores,
    ``mem_mb`` and ``gpus`` of the system's entry.

    Raises:
        InputError: A local model directory that does not exist or has no config.json, or a model type that
            needs language codes the entry lacks (here, before any job runs).
    """
    inputs: dict[str, str] = {}
    if is_local_model(spec["model"]):
        model_type = local_model_type(spec["model"], f"systems.{system}.model")
        check_language_codes(spec["model"], model_type, spec["source_language"], spec["target_language"], f"systems.{system}")
        inputs["model_dir"] = str(Path(spec["model"]).expanduser())
        inputs.update({f"model_file:{path.name}": str(path) for path in model_files(spec["model"])})
    return JobNeeds(
        inputs=inputs,
        params={key: spec[key] for key in SETTINGS},
        threads=spec["cpu_threads"],
        mem_mb=spec["mem_mb"],
        runtime=RUNTIME,
        gpus=spec["gpus"],
    )


def translate(batch: TranslationBatch) -> None:
    """Each test set of the batch in its own batched run, one model load; with ``batch.joint``, every set in
    one batched run (sources in order), each set's lines its slice."""
    from nlp_robustness.data.testsets import read_testset_table
    from nlp_robustness.systems.huggingface import HuggingfaceTranslator, timed_translation

    tables = [read_testset_table(path) for path in batch.testset_files]
    translator = HuggingfaceTranslator.load(batch.params, f"systems.{batch.system}")
    if batch.joint or batch.family is None:
        translations, report = timed_translation(translator, [source for table in tables for source in table["source"]])
        logging.info("%s: %d segments in %.1f s on %s", batch.system, report["segments"], report["seconds"], report["device"])
        write_batch(batch, [len(table) for table in tables], translations, report)
        return
    for testset, table, translation_file, report_file in zip(
        batch.testsets, tables, batch.translation_files, batch.report_files, strict=True
    ):
        translations, report = timed_translation(translator, table["source"].tolist())
        logging.info("%s, %s: %d segments in %.1f s on %s", batch.system, testset, report["segments"], report["seconds"], report["device"])
        write_translations(translations, translation_file)
        write_report({"system": batch.system, "testset": testset, **report}, report_file)
