"""Translating a list of segments with a fairseq model bundle: one output per input, in order, and a report.

Empty segments
    Empty (or whitespace-only) segments are not sent to the model and translate to ``""``; every
    other segment goes through :class:`~nlp_robustness.systems.fairseq.subwords.SubwordCodec` and
    ``fairseq-generate`` (reading the split as raw text, ``--dataset-impl raw``: no ``fairseq-preprocess``
    run, whose start-up cost a small test set more than its translation; the token ids are the same),
    whose output is put back in input order (see :mod:`nlp_robustness.systems.fairseq.generate`).

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

from nlp_robustness.systems.fairseq.binarize import write_raw_split
from nlp_robustness.systems.fairseq.checkpoints import ModelBundle
from nlp_robustness.systems.fairseq.generate import GenerationOptions, generate_command, parse_generate_output
from nlp_robustness.systems.fairseq.runtime import fairseq_environment, resolve_device, run_fairseq
from nlp_robustness.systems.fairseq.subwords import SubwordCodec

__all__ = ["TranslationReport", "translate_segments", "translate_with_settings"]


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
        device: ``"cpu"`` or ``"cuda"`` (see :func:`~nlp_robustness.systems.fairseq.runtime.resolve_device`).
    """
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} sources but {len(references)} references")
    report = TranslationReport(segments=len(sources), device=device, cpu_threads=cpu_threads)
    report.model = bundle.check()
    sent = [index for index, segment in enumerate(sources) if segment.strip()]
    report.empty_sources = len(sources) - len(sent)
    translations = [""] * len(sources)
    if not sent:
        return translations, report

    environment = fairseq_environment(cpu_threads)
    codec = SubwordCodec(bundle.bpe_codes)
    encoded_sources = codec.encode([sources[index] for index in sent], bundle.source_language)
    encoded_references = codec.encode([references[index] for index in sent], bundle.target_language)
    capped_sources = [_cap_tokens(line, options.max_tokens_per_side) for line in encoded_sources]
    report.truncated_sources = sum(cut for _, cut in capped_sources)
    # only fills the target slot; a placeholder keeps an empty reference from being a zero-length target
    capped_references = [_cap_tokens(line, options.max_tokens_per_side)[0] or "." for line in encoded_references]

    data_dir = Path(workdir) / "data-bin"
    started = time.perf_counter()
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
    output = run_fairseq("fairseq-generate", generate_command(data_dir, bundle, options, device), log, environment)
    hypotheses = parse_generate_output(output, len(sent))
    for index, translation in zip(sent, codec.decode(hypotheses, bundle.target_language)):
        translations[index] = translation
    report.seconds = time.perf_counter() - started
    report.translated = len(sent)
    report.sentences_per_second = len(sent) / report.seconds if report.seconds > 0 else 0.0
    return translations, report


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
        device: The config value (``auto`` / ``cpu`` / ``cuda``; see :func:`resolve_device`).
        log_path: fairseq's output is appended to this file.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fairseq-") as workdir, open(log_path, "a", encoding="utf-8") as log:
        return translate_segments(
            sources,
            references,
            ModelBundle(**bundle),
            GenerationOptions(**generation),
            workdir,
            device=resolve_device(device),
            cpu_threads=cpu_threads,
            log=log,
        )
