"""Tables as self-contained HTML documents for the report: structure, escaping, display rounding, atomic writes."""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.fileio.atomic import stale_temporary_files
from nlp_robustness.outputs.table_writer import LONG_TEXT, MISSING, format_number, html_table_document, write_html_table


class TableParser(HTMLParser):
    """What a browser would see of the document: tags met, the table's rows as cell texts per section,
    colspans of the header cells, classes of the body cells, and any external resource or script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.sections: dict[str, list[list[str]]] = {"thead": [], "tbody": []}
        self.header_spans: list[list[int]] = []
        self.body_classes: list[list[str | None]] = []
        self.caption = ""
        self.title = ""
        self.external: list[str] = []
        self._section: str | None = None
        self._cell: list[str] | None = None
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append(tag)
        self.external += [value for name, value in attrs if name in ("src", "href") and value]
        if tag in ("thead", "tbody"):
            self._section = tag
        elif tag == "tr" and self._section:
            self.sections[self._section].append([])
            if self._section == "thead":
                self.header_spans.append([])
            else:
                self.body_classes.append([])
        elif tag in ("td", "th") and self._section:
            self._cell = []
            if self._section == "thead":
                self.header_spans[-1].append(int(attributes.get("colspan") or 1))
            else:
                self.body_classes[-1].append(attributes.get("class"))
        elif tag in ("caption", "title"):
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._section:
            self.sections[self._section][-1].append("".join(self._cell))
            self._cell = None
        elif tag in ("thead", "tbody"):
            self._section = None
        elif tag in ("caption", "title"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._in == "caption":
            self.caption += data
        elif self._in == "title":
            self.title += data


def parse(document: str) -> TableParser:
    parser = TableParser()
    parser.feed(document)
    parser.close()
    return parser


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "system": ["sys <a>", "b & c"],
        "mean_bleu": [29.310386105245325, math.nan],
        "segments": np.array([3003, 40], dtype="int64"),
        "agrees": [True, False],
    })


def test_one_table_with_a_row_per_frame_row_and_a_cell_per_column(frame: pd.DataFrame) -> None:
    parsed = parse(html_table_document(frame, "Rankings"))
    assert parsed.tags.count("table") == 1
    assert parsed.tags.count("thead") == 1 and parsed.tags.count("tbody") == 1
    assert parsed.sections["thead"] == [["system", "mean_bleu", "segments", "agrees"]]
    assert len(parsed.sections["tbody"]) == 2
    assert all(len(row) == 4 for row in parsed.sections["tbody"])


def test_document_is_self_contained(frame: pd.DataFrame) -> None:
    document = html_table_document(frame, "Rankings")
    parsed = parse(document)
    assert document.startswith("<!DOCTYPE html>")
    assert "script" not in parsed.tags and "link" not in parsed.tags and "img" not in parsed.tags
    assert parsed.external == []
    assert "url(" not in document and "@import" not in document
    assert parsed.title == parsed.caption == "Rankings"


def test_text_in_cells_headers_and_title_is_escaped() -> None:
    frame = pd.DataFrame({"a<b>&c": ["<script>alert(1)</script>", "x & y"]})
    document = html_table_document(frame, "Mean <BLEU> & chrF")
    parsed = parse(document)
    assert "<script>" not in document and "<b>" not in document
    assert "&lt;script&gt;" in document and "a&lt;b&gt;&amp;c" in document
    assert parsed.sections["thead"] == [["a<b>&c"]]
    assert parsed.sections["tbody"] == [["<script>alert(1)</script>"], ["x & y"]]
    assert parsed.caption == "Mean <BLEU> & chrF"


def test_floats_are_rounded_for_display_integers_stay_integers_and_nan_is_a_dash(frame: pd.DataFrame) -> None:
    parsed = parse(html_table_document(frame, "t", decimals=2))
    assert parsed.sections["tbody"] == [["sys <a>", "29.31", "3003", "True"], ["b & c", MISSING, "40", "False"]]
    assert parsed.body_classes[0] == [None, "number", "number", None]
    assert parsed.body_classes[1][1] == "missing"
    assert frame.at[0, "mean_bleu"] == 29.310386105245325  # display only: the frame keeps full precision


def test_only_long_text_may_wrap() -> None:
    frame = pd.DataFrame({"text": ["NVIDIA-NeMo", "x" * (LONG_TEXT + 1)]})
    assert parse(html_table_document(frame, "t")).body_classes == [[None], ["long"]]


def test_integers_with_a_missing_value_stay_integers() -> None:
    frame = pd.DataFrame({"epochs": pd.array([10, None], dtype="Int64"), "missing": [None, "x"]})
    assert parse(html_table_document(frame, "t")).sections["tbody"] == [["10", MISSING], [MISSING, "x"]]


def test_column_decimals_override_the_default() -> None:
    frame = pd.DataFrame({"beta": [14.8105], "kept_fraction": [0.93456]})
    parsed = parse(html_table_document(frame, "t", decimals=3, column_decimals={"beta": 2}))
    assert parsed.sections["tbody"] == [["14.81", "0.935"]]


@pytest.mark.parametrize(("value", "decimals", "expected"), [
    (0.5, 3, "0.500"),
    (-1.05397, 2, "-1.05"),
    (3.2e-05, 3, "3.2e-05"),  # would print as 0.000
    (-3.2e-05, 3, "-3.2e-05"),
    (0.0, 3, "0.000"),
    (-0.0, 3, "0.000"),
    (147.6004, 0, "148"),
])
def test_format_number(value: float, decimals: int, expected: str) -> None:
    assert format_number(value, decimals) == expected


def test_negative_decimals_are_refused(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError):
        html_table_document(frame, "t", decimals=-1)
    with pytest.raises(ValueError):
        html_table_document(frame, "t", column_decimals={"mean_bleu": -2})


def test_grouped_columns_and_index_as_in_the_paper_tables() -> None:
    columns = pd.MultiIndex.from_tuples(
        [("whole pool", "Mean"), ("whole pool", "COV"), ("w/o wmt14", "Mean"), ("w/o wmt14", "COV")],
        names=["left_out", "statistic"],
    )
    frame = pd.DataFrame([[13.87, 0.88, 14.71, math.nan], [5.55, 1.52, 7.16, 1.40]], columns=columns,
                         index=pd.Index(["apertium", "convs2s_tatoeba"], name="system"))
    parsed = parse(html_table_document(frame, "Robustness", decimals=2, index=True))
    assert parsed.sections["thead"] == [["system", "whole pool", "w/o wmt14"], ["Mean", "COV", "Mean", "COV"]]
    assert parsed.header_spans == [[1, 2, 2], [1, 1, 1, 1]]
    assert parsed.sections["tbody"] == [["apertium", "13.87", "0.88", "14.71", MISSING],
                                        ["convs2s_tatoeba", "5.55", "1.52", "7.16", "1.40"]]


def test_index_is_left_out_unless_asked_for() -> None:
    frame = pd.DataFrame({"x": [1, 2]}, index=pd.Index(["a", "b"], name="system"))
    assert parse(html_table_document(frame, "t")).sections["tbody"] == [["1"], ["2"]]
    assert parse(html_table_document(frame, "t", index=True)).sections["thead"] == [["system", "x"]]


def test_long_underscored_headers_may_break_after_underscores() -> None:
    document = html_table_document(pd.DataFrame({"more_consistent_by_cov": ["a"]}), "t")
    assert "more_<wbr>consistent_<wbr>by_<wbr>cov" in document
    assert parse(document).sections["thead"] == [["more_consistent_by_cov"]]


def test_empty_frame_gives_a_header_and_no_body_rows() -> None:
    parsed = parse(html_table_document(pd.DataFrame({"a": [], "b": []}), "t"))
    assert parsed.sections == {"thead": [["a", "b"]], "tbody": []}


def test_write_creates_directories_and_writes_utf8(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "tables" / "rankings.html"
    write_html_table(frame, path, "τ and β \u2013 rankings")
    document = path.read_text(encoding="utf-8")
    assert document == html_table_document(frame, "τ and β \u2013 rankings")
    assert '<meta charset="utf-8">' in document


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("cannot print")


def test_failed_write_keeps_the_old_file_and_leaves_no_partial_one(tmp_path: Path, frame: pd.DataFrame) -> None:
    path = tmp_path / "rankings.html"
    write_html_table(frame, path, "old")
    old = path.read_text(encoding="utf-8")
    broken = frame.assign(system=["fine", Unprintable()])
    with pytest.raises(RuntimeError, match="cannot print"):
        write_html_table(broken, path, "new")
    assert path.read_text(encoding="utf-8") == old
    assert stale_temporary_files(path) == []
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["rankings.html"]


def test_failure_inside_the_atomic_write_removes_the_temporary_file(tmp_path: Path, frame: pd.DataFrame) -> None:
    # a directory where the file should go: the rename at the end fails after the document was written
    path = tmp_path / "rankings.html"
    path.mkdir()
    with pytest.raises(OSError):
        write_html_table(frame, path, "t")
    assert stale_temporary_files(path) == []
    assert path.is_dir() and list(path.iterdir()) == []
