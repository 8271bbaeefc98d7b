"""Run one Apertium mode over a whole list of segments in one batch process, and recover when it crashes.

The batch format (one ``apertium`` process per stage, segments separated by blank lines) and the input
normalisation are described in :mod:`nlp_robustness.systems.apertium`, whose chain runs each of its
stages with :func:`translate_stage`.

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

    The :class:`~nlp_robustness.systems.apertium.ApertiumReport` returned with the translations says how
    many segments needed each of these steps, so the workflow can log e.g. how many segments fell back.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from typing import Sequence

__all__ = [
    "MAX_LEADING_FAILURES",
    "MAX_SPLIT_DEPTH",
    "SEPARATOR",
    "ApertiumError",
    "StageReport",
    "normalise_segment",
    "translate_stage",
]

#: Written after every segment; Apertium's txt format keeps blank lines as they are.
SEPARATOR = "\n\n"

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
