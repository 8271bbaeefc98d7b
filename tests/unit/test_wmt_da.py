"""The WMT'22 to-English DA readers and the per-line domains of a test set (nlp_robustness.data.wmt_da)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.data.wmt_da import (
    DA_SEGMENT_COLUMNS,
    da_base_name,
    rated_segments,
    read_da_segment_scores,
    read_da_system_scores,
    read_line_domains,
)
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines

TOEN = "wmt22-general-toen-da"
DA_DIR = Path("humaneval") / "DA" / "newstest2022-toen"
DEFR_XML = Path("wmt22-general-defr-frde") / "xml" / "wmttest2022.de-fr.all.xml"


@pytest.fixture(scope="module")
def toen(mirror_dir: Path) -> Path:
    """The mirror's WMT'22 to-English DA folder (the test is skipped without it)."""
    folder = mirror_dir / TOEN
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _xml(documents: list[tuple[str, str | None, list[str]]], declaration: bool = True, translators: tuple[str, ...] = ("A",)) -> str:
    """A WMT XML file of (doc id, domain or None, source segments), each with a reference per translator
    (default: A) and one system."""
    parts = ["<?xml version='1.0' encoding='utf-8'?>\n"] if declaration else []
    parts.append('<dataset id="t">\n<collection id="general">\n')
    for doc_id, domain, segments in documents:
        attribute = f' domain="{domain}"' if domain is not None else ""
        parts.append(f'<doc id="{doc_id}" origlang="de"{attribute}>\n')
        references = tuple(("ref", f' lang="en" translator="{name}"') for name in translators)
        for tag, extra in (("src", ' lang="de"'), *references, ("hyp", ' system="S" lang="en"')):
            segs = "".join(f'<seg id="{number}">{text}</seg>\n' for number, text in enumerate(segments, start=1))
            parts.append(f"<{tag}{extra}><p>\n{segs}</p></{tag}>\n")
        parts.append("</doc>\n")
    parts.append("</collection>\n</dataset>\n")
    return "".join(parts)


def _raises(pattern: str):
    return pytest.raises(InputError, match=pattern)


# --- names -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "base"),
    [("Online-B.0", "Online-B"), ("HUMAN-B", "HUMAN-B"), ("HUMAN-B.12", "HUMAN-B"), ("JDExploreAcademy.6", "JDExploreAcademy"),
     ("NAIST-NICT-TIT.5", "NAIST-NICT-TIT"), ("v1.2.3", "v1.2"), ("sys.x", "sys.x")],
)
def test_da_base_name(name: str, base: str) -> None:
    assert da_base_name(name) == base


# --- segment scores ----------------------------------------------------------------------------------------

SEG_HEADER = "SYS SID RAW.SCR Z.SCR N \n"


def test_segment_scores_synthetic(tmp_path: Path) -> None:
    path = _write(tmp_path, "seg.csv", SEG_HEADER + "Online-B.0 3 48 -0.61 2 \nHUMAN-B 3 0 0 1 \n\nOnline-B.0 1 0 -2.5 1 \n")
    table = read_da_segment_scores(path)
    assert DA_SEGMENT_COLUMNS == ("SYS", "SID", "RAW.SCR", "Z.SCR", "N")
    assert list(table.columns) == ["system", "name", "sid", "raw", "z", "ratings", "placeholder", "line"]
    assert table["system"].tolist() == ["Online-B.0", "HUMAN-B", "Online-B.0"]
    assert table["name"].tolist() == ["Online-B", "HUMAN-B", "Online-B"]
    assert table["sid"].tolist() == [3, 3, 1]
    assert table["raw"].tolist() == [48.0, 0.0, 0.0]
    assert table["z"].tolist() == [-0.61, 0.0, -2.5]
    assert table["ratings"].tolist() == [2, 1, 1]
    assert table["placeholder"].tolist() == [False, True, False]  # a raw 0 with a real z is a rating
    assert table["line"].tolist() == [2, 3, 5]  # the blank line 4 is skipped
    assert table["sid"].dtype == "int64" and table["placeholder"].dtype == bool


def test_segment_scores_columns_in_another_order(tmp_path: Path) -> None:
    path = _write(tmp_path, "seg.csv", "N Z.SCR RAW.SCR SID SYS\n2 0.5 70 9 LT22.4\n")
    row = read_da_segment_scores(path).iloc[0]
    assert (row["system"], row["sid"], row["raw"], row["z"], row["ratings"]) == ("LT22.4", 9, 70.0, 0.5, 2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SYS SID RAW.SCR N \nA.0 1 50 1 \n", r"seg\.csv: line 1: has no column Z\.SCR"),
        (SEG_HEADER + "A.0 1 50 0.1 1 \nA.0 2 50 0.1 \n", r"seg\.csv: line 3: expected 5 fields like the header, found 4"),
        (SEG_HEADER + "A.0 1 fifty 0.1 1 \n", r"seg\.csv: line 2: RAW\.SCR 'fifty' is not a number"),
        (SEG_HEADER + "A.0 1 50 nan 1 \n", r"seg\.csv: line 2: Z\.SCR 'nan' is not a finite number"),
        (SEG_HEADER + "A.0 1.5 50 0.1 1 \n", r"seg\.csv: line 2: SID '1\.5' is not an integer"),
        (SEG_HEADER + "A.0 1 50 0.1 x \n", r"seg\.csv: line 2: N 'x' is not an integer"),
        (SEG_HEADER + "A.0 1 50 0.1 1 \nB.1 1 50 0.1 1 \nA.0 1 40 0.2 1 \n",
         r"seg\.csv: line 4: system A\.0 SID 1 is scored twice \(also on line 2\)"),
        (SEG_HEADER + "A.0 1 50 0.1 1 \nA.3 1 40 0.2 1 \n", r"seg\.csv: line 3: system A\.3 SID 1 is scored twice \(also on line 2 \(as A\.0\)\)"),
        ("", r"seg\.csv: line 1: empty file"),
        (SEG_HEADER, r"seg\.csv: no row after the header"),
    ],
)
def test_segment_score_errors(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "seg.csv", text)
    with _raises(message):
        read_da_segment_scores(path)


def test_segment_scores_missing_file(tmp_path: Path) -> None:
    with _raises(r"file not found: .*nothing\.csv"):
        read_da_segment_scores(str(tmp_path / "nothing.csv"))


# --- system scores -----------------------------------------------------------------------------------------

SYS_HEADER = "RAW.SCR Z.SCR N SYS N.ALL \n"


def test_system_scores_synthetic(tmp_path: Path) -> None:
    path = _write(tmp_path, "sys.csv", SYS_HEADER + "66.5 -0.089 1656 Online-Y.3 2052 \n68.3 -0.0855 1699 HUMAN-B 2127 \n")
    table = read_da_system_scores(path)
    assert list(table.columns) == ["system", "name", "raw", "z", "segments", "ratings"]
    assert table.to_dict("records") == [
        {"system": "Online-Y.3", "name": "Online-Y", "raw": 66.5, "z": -0.089, "segments": 1656, "ratings": 2052},
        {"system": "HUMAN-B", "name": "HUMAN-B", "raw": 68.3, "z": -0.0855, "segments": 1699, "ratings": 2127},
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("RAW.SCR Z.SCR N SYS \n1 0 3 A.0 \n", r"sys\.csv: line 1: has no column N\.ALL"),
        (SYS_HEADER + "1 0 3 A.0 \n", r"sys\.csv: line 2: expected 5 fields like the header, found 4"),
        (SYS_HEADER + "1 zero 3 A.0 4 \n", r"sys\.csv: line 2: Z\.SCR 'zero' is not a number"),
        (SYS_HEADER + "1 0 3 A.0 4.5 \n", r"sys\.csv: line 2: N\.ALL '4\.5' is not an integer"),
        (SYS_HEADER + "1 0 3 A.0 4 \n2 0 3 A.0 4 \n", r"sys\.csv: line 3: system A\.0 is scored twice \(also on line 2\)"),
        ("", r"sys\.csv: line 1: empty file"),
        (SYS_HEADER, r"sys\.csv: no row after the header"),
    ],
)
def test_system_score_errors(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "sys.csv", text)
    with _raises(message):
        read_da_system_scores(path)


# --- line domains: TSV -------------------------------------------------------------------------------------


def test_domain_tsv_synthetic(tmp_path: Path) -> None:
    # SIDs in the documented order: documents sorted by id (b1 before n1), by position inside each
    path = _write(tmp_path, "d.tsv", "news\tn1\t1\t3\nnews\tn1\t2\t4\nsocial\tb1\t1\t1\nsocial\tb1\t2\t2\n")
    table = read_line_domains(path, ["a", "b", "c", "d"])
    assert list(table.columns) == ["line", "domain", "document", "position", "sid"]
    assert table.to_dict("list") == {
        "line": [0, 1, 2, 3], "domain": ["news", "news", "social", "social"], "document": ["n1", "n1", "b1", "b1"],
        "position": [1, 2, 1, 2], "sid": [3, 4, 1, 2],
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("news\tn1\t1\t1\n", r"d\.tsv has 1 lines, but the source has 2: a domain file has one line per source line"),
        ("news\tn1\t1\t1\nnews\tn1\t2\n", r"d\.tsv: line 2: expected 4 tab-separated fields .*found 3"),
        ("news\tn1\t1\t1\nnews n1 2 2\n", r"d\.tsv: line 2: expected 4 tab-separated fields .*found 1"),
        ("news\tn1\tone\t1\nnews\tn1\t2\t2\n", r"d\.tsv: line 1: position 'one' is not an integer"),
        ("news\tn1\t1\t1\nnews\tn1\t0\t2\n", r"d\.tsv: line 2: position 0 is below 1"),
        ("news\tn1\t1\t1\nnews\tn1\t2\tx\n", r"d\.tsv: line 2: SID 'x' is not an integer"),
        ("news\tn1\t1\t1\nnews\tn1\t2\t1\n", r"d\.tsv: line 2: SID 1, expected 2 \(document 'n1', position 2\)"),
        ("news\tn1\t1\t1\nnews\tn1\t2\t3\n", r"d\.tsv: line 2: SID 3, expected 2 \(document 'n1', position 2\)"),
        ("news\tn1\t1\t1\nnews\tn1\t1\t2\n", r"d\.tsv: line 2: position 1 of document 'n1' is also on line 1"),
        ("news\tn1\t1\t1\nnews\tn2\t2\t2\n", r"d\.tsv: line 2: position 2 of document 'n2', which has 1 lines"),
        ("news\tn1\t1\t1\n\tn1\t2\t2\n", r"d\.tsv: line 2: empty domain"),
    ],
)
def test_domain_tsv_errors(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, "d.tsv", text)
    with _raises(message):
        read_line_domains(path, ["a", "b"])


def test_domain_tsv_sids_must_follow_the_documented_order_not_the_lines(tmp_path: Path) -> None:
    """SID = line number is a permutation of 1..N, but not the documented order when the documents are not in sorted
    order in the file: the scores would join the wrong segments. Refused, naming the first line that differs."""
    # documents in file order: zeta (2 lines), alpha (1), mid (2); sorted: alpha, mid, zeta
    lines = [("news", "zeta", 1), ("news", "zeta", 2), ("chat", "alpha", 1), ("chat", "mid", 1), ("chat", "mid", 2)]
    numbered = "".join(f"{domain}\t{document}\t{position}\t{number}\n" for number, (domain, document, position) in enumerate(lines, 1))
    with _raises(r"d\.tsv: line 1: SID 1, expected 4 \(document 'zeta', position 1\): the SIDs number the segments of the "
                 r"documents sorted by id \(plain string order\), by position inside each, not the lines of the file"):
        read_line_domains(_write(tmp_path, "d.tsv", numbered), ["a"] * 5)
    documented = {("alpha", 1): 1, ("mid", 1): 2, ("mid", 2): 3, ("zeta", 1): 4, ("zeta", 2): 5}
    right = "".join(f"{domain}\t{document}\t{position}\t{documented[document, position]}\n" for domain, document, position in lines)
    assert read_line_domains(_write(tmp_path, "d.tsv", right), ["a"] * 5)["sid"].tolist() == [4, 5, 1, 2, 3]
    # a document's segments may be listed in any order; the SID follows the position
    shuffled = "news\tzeta\t2\t5\nnews\tzeta\t1\t4\nchat\talpha\t1\t1\nchat\tmid\t2\t3\nchat\tmid\t1\t2\n"
    assert read_line_domains(_write(tmp_path, "d.tsv", shuffled), ["a"] * 5)["position"].tolist() == [2, 1, 1, 2, 1]


def test_domain_file_missing(tmp_path: Path) -> None:
    with _raises(r"file not found: .*none\.tsv"):
        read_line_domains(str(tmp_path / "none.tsv"), ["a"])


# --- line domains: XML -------------------------------------------------------------------------------------


def test_domain_xml_needs_backtracking_and_sorts_ids_as_strings(tmp_path: Path) -> None:
    # "doc9" = [a, b] also matches at line 0, where it leaves "c" unplaceable: only doc10 at 0 tiles the source.
    path = _write(tmp_path, "t.xml", _xml([("doc9", "news", ["a", "b"]), ("doc10", "social", ["a", "b", "c"])]))
    table = read_line_domains(path, ["a", "b", "c", "a", "b"])
    assert table.to_dict("list") == {
        "line": [0, 1, 2, 3, 4],
        "domain": ["social"] * 3 + ["news"] * 2,
        "document": ["doc10"] * 3 + ["doc9"] * 2,
        "position": [1, 2, 3, 1, 2],
        "sid": [1, 2, 3, 4, 5],  # "doc10" < "doc9" in plain string order
    }


def test_domain_xml_identical_documents_in_file_order(tmp_path: Path) -> None:
    documents = [("v", "conversation", ["Gruss"]), ("w", "news", ["x", "y"]), ("u", "social", ["Gruss"])]
    path = _write(tmp_path, "t.xml", _xml(documents, declaration=False))
    table = read_line_domains(path, ["Gruss", "x", "y", "Gruss "])  # lines are compared stripped
    # identical documents take their places in file order; SIDs follow the sorted ids u, v, w
    assert table.to_dict("list") == {
        "line": [0, 1, 2, 3],
        "domain": ["conversation", "news", "news", "social"],
        "document": ["v", "w", "w", "u"],
        "position": [1, 1, 2, 1],
        "sid": [2, 3, 4, 1],
    }


@pytest.mark.parametrize(
    ("documents", "source", "message"),
    [
        ([("d1", "news", ["a"]), ("d2", None, ["b"])], ["a", "b"], r"t\.xml: line \d+: document 'd2' has no domain attribute"),
        ([("d1", "news", ["a"]), ("d1", "news", ["b"])], ["a", "b"], r"t\.xml: line \d+: document id 'd1' is also the id of"),
        ([("d1", "news", ["a"]), ("d2", "news", ["b"])], ["a", "b", "c"],
         r"t\.xml: its documents hold 2 source segments, but the source has 3 lines"),
        ([("d1", "news", ["a"]), ("d2", "news", ["b", "q"])], ["a", "b", "c"],
         r"t\.xml: line \d+: document 'd2' \(2 segments\) does not occur as a contiguous block of the source"),
        ([("d1", "news", ["a", "b"]), ("d2", "news", ["b", "c"])], ["a", "b", "c", "b"],
         r"t\.xml: line \d+: the documents do not tile the source: document 'd2' cannot be placed"),
    ],
)
def test_domain_xml_errors(tmp_path: Path, documents: list, source: list[str], message: str) -> None:
    path = _write(tmp_path, "t.xml", _xml(documents))
    with _raises(message):
        read_line_domains(path, source)


def test_domain_xml_reads_whatever_its_references(tmp_path: Path) -> None:
    """The reference is not used: one translator of any name, several with A, and several without A (WMT22 cs-en has
    B and C; a test set would have to name one) all read."""
    documents = [("d1", "news", ["a"])]
    for translators in [("refA",), ("B", "A"), ("B", "C")]:
        path = _write(tmp_path, "t.xml", _xml(documents, translators=translators))
        assert read_line_domains(path, ["a"])["domain"].tolist() == ["news"]


def test_domain_xml_malformed(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.xml", "<?xml version='1.0'?>\n<dataset><doc id='x'>\n")
    with _raises(r"t\.xml: line \d+, column \d+: not well-formed XML"):
        read_line_domains(path, ["a"])


# --- rated segments ----------------------------------------------------------------------------------------


def test_rated_segments_synthetic(tmp_path: Path) -> None:
    domains = read_line_domains(_write(tmp_path, "d.tsv", "news\tn\t1\t2\nsocial\tb\t1\t1\n"), ["a", "b"])
    scores = read_da_segment_scores(_write(tmp_path, "seg.csv", SEG_HEADER + "A.0 1 50 0.1 1 \nA.0 2 60 0.2 1 \nB 1 0 0 1 \n"))
    joined = rated_segments(scores, domains, "de-en")
    assert joined["line"].tolist() == [1, 0, 1]
    assert joined["domain"].tolist() == ["social", "news", "social"]
    assert joined["document"].tolist() == ["b", "n", "b"]
    assert joined["score_line"].tolist() == [2, 3, 4]
    assert joined["sid"].tolist() == [1, 2, 1]


@pytest.mark.parametrize("sid", [0, 3])
def test_rated_segments_sid_outside(tmp_path: Path, sid: int) -> None:
    domains = read_line_domains(_write(tmp_path, "d.tsv", "news\tn\t1\t2\nsocial\tb\t1\t1\n"), ["a", "b"])
    scores = read_da_segment_scores(_write(tmp_path, "seg.csv", SEG_HEADER + f"A.0 1 50 0.1 1 \nOnline-B.0 {sid} 60 0.2 1 \n"))
    with pytest.raises(InputError) as caught:
        rated_segments(scores, domains, "dataset de-en")
    assert str(caught.value).startswith("dataset de-en: ")
    assert re.search(rf"SID {sid} of system Online-B\.0 \(score file line 3\) is outside 1\.\.2", str(caught.value))


# --- the real files ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def de_en_source(toen: Path) -> list[str]:
    return read_text_lines(toen / "txt" / "sources" / "generaltest2022.de-en.src.de", segments=True)


def test_de_en_xml_tiling_equals_derived_tsv(toen: Path, mirror_dir: Path, de_en_source: list[str]) -> None:
    if not (mirror_dir / DEFR_XML).is_file():
        pytest.skip(f"{mirror_dir / DEFR_XML} is absent")
    derived = read_line_domains(str(toen / "derived" / "generaltest2022.de-en.domains.tsv"), de_en_source)
    from_xml = read_line_domains(str(mirror_dir / DEFR_XML), de_en_source)
    assert len(from_xml) == 1984 and from_xml["document"].nunique() == 271
    pd.testing.assert_frame_equal(from_xml, derived)


def test_ja_en_derived_domains(toen: Path) -> None:
    source = read_text_lines(toen / "txt" / "sources" / "generaltest2022.ja-en.src.ja", segments=True)
    table = read_line_domains(str(toen / "derived" / "generaltest2022.ja-en.domains.tsv"), source)
    assert len(table) == 2008 and table["line"].tolist() == list(range(2008))
    assert sorted(table["sid"]) == list(range(1, 2009))
    assert table["domain"].value_counts().to_dict() == {"conversation": 502, "ecommerce": 503, "news": 505, "social": 498}
    assert table["document"].nunique() == 321


@pytest.mark.parametrize(("pair", "placeholders", "systems"), [("de-en", 65, 10), ("ja-en", 67, 14)])
def test_system_z_is_mean_of_segment_z(toen: Path, pair: str, placeholders: int, systems: int) -> None:
    segments = read_da_segment_scores(str(toen / DA_DIR / f"ad-seg-scores-{pair}.csv"))
    totals = read_da_system_scores(str(toen / DA_DIR / f"ad-sys-scores-{pair}.csv")).set_index("system")
    assert int(segments["placeholder"].sum()) == placeholders
    assert segments.loc[segments["placeholder"], "ratings"].isin([1, 2]).all()
    grouped = segments.groupby("system")
    assert sorted(grouped.groups) == sorted(totals.index) and len(totals) == systems
    for system, rows in grouped:  # the organisers' means include the placeholders
        assert abs(rows["z"].mean() - totals.loc[system, "z"]) <= 1e-9, system
        assert abs(rows["raw"].mean() - totals.loc[system, "raw"]) <= 1e-9, system
        assert len(rows) == totals.loc[system, "segments"]
        assert rows["ratings"].sum() == totals.loc[system, "ratings"]


def test_de_en_rated_segments_per_domain(toen: Path, de_en_source: list[str]) -> None:
    domains = read_line_domains(str(toen / "derived" / "generaltest2022.de-en.domains.tsv"), de_en_source)
    scores = read_da_segment_scores(str(toen / DA_DIR / "ad-seg-scores-de-en.csv"))
    joined = rated_segments(scores, domains, "de-en")
    counts = joined.groupby(["name", "domain"]).size()
    assert counts["JDExploreAcademy"].to_dict() == {"conversation": 393, "ecommerce": 366, "news": 475, "social": 368}
    assert counts["HUMAN-B"].to_dict() == {"conversation": 389, "ecommerce": 455, "news": 448, "social": 407}
    # NOTES: Online-Y.3's placeholders are SIDs 1139-1155, one whole document
    run = joined[(joined["system"] == "Online-Y.3") & joined["sid"].between(1139, 1155)]
    assert len(run) == 17 and run["placeholder"].all() and run["document"].nunique() == 1
