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
    * Segments that a stage returns empty (see the final fallback below) are not sent to later stages.

Recovery
    Apertium pipelines occasionally crash part-way: ``apertium-postchunk`` of ``eng-cat`` segfaults on
    line 1055 of newstest2014.en. The ``apertium`` wrapper then exits with status 0 or 141 and prints
    only what the downstream stages had received, which ends wherever the crashed stage's output
    buffer was last flushed -- several segments before the culprit and usually in mid-sentence. A
    batch is therefore *accepted* only when the process exits with status 0, its output ends with the
    blank-line separator and it holds exactly as many segments as were sent. Otherwise:

    1. Fewer segments than sent (or a non-zero exit): the segments of the output are complete up to
       its last blank-line separator. Of those, the last one is also discarded (conservatively: it is
       the one nearest to the crash) and the others are kept; a new *recovery batch* resumes at the
       first segment not kept.
    2. A recovery batch that keeps nothing (no progress): its first segment is translated *alone*,
       then batching resumes after it.
    3. A segment that fails alone too goes to the *final fallback*: it is split at the whitespace
       nearest to its middle and the two halves are translated alone (recursively, down to
       :data:`MAX_SPLIT_DEPTH` levels) and joined with a space; a piece that cannot be split further
       and still fails translates to ``""``. Such segments are counted and their positions reported.
    4. More segments than sent should not happen; as one extra separator anywhere shifts every later
       segment, *nothing* of such an output is trusted: the batch is retried at half its size
       (bisection, halved until a batch is accepted; the size is reset after each accepted batch);
       a single segment that still does not come back as one segment goes to the final fallback
       (as does any failed batch of one segment: it was the segment alone already).

    The :class:`ApertiumReport` returned with the translations says how many segments needed each of
    these steps, so the workflow can log e.g. how many segments fell back.

Segments apart
    Apertium 3.8's HMM part-of-speech tagger (``apertium-tagger -g``) carries its state from one segment to
    the next, even across the blank-line boundary, and so do the transfer stages' variables, so a segment's
    translation in a batch can depend on the segments before it (newstest2014 line 13 through ``gl-en``:
    "xa" is tagged an adverb alone, a conjunctive adverb after line 12; through ``en-eo``, 75 of 460 texts
    differed from their runs of their own, mostly in the case of the first word). :func:`translate_each_alone`
    gives every segment the translation it gets in a run of its own, without paying a run's start-up per
    segment (the transfer stage reads its rules for ~0.16 s): the format filters (``apertium-destxt``,
    ``apertium-retxt``) and the tagger run once per segment, and the programs before and after the tagger
    once over all segments in null-flush mode (``-z``: each NUL-terminated block is a text of its own; the
    transfer stages reset their variables at each NUL). This holds for modes whose other programs are those
    of :data:`STATELESS_PROGRAMS`; a mode with any other program (``cg-proc``, ``lrx-proc``,
    ``apertium-anaphora``: the Spanish and Catalan modes), a failed process, or a command other than the
    standard wrapper falls back to one run per segment (:func:`translate_stage` of one segment), which is the
    definition. Checked on 460 texts (300 newstest2014 sources and 160 Amazon reviews) through each stage of
    ``en-gl|gl-en`` and ``en-eo|eo-en`` (the workflow's round trips) and 600 more sources: every output
    byte-identical to its run of its own, at about 11 ms a text and stage instead of 0.25-0.65 s.

Errors
    A missing ``apertium`` command, an unknown mode (checked once per call against ``apertium -l``) and
    malformed arguments raise :class:`~nlp_robustness.errors.InputError`. Failures of Apertium on some
    segments never raise: they are recovered as described and reported. Only a mode that does not
    work at all -- the first :data:`MAX_LEADING_FAILURES` segments sent fail even alone and nothing
    has been translated -- raises :class:`ApertiumError` (a broken installation would otherwise cost
    dozens of processes per segment and yield nothing but empty translations).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Sequence

from nlp_robustness.errors import InputError

__all__ = [
    "MAX_LEADING_FAILURES",
    "MAX_SPLIT_DEPTH",
    "SEPARATOR",
    "ApertiumError",
    "ApertiumReport",
    "StageReport",
    "available_modes",
    "STATELESS_PROGRAMS",
    "mode_programs",
    "normalise_segment",
    "translate_each_alone",
    "translate_stage",
    "translate_with_apertium",
]

#: Written after every segment; Apertium's txt format keeps blank lines as they are.
SEPARATOR = "\n\n"

#: The programs a mode may run, besides the tagger, for :func:`translate_each_alone` to batch it: none
#: keeps state from one segment to the next (module docstring, "Segments apart").
STATELESS_PROGRAMS = frozenset({
    "lt-proc", "apertium-wblank-attach", "apertium-wblank-detach", "apertium-pretransfer",
    "apertium-transfer", "apertium-interchunk", "apertium-postchunk",
})

#: The program that carries state across segments; :func:`translate_each_alone` runs it once per segment.
_TAGGER = "apertium-tagger"

#: What ``apertium-destxt`` makes of the blank line after each segment; every program passes it on as it is.
_BOUNDARY = "[][\n\n]"

#: The line of the ``apertium`` wrapper that sets its data directory (its modes are under ``modes/``).
_DATADIR_LINE = re.compile(r'^APERTIUM_DATADIR="\$\{APERTIUM_DATADIR:-(?P<default>[^}]*)\}"', re.MULTILINE)

#: How many times the final fallback may halve a segment that fails alone (2**4 = 16 pieces at most).
MAX_SPLIT_DEPTH = 4

#: A stage that has not translated a single segment when this many segments have failed even alone
#: raises :class:`ApertiumError` instead of falling back segment by segment (a broken installation).
MAX_LEADING_FAILURES = 3


class ApertiumError(RuntimeError):
    """An Apertium mode that does not work at all (not a single segment translates, even alone)."""


def normalise_segment(text: str) -> str:
    """Return ``text`` with every line break (:meth:`str.splitlines` boundaries) replaced by a space."""
    return " ".join(text.splitlines())


@dataclass(frozen=True)
class StageReport:
    """What happened while one Apertium mode translated one list of segments.

    Attributes:
        mode: The Apertium mode (translation direction) of this stage.
        segments: Non-empty segments sent to this stage.
        batches: Batch processes run (the first one plus every recovery batch).
        failed_batches: Batches not accepted (non-zero exit, truncated or misaligned output).
        recovery_segments: Segments whose translation came from a recovery batch (a batch that resumed
            after a failed one, including bisected batches).
        single_segments: Segments run alone -- after a recovery batch made no progress, at the end of a
            bisection, or as a failed batch of one -- whether or not that succeeded.
        fallback_segments: Segments that failed alone too and went to the final fallback.
        empty_fallback_segments: Of ``fallback_segments``, those left without any translation (``""``).
        fallback_indices: Positions (in the list given to :func:`translate_stage`) of the
            ``fallback_segments``.
        processes: All ``apertium`` processes run by this stage (batches, single segments, pieces).
        exit_statuses: Distinct non-zero exit statuses seen, in order of appearance.
        stderr: Distinct non-empty stderr lines, in order of appearance.
        seconds: Wall-clock time of this stage.
    """

    mode: str
    segments: int
    batches: int
    failed_batches: int
    recovery_segments: int
    single_segments: int
    fallback_segments: int
    empty_fallback_segments: int
    fallback_indices: tuple[int, ...]
    processes: int
    exit_statuses: tuple[int, ...]
    stderr: tuple[str, ...]
    seconds: float


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


@dataclass(frozen=True)
class _Run:
    """One ``apertium`` process over a batch: the separator-terminated output segments and its status."""

    segments: list[str]
    terminated: bool  # the output ended with the separator (nothing was cut after the last segment)
    returncode: int


class _StageRunner:
    """Run one mode over batches and collect the statistics of a :class:`StageReport`."""

    def __init__(self, command: str, mode: str, mark_unknown: bool) -> None:
        self.argv = [command, "-f", "txt"] + ([] if mark_unknown else ["-u"]) + [mode]
        self.mode = mode
        self.processes = 0
        self.exit_statuses: dict[int, None] = {}
        self.stderr: dict[str, None] = {}

    def run(self, texts: Sequence[str]) -> _Run:
        """Translate ``texts`` (normalised, non-empty) in one process; never raises for Apertium failures."""
        payload = "".join(text + SEPARATOR for text in texts).encode("utf-8")
        self.processes += 1
        try:
            process = subprocess.run(self.argv, input=payload, capture_output=True, check=False)
        except OSError as error:  # the command vanished or is not executable any more
            self.stderr.setdefault(f"cannot run {self.argv[0]}: {error}", None)
            return _Run(segments=[], terminated=False, returncode=-1)
        lines = [line.strip() for line in process.stderr.decode("utf-8", errors="replace").splitlines()]
        for line in lines:
            if line:
                self.stderr.setdefault(line, None)
        if process.returncode != 0:
            self.exit_statuses.setdefault(process.returncode, None)
        # A crash can cut the output in the middle of a UTF-8 sequence; that tail is discarded below.
        output = process.stdout.decode("utf-8", errors="replace")
        pieces = output.split(SEPARATOR)
        # Everything after the last separator is unterminated: empty for a complete output, a possibly
        # truncated segment otherwise.
        tail = pieces.pop()
        return _Run(
            segments=[normalise_segment(piece) for piece in pieces],
            terminated=tail == "",
            returncode=process.returncode,
        )

    def translate_alone(self, text: str) -> str | None:
        """Translate one segment in its own process; ``None`` if it does not come back as one segment."""
        result = self.run([text])
        if result.returncode == 0 and result.terminated and len(result.segments) == 1:
            return result.segments[0]
        return None

    def fallback(self, text: str, depth: int = 0) -> str:
        """Final fallback for a segment that failed alone: translate its halves (recursively) or give ``""``."""
        if depth > 0:
            translated = self.translate_alone(text)
            if translated is not None:
                return translated
        if depth >= MAX_SPLIT_DEPTH:
            return ""
        halves = _split_in_half(text)
        if halves is None:
            return ""
        left, right = (self.fallback(half, depth + 1) for half in halves)
        return " ".join(part for part in (left, right) if part)


def _split_in_half(text: str) -> tuple[str, str] | None:
    """Split ``text`` at the whitespace run nearest to its middle; ``None`` if it has no inner whitespace."""
    stripped = text.strip()
    middle = len(stripped) // 2
    positions = [index for index, character in enumerate(stripped) if character.isspace()]
    if not positions:
        return None
    cut = min(positions, key=lambda index: (abs(index - middle), index))
    left, right = stripped[:cut].strip(), stripped[cut:].strip()
    if not left or not right:
        return None
    return left, right


def translate_stage(
    texts: Sequence[str],
    mode: str,
    mark_unknown: bool = False,
    apertium_command: str = "apertium",
) -> tuple[list[str], StageReport]:
    """Translate ``texts`` with one Apertium mode, one batch process plus recovery (see module docstring).

    ``texts`` are normalised with :func:`normalise_segment`; empty and whitespace-only ones translate
    to ``""`` without being sent. The command and mode are *not* validated here (see
    :func:`translate_with_apertium`, which does).

    Returns:
        The translations, aligned 1:1 with ``texts``, and the stage's report (``fallback_indices`` are
        positions in ``texts``).

    Raises:
        ApertiumError: The mode translates nothing at all (see :data:`MAX_LEADING_FAILURES`).
    """
    started = time.perf_counter()
    runner = _StageRunner(apertium_command, mode, mark_unknown)
    normalised = [normalise_segment(text) for text in texts]
    translations = [""] * len(normalised)
    # Positions of the segments to send; the batches below work on this list.
    todo = [index for index, text in enumerate(normalised) if text.strip()]
    batches = failed_batches = recovery_segments = single_segments = 0
    translated_count = 0  # segments translated by a batch or alone (not by the final fallback)
    fallback_indices: list[int] = []
    empty_fallbacks = 0

    def fall_back(index: int) -> None:
        """Final fallback for ``index``, which failed alone; give up if the mode never works at all."""
        nonlocal empty_fallbacks
        fallback_indices.append(index)
        if translated_count == 0 and len(fallback_indices) >= MAX_LEADING_FAILURES:
            details = "; ".join(list(runner.stderr)[:5]) or "no message on stderr"
            raise ApertiumError(
                f"apertium mode {mode!r}: the first {len(fallback_indices)} segments sent failed even alone "
                f"and nothing was translated (exit statuses {list(runner.exit_statuses) or [0]}; {details})"
            )
        translations[index] = runner.fallback(normalised[index])
        if not translations[index]:
            empty_fallbacks += 1

    def alone(index: int) -> None:
        """Translate ``index`` alone, going to the final fallback if that fails too."""
        nonlocal single_segments, translated_count
        single_segments += 1
        translated = runner.translate_alone(normalised[index])
        if translated is None:
            fall_back(index)
        else:
            translations[index] = translated
            translated_count += 1

    position = 0  # first entry of ``todo`` without a translation
    limit = len(todo)  # batch size; lowered only by bisection after an over-long output
    recovering = False  # the next batch resumes after a failed one
    while position < len(todo):
        batch = todo[position : position + limit]
        if recovering and len(batch) == 1:
            alone(batch[0])
            position += 1
            limit = len(todo)
            continue
        batches += 1
        result = runner.run([normalised[index] for index in batch])
        accepted = result.returncode == 0 and result.terminated and len(result.segments) == len(batch)
        overlong = len(result.segments) > len(batch)
        if accepted:
            kept = len(batch)
        elif overlong:
            kept = 0  # misaligned: an extra separator may be anywhere, so nothing can be trusted
        else:
            kept = max(len(result.segments) - 1, 0)  # drop the segment nearest to the crash as well
        for index, translated in zip(batch[:kept], result.segments[:kept]):
            translations[index] = translated
        translated_count += kept
        if recovering:
            recovery_segments += kept
        if accepted:
            position += kept
            limit = len(todo)
            recovering = False
            continue
        failed_batches += 1
        recovering = True
        if len(batch) == 1:
            # The failed batch was this segment alone already: straight to the final fallback.
            single_segments += 1
            fall_back(batch[0])
            position += 1
            limit = len(todo)
        elif overlong:
            limit = max(len(batch) // 2, 1)  # bisect
        elif kept > 0:
            position += kept  # resume after the segments kept
        else:
            # No progress: translate the first segment alone, then resume batching after it.
            alone(batch[0])
            position += 1
    report = StageReport(
        mode=mode,
        segments=len(todo),
        batches=batches,
        failed_batches=failed_batches,
        recovery_segments=recovery_segments,
        single_segments=single_segments,
        fallback_segments=len(fallback_indices),
        empty_fallback_segments=empty_fallbacks,
        fallback_indices=tuple(sorted(fallback_indices)),
        processes=runner.processes,
        exit_statuses=tuple(runner.exit_statuses),
        stderr=tuple(runner.stderr),
        seconds=time.perf_counter() - started,
    )
    return translations, report


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
        ApertiumError: A mode that translates nothing at all (see :data:`MAX_LEADING_FAILURES`).
    """
    return _chain(segments, modes, mark_unknown, apertium_command, translate_stage)


def mode_programs(
    mode: str, mark_unknown: bool = False, apertium_command: str = "apertium", null_flush: bool = False
) -> list[list[str]] | None:
    """The programs that ``apertium -f txt [-u] [-z] mode`` runs between ``apertium-destxt`` and
    ``apertium-retxt``, as argument lists: the pipeline ``apertium-wblank-mode [-z]`` makes of the mode file,
    with ``$1`` set to the generator's option (``-g`` when unknown words are marked, ``-n`` with ``-u``) and
    ``$2`` (the tagger's option for ``-a``) empty, as the wrapper sets them. ``null_flush`` gives each
    program its ``-z``: it then treats every NUL-terminated block of its input as a text of its own.

    Returns:
        None when ``apertium_command`` is not the standard wrapper (it has no ``APERTIUM_DATADIR`` line),
        the mode file is missing, or ``apertium-wblank-mode`` fails: the caller then runs the wrapper itself.
    """
    resolved = shutil.which(apertium_command)
    if resolved is None:
        return None
    try:
        with open(resolved, encoding="utf-8", errors="replace") as handle:
            match = _DATADIR_LINE.search(handle.read(65536))
    except OSError:
        return None
    if match is None:
        return None
    mode_file = os.path.join(os.environ.get("APERTIUM_DATADIR") or match.group("default"), "modes", f"{mode}.mode")
    if not os.path.isfile(mode_file):
        return None
    try:
        listing = subprocess.run(["apertium-wblank-mode", *(["-z"] if null_flush else []), mode_file],
                                 capture_output=True, check=False)
    except OSError:
        return None
    if listing.returncode != 0:
        return None
    options = {"1": "-g" if mark_unknown else "-n", "2": ""}
    script = re.sub(r"\$([12])(?![0-9])", lambda match: options[match.group(1)], listing.stdout.decode("utf-8", "replace"))
    try:
        return [shlex.split(part) for part in script.strip().split(" | ")]
    except ValueError:
        return None


def _pipeline(programs: Sequence[Sequence[str]], payload: bytes) -> subprocess.CompletedProcess:
    """Run ``programs`` as one shell pipeline over ``payload``; a failing program fails it (``pipefail``)."""
    command = "set -o pipefail; " + " | ".join(shlex.join(program) for program in programs)
    return subprocess.run(["bash", "-c", command], input=payload, capture_output=True, check=False)


@dataclass
class _AroundTagger:
    """What :func:`_batch_around_tagger` did: the translations (None if it gave up), processes, stderr."""

    translations: list[str] | None = None
    processes: int = 0
    stderr: dict[str, None] = field(default_factory=dict)

    def ran(self, process: subprocess.CompletedProcess) -> bool:
        """Count ``process`` and keep its stderr lines; whether it exited with status 0."""
        self.processes += 1
        for line in process.stderr.decode("utf-8", errors="replace").splitlines():
            if line.strip():
                self.stderr.setdefault(line.strip(), None)
        return process.returncode == 0

    def each(self, program: Sequence[str], inputs: Sequence[bytes]) -> list[bytes] | None:
        """``program`` run once per input; None as soon as one run fails."""
        outputs = []
        for payload in inputs:
            run = subprocess.run(program, input=payload, capture_output=True, check=False)
            if not self.ran(run):
                return None
            outputs.append(run.stdout)
        return outputs

    def blocks(self, programs: Sequence[Sequence[str]], inputs: Sequence[bytes]) -> list[bytes] | None:
        """``programs`` (with ``-z``) run once over the NUL-terminated ``inputs``, their output split into one
        block per input (programs add NULs of their own at the end); None if it fails or does not split."""
        run = _pipeline(programs, b"".join(payload + b"\0" for payload in inputs))
        if not self.ran(run):
            return None
        outputs = run.stdout.split(b"\0")
        if len(outputs) <= len(inputs) or any(outputs[len(inputs):]):
            return None
        return outputs[: len(inputs)]


def _batch_around_tagger(texts: Sequence[str], mode: str, mark_unknown: bool, command: str) -> _AroundTagger:
    """``texts`` (normalised, non-empty) through ``mode`` as in runs of their own (module docstring, "Segments
    apart"): the format filters and the tagger once per text, the programs before and after the tagger once
    over all texts with ``-z``. Gives up (``translations`` None) when ``command`` is not the standard wrapper,
    on a mode with a program outside :data:`STATELESS_PROGRAMS` other than one tagger, on any failed
    process, and on output that does not split into one block per text."""
    outcome = _AroundTagger()
    programs = mode_programs(mode, mark_unknown, command)
    flushing = mode_programs(mode, mark_unknown, command, null_flush=True)
    if programs is None or flushing is None:
        return outcome
    names = [os.path.basename(program[0]) for program in programs]
    if ([os.path.basename(program[0]) for program in flushing] != names or names.count(_TAGGER) != 1
            or any(name not in STATELESS_PROGRAMS for name in names if name != _TAGGER)):
        return outcome
    tagger = names.index(_TAGGER)
    formatted = outcome.each(["apertium-destxt"], [(text + SEPARATOR).encode("utf-8") for text in texts])
    analysed = outcome.blocks(flushing[:tagger], formatted) if formatted is not None else None
    tagged = outcome.each(programs[tagger], analysed) if analysed is not None else None
    generated = outcome.blocks(flushing[tagger + 1:], tagged) if tagged is not None else None
    restored = outcome.each(["apertium-retxt"], generated) if generated is not None else None
    if restored is None:
        return outcome
    translations = []
    for output in restored:  # accepted as a run of its own is: one separator-terminated segment
        pieces = output.decode("utf-8", errors="replace").split(SEPARATOR)
        if len(pieces) != 2 or pieces[1] != "":
            return outcome
        translations.append(normalise_segment(pieces[0]))
    outcome.translations = translations
    return outcome


def _stage_each_alone(texts: Sequence[str], mode: str, mark_unknown: bool, command: str) -> tuple[list[str], StageReport]:
    """One mode of :func:`translate_each_alone`: batched around the tagger, else one run per text."""
    started = time.perf_counter()
    translations = [""] * len(texts)
    todo = [index for index, text in enumerate(texts) if text.strip()]
    attempt = _batch_around_tagger([texts[index] for index in todo], mode, mark_unknown, command) if todo else _AroundTagger()
    stderr = dict(attempt.stderr)
    if attempt.translations is not None:
        for index, translated in zip(todo, attempt.translations):
            translations[index] = translated
        totals = dict(batches=1, failed_batches=0, recovery_segments=0, single_segments=0, fallback_segments=0,
                      empty_fallback_segments=0, processes=attempt.processes)
        return translations, StageReport(mode=mode, segments=len(todo), fallback_indices=(), exit_statuses=(),
                                         stderr=tuple(stderr), seconds=time.perf_counter() - started, **totals)
    # One run per text: the definition (a failed attempt above counts as one failed batch).
    totals = dict(batches=int(attempt.processes > 0), failed_batches=int(attempt.processes > 0), recovery_segments=0,
                  single_segments=0, fallback_segments=0, empty_fallback_segments=0, processes=attempt.processes)
    fallback_indices, exit_statuses = [], {}
    for index in todo:
        (translations[index],), report = translate_stage([texts[index]], mode, mark_unknown, command)
        for name in totals:
            totals[name] += getattr(report, name)
        if report.fallback_indices:
            fallback_indices.append(index)
        exit_statuses.update(dict.fromkeys(report.exit_statuses))
        stderr.update(dict.fromkeys(report.stderr))
    return translations, StageReport(mode=mode, segments=len(todo), fallback_indices=tuple(fallback_indices),
                                     exit_statuses=tuple(exit_statuses), stderr=tuple(stderr),
                                     seconds=time.perf_counter() - started, **totals)


def translate_each_alone(
    segments: Sequence[str],
    modes: Sequence[str],
    mark_unknown: bool = False,
    apertium_command: str = "apertium",
) -> tuple[list[str], ApertiumReport]:
    """Translate every segment through the chain ``modes`` as in a run of its own: each translation equals
    ``translate_with_apertium([segment], modes, ...)``'s, whatever the other segments (module docstring,
    "Segments apart": batched around the tagger where the mode allows it, else one run per segment).

    Returns:
        The translations, aligned 1:1 with ``segments``, and a report with one :class:`StageReport` per
        mode (a batch around the tagger is one batch; runs of their own add their counts).

    Raises:
        InputError: As :func:`translate_with_apertium`.
    """
    return _chain(segments, modes, mark_unknown, apertium_command, _stage_each_alone)
