"""Every MT system kind, by the name the config gives it (``systems.<name>.kind``), and the one interface
the translation rules see.

A *kind* (Apertium pivot chains, fairseq models, imported hypotheses) is a module, registered in
:data:`KINDS`, that satisfies :class:`SystemKind`: it says what one translation job of a system needs
(:class:`JobNeeds`: its input files beyond the test sets, its params, threads, memory, run time and GPUs)
and translates a batch of whole test sets in input order, writing each one's translations and
``.report.json`` (:class:`TranslationBatch`). rules/translate.smk writes one per-test-set rule per kind
(and, for a kind that batches, one rule per perturbation family with ``translation_jobs: per_family`` or
``per_family_joint``)
from the same template, and scripts/translate.py hands every job to its kind; neither names a kind.

A new kind is its module here (``nlp_robustness.systems.kinds.<kind>``), its line in :data:`KINDS`, its
block under ``systems`` in schemas/config.schema.yaml and the conda environment its jobs run in.

Kind modules are imported on demand: the workflow reads their job descriptions in the environment that
runs Snakemake, and a job runs in its kind's environment only, so a module imports its engine (torch,
fairseq) inside :func:`translate`, never at the top.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.fileio.text_files import write_lines

if TYPE_CHECKING:  # a job imports this module in its kind's environment; only the workflow reads a manifest
    from nlp_robustness.data.manifest_entries import Manifest

__all__ = [
    "KINDS",
    "JobNeeds",
    "SystemContext",
    "SystemKind",
    "TranslationBatch",
    "TranslationJobs",
    "system_kind",
    "write_batch",
    "write_report",
    "write_translations",
]

#: Kind (the config's ``systems.<name>.kind``) -> the module that implements it (see :class:`SystemKind`).
KINDS: dict[str, str] = {
    "apertium": "nlp_robustness.systems.kinds.apertium",  # Apertium pivot chains (the paper's RBMT systems)
    "hypotheses": "nlp_robustness.systems.kinds.hypotheses",  # existing translations: a file per test set, or a dataset's submission
    "fairseq": "nlp_robustness.systems.kinds.fairseq",  # ConvS2S: pretrained from the manifest, or in-house
    "huggingface": "nlp_robustness.systems.kinds.huggingface",  # a transformers seq2seq model: hub id or directory
}


@dataclass(frozen=True)
class SystemContext:
    """What a kind may read besides a system's config entry (built once by rules/translate.smk).

    Attributes:
        manifest: The dataset manifest (pretrained models, the languages of training datasets).
        download_dir: Where downloads are fetched and archives extracted (``resources/downloads``).
        max_segments: The config's ``max_segments`` (how many lines of a hypotheses file a test set takes).
        derived_testsets: Every perturbed test set of the config.
        testset_datasets: Test set -> the manifest dataset it is made from (the test sets given as a
            dataset; a ``hypotheses`` system with ``submission`` reads its translations from that dataset).
        local_testsets: Test set -> its config entry, for the test sets of a user's file with domains (a WMT XML
            file, or plain text with a domain file; :mod:`nlp_robustness.data.local_testsets`): a submission is read
            from the XML file, and a hypotheses file translates the whole file (the test set's lines picked by segment id).
    """

    manifest: Manifest
    download_dir: str
    max_segments: int | None
    derived_testsets: frozenset[str] = frozenset()
    testset_datasets: Mapping[str, str] = field(default_factory=dict)
    local_testsets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class JobNeeds:
    """What one translation job of a system needs, besides its test sets.

    Attributes:
        inputs: Rule input name -> file or directory (a model's files, a hypotheses file); the job's
            translation reads them, and Snakemake makes them first.
        params: Every config value the translation reads (rule params: an edit reruns exactly the
            jobs it touches); handed back to the kind as :attr:`TranslationBatch.params`.
        threads: Cores the job uses.
        mem_mb: Memory of the job.
        runtime: Minutes a cluster scheduler should allow it.
        gpus: GPUs a cluster scheduler should give it (the ``gpu`` resource of a kind whose ``GPU`` is true).
    """

    inputs: dict[str, str]
    params: dict[str, Any]
    threads: int
    mem_mb: int
    runtime: int
    gpus: int = 0


@dataclass(frozen=True)
class TranslationBatch:
    """One translation job as its script sees it: whole test sets, translated in this order.

    Attributes:
        system: The system's name (config key under ``systems``).
        testsets: Test set names; ``testset_files``, ``translation_files`` and ``report_files`` are aligned with it.
        inputs: :attr:`JobNeeds.inputs`, as paths.
        params: :attr:`JobNeeds.params`.
        log: The job's log file (already the script's stderr; a kind may append a tool's output to it).
        family: The perturbation family whose test sets the job translates, or None for a job of one
            test set.
        joint: Whether a model kind translates the family's sets in one batched run
            (``translation_jobs: per_family_joint``; their reports then say so) rather than each in its own
            run, as if alone.
    """

    system: str
    testsets: tuple[str, ...]
    testset_files: tuple[str, ...]
    translation_files: tuple[str, ...]
    report_files: tuple[str, ...]
    inputs: Mapping[str, str]
    params: Mapping[str, Any]
    log: str
    family: str | None = None
    joint: bool = False

    def __post_init__(self) -> None:
        lengths = {len(self.testsets), len(self.testset_files), len(self.translation_files), len(self.report_files)}
        if len(lengths) != 1:
            raise ValueError(
                f"{self.system}: {len(self.testsets)} test sets, {len(self.testset_files)} test set files, "
                f"{len(self.translation_files)} translation files and {len(self.report_files)} reports"
            )


class SystemKind(Protocol):
    """The interface of a kind module (module attributes and functions).

    ``RULE``
        Name of its per-test-set rule and of its log folder (``logs/<RULE>/{system}/{testset}.log``); a
        family's job is ``<RULE>_<family>``, logged under ``logs/<RULE>/{system}/perturbed/<family>.log``.
    ``CONDA_ENV``
        File of its jobs' conda environment under envs/ (the engine's dependencies and this package).
    ``BATCHES_FAMILIES``
        Whether it translates every perturbed test set of a family with ``translation_jobs: per_family``
        (each set its own run) or ``per_family_joint`` in one job (one start-up); a kind that does not
        translates them one job each.
    ``GPU``
        Whether its jobs declare a ``gpu`` resource (:attr:`JobNeeds.gpus`) for a cluster scheduler.
    ``needs(system, spec, testsets, context)``
        What the job translating ``testsets`` (one name, or a family's names when ``BATCHES_FAMILIES``)
        with the system ``system`` (config entry ``spec``, defaults filled in) needs.
    ``translate(batch)``
        Translate the batch's test sets (whole files, in order) and write each one's translations
        (one line per segment) and ``.report.json``.
    """

    RULE: str
    CONDA_ENV: str
    BATCHES_FAMILIES: bool
    GPU: bool

    def needs(self, system: str, spec: Mapping[str, Any], testsets: Sequence[str], context: SystemContext) -> JobNeeds: ...

    def translate(self, batch: TranslationBatch) -> None: ...


def system_kind(kind: str, key: str | None = None) -> SystemKind:
    """The module of ``kind``.

    Args:
        key: The config key that names the kind (e.g. ``systems.opus-mt.kind``), for the error.

    Raises:
        InputError: No such kind, naming ``key`` and the known kinds.
    """
    if kind not in KINDS:
        where = f"invalid configuration at key '{key}': " if key else ""
        raise InputError(f"{where}unknown system kind {kind!r} (known: {', '.join(KINDS)})")
    return cast(SystemKind, importlib.import_module(KINDS[kind]))


def write_translations(translations: list[str], path: str | os.PathLike[str]) -> None:
    """One translation per line, atomically (see :func:`nlp_robustness.fileio.text_files.write_lines`)."""
    write_lines(translations, path)


def write_report(record: Mapping[str, Any], path: str | os.PathLike[str], *, ensure_ascii: bool = True) -> None:
    """A job's report as indented JSON, atomically (``ensure_ascii`` as each kind has always written it)."""
    with atomic_write(path) as handle:
        json.dump(record, handle, indent=2, ensure_ascii=ensure_ascii)


def write_batch(batch: TranslationBatch, sizes: Sequence[int], translations: Sequence[str], report: Mapping[str, Any]) -> None:
    """Write a batch translated in one (joint) run: each test set's translations (its slice of ``translations``;
    ``sizes``: the segments of each test set, in the batch's order) and its report: the run's ``report`` for
    a job of one test set, or for a family's job the set's own size, the test sets translated with it and
    the run's report under ``job``."""
    start = 0
    for testset, segments, translation_file, report_file in zip(
        batch.testsets, sizes, batch.translation_files, batch.report_files, strict=True
    ):
        write_translations(list(translations[start : start + segments]), translation_file)
        start += segments
        if batch.family is None:
            record = {"system": batch.system, "testset": testset, **report}
        else:
            record = {"system": batch.system, "testset": testset, "segments": segments,
                      "translated_with": list(batch.testsets), "job": dict(report)}
        write_report(record, report_file)
    if start != len(translations):
        raise ValueError(f"{batch.system}: {len(translations)} translations for {start} segments of {', '.join(batch.testsets)}")


class _Wildcards(Protocol):
    system: str


@dataclass(frozen=True)
class TranslationJobs:
    """The config's systems as translation jobs: the input functions of rules/translate.smk.

    A function taking ``wildcards`` describes the job of ``wildcards.system`` on ``wildcards.testset``,
    or on ``testsets`` when given (a family's job, whose rule has no ``{testset}``).

    Attributes:
        systems: The config's ``systems`` section (defaults filled in).
        context: What kinds read besides a system's entry.
        family_jobs: Family -> its perturbed test sets, for the families translated in one job per system
            (``translation_jobs: per_family`` or ``per_family_joint``).
    """

    systems: Mapping[str, Mapping[str, Any]]
    context: SystemContext
    family_jobs: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def kind(self, system: str) -> SystemKind:
        """The kind module of ``system`` (an unknown kind names ``systems.<system>.kind``)."""
        return system_kind(self.systems[system]["kind"], f"systems.{system}.kind")

    def systems_of_kind(self, kind: str) -> list[str]:
        """Systems of ``kind``, in config order."""
        return [name for name, spec in self.systems.items() if spec["kind"] == kind]

    def single_testsets(self, kind: str, testsets: Sequence[str]) -> list[str]:
        """Of ``testsets``, those a system of ``kind`` translates one job each: all of them, but for a kind
        that batches families, not the test sets of a family job."""
        if not system_kind(kind).BATCHES_FAMILIES:
            return list(testsets)
        batched = {name for names in self.family_jobs.values() for name in names}
        return [name for name in testsets if name not in batched]

    def needs(self, wildcards: _Wildcards, testsets: Sequence[str] | None = None) -> JobNeeds:
        """What the job needs (:class:`JobNeeds`)."""
        system = wildcards.system
        names = [getattr(wildcards, "testset")] if testsets is None else list(testsets)
        return self.kind(system).needs(system, self.systems[system], names, self.context)

    def inputs(self, wildcards: _Wildcards, testsets: Sequence[str] | None = None) -> dict[str, str]:
        return self.needs(wildcards, testsets).inputs

    def params(self, wildcards: _Wildcards, testsets: Sequence[str] | None = None) -> dict[str, Any]:
        return self.needs(wildcards, testsets).params

    def threads(self, wildcards: _Wildcards, testsets: Sequence[str] | None = None) -> int:
        return self.needs(wildcards, testsets).threads

    def resources(self, kind: str, testsets: Sequence[str] | None = None) -> dict[str, Callable[[_Wildcards], int]]:
        """The ``resources:`` of a rule of ``kind`` (``gpu`` only where the kind declares GPUs)."""
        resources: dict[str, Callable[[_Wildcards], int]] = {"mem_mb": lambda wildcards: self.needs(wildcards, testsets).mem_mb}
        if system_kind(kind).GPU:
            resources["gpu"] = lambda wildcards: self.needs(wildcards, testsets).gpus
        resources["runtime"] = lambda wildcards: self.needs(wildcards, testsets).runtime
        return resources
