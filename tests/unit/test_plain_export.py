"""Tests of nlp_robustness.data.plain_export: a WMT XML file written as line-aligned plain files."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlp_robustness.data.plain_export import main
from nlp_robustness.data.wmt_xml import read_wmt_xml
from nlp_robustness.data.wmt_xml_tables import wmt_xml_table
from nlp_robustness.fileio.text_files import read_text_lines
from tests.paths import MIRROR

WMT22_DEFR = MIRROR / "wmt22-general-defr-frde" / "xml" / "wmttest2022.de-fr.all.xml"


def _xml(tmp_path: Path, second_source: str) -> Path:
    path = tmp_path / "t.xml"
    path.write_text(
        "<dataset id='t'><collection id='general'>"
        "<doc id='d1' domain='news'><src lang='de'><p><seg id='1'>a &amp; b</seg><seg id='2'>"
        f"{second_source}</seg></p></src><ref lang='fr' translator='A'><p><seg id='1'>x</seg><seg id='2'>y</seg></p></ref>"
        "<hyp system='S' lang='fr'><p><seg id='1'>h1</seg><seg id='2'>h2</seg></p></hyp></doc>"
        "<doc id='d2' domain='social'><src lang='de'><p><seg id='1'>c</seg></p></src>"
        "<ref lang='fr' translator='A'><p><seg id='1'>z</seg></p></ref><hyp system='S' lang='fr'><p><seg id='1'>h3</seg></p></hyp></doc>"
        "</collection></dataset>",
        encoding="utf-8",
    )
    return path


def test_every_file_has_one_line_per_segment_in_file_order(tmp_path: Path) -> None:
    assert main([str(_xml(tmp_path, "b")), str(tmp_path / "out")]) == 0
    assert read_text_lines(tmp_path / "out" / "source.txt", segments=True) == ["a & b", "b", "c"]
    assert read_text_lines(tmp_path / "out" / "reference.txt", segments=True) == ["x", "y", "z"]
    assert read_text_lines(tmp_path / "out" / "domains.tsv", segments=False) == ["news\td1", "news\td1", "social\td2"]
    assert read_text_lines(tmp_path / "out" / "hypotheses" / "S.txt", segments=True) == ["h1", "h2", "h3"]


def test_a_segment_with_a_line_break_is_refused_naming_the_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(_xml(tmp_path, "b\nc")), str(tmp_path / "out")]) == 2
    assert "document 'd1': a segment of source holds a line break" in capsys.readouterr().err
    assert not (tmp_path / "out" / "source.txt").exists()


@pytest.mark.skipif(not WMT22_DEFR.exists(), reason="the offline mirror is not here")
def test_the_real_wmt22_file_round_trips_to_the_readers_table(tmp_path: Path) -> None:
    assert main([str(WMT22_DEFR), str(tmp_path)]) == 0
    table = wmt_xml_table(read_wmt_xml(WMT22_DEFR))
    assert read_text_lines(tmp_path / "source.txt", segments=True) == table["source"].tolist()
    assert read_text_lines(tmp_path / "reference.txt", segments=True) == table["reference"].tolist()
    assert read_text_lines(tmp_path / "domains.tsv", segments=False) == (table["domain"] + "\t" + table["doc_id"]).tolist()
    assert read_text_lines(tmp_path / "hypotheses" / "Online-B.txt", segments=True) == table["hypothesis:Online-B"].tolist()
