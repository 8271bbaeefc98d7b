"""Tests of nlp_robustness.data.testset_preparation: empty segments, source equal to reference, max_segments."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.data.acquisition import plan_dataset, read_dataset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testset_preparation import check_text_files, prepare_testset, segment_lines
from nlp_robustness.data.testsets import load_parallel_files
from nlp_robustness.errors import InputError
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

needs_mirror = pytest.mark.skipif(
    not MIRROR.is_dir(),
    reason=f"offline data mirror not found at {MIRROR} (set NLP_ROBUSTNESS_MIRROR to its directory)",
)



def _prepare_files(tmp_path: Path, source: str, reference: str, file_format: str = "plain", **options):
    suffix = {"plain": "", "wmt-sgml": ".sgm", "iwslt-xml": ".xml"}[file_format]
    (tmp_path / f"src{suffix}").write_text(source, encoding="utf-8")
    (tmp_path / f"ref{suffix}").write_text(reference, encoding="utf-8")
    files = (tmp_path / f"src{suffix}", tmp_path / f"ref{suffix}", file_format)
    table = load_parallel_files(*files)
    settings = {"max_segments": None, "allow_empty_segments": False, "drop_source_equals_reference": False, **options}
    return prepare_testset(table, files=files, **settings)


def test_an_empty_line_of_a_file_pair_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        _prepare_files(tmp_path, "one\ntwo\nthree\nfour\n", "un\ndeux\n   \nquatre\n")
    assert str(raised.value).startswith(f"{tmp_path / 'ref'}: line 3: empty reference segment (segment 3 of the test set; 1 segment(s)")
    assert "allow_empty_segments: true" in str(raised.value)
    with pytest.raises(InputError, match=r"src: line 2: empty source segment \(segment 2 of the test set; 2 segment"):
        _prepare_files(tmp_path, "one\n\nthree\n", "un\ndeux\n\n")


def test_empty_segments_allowed_are_kept_and_counted(tmp_path: Path) -> None:
    table, counts = _prepare_files(tmp_path, "one\n\nthree\n\n", "un\ndeux\n\n\n", allow_empty_segments=True)
    assert table["source"].tolist() == ["one", "", "three", ""]
    assert (counts["segments_read"], counts["segments"]) == (4, 4)
    assert (counts["empty_source"], counts["empty_reference"], counts["empty_segments"]) == (2, 2, 3)


def test_a_dataset_table_keeps_its_empty_segments_and_counts_them() -> None:
    """A manifest dataset (MTNT2019 has empty fields) was verified by checksum: no error, only the counts."""
    table = pd.DataFrame({"segment_id": ["1", "2", "3"], "doc_id": [""] * 3, "source": ["a", "", "c"], "reference": ["x", "y", ""]})
    kept, counts = prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False)
    assert kept.to_dict("list") == table.to_dict("list")
    assert (counts["empty_source"], counts["empty_reference"], counts["empty_segments"]) == (1, 1, 2)


def test_an_empty_sgml_segment_names_its_line(tmp_path: Path) -> None:
    def sgml(texts: list[str]) -> str:
        segs = "".join(f'<seg id="{number}">{text}</seg>\n' for number, text in enumerate(texts, start=1))
        return f'<srcset setid="t" srclang="any">\n<doc docid="d1">\n<p>\n{segs}</p>\n</doc>\n</srcset>\n'

    with pytest.raises(InputError, match=r"src\.sgm: line 5: empty source segment \(segment 2 of the test set"):
        _prepare_files(tmp_path, sgml(["a", " ", "c"]), sgml(["x", "y", "z"]), "wmt-sgml")
    assert segment_lines(tmp_path / "src.sgm", "wmt-sgml") == [4, 5, 6]


def test_an_empty_xml_segment_names_its_line(tmp_path: Path) -> None:
    def xml(texts: list[str]) -> str:
        segs = "".join(f'  <seg id="{number}">\n{text}</seg>\n' for number, text in enumerate(texts, start=1))
        return f'<?xml version="1.0"?>\n<mteval>\n<srcset setid="t">\n<doc docid="d1">\n{segs}</doc>\n</srcset>\n</mteval>\n'

    with pytest.raises(InputError, match=r"ref\.xml: line 9: empty reference segment \(segment 3 of the test set"):
        _prepare_files(tmp_path, xml(["a", "b", "c"]), xml(["x &amp; y", "y", ""]), "iwslt-xml")
    assert segment_lines(tmp_path / "src.xml", "iwslt-xml") == [5, 7, 9]


@needs_mirror
def test_the_document_level_medline_files_have_blank_lines_that_are_refused() -> None:
    """The mirror's document-level Medline'18 marks sub-headings and documents with blank lines (96 of 417)."""
    source = MIRROR / "wmt-biomedical-enfr/medline18_en2fr_d1.en"
    reference = MIRROR / "wmt-biomedical-enfr/medline18_en2fr_d1.fr"
    table = load_parallel_files(source, reference, "plain")
    with pytest.raises(InputError) as raised:
        prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False,
                        files=(source, reference, "plain"))
    assert str(raised.value).startswith(f"{source}: line 5: empty source segment (segment 5 of the test set; 96 segment(s)")
    kept, counts = prepare_testset(table, max_segments=None, allow_empty_segments=True, drop_source_equals_reference=False,
                                   files=(source, reference, "plain"))
    assert (len(kept), counts["empty_segments"], counts["empty_source"], counts["empty_reference"]) == (417, 96, 96, 96)


@needs_mirror
def test_medline18_has_49_abstract_headings_that_can_be_dropped() -> None:
    """49 of the 321 Medline'18 segments (the real mirror files, read as the workflow reads them) are the
    heading "Abstract" on both sides; the option drops exactly those."""
    manifest = load_manifest(MANIFEST, MANIFEST_SCHEMA)
    table = read_dataset(plan_dataset(manifest.datasets["wmt18-biomedical-medline-enfr"], manifest, MIRROR, "unused"))
    identical = table[table["source"] == table["reference"]]
    assert len(table) == 321 and len(identical) == 49
    assert set(identical["source"]) == {"Abstract"}
    kept, counts = prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=True)
    assert (counts["segments_read"], counts["source_equals_reference"], counts["dropped_source_equals_reference"]) == (321, 49, 49)
    assert counts["segments"] == len(kept) == 272 and counts["empty_segments"] == 0
    assert not (kept["source"] == kept["reference"]).any()
    # the others keep their ids (positions in the files), in order
    assert kept["segment_id"].tolist() == [sid for sid in table["segment_id"] if sid not in set(identical["segment_id"])]
    assert kept.index.tolist() == list(range(272))
    # off (the default): nothing dropped, the table unchanged, the 49 still counted
    same, counts = prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False)
    assert same.equals(table)
    assert (counts["source_equals_reference"], counts["dropped_source_equals_reference"], counts["segments"]) == (49, 0, 321)


def test_max_segments_applies_after_the_drop() -> None:
    table = pd.DataFrame({
        "segment_id": ["1", "2", "3", "4", "5"], "doc_id": ["d"] * 5,
        "source": ["Abstract", "a", "Methods", "b", "c"], "reference": ["Abstract", "x", "Methods", "y", "z"],
    })
    kept, counts = prepare_testset(table, max_segments=2, allow_empty_segments=False, drop_source_equals_reference=True)
    assert kept["segment_id"].tolist() == ["2", "4"]
    assert (counts["segments_read"], counts["dropped_source_equals_reference"], counts["segments"], counts["documents"]) == (5, 2, 2, 1)
    kept, counts = prepare_testset(table, max_segments=2, allow_empty_segments=False, drop_source_equals_reference=False)
    assert kept["segment_id"].tolist() == ["1", "2"] and counts["source_equals_reference"] == 2


def test_dropping_every_segment_is_an_error() -> None:
    table = pd.DataFrame({"segment_id": ["1"], "doc_id": [""], "source": ["Abstract"], "reference": ["Abstract"]})
    with pytest.raises(InputError, match="leaves no segment"):
        prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=True)


# ---- plan-time checks of the configured text files (real WMT14 lines copied and corrupted) ----------------

WMT14_DERIVED = MIRROR / "wmt14-newstest2014-enfr" / "derived"


def _wmt14_lines(language: str, count: int = 40) -> list[bytes]:
    return (WMT14_DERIVED / f"newstest2014.en-fr.{language}").read_bytes().split(b"\n")[:count]


def _write(path: Path, lines: list[bytes]) -> str:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def _pair(tmp_path: Path, source: list[bytes] | None = None, reference: list[bytes] | None = None, **options) -> dict:
    return {"testsets": {"mine": {
        "source": _write(tmp_path / "src.en", source if source is not None else _wmt14_lines("en")),
        "reference": _write(tmp_path / "ref.fr", reference if reference is not None else _wmt14_lines("fr")),
        "format": "plain", "allow_empty_segments": False, "drop_source_equals_reference": False, **options,
    }}}


def _check(config: dict, systems: dict | None = None, max_segments: int | None = None) -> None:
    check_text_files(config["testsets"], systems or {}, max_segments)


def _job_time(config: dict, max_segments: int | None = None) -> None:
    """What the prepare job does with the same files."""
    spec = config["testsets"]["mine"]
    files = (spec["source"], spec["reference"], spec["format"])
    prepare_testset(load_parallel_files(*files), files=files, max_segments=max_segments,
                    allow_empty_segments=spec["allow_empty_segments"], drop_source_equals_reference=False)


def _message(config: dict, **keywords) -> str:
    with pytest.raises(InputError) as raised:
        _check(config, **keywords)
    message = str(raised.value)
    assert "\n" not in message  # one line
    return message


@needs_mirror
def test_good_files_pass_the_plan_time_check(tmp_path: Path) -> None:
    config = _pair(tmp_path)
    hypotheses = {"copy": {"kind": "hypotheses", "files": {"mine": _write(tmp_path / "hyp.fr", _wmt14_lines("en"))}}}
    _check(config, hypotheses)
    _job_time(config)
    # max_segments: the file translates the whole test set (40 lines); the import job keeps the first 10
    _check(config, hypotheses, max_segments=10)


@needs_mirror
def test_an_empty_line_names_the_key_the_file_and_the_line(tmp_path: Path) -> None:
    reference = _wmt14_lines("fr")
    reference[16] = b"  "
    config = _pair(tmp_path, reference=reference)
    path = config["testsets"]["mine"]["reference"]
    assert _message(config).startswith(f"testsets.mine.reference: {path} line 17: empty line (segment 17;")
    with pytest.raises(InputError, match="line 17: empty reference segment"):
        _job_time(config)  # the job refuses it too
    _check(_pair(tmp_path, reference=reference, allow_empty_segments=True))  # allowed: kept at both times


@needs_mirror
def test_unequal_line_counts_name_both_files_and_counts(tmp_path: Path) -> None:
    config = _pair(tmp_path, reference=_wmt14_lines("fr", 39))
    spec = config["testsets"]["mine"]
    assert _message(config) == (
        f"testsets.mine: source and reference differ in length: {spec['source']} has 40 segments, {spec['reference']} has 39"
    )
    with pytest.raises(InputError, match="differ in length"):
        _job_time(config)


@needs_mirror
def test_invalid_utf8_names_the_line_and_the_byte_offset(tmp_path: Path) -> None:
    source = _wmt14_lines("en")
    source[4] = source[4][:10] + b"\xff" + source[4][10:]
    config = _pair(tmp_path, source=source)
    path = config["testsets"]["mine"]["source"]
    assert _message(config) == f"testsets.mine.source: {path}: line 5: invalid UTF-8 (invalid start byte at byte 10 of the line)"
    with pytest.raises(InputError, match="line 5: invalid UTF-8"):
        _job_time(config)


@needs_mirror
def test_a_hypotheses_file_is_checked_against_its_test_set(tmp_path: Path) -> None:
    config = _pair(tmp_path)
    short = _write(tmp_path / "short.fr", _wmt14_lines("en", 39))
    message = _message(config, systems={"copy": {"kind": "hypotheses", "files": {"mine": short}}})
    assert message.startswith(f"systems.copy.files.mine: {short} has 39 lines, test set mine has 40 segments (")
    broken = _wmt14_lines("en")
    broken[7] = b"\xc3(" + broken[7]
    path = _write(tmp_path / "broken.fr", broken)
    message = _message(config, systems={"copy": {"kind": "hypotheses", "files": {"wmt14": path}}})
    assert message.startswith(f"systems.copy.files.wmt14: {path}: line 8: invalid UTF-8 (")
    assert "at byte 0 of the line" in message
    # a file not there yet is left to Snakemake (a missing input, or an output of another rule)
    _check(config, {"copy": {"kind": "hypotheses", "files": {"mine": str(tmp_path / "absent.fr")}}})


def test_a_hypotheses_file_of_a_whole_manifest_dataset_has_its_segments(tmp_path: Path) -> None:
    testsets = {"wmt14": {"dataset": "wmt14-newstest2014-enfr"}, "news": {"dataset": "wmt22-general-defr", "select": {"domain": "news"}}}
    sizes = {"wmt14-newstest2014-enfr": 3003, "wmt22-general-defr": 1984}
    short = _write(tmp_path / "short.fr", [b"a line"] * 3002)
    with pytest.raises(InputError, match=r"systems.copy.files.wmt14: .*short.fr has 3002 lines, but test set wmt14 \(dataset "
                                         r"wmt14-newstest2014-enfr\) has 3003 segments"):
        check_text_files(testsets, {"copy": {"kind": "hypotheses", "files": {"wmt14": short}}}, 40, sizes)
    whole = _write(tmp_path / "whole.fr", [b"a line"] * 3003)
    check_text_files(testsets, {"copy": {"kind": "hypotheses", "files": {"wmt14": whole}}}, 40, sizes)
    # a selection's size is known once prepared (its job checks it)
    check_text_files(testsets, {"copy": {"kind": "hypotheses", "files": {"news": short}}}, None, sizes)


@needs_mirror
@pytest.mark.parametrize("edit", ["one line short", "one line long", "a line inserted"])
def test_a_hypotheses_file_is_compared_whole_when_max_segments_cuts_the_test_set(tmp_path: Path, edit: str) -> None:
    """Cut first, a misaligned file passed whenever it was longer than max_segments, and every line after the gap
    was scored against the wrong reference (mean BLEU 5.89 instead of 15.95; issue 39)."""
    lines = _wmt14_lines("en")
    if edit == "one line short":
        del lines[20]
    elif edit == "one line long":
        lines.append(b"one more")
    else:
        lines.insert(5, b"an inserted line")
    path = _write(tmp_path / "hyp.fr", lines)
    message = _message(_pair(tmp_path), systems={"copy": {"kind": "hypotheses", "files": {"mine": path}}}, max_segments=10)
    assert message.startswith(f"systems.copy.files.mine: {path} has {len(lines)} lines, test set mine has 40 segments (")
    assert "compared before max_segments cuts it" in message


@pytest.mark.parametrize(("text", "column", "name"), [
    ("a\x00b", 2, "U+0000 (NUL)"), ("one\rtwo", 4, "U+000D (carriage return)"), ("\x0cform", 1, "U+000C (form feed)"),
])
def test_a_control_character_in_a_segment_names_file_line_and_column(tmp_path: Path, text: str, column: int, name: str) -> None:
    source = tmp_path / "src.en"
    source.write_text(f"fine\n{text}\n", encoding="utf-8")
    (tmp_path / "ref.fr").write_text("bien\nbien\n", encoding="utf-8")
    config = {"testsets": {"mine": {"source": str(source), "reference": str(tmp_path / "ref.fr"), "format": "plain"}}}
    assert _message(config).startswith(f"testsets.mine.source: {source}: line 2, column {column}: control character {name}")
    with pytest.raises(InputError, match=f"line 2, column {column}: control character"):
        load_parallel_files(source, tmp_path / "ref.fr", "plain")  # the prepare job reads it the same way
    # a tab is text; a CRLF line end is no control character in the segment
    source.write_bytes(b"fine\r\nwith\ta tab\r\n")
    assert load_parallel_files(source, tmp_path / "ref.fr", "plain")["source"].tolist() == ["fine", "with\ta tab"]


def test_a_control_character_in_an_sgml_segment_names_its_line(tmp_path: Path) -> None:
    sgml = '<srcset setid="t" srclang="en">\n<doc docid="d1">\n<seg id="1">fine</seg>\n<seg id="2">a\x0bb</seg>\n</doc>\n</srcset>\n'
    (tmp_path / "src.sgm").write_text(sgml, encoding="utf-8")
    (tmp_path / "ref.sgm").write_text(sgml.replace("\x0b", " "), encoding="utf-8")
    with pytest.raises(InputError, match=r"src.sgm: line 4, column 2: control character U\+000B \(vertical tab\)"):
        load_parallel_files(tmp_path / "src.sgm", tmp_path / "ref.sgm", "wmt-sgml")


def test_a_hypotheses_file_with_a_nul_byte_is_refused_at_planning(tmp_path: Path) -> None:
    testsets = {"wmt14": {"dataset": "wmt14-newstest2014-enfr"}}
    path = _write(tmp_path / "hyp.fr", [b"a line"] * 10 + [b"bad\x00line"] + [b"a line"] * 2992)
    with pytest.raises(InputError, match=r"systems.copy.files.wmt14: .*hyp.fr: line 11, column 4: control character U\+0000"):
        check_text_files(testsets, {"copy": {"kind": "hypotheses", "files": {"wmt14": path}}}, 40, {"wmt14-newstest2014-enfr": 3003})
