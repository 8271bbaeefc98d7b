"""Translate segments through a chain of Apertium modes, keeping the output aligned 1:1 with the input.

Batching
    Each stage of a chain (e.g. ``["eng-spa", "es-fr"]``) is run as *one* ``apertium`` process over the
    whole list of segments (process start-up costs up to ~1.5 s, so one process per sentence would be
    far too slow). Segments are written in Apertium's ``txt`` format, each followed by a blank line
    (``"segment\\n\\n"``). ``apertium-destxt`` turns every blank line into a sentence boundary (it adds a
    period that the re-formatter removes again), so no transfer rule spans two segments, and the
    blank line comes back as a separator in the output, which is split on it again.

Input normalisation (documented behaviour, not an error)
    * Line breaks inside a segment (``\\n``, ``\\r\\n``, ``\\r`` and the other boundaries of
      :meth:`str.splitlines`) are replaced by single spaces: a blank line would otherwise split the
      segment in two and break the alignment.
    * Empty and whitespace-only segments are not sent to Apertium (a blank line among blank-line
      separators would collapse) and translate to ``""``.
    * Segments that a stage returns empty (see the final fallback of :mod:`.apertium_recovery`) are not
      sent to later stages.

Recovery
    Each stage runs as :func:`~nlp_robustness.systems.apertium_recovery.translate_stage`: one batch process,
    plus recovery batches, single segments and a final fallback when Apertium crashes part-way
    (:mod:`nlp_robustness.systems.apertium_recovery`). The :class:`ApertiumReport` returned with the
    translations says how many segments needed each of these steps.

Segments apart
    A segment's translation in a batch can depend on the segments before it;
    :func:`~nlp_robustness.systems.apertium_round_trips.translate_each_alone` gives every segment the
    translation it gets in a run of its own (:mod:`nlp_robustness.systems.apertium_round_trips`).

Errors
    A missing ``apertium`` command, an unknown mode (checked once per call against ``apertium -l``) and
    malformed arguments raise :class:`~nlp_robustness.errors.InputError`. Failures of Apertium on some
    segments never raise: they are recovered as described and reported. Only a mode that does not
    work at all -- the first :data:`~nlp_robustness.systems.apertium_recovery.MAX_LEADING_FAILURES`
    segments sent fail even alone and nothing has been translated -- raises
    :class:`~nlp_robustness.systems.apertium_recovery.ApertiumError` (a broken installation would otherwise
    cost dozens of processes per segment and yield nothing but empty translations).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Sequence

from nlp_robustness.errors import InputError
from nlp_robustness.systems.apertium_recovery import StageReport, normalise_segment, translate_stage

__all__ = [
    "ApertiumReport",
    "available_modes",
    "translate_with_apertium",
]


def _total(name: str, doc: str) -> property:
    """A read-only property summing the :class:`StageReport` field ``name`` over a report's stages."""
    return property(lambda report: sum(getattr(stage, name) for stage in report.stages), doc=doc)


#: The chain-wide values :meth:`ApertiumReport.as_dict` writes after the report's own fields, in this order.
_AGGREGATES = (
    "batches", "failed_batches", "recovery_segments", "single_segments", "fallback_segments",
    "empty_fallback_segments", "fallback_indices", "processes", "seconds", "stderr",
)


def _plain(name: str, value: Any) -> Any:
    """``value`` as JSON data: tuples become lists, times are rounded to the millisecond."""
    if name == "seconds":
        return round(value, 3)
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class ApertiumReport:
    """What happened while a chain of modes translated a list of segments.

    Counts are kept per stage in :attr:`stages`; the properties aggregate them over the chain (a
    segment that needed recovery in both stages is counted twice in the sums, once in
    :attr:`fallback_indices`).

    Attributes:
        modes: The chain of modes, in order.
        mark_unknown: Whether unknown words were marked with ``*`` (``apertium`` without ``-u``).
        segments: Segments given (all of them, empty ones included).
        empty_segments: Given segments that were empty or whitespace-only, hence not translated.
        stages: One :class:`StageReport` per mode, in chain order.
    """

    modes: tuple[str, ...]
    mark_unknown: bool
    segments: int
    empty_segments: int
    stages: tuple[StageReport, ...] = field(default_factory=tuple)

    batches = _total("batches", "Batch processes run over all stages.")
    failed_batches = _total("failed_batches", "Batches not accepted, over all stages.")
    recovery_segments = _total("recovery_segments", "Segment translations that came from recovery batches, summed over stages.")
    single_segments = _total("single_segments", "Segment translations run alone, summed over stages.")
    fallback_segments = _total("fallback_segments", "Segments that went to the final fallback, summed over stages.")
    empty_fallback_segments = _total("empty_fallback_segments", "Segments the final fallback left empty, summed over stages.")
    processes = _total("processes", "``apertium`` processes run over all stages.")
    seconds = _total("seconds", "Wall-clock time of all stages.")

    @property
    def fallback_indices(self) -> tuple[int, ...]:
        """Positions (in the given list) of the segments that went to the final fallback in any stage."""
        return tuple(sorted({index for stage in self.stages for index in stage.fallback_indices}))

    @property
    def stderr(self) -> tuple[str, ...]:
        """Distinct stderr lines of all stages, each prefixed with its mode."""
        return tuple(f"{stage.mode}: {line}" for stage in self.stages for line in stage.stderr)

    def summary(self) -> str:
        """One line for a log: segments, batches, and how many segments needed recovery or fallback."""
        return (
            f"apertium {' | '.join(self.modes)}: {self.segments} segments ({self.empty_segments} empty), "
            f"{self.batches} batches ({self.failed_batches} failed), "
            f"{self.recovery_segments} segments in recovery batches, {self.single_segments} alone, "
            f"{self.fallback_segments} fell back ({self.empty_fallback_segments} left empty), "
            f"{len(self.stderr)} distinct stderr lines, {self.seconds:.1f} s"
        )

    def as_dict(self) -> dict[str, Any]:
        """The report as plain JSON-serialisable data: its fields, the aggregates, then each stage's fields."""
        names = [item.name for item in fields(self) if item.name != "stages"] + list(_AGGREGATES)
        record = {name: _plain(name, getattr(self, name)) for name in names}
        record["stages"] = [
            {item.name: _plain(item.name, getattr(stage, item.name)) for item in fields(stage)} for stage in self.stages
        ]
        return record


def _resolve_command(apertium_command: str) -> str:
    """Return the executable for ``apertium_command`` or raise InputError if there is none."""
    if not apertium_command:
        raise InputError("apertium_command: empty command name")
    resolved = shutil.which(apertium_command)
    if resolved is None:
        raise InputError(
            f"apertium_command: {apertium_command!r} was not found on PATH or is not executable "
            "(install Apertium, e.g. the Debian packages apertium, apertium-eng-spa, apertium-es-fr, ...)"
        )
    return resolved


def available_modes(apertium_command: str = "apertium") -> set[str]:
    """Return the modes (translation directions) that ``apertium -l`` lists.

    Raises:
        InputError: The command does not exist, cannot be run or fails.
    """
    resolved = _resolve_command(apertium_command)
    try:
        listing = subprocess.run([resolved, "-l"], capture_output=True, check=False)
    except OSError as error:
        raise InputError(f"apertium_command: cannot run {apertium_command!r} -l: {error}") from error
    if listing.returncode != 0:
        message = listing.stderr.decode("utf-8", errors="replace").strip()
        raise InputError(
            f"apertium_command: {apertium_command!r} -l exited with status {listing.returncode}: {message}"
        )
    return {line.strip() for line in listing.stdout.decode("utf-8", errors="replace").splitlines() if line.strip()}


def _checked(segments: Sequence[str], modes: Sequence[str], apertium_command: str) -> tuple[tuple[str, ...], str]:
    """``modes`` as a tuple and the resolved command, once the arguments are checked.

    Raises:
        InputError: No modes, a segment that is not a string, a missing command or an unknown mode.
    """
    if isinstance(modes, str):
        raise InputError(f"modes: expected a list of Apertium modes, got the string {modes!r}")
    modes = tuple(modes)
    if not modes:
        raise InputError("modes: at least one Apertium mode is needed")
    for position, segment in enumerate(segments):
        if not isinstance(segment, str):
            raise InputError(f"segments[{position}]: expected a string, got {type(segment).__name__}")
    known = available_modes(apertium_command)
    unknown = [mode for mode in modes if mode not in known]
    if unknown:
        raise InputError(
            f"modes: unknown Apertium mode(s) {', '.join(map(repr, unknown))} "
            f"(available from {apertium_command!r} -l: {', '.join(sorted(known)) or 'none'})"
        )
    return modes, _resolve_command(apertium_command)


def _chain(
    segments: Sequence[str], modes: Sequence[str], mark_unknown: bool, apertium_command: str,
    stage: Callable[[list[str], str, bool, str], tuple[list[str], StageReport]],
) -> tuple[list[str], ApertiumReport]:
    """``segments`` checked and normalised, then through each mode of ``modes`` with ``stage`` (the output of
    one mode is the input of the next), and the chain's report."""
    modes, command = _checked(segments, modes, apertium_command)
    current = [normalise_segment(segment) for segment in segments]
    empty = sum(1 for segment in current if not segment.strip())
    stages: list[StageReport] = []
    for mode in modes:
        current, report = stage(current, mode, mark_unknown, command)
        stages.append(report)
    return current, ApertiumReport(modes=modes, mark_unknown=mark_unknown, segments=len(segments),
                                   empty_segments=empty, stages=tuple(stages))


def translate_with_apertium(
    segments: Sequence[str],
    modes: Sequence[str],
    mark_unknown: bool = False,
    apertium_command: str = "apertium",
) -> tuple[list[str], ApertiumReport]:
    """Translate ``segments`` through the chain ``modes`` (e.g. ``["eng-cat", "cat-fra"]``).

    Each mode runs once over the whole list (plus recovery batches when a batch fails); the output of
    one stage is the input of the next. See the module docstring for normalisation and recovery.

    Args:
        segments: Source segments, one sentence each; empty ones stay empty.
        modes: Apertium modes applied in order; each must be listed by ``apertium -l``.
        mark_unknown: Keep Apertium's ``*`` marks on unknown words (default: ``apertium -u``, no marks).
        apertium_command: The ``apertium`` executable (name on PATH or path).

    Returns:
        The translations, aligned 1:1 with ``segments`` and free of line breaks, and a report with one
        :class:`StageReport` per mode.

    Raises:
        InputError: No modes, a segment that is not a string, a missing ``apertium`` command or a mode
            that ``apertium -l`` does not list.
        ApertiumError: A mode that translates nothing at all (see :data:`~nlp_robustness.systems.apertium_recovery.MAX_LEADING_FAILURES`).
    """
    return _chain(segments, modes, mark_unknown, apertium_command, translate_stage)
