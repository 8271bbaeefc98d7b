"""Translating a list of segments with a fairseq model bundle: one output per input, in order, and a report.

Empty segments
    Empty (or whitespace-only) segments are not sent to the model and translate to ``""``; every
    other segment goes through :class:`~nlp_robustness.systems.fairseq.subwords.SubwordCodec` and
    ``fairseq-generate`` (reading the split as raw text, ``--dataset-impl raw``: no ``fairseq-preprocess``
    run, whose start-up cost a small test set more than its translation; the token ids are the same),
    whose output is put back in input order (see :mod:`nlp_robustness.systems.fairseq.generate`).

Several lists, one start-up
    :func:`translate_segment_lists` translates several lists (test sets) each in its own
    ``fairseq-generate`` run, with its own batches, exactly as if it were translated alone, but all runs
    in one process (:mod:`~nlp_robustness.systems.fairseq.generate_many`): torch and fairseq start once.

The reference side
    fairseq's ``translation`` task reads a source *and* a target file for every split, so the test
    set's reference is written beside the source. It only fills that slot: nothing reads it back
    (scores are computed later from the untouched reference in the test-set table). Sources and
    references longer than ``max_tokens_per_side`` subword tokens are cut to that length so fairseq
    never skips a segment for being too long; the count of cut sources is reported.
"""

from __future__ import annotations

import io
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from nlp_robustness.fileio.atomic import job_scratch_directory
from nlp_robustness.systems.fairseq.binarize import write_raw_split
from nlp_robustness.systems.fairseq.checkpoints import ModelBundle
from nlp_robustness.systems.fairseq.generate import GenerationOptions, generate_command, parse_generate_output
from nlp_robustness.systems.fairseq.runtime import (
    capability_warning, cpu_capability, environment_record, fairseq_environment, resolve_device, run_fairseq, run_fairseq_generate_many,
)
from nlp_robustness.systems.fairseq.subwords import SubwordCodec

__all__ = ["TranslationReport", "translate_lists_with_settings", "translate_segment_lists", "translate_segments", "translate_with_settings"]


@dataclass
class TranslationReport:
    """What happened while translating one list of segments."""

    segments: int = 0
    translated: int = 0
    empty_sources: int = 0
    truncated_sources: int = 0
    device: str = "cpu"
    cpu_threads: int = 1
    seconds: float = 0.0
    sentences_per_second: float = 0.0
    model: dict[str, Any] = field(default_factory=dict)
    #: What of the environment can change the last bits: ``allocator`` and ``cpu_kernels``
    #: (:func:`~nlp_robustness.systems.fairseq.runtime.environment_record`).
    environment: dict[str, Any] = field(default_factory=dict)
    #: Lists translated in the same process (one start-up); seconds and speed are those of all of them.
    runs_in_process: int = 1

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON data, fields in declaration order."""
        return asdict(self)

    def summary(self) -> str:
        """One line for a log: segments translated, device, speed, empty and cut sources."""
        return (
            f"{self.translated} of {self.segments} segments translated on {self.device} in {self.seconds:.1f} s "
            f"({self.sentences_per_second:.1f} sentences/s; {self.empty_sources} empty, "
            f"{self.truncated_sources} cut to the length limit)"
        )


def _cap_tokens(line: str, limit: int) -> tuple[str, bool]:
    """``line`` cut to its first ``limit`` tokens, and whether it was cut."""
    tokens = line.split()
    if len(tokens) <= limit:
        return line, False
    return " ".join(tokens[:limit]), True


def translate_segments(
    sources: Sequence[str],
    references: Sequence[str],
    bundle: ModelBundle,
    options: GenerationOptions,
    workdir: str | os.PathLike[str],
    *,
    device: str,
    cpu_threads: int,
    log: io.TextIOBase | None = None,
) -> tuple[list[str], TranslationReport]:
    """Translate ``sources`` with a model bundle; one output per input, in order (see the module doc).

    Args:
        references: Same length as ``sources``; only fills the target slot of fairseq's task.
        workdir: A scratch directory (the raw-text split, generate output).
        device: ``"auto"``, ``"cpu"`` or ``"cuda"``, resolved where fairseq runs (see
            :func:`~nlp_robustness.systems.fairseq.runtime.resolve_device`); the report names the device used.
    """
    return translate_segment_lists([(sources, references)], bundle, options, workdir, device=device, cpu_threads=cpu_threads, log=log)[0]


def translate_segment_lists(
    segment_lists: Sequence[tuple[Sequence[str], Sequence[str]]],
    bundle: ModelBundle,
    options: GenerationOptions,
    workdir: str | os.PathLike[str],
    *,
    device: str,
    cpu_threads: int,
    log: io.TextIOBase | None = None,
    one_process: bool = True,
) -> list[tuple[list[str], TranslationReport]]:
    """Translate several (sources, references) lists, each in its own ``fairseq-generate`` run (exactly as
    :func:`translate_segments` would alone), all runs in one process; one (translations, report) per list.

    Args:
        one_process: False runs the ``fairseq-generate`` command once per list instead (a start-up each;
            the same translations: the benchmark and the tests compare the two).
    """
    # with the checkpoint's weights digest: every report is tied to the exact weights (training.json records it too)
    model = bundle.check()
    codec = SubwordCodec(bundle.bpe_codes)
    prepared = []  # (translations, report, indices sent, data directory)
    for number, (sources, references) in enumerate(segment_lists):
        if len(sources) != len(references):
            raise ValueError(f"{len(sources)} sources but {len(references)} references")
        report = TranslationReport(segments=len(sources), device=device, cpu_threads=cpu_threads, model=model,
                                   runs_in_process=len(segment_lists))
        sent = [index for index, segment in enumerate(sources) if segment.strip()]
        report.empty_sources = len(sources) - len(sent)
        data_dir = Path(workdir) / f"data-bin-{number}"
        if sent:
            encoded_sources = codec.encode([sources[index] for index in sent], bundle.source_language)
            encoded_references = codec.encode([references[index] for index in sent], bundle.target_language)
            capped_sources = [_cap_tokens(line, options.max_tokens_per_side) for line in encoded_sources]
            report.truncated_sources = sum(cut for _, cut in capped_sources)
            # only fills the target slot; a placeholder keeps an empty reference from being a zero-length target
            capped_references = [_cap_tokens(line, options.max_tokens_per_side)[0] or "." for line in encoded_references]
            write_raw_split(
                "test",
                [line for line, _ in capped_sources],
                capped_references,
                data_dir,
                bundle.source_language,
                bundle.target_language,
                source_dictionary=bundle.source_dictionary,
                target_dictionary=bundle.target_dictionary,
            )
        prepared.append(([""] * len(sources), report, sent, data_dir))

    started = time.perf_counter()
    with_segments = [item for item in prepared if item[2]]
    environment = fairseq_environment(cpu_threads)
    outputs: list[str] = []
    capability = ""
    if with_segments and one_process:
        outputs, device, capability = run_fairseq_generate_many(
            [generate_command(data_dir, bundle, options, None) for *_, data_dir in with_segments], device, workdir, log, environment
        )
    elif with_segments:
        device = resolve_device(device)
        capability = cpu_capability(environment)
        outputs = [
            run_fairseq("fairseq-generate", generate_command(data_dir, bundle, options, device), log, environment)
            for *_, data_dir in with_segments
        ]
    warning = capability_warning(capability, environment) if capability and device == "cpu" else None
    if warning and log is not None:
        log.write(warning + "\n")
    for (translations, _, sent, _), output in zip(with_segments, outputs, strict=True):
        hypotheses = parse_generate_output(output, len(sent))
        for index, translation in zip(sent, codec.decode(hypotheses, bundle.target_language)):
            translations[index] = translation
    seconds = time.perf_counter() - started
    translated = sum(len(sent) for _, _, sent, _ in prepared)
    for _, report, sent, _ in prepared:
        report.device = device
        # nothing ran for a list of empty sources only: no level to record
        report.environment = environment_record(environment, capability) if capability else {}
        report.translated = len(sent)
        if sent:
            report.seconds = seconds
            report.sentences_per_second = translated / seconds if seconds > 0 else 0.0
    return [(translations, report) for translations, report, _, _ in prepared]


def translate_with_settings(
    sources: Sequence[str],
    references: Sequence[str],
    bundle: Mapping[str, str],
    generation: Mapping[str, Any],
    *,
    device: str,
    cpu_threads: int,
    log_path: str | os.PathLike[str],
) -> tuple[list[str], TranslationReport]:
    """:func:`translate_segments` from config values (a workflow job's params), in a scratch directory.

    Args:
        bundle: :class:`ModelBundle` fields; generation: :class:`GenerationOptions` fields.
        device: The config value (``auto`` / ``cpu`` / ``cuda``), resolved where fairseq runs (see :func:`resolve_device`).
        log_path: fairseq's output is appended to this file.
    """
    return translate_lists_with_settings(
        [(sources, references)], bundle, generation, device=device, cpu_threads=cpu_threads, log_path=log_path
    )[0]


def translate_lists_with_settings(
    segment_lists: Sequence[tuple[Sequence[str], Sequence[str]]],
    bundle: Mapping[str, str],
    generation: Mapping[str, Any],
    *,
    device: str,
    cpu_threads: int,
    log_path: str | os.PathLike[str],
) -> list[tuple[list[str], TranslationReport]]:
    """:func:`translate_segment_lists` from config values (see :func:`translate_with_settings`).

    The work folder is named after the job's log (one per job): a job killed in the middle leaves it in the system's
    temporary folder, and the job's next start removes it (:func:`~nlp_robustness.fileio.atomic.job_scratch_directory`).
    """
    with job_scratch_directory(log_path, "fairseq-") as workdir, open(log_path, "a", encoding="utf-8") as log:
        return translate_segment_lists(
            segment_lists,
            ModelBundle(**bundle),
            GenerationOptions(**generation),
            workdir,
            device=device,
            cpu_threads=cpu_threads,
            log=log,
        )
