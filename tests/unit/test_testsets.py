"""Tests of nlp_robustness.data.testsets (parsers on the real mirror files, error cases, TSV) and of reading manifest datasets."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.data.acquisition import AcquisitionPlan, PlannedFile, plan_dataset, read_dataset
from nlp_robustness.errors import InputError
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.manifest_entries import Manifest
from nlp_robustness.data.testset_formats import (
    SgmlSegment,
    read_iwslt_xml,
    read_plain_lines,
    read_tsv_column,
    read_wit3_tags,
    read_wmt_sgml,
)
from nlp_robustness.data.testsets import (
    TABLE_COLUMNS,
    build_parallel_table,
    limit_segments,
    load_parallel_files,
    read_testset_table,
    verify_checksum,
    write_testset_table,
)
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

SCHEMA = MANIFEST_SCHEMA

needs_mirror = pytest.mark.skipif(
    not MIRROR.is_dir(),
    reason=f"offline data mirror not found at {MIRROR} (set NLP_ROBUSTNESS_MIRROR to its directory)",
)

WMT14 = "wmt14-newstest2014-enfr"
WMT15 = "wmt15-newsdiscusstest2015-enfr"
IWSLT17 = "iwslt17-tst2017-enfr"
MEDLINE18 = "wmt18-biomedical-medline-enfr"
EDP17 = "wmt17-biomedical-edp-enfr"
TATOEBA = "tatoeba-v2021-08-07-enfr"

#: The parallel datasets the mirror holds, with their segment counts.
EXPECTED_COUNTS = {WMT14: 3003, WMT15: 1500, IWSLT17: 1455, MEDLINE18: 321, EDP17: 974, TATOEBA: 12681}

# derived/ plain-text extractions shipped with the mirror: (source, reference, docids.tsv)
DERIVED = {
    WMT14: (
        "wmt14-newstest2014-enfr/derived/newstest2014.en-fr.en",
        "wmt14-newstest2014-enfr/derived/newstest2014.en-fr.fr",
        "wmt14-newstest2014-enfr/derived/newstest2014.en-fr.docids.tsv",
    ),
    IWSLT17: (
        "iwslt17-ted-enfr/derived/IWSLT17.TED.tst2017.en-fr.en",
        "iwslt17-ted-enfr/derived/IWSLT17.TED.tst2017.en-fr.fr",
        "iwslt17-ted-enfr/derived/IWSLT17.TED.tst2017.en-fr.docids.tsv",
    ),
}


def _derived_lines(relative: str) -> list[str]:
    text = (MIRROR / relative).read_text(encoding="utf-8")
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return load_manifest(MANIFEST, SCHEMA)


@pytest.fixture(scope="module")
def loaded(manifest: Manifest) -> dict[str, pd.DataFrame]:
    if not MIRROR.is_dir():
        pytest.skip(f"offline data mirror not found at {MIRROR} (set NLP_ROBUSTNESS_MIRROR to its directory)")
    tables = {}
    for key in EXPECTED_COUNTS:
        plan = plan_dataset(manifest.datasets[key], manifest, MIRROR, "unused-download-dir")
        assert plan.origin == "mirror", key
        tables[key] = read_dataset(plan)
    return tables


# --------------------------------------------------------------------------------------------
# The mirror copies of the manifest
# --------------------------------------------------------------------------------------------


def test_mirrored_parallel_datasets(manifest: Manifest) -> None:
    mirrored = [key for key, dataset in manifest.datasets.items() if dataset.kind == "parallel" and dataset.mirror]
    # the WMT'22 submissions (format wmt-xml, de<->fr) are tested in test_wmt_xml.py and test_manifest.py
    assert [key for key in mirrored if manifest.datasets[key].mirror.format == "wmt-xml"] == ["wmt22-general-defr", "wmt22-general-frde"]
    mirrored = [key for key in mirrored if manifest.datasets[key].mirror.format != "wmt-xml"]
    assert mirrored == list(EXPECTED_COUNTS)
    domains = {WMT14: "news", WMT15: "discussion", IWSLT17: "ted", MEDLINE18: "biomedical", EDP17: "biomedical",
               TATOEBA: "everyday"}
    formats = {WMT14: "wmt-sgml", WMT15: "plain", IWSLT17: "iwslt-xml", MEDLINE18: "plain", EDP17: "plain", TATOEBA: "plain"}
    for key in mirrored:
        dataset = manifest.datasets[key]
        assert dataset.segments == EXPECTED_COUNTS[key]
        assert dataset.domain == domains[key]
        assert dataset.mirror.format == formats[key]
        assert (dataset.source_language, dataset.target_language) == ("en", "fr")
    # the official WMT'15 release is SGML; only its plain-text conversion is mirrored
    assert manifest.datasets[WMT15].download.format == "wmt-sgml"


@needs_mirror
def test_mirror_sha256_all_verify(manifest: Manifest) -> None:
    checked = 0
    for dataset in manifest.datasets.values():
        for ref in (dataset.mirror.files.values() if dataset.mirror else []):
            path = MIRROR / ref.path
            assert _sha256(path) == ref.sha256, path
            verify_checksum(path, ref.sha256)
            checked += 1
    assert checked == 2 * len(EXPECTED_COUNTS) + 8 + 4  # + the two WMT'22 XML files, named by both roles


@needs_mirror
def test_iwslt_archives_in_mirror_match_sacrebleu_and_members(manifest: Manifest) -> None:
    """The mirrored WIT3 archives have sacrebleu's md5, and hold the mirrored XML files byte for byte."""
    import tarfile

    dataset = manifest.datasets[IWSLT17]
    for role in ("source", "reference"):
        ref = dataset.download.files[role]
        download = manifest.downloads[ref.download]
        archive = MIRROR / download.mirror
        assert hashlib.md5(archive.read_bytes()).hexdigest() == download.checksum.hexdigest
        assert download.checksum.algorithm == "md5" and "sacrebleu" in download.checksum.source
        with tarfile.open(archive) as tar:
            member = tar.extractfile(ref.path)
            assert member is not None
            assert hashlib.sha256(member.read()).hexdigest() == ref.sha256 == dataset.mirror.files[role].sha256


# --------------------------------------------------------------------------------------------
# Parsers on the real mirror files
# --------------------------------------------------------------------------------------------


@needs_mirror
def test_counts(loaded: dict[str, pd.DataFrame]) -> None:
    for key, count in EXPECTED_COUNTS.items():
        frame = loaded[key]
        assert len(frame) == count, key
        assert list(frame.columns) == list(TABLE_COLUMNS)
        assert frame["segment_id"].tolist() == [str(i) for i in range(1, count + 1)]


@needs_mirror
@pytest.mark.parametrize("key", sorted(DERIVED))
def test_texts_match_derived_files(loaded: dict[str, pd.DataFrame], key: str) -> None:
    source_file, reference_file, docids_file = DERIVED[key]
    frame = loaded[key]
    source, reference = _derived_lines(source_file), _derived_lines(reference_file)
    assert frame["source"].iloc[0] == source[0]
    assert frame["source"].iloc[-1] == source[-1]
    assert frame["reference"].iloc[0] == reference[0]
    assert frame["reference"].iloc[-1] == reference[-1]
    assert frame["source"].tolist() == source
    assert frame["reference"].tolist() == reference
    docids = pd.read_csv(MIRROR / docids_file, sep="\t", dtype=str, keep_default_na=False)
    assert frame["doc_id"].tolist() == docids["docid"].tolist()


@needs_mirror
@pytest.mark.parametrize(
    ("key", "source_file", "reference_file"),
    [
        (
            WMT15,
            "opus-mt-testsets-enfr/testsets/en-fr/newsdiscusstest2015.en",
            "opus-mt-testsets-enfr/testsets/en-fr/newsdiscusstest2015.fr",
        ),
        (MEDLINE18, "wmt-biomedical-enfr/medline18_en2fr.en", "wmt-biomedical-enfr/medline18_en2fr.fr"),
        (EDP17, "wmt-biomedical-enfr/edp17_en2fr.en", "wmt-biomedical-enfr/edp17_en2fr.fr"),
    ],
)
def test_plain_first_and_last(
    loaded: dict[str, pd.DataFrame], key: str, source_file: str, reference_file: str
) -> None:
    frame = loaded[key]
    source, reference = _derived_lines(source_file), _derived_lines(reference_file)
    assert (frame["source"].iloc[0], frame["source"].iloc[-1]) == (source[0], source[-1])
    assert (frame["reference"].iloc[0], frame["reference"].iloc[-1]) == (reference[0], reference[-1])
    assert set(frame["doc_id"]) == {""}


@needs_mirror
def test_plain_known_texts(loaded: dict[str, pd.DataFrame]) -> None:
    assert loaded[WMT15]["source"].iloc[0] == "This is perfectly illustrated by the UKIP numbties banning people with HIV."
    assert loaded[MEDLINE18]["source"].iloc[0] == "Abstract"
    assert loaded[EDP17]["reference"].iloc[0] == "Title"
    # inner non-breaking spaces are kept
    assert "P.\u00a0reticulatum" in loaded[EDP17]["source"].iloc[-1]


@needs_mirror
def test_wmt14_documents(loaded: dict[str, pd.DataFrame]) -> None:
    frame = loaded[WMT14]
    assert frame["doc_id"].nunique() == 176
    assert frame["doc_id"].iloc[0] == "1009-lemondefr"
    assert frame["source"].iloc[0] == "Spectacular Wingsuit Jump Over Bogota"
    assert frame["reference"].iloc[0] == 'Spectaculaire saut en "wingsuit" au-dessus de Bogota'


@needs_mirror
def test_wmt14_raw_ampersand() -> None:
    segments = read_wmt_sgml(MIRROR / "wmt14-newstest2014-enfr/newstest2014-fren-src.en.sgm")
    assert len(segments) == 3003
    assert all(isinstance(segment, SgmlSegment) for segment in segments)
    with_ampersand = [segment for segment in segments if "&" in segment.text]
    assert len(with_ampersand) == 11
    assert not any("&amp;" in segment.text for segment in segments)
    assert any(
        segment.text.startswith("Rating agency, Standard & Poor's, reduced Ukraine's credit rating")
        for segment in with_ampersand
    )
    assert any("AT&T was looking at a possible takeover bid" in segment.text for segment in with_ampersand)


@needs_mirror
def test_iwslt_documents(loaded: dict[str, pd.DataFrame]) -> None:
    frame = loaded[IWSLT17]
    assert frame["doc_id"].nunique() == 12
    assert frame["doc_id"].iloc[0] == "2455" and frame["doc_id"].iloc[-1] == "2425"
    # segments are stripped but inner double spaces are kept (as in derived/)
    assert frame["source"].iloc[0] == "So, this is a story  about how we know what we know."
    assert frame["reference"].iloc[-1] == "Merci."
    segments = read_iwslt_xml(MIRROR / "iwslt17-ted-enfr/en-fr/IWSLT17.TED.tst2017.en-fr.en.xml")
    assert (segments[0].doc_id, segments[0].seg_id) == ("2455", "1")
    assert segments[-1] == SgmlSegment(doc_id="2425", seg_id="88", text="Thank you.")


@needs_mirror
def test_limit_applied_after_verification(manifest: Manifest, loaded: dict[str, pd.DataFrame]) -> None:
    frame = limit_segments(loaded[WMT14], 5)
    assert len(frame) == 5
    assert frame["segment_id"].tolist() == ["1", "2", "3", "4", "5"]
    # a wrong expected count fails when the whole dataset is read, before any limit applies
    plan = plan_dataset(manifest.datasets[WMT14], manifest, MIRROR, "unused")
    with pytest.raises(InputError, match="3000"):
        read_dataset(AcquisitionPlan(**{**plan.__dict__, "segments": 3000}))


# --------------------------------------------------------------------------------------------
# Error cases
# --------------------------------------------------------------------------------------------


def _plan_for(tmp_path: Path, source: str, reference: str, segments: int | None, file_format: str = "plain") -> AcquisitionPlan:
    files = {
        role: PlannedFile(path=str(tmp_path / name), sha256=_sha256(tmp_path / name))
        for role, name in (("source", source), ("reference", reference))
    }
    return AcquisitionPlan("toy", "parallel", "mirror", file_format, segments, files, ())


def test_mismatched_counts(tmp_path: Path) -> None:
    (tmp_path / "src.en").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "ref.fr").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"src\.en has 3 segments.*ref\.fr has 2"):
        load_parallel_files(tmp_path / "src.en", tmp_path / "ref.fr", "plain")
    with pytest.raises(InputError, match="differ in length"):
        read_dataset(_plan_for(tmp_path, "src.en", "ref.fr", 3))


def test_count_differs_from_manifest(tmp_path: Path) -> None:
    (tmp_path / "src.en").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "ref.fr").write_text("x\ny\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dataset toy: .*src\.en, .*ref\.fr hold 2 segments but the manifest expects 3"):
        read_dataset(_plan_for(tmp_path, "src.en", "ref.fr", 3))
    expected = {"segment_id": ["1", "2"], "doc_id": ["", ""], "source": ["a", "b"], "reference": ["x", "y"]}
    assert read_dataset(_plan_for(tmp_path, "src.en", "ref.fr", 2)).to_dict("list") == expected
    # an unknown count (null in the manifest) is not checked
    assert read_dataset(_plan_for(tmp_path, "src.en", "ref.fr", None)).to_dict("list") == expected


def test_empty_testset(tmp_path: Path) -> None:
    (tmp_path / "src.en").write_bytes(b"")
    (tmp_path / "ref.fr").write_bytes(b"")
    with pytest.raises(InputError, match=r"empty test set.*src\.en"):
        load_parallel_files(tmp_path / "src.en", tmp_path / "ref.fr", "plain")
    sgml = '<srcset setid="t" srclang="any">\n</srcset>\n'
    (tmp_path / "src.sgm").write_text(sgml, encoding="utf-8")
    (tmp_path / "ref.sgm").write_text(sgml, encoding="utf-8")
    with pytest.raises(InputError, match="empty test set"):
        load_parallel_files(tmp_path / "src.sgm", tmp_path / "ref.sgm", "wmt-sgml")


def test_bad_checksum(tmp_path: Path) -> None:
    (tmp_path / "src.en").write_text("a\n", encoding="utf-8")
    (tmp_path / "ref.fr").write_text("b\n", encoding="utf-8")
    plan = _plan_for(tmp_path, "src.en", "ref.fr", 1)
    (tmp_path / "ref.fr").write_text("changed\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"checksum mismatch for .*ref\.fr \(dataset toy\): expected sha256"):
        read_dataset(plan)
    with pytest.raises(InputError, match=r"checksum mismatch for .*src\.en"):
        verify_checksum(tmp_path / "src.en", "0" * 64)


def test_missing_file(tmp_path: Path) -> None:
    (tmp_path / "src.en").write_text("a\n", encoding="utf-8")
    (tmp_path / "ref.fr").write_text("b\n", encoding="utf-8")
    plan = _plan_for(tmp_path, "src.en", "ref.fr", 1)
    (tmp_path / "src.en").unlink()
    with pytest.raises(InputError) as raised:
        read_dataset(plan)
    assert str(raised.value) == f"file not found: {tmp_path / 'src.en'} (dataset toy)"
    with pytest.raises(InputError, match="file not found"):
        load_parallel_files(tmp_path / "src.en", tmp_path / "ref.fr", "plain")


def test_tsv_columns(tmp_path: Path) -> None:
    """MTNT layout: id, source, target; MTNT2019: two ids, source, target, with empty fields."""
    path = tmp_path / "test.en-fr.tsv"
    path.write_text('c1\tHello "world"\tBonjour "monde"\nc1\t  lol \t mdr \nc2\t\t\n', encoding="utf-8")
    assert read_tsv_column(path, 1) == ['Hello "world"', "lol", ""]
    assert read_tsv_column(path, 0) == ["c1", "c1", "c2"]
    table = build_parallel_table(path, path, "tsv", source_column=1, reference_column=2)
    assert table["reference"].tolist() == ['Bonjour "monde"', "mdr", ""]
    assert set(table["doc_id"]) == {""}
    path.write_text("a\tb\tc\nmissing tab\tonly\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test\.en-fr\.tsv: line 2: has 2 tab-separated field\(s\), no column 2"):
        read_tsv_column(path, 2)
    with pytest.raises(InputError, match="needs the column"):
        build_parallel_table(path, path, "tsv")


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.en"
    path.write_bytes(b"fine\nalso fine\nbro\xffken\n")
    with pytest.raises(InputError, match=r"bad\.en: line 3: invalid UTF-8"):
        read_plain_lines(path)
    sgml = tmp_path / "bad.sgm"
    sgml.write_bytes(b'<doc docid="d1">\n<seg id="1">caf\xe9</seg>\n</doc>\n')
    with pytest.raises(InputError, match=r"bad\.sgm: line 2: invalid UTF-8"):
        read_wmt_sgml(sgml)
    xml = tmp_path / "bad.xml"
    xml.write_bytes(
        b'<?xml version="1.0" encoding="UTF-8"?>\n<mteval><doc docid="1">\n<seg id="1">caf\xe9</seg></doc></mteval>\n'
    )
    with pytest.raises(InputError, match=r"bad\.xml: line 3"):
        read_iwslt_xml(xml)


def _sgml(segments: list[tuple[str, str, str]]) -> str:
    lines = ['<srcset setid="t" srclang="any">']
    current = None
    for doc_id, seg_id, text in segments:
        if doc_id != current:
            if current is not None:
                lines.append("</doc>")
            lines.append(f'<doc docid="{doc_id}" genre="news" origlang="en">')
            current = doc_id
        lines.append(f'<seg id="{seg_id}">{text}</seg>')
    lines += ["</doc>", "</srcset>"]
    return "\n".join(lines) + "\n"


def test_misaligned_sgml_seg_ids(tmp_path: Path) -> None:
    (tmp_path / "src.sgm").write_text(_sgml([("d1", "1", "a"), ("d1", "2", "b"), ("d2", "1", "c")]), encoding="utf-8")
    (tmp_path / "ref.sgm").write_text(_sgml([("d1", "1", "x"), ("d1", "3", "y"), ("d2", "1", "z")]), encoding="utf-8")
    expected = r"not aligned at segment 2: .*src\.sgm has doc 'd1' seg '2', .*ref\.sgm has doc 'd1' seg '3'"
    with pytest.raises(InputError, match=expected):
        load_parallel_files(tmp_path / "src.sgm", tmp_path / "ref.sgm", "wmt-sgml")
    (tmp_path / "ref2.sgm").write_text(_sgml([("d1", "1", "x"), ("d1", "2", "y"), ("d9", "1", "z")]), encoding="utf-8")
    with pytest.raises(InputError, match="not aligned at segment 3"):
        load_parallel_files(tmp_path / "src.sgm", tmp_path / "ref2.sgm", "wmt-sgml")


def test_sgml_parsing_details(tmp_path: Path) -> None:
    path = tmp_path / "t.sgm"
    path.write_text(
        '<srcset setid="t" srclang="any">\n<doc docid="A&B" genre="news">\n<p>\n'
        '<seg id="1">  Tom & Jerry &amp; "friends" <b>  </seg>\n</p>\n</doc>\n</srcset>\n',
        encoding="utf-8",
    )
    # nothing is unescaped (as sacrebleu), only the ends are stripped
    assert read_wmt_sgml(path) == [SgmlSegment("A&B", "1", 'Tom & Jerry &amp; "friends" <b>')]
    path.write_text('<doc docid="d">\n<seg id="1">no closing tag\n</doc>\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"t\.sgm: line 2"):
        read_wmt_sgml(path)
    path.write_text('<seg id="1">outside</seg>\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"t\.sgm: line 1: <seg> outside"):
        read_wmt_sgml(path)


def test_iwslt_parsing_details(tmp_path: Path) -> None:
    path = tmp_path / "t.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<mteval><srcset setid="s" srclang="english">\n'
        '<doc docid="7" genre="lectures"><talkid>7</talkid>\n'
        '<seg id="1">  Science &amp; Wonder  </seg>\n<seg id="2"> two  spaces </seg>\n</doc></srcset></mteval>\n',
        encoding="utf-8",
    )
    assert read_iwslt_xml(path) == [SgmlSegment("7", "1", "Science & Wonder"), SgmlSegment("7", "2", "two  spaces")]
    path.write_text('<mteval><doc docid="1"><seg id="1">a & b</seg></doc></mteval>\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"t\.xml: line 1, column \d+: not well-formed"):
        read_iwslt_xml(path)


def test_plain_lines_details(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes("\ufeff  lead\r\ninner  space \u2028 kept\t\n\nlast without newline".encode("utf-8"))
    # U+FEFF is text, kept as sacrebleu keeps it (nlp_robustness.fileio.text_files), and no whitespace to strip
    assert read_plain_lines(path) == ["\ufeff  lead", "inner  space \u2028 kept", "", "last without newline"]


def test_wit3_training_files_drop_the_talk_metadata(tmp_path: Path) -> None:
    """The layout of WIT3's train.tags.en-fr.{en,fr}: metadata lines per talk, then one segment per line."""
    english = tmp_path / "train.tags.en-fr.en"
    french = tmp_path / "train.tags.en-fr.fr"
    english.write_text(
        "<url>http://www.ted.com/talks/a.html</url>\n<keywords>talks, science</keywords>\n<speaker>A</speaker>\n"
        "<talkid>1</talkid>\n<title>A: Science</title>\n<description>TED Talk</description>\n"
        " Thank you so much, Chris. \nIt's an honor.\n<url>http://www.ted.com/talks/b.html</url>\n<talkid>2</talkid>\nHello & welcome.\n",
        encoding="utf-8",
    )
    french.write_text(
        "<url>http://www.ted.com/talks/a.html</url>\n<keywords>exposés, science</keywords>\n<speaker>A</speaker>\n"
        "<talkid>1</talkid>\n<title>A : Science</title>\n<description>Exposé TED</description>\n"
        "Merci beaucoup, Chris.\nC'est un honneur.\n<url>http://www.ted.com/talks/b.html</url>\n<talkid>2</talkid>\nBonjour & bienvenue.\n",
        encoding="utf-8",
    )
    assert read_wit3_tags(english) == ["Thank you so much, Chris.", "It's an honor.", "Hello & welcome."]
    table = build_parallel_table(english, french, "wit3-tags")
    assert table["reference"].tolist() == ["Merci beaucoup, Chris.", "C'est un honneur.", "Bonjour & bienvenue."]
    french.write_text("Merci.\n", encoding="utf-8")
    with pytest.raises(InputError, match="differ in length"):
        build_parallel_table(english, french, "wit3-tags")


def test_unknown_format_and_bad_limit(tmp_path: Path) -> None:
    (tmp_path / "s").write_text("a\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown test-set format"):
        load_parallel_files(tmp_path / "s", tmp_path / "s", "tmx")
    with pytest.raises(InputError, match="unknown test-set format"):
        load_parallel_files(tmp_path / "s", tmp_path / "s", "tsv")  # needs columns: manifest datasets only
    with pytest.raises(InputError, match="limit"):
        load_parallel_files(tmp_path / "s", tmp_path / "s", "plain", limit=0)


# --------------------------------------------------------------------------------------------
# TSV round trip
# --------------------------------------------------------------------------------------------

TRICKY = [
    "tab\tinside",
    "new\nline",
    "carriage\rreturn and \r\n both",
    '"quoted at start" and "inside"',
    '"',
    "back\\slash \\t \\n",
    "NA",
    "null",
    "NaN",
    "",
    "  leading and trailing spaces  ",
    "# not a comment",
    "line\u2028separator \u0085 nel \u00a0 nbsp",
    "R&D, S&P, AT&T, l’étude",
]


def _roundtrip(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    write_testset_table(frame, path)
    return read_testset_table(path)


def test_tsv_roundtrip_tricky(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "segment_id": [str(i) for i in range(1, len(TRICKY) + 1)],
            "doc_id": ["NA"] + [""] * (len(TRICKY) - 1),
            "source": TRICKY,
            "reference": list(reversed(TRICKY)),
        }
    )
    back = _roundtrip(frame, tmp_path / "t.tsv")
    assert back.to_dict("list") == frame.to_dict("list")
    assert list(back.columns) == list(TABLE_COLUMNS)


@needs_mirror
def test_tsv_roundtrip_real_data(loaded: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    for key, frame in loaded.items():
        back = _roundtrip(frame, tmp_path / f"{key}.tsv")
        assert back.to_dict("list") == frame.to_dict("list"), key
    # real data with tricky rows appended
    frame = loaded[WMT14].head(50)
    extra = pd.DataFrame({"segment_id": ["x"] * len(TRICKY), "doc_id": TRICKY, "source": TRICKY, "reference": TRICKY})
    combined = pd.concat([frame, extra], ignore_index=True)
    assert _roundtrip(combined, tmp_path / "combined.tsv").to_dict("list") == combined.to_dict("list")


def test_tsv_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_testset_table(tmp_path / "absent.tsv")
    path = tmp_path / "cols.tsv"
    path.write_text("segment_id\tsource\n1\ta\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cols\.tsv.*doc_id"):
        read_testset_table(path)
    path.write_text("segment_id\tdoc_id\tsource\treference\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_testset_table(path)
    with pytest.raises(ValueError, match="reference"):
        write_testset_table(pd.DataFrame({"segment_id": ["1"], "doc_id": [""], "source": ["a"]}), tmp_path / "w.tsv")
    assert not (tmp_path / "w.tsv").exists()
