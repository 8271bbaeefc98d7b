"""Translate every segment through a chain of Apertium modes as in a run of its own (the round trips of
paraphrases), batched in null-flush mode around the part-of-speech tagger.

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
    standard wrapper falls back to one run per segment
    (:func:`~nlp_robustness.systems.apertium_recovery.translate_stage` of one segment), which is the
    definition. Checked on 460 texts (300 newstest2014 sources and 160 Amazon reviews) through each stage of
    ``en-gl|gl-en`` and ``en-eo|eo-en`` (the workflow's round trips) and 600 more sources: every output
    byte-identical to its run of its own, at about 11 ms a text and stage instead of 0.25-0.65 s.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Sequence

from nlp_robustness.systems.apertium import ApertiumReport, _chain
from nlp_robustness.systems.apertium_recovery import SEPARATOR, StageReport, normalise_segment, translate_stage

__all__ = [
    "STATELESS_PROGRAMS",
    "mode_programs",
    "translate_each_alone",
]

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
