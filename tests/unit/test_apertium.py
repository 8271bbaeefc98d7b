"""Tests of the Apertium adapter: real Apertium on real mirrored data, and the recovery logic.

Tests marked ``apertium`` run the real ``apertium`` binary (skipped when it is not on PATH). The
recovery logic is also tested with a small *fake* ``apertium`` -- a real executable Python script
written to ``tmp_path`` that translates by upper-casing and crashes on chosen segments the way the
real pipeline does (lost buffered segments, a truncated last segment, exit status 141 or 0). That
tests our control logic, not machine translation.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from nlp_robustness.systems.apertium import ApertiumReport, available_modes, translate_with_apertium
from nlp_robustness.systems.apertium_recovery import MAX_LEADING_FAILURES, ApertiumError, normalise_segment
from nlp_robustness.systems.apertium_round_trips import mode_programs, translate_each_alone
from nlp_robustness.errors import InputError

HAVE_APERTIUM = shutil.which("apertium") is not None
needs_apertium = pytest.mark.skipif(not HAVE_APERTIUM, reason="the apertium binary is not on PATH")

# ---------------------------------------------------------------------------------------------------
# Real data
# ---------------------------------------------------------------------------------------------------

#: newstest2014.en, 0-based line of the segment on which apertium-postchunk of eng-cat segfaults
#: (Apertium as packaged in Debian): "The growing discontent among the Sunni minority, ..."
CRASH_LINE = 1054
#: A window around it that reproduces the failure in a batch: the batch comes back with only part of
#: the segments before the crash (the rest is lost in the crashed stage's output buffer).
CRASH_WINDOW = (1035, 1065)


def _mirror() -> Path:
    configured = os.environ.get("NLP_ROBUSTNESS_MIRROR")
    return Path(configured) if configured else Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.fixture(scope="module")
def newstest_en() -> list[str]:
    path = _mirror() / "opus-mt-testsets-enfr" / "testsets" / "en-fr" / "newstest2014.en"
    if not path.is_file():
        pytest.skip(f"mirrored test set not found: {path} (set NLP_ROBUSTNESS_MIRROR)")
    return path.read_text(encoding="utf-8").splitlines()


def _alone(segment: str, modes: list[str]) -> str:
    """Translate one segment on its own (one process per mode), without any recovery."""
    translations, report = translate_with_apertium([segment], modes)
    assert report.failed_batches == report.single_segments == report.fallback_segments == 0
    return translations[0]


@pytest.mark.apertium
@needs_apertium
def test_available_modes_lists_the_pairs_of_the_workflow() -> None:
    modes = available_modes()
    assert {"eng-spa", "es-fr", "eng-cat", "cat-fra"} <= modes


@pytest.mark.apertium
@needs_apertium
def test_real_chain_keeps_alignment_with_per_segment_translations(newstest_en: list[str]) -> None:
    segments = newstest_en[:6]
    translations, report = translate_with_apertium(segments, ["eng-spa", "es-fr"])
    assert len(translations) == len(segments)
    assert all(translation.strip() for translation in translations)
    assert all("\n" not in translation for translation in translations)
    # Batching does not change the translations: the batch equals segment-by-segment translation.
    for segment, translation in zip(segments[:3], translations[:3]):
        assert translation == _alone(segment, ["eng-spa", "es-fr"])
    assert isinstance(report, ApertiumReport)
    assert report.modes == ("eng-spa", "es-fr")
    assert report.batches == 2 and report.failed_batches == 0
    assert report.fallback_segments == 0 and report.single_segments == 0
    assert [stage.segments for stage in report.stages] == [6, 6]


@pytest.mark.apertium
@needs_apertium
def test_real_empty_segments_stay_empty_and_are_not_sent(newstest_en: list[str]) -> None:
    first, second = newstest_en[0], newstest_en[1]
    translations, report = translate_with_apertium(["", first, "   ", second, ""], ["eng-spa"])
    plain, _ = translate_with_apertium([first, second], ["eng-spa"])
    assert translations == ["", plain[0], "", plain[1], ""]
    assert report.segments == 5 and report.empty_segments == 3
    assert report.stages[0].segments == 2


@pytest.mark.apertium
@needs_apertium
def test_real_internal_newlines_are_normalised_to_spaces(newstest_en: list[str]) -> None:
    words = newstest_en[2].split(" ")
    broken = "\n".join([" ".join(words[:4]), "", " ".join(words[4:])])  # contains a blank line
    translations, _ = translate_with_apertium([broken, newstest_en[3]], ["eng-spa"])
    expected, _ = translate_with_apertium([normalise_segment(broken), newstest_en[3]], ["eng-spa"])
    assert translations == expected


@pytest.mark.apertium
@needs_apertium
def test_real_mark_unknown() -> None:
    segment = "The zorblax is green."
    marked, _ = translate_with_apertium([segment], ["eng-spa"], mark_unknown=True)
    unmarked, _ = translate_with_apertium([segment], ["eng-spa"])
    assert "*zorblax" in marked[0]
    assert "zorblax" in unmarked[0] and "*" not in unmarked[0]


@pytest.mark.apertium
@needs_apertium
def test_real_unknown_mode_is_an_input_error() -> None:
    with pytest.raises(InputError, match="eng-xxx"):
        translate_with_apertium(["Hello."], ["eng-spa", "eng-xxx"])


@pytest.mark.apertium
@needs_apertium
def test_real_crash_is_recovered_without_misalignment(newstest_en: list[str]) -> None:
    start, stop = CRASH_WINDOW
    segments = newstest_en[start:stop]
    crash = CRASH_LINE - start
    # Precondition: this Apertium build crashes on the segment (else the test has nothing to test).
    _, alone = translate_with_apertium([newstest_en[CRASH_LINE]], ["eng-cat"])
    if alone.fallback_segments == 0:
        pytest.skip("this Apertium build no longer crashes on newstest2014.en line 1055")

    translations, report = translate_with_apertium(segments, ["eng-cat"])

    assert len(translations) == len(segments)
    assert all(translation.strip() for translation in translations)
    stage = report.stages[0]
    assert stage.failed_batches >= 1
    assert stage.batches > 1 and stage.recovery_segments > 0
    assert stage.single_segments >= 1
    assert stage.fallback_indices == (crash,)
    assert report.fallback_indices == (crash,)
    assert stage.empty_fallback_segments == 0  # the halves of the culprit do translate
    # Around the crash point every segment equals its translation on its own.
    for position in range(crash - 6, crash + 4):
        if position != crash:
            assert translations[position] == _alone(segments[position], ["eng-cat"]), position


# ---------------------------------------------------------------------------------------------------
# Recovery logic with a fake apertium executable
# ---------------------------------------------------------------------------------------------------

FAKE_APERTIUM = """\
#!{python}
'''Fake apertium: upper-cases blank-line separated segments (fake-b also brackets them).

POISON anywhere in a segment crashes it always; FLAKY crashes it in a batch of several segments
only. A crash loses the last LOST translated segments (as in a crashed stage's output buffer),
prints half of the one before them, and exits with STATUS. SPLIT makes a segment come back as two.
'''
import sys

LOST = {lost}
STATUS = {status}
LOG = {log!r}

arguments = sys.argv[1:]
if "-l" in arguments:
    print("  fake-a\\n  fake-b\\n  fake-broken")
    sys.exit(0)
mode = arguments[-1]
if mode == "fake-broken":
    sys.stderr.write("Error: cannot open fake-broken.automorf.bin\\n")
    sys.exit(1)
segments = sys.stdin.read().split("\\n\\n")[:-1]
with open(LOG, "a", encoding="utf-8") as log:
    log.write(f"{{mode}} {{len(segments)}}\\n")
done = []
for segment in segments:
    if "POISON" in segment or ("FLAKY" in segment and len(segments) > 1):
        kept = done[: max(len(done) - LOST, 0)]
        text = "".join(piece + "\\n\\n" for piece in kept)
        if len(done) > len(kept):
            cut = done[len(kept)]
            text += cut[: max(len(cut) // 2, 1)]
        sys.stdout.write(text)
        sys.stderr.write("Error in fake.t4x: line 1: index > limit\\n")
        sys.exit(STATUS)
    translated = segment.upper() if mode == "fake-a" else f"<{{segment}}>"
    done.append(translated.replace("SPLIT", "SPLIT\\n\\nSPLIT"))
sys.stdout.write("".join(piece + "\\n\\n" for piece in done))
"""


def _fake(tmp_path: Path, lost: int = 3, status: int = 141) -> tuple[str, Path]:
    """Write the fake apertium script; return its path and the path of its call log."""
    script = tmp_path / "fake-apertium"
    log = tmp_path / "calls.log"
    script.write_text(FAKE_APERTIUM.format(python=sys.executable, lost=lost, status=status, log=str(log)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script), log


def _calls(log: Path) -> list[tuple[str, int]]:
    """The (mode, number of segments) of every translation call the fake received."""
    if not log.exists():
        return []
    return [(mode, int(count)) for mode, count in (line.split() for line in log.read_text().splitlines())]


def _words(prefix: str, count: int) -> list[str]:
    return [f"{prefix} segment number {index} here" for index in range(count)]


def test_fake_success_runs_one_batch_per_stage(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    segments = _words("plain", 7)
    translations, report = translate_with_apertium(segments, ["fake-a", "fake-b"], apertium_command=command)
    assert translations == [f"<{segment.upper()}>" for segment in segments]
    assert _calls(log) == [("fake-a", 7), ("fake-b", 7)]
    assert report.batches == 2 and report.failed_batches == 0 and report.processes == 2
    assert report.recovery_segments == report.single_segments == report.fallback_segments == 0


@pytest.mark.parametrize("status", [141, 0])
@pytest.mark.parametrize("lost", [0, 1, 3, 8])
def test_fake_crash_resumes_then_goes_alone_then_falls_back(tmp_path: Path, lost: int, status: int) -> None:
    command, log = _fake(tmp_path, lost=lost, status=status)
    segments = _words("ok", 20)
    segments[12] = "left half of POISON and the right half"
    translations, report = translate_with_apertium(segments, ["fake-a"], apertium_command=command)

    assert len(translations) == 20
    for index, (segment, translation) in enumerate(zip(segments, translations)):
        if index != 12:
            assert translation == segment.upper(), index
    # The final fallback halves the culprit until the pieces without POISON translate.
    assert translations[12] == "LEFT HALF OF AND THE RIGHT HALF"
    stage = report.stages[0]
    assert stage.fallback_indices == (12,) and stage.fallback_segments == 1
    assert stage.empty_fallback_segments == 0
    assert stage.failed_batches >= 1
    assert stage.stderr == ("Error in fake.t4x: line 1: index > limit",)
    assert stage.exit_statuses == ((status,) if status else ())
    calls = _calls(log)
    assert calls[0] == ("fake-a", 20)
    assert calls[-1] == ("fake-a", 7)  # the batch after the culprit runs to the end
    # The first batch, then a batch and a single for each segment lost before the culprit (and for
    # the one dropped conservatively), a batch and a single for the culprit, 6 fallback pieces, the
    # final batch.
    assert len(calls) == report.processes == 1 + 2 * (lost + 1) + 2 + 6 + 1
    assert stage.single_segments == lost + 2


def test_fake_context_dependent_failure_is_translated_alone(tmp_path: Path) -> None:
    command, _ = _fake(tmp_path, lost=2)
    segments = _words("ok", 10)
    segments[5] = "a FLAKY one"
    translations, report = translate_with_apertium(segments, ["fake-a"], apertium_command=command)
    assert translations == [segment.upper() for segment in segments]
    stage = report.stages[0]
    assert stage.fallback_segments == 0  # it works alone
    assert stage.single_segments >= 1
    assert stage.recovery_segments >= 4  # the segments after it come from a recovery batch


def test_fake_unsplittable_failure_becomes_empty(tmp_path: Path) -> None:
    command, _ = _fake(tmp_path, lost=1)
    segments = ["one", "POISON", "three", "POISON", "five"]
    translations, report = translate_with_apertium(segments, ["fake-a", "fake-b"], apertium_command=command)
    # An empty fallback stays empty through the next stage (it is not sent again).
    assert translations == ["<ONE>", "", "<THREE>", "", "<FIVE>"]
    assert report.stages[0].fallback_indices == (1, 3)
    assert report.stages[0].empty_fallback_segments == 2
    assert report.stages[1].segments == 3
    assert report.fallback_indices == (1, 3)
    summary = report.summary()
    assert "2 fell back (2 left empty)" in summary
    assert report.as_dict()["stages"][0]["fallback_indices"] == [1, 3]


def test_fake_more_segments_than_sent_is_bisected(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    segments = _words("ok", 16)
    segments[9] = "this SPLIT one"
    translations, report = translate_with_apertium(segments, ["fake-a"], apertium_command=command)
    for index, (segment, translation) in enumerate(zip(segments, translations)):
        if index != 9:
            assert translation == segment.upper(), index
    # Alone it still comes back as two segments: its halves are translated instead, down to the
    # unsplittable piece "SPLIT", which is left out.
    assert translations[9] == "THIS ONE"
    assert report.stages[0].fallback_indices == (9,)
    # Bisection, not one process per segment.
    assert len([count for _, count in _calls(log)]) < 16


def test_fake_single_failing_segment_is_not_run_twice(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    translations, report = translate_with_apertium(["aa POISON"], ["fake-a"], apertium_command=command)
    assert translations == ["AA"]
    # The batch of one was the segment alone; then its two halves.
    assert _calls(log) == [("fake-a", 1)] * 3
    assert report.single_segments == 1 and report.fallback_indices == (0,)


def test_fake_mode_that_never_works_raises(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    with pytest.raises(ApertiumError, match="fake-broken.*cannot open"):
        translate_with_apertium(_words("ok", 50), ["fake-broken"], apertium_command=command)
    assert len(_calls(log)) == 0  # the fake logs only the modes that work
    # A stage that did translate something keeps falling back instead of raising.
    segments = ["fine"] + ["POISON"] * (MAX_LEADING_FAILURES + 1)
    translations, report = translate_with_apertium(segments, ["fake-a"], apertium_command=command)
    assert translations == ["FINE"] + [""] * (MAX_LEADING_FAILURES + 1)
    assert report.empty_fallback_segments == MAX_LEADING_FAILURES + 1


def test_fake_empty_and_multiline_segments(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    segments = ["", "first\nline", " \t ", "a\r\n\r\nb", ""]
    translations, report = translate_with_apertium(segments, ["fake-a"], apertium_command=command)
    assert translations == ["", "FIRST LINE", "", "A  B", ""]
    assert _calls(log) == [("fake-a", 2)]
    assert report.empty_segments == 3


def test_no_segments(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    translations, report = translate_with_apertium([], ["fake-a"], apertium_command=command)
    assert translations == [] and report.segments == 0 and _calls(log) == []


def test_unknown_mode_with_fake_command(tmp_path: Path) -> None:
    command, _ = _fake(tmp_path)
    with pytest.raises(InputError, match="fake-c"):
        translate_with_apertium(["x"], ["fake-a", "fake-c"], apertium_command=command)


def test_missing_command_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        translate_with_apertium(["x"], ["eng-spa"], apertium_command=str(tmp_path / "no-such-apertium"))
    with pytest.raises(InputError, match="not found"):
        available_modes("no-such-apertium-command-here")


def test_failing_mode_listing_is_an_input_error(tmp_path: Path) -> None:
    script = tmp_path / "broken-apertium"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write('broken\\n')\nsys.exit(3)\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(InputError, match="status 3"):
        available_modes(str(script))


def test_bad_arguments(tmp_path: Path) -> None:
    command, _ = _fake(tmp_path)
    with pytest.raises(InputError, match="modes"):
        translate_with_apertium(["x"], [], apertium_command=command)
    with pytest.raises(InputError, match="modes"):
        translate_with_apertium(["x"], "fake-a", apertium_command=command)
    with pytest.raises(InputError, match=r"segments\[1\]"):
        translate_with_apertium(["x", None], ["fake-a"], apertium_command=command)  # type: ignore[list-item]


# ---------------------------------------------------------------------------------------------------
# Each segment as in a run of its own (translate_each_alone)
# ---------------------------------------------------------------------------------------------------


@pytest.mark.apertium
@needs_apertium
def test_mode_programs_read_the_wrappers_pipeline() -> None:
    programs = mode_programs("gl-en")
    assert programs is not None
    names = [program[0] for program in programs]
    assert names[0] == "lt-proc" and names.count("apertium-tagger") == 1 and "apertium-transfer" in names
    assert programs[-2][:2] == ["lt-proc", "-n"]  # the generator without unknown-word marks (apertium -u)
    assert mode_programs("gl-en", mark_unknown=True)[-2][:2] == ["lt-proc", "-g"]
    assert all("$" not in argument for program in programs for argument in program)
    assert mode_programs("no-such-mode") is None
    flushing = mode_programs("gl-en", null_flush=True)
    assert [program[0] for program in flushing] == names
    assert all("-z" in program for program in flushing if program[0] in ("lt-proc", "apertium-transfer"))


@pytest.mark.apertium
@needs_apertium
def test_each_alone_equals_runs_of_their_own_where_a_plain_batch_does_not(newstest_en: list[str]) -> None:
    modes = ["en-gl", "gl-en"]
    segments = [*newstest_en[:14], "", "   "]
    alone = [translate_with_apertium([segment], modes)[0][0] for segment in segments]
    batch, _ = translate_with_apertium(segments, modes)
    assert batch != alone  # the tagger's state carries over in a plain batch (line 13 among them)
    translations, report = translate_each_alone(segments, modes)
    assert translations == alone
    assert translations[-2:] == ["", ""]
    for stage in report.stages:  # the fast path: one batch, the tagger once per text, no recovery
        assert (stage.batches, stage.failed_batches, stage.single_segments) == (1, 0, 0)
        assert stage.processes == 3 * stage.segments + 2  # format filters and tagger per text, two pipelines
    assert report.segments == 16 and report.empty_segments == 2
    # The transfer stages' variables carry over too (en-eo: the case of the next segment's first word).
    pair = newstest_en[34:36]
    assert translate_with_apertium(pair, ["en-eo"])[0][1].startswith("pluraj statoj")
    assert translate_each_alone(pair, ["en-eo"])[0] == [translate_with_apertium([segment], ["en-eo"])[0][0] for segment in pair]
    assert translate_each_alone(pair, ["en-eo"])[0][1].startswith("Pluraj statoj")


@pytest.mark.apertium
@needs_apertium
def test_each_alone_falls_back_to_runs_of_their_own_when_the_batch_fails(
    newstest_en: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    import nlp_robustness.systems.apertium_round_trips as round_trips

    segments = newstest_en[9:13]
    batched = round_trips._pipeline

    def crash_after_the_tagger(programs, payload):  # as eng-cat's postchunk does on newstest2014 line 1055
        if "apertium-transfer" in (program[0] for program in programs):
            return subprocess.CompletedProcess(["bash"], 139, b"", b"Segmentation fault\n")
        return batched(programs, payload)

    monkeypatch.setattr(round_trips, "_pipeline", crash_after_the_tagger)
    translations, report = translate_each_alone(segments, ["gl-en"])
    monkeypatch.undo()
    assert translations == [translate_with_apertium([segment], ["gl-en"])[0][0] for segment in segments]
    stage = report.stages[0]
    assert (stage.batches, stage.failed_batches) == (1 + len(segments), 1)  # the attempt, then one run each
    assert stage.processes == 2 * len(segments) + 2 + len(segments) and "Segmentation fault" in stage.stderr
    # A mode with a program that may keep state (eng-cat's cg-proc, apertium-anaphora) is never batched.
    assert [program[0] for program in mode_programs("eng-cat")].count("apertium-anaphora") == 1
    _, report = translate_each_alone(segments[:2], ["eng-cat"])
    assert report.stages[0].batches == 2 and report.stages[0].processes == 2


def test_each_alone_runs_each_segment_alone_without_the_standard_wrapper(tmp_path: Path) -> None:
    command, log = _fake(tmp_path)
    segments = ["first one", "", "FLAKY second", "third"]
    translations, report = translate_each_alone(segments, ["fake-a", "fake-b"], apertium_command=command)
    assert translations == ["<FIRST ONE>", "", "<FLAKY SECOND>", "<THIRD>"]  # FLAKY fails in batches only
    assert _calls(log) == [("fake-a", 1)] * 3 + [("fake-b", 1)] * 3
    assert report.batches == 6 and report.failed_batches == 0 and report.empty_segments == 1
    with pytest.raises(InputError, match="fake-c"):
        translate_each_alone(["x"], ["fake-c"], apertium_command=command)
