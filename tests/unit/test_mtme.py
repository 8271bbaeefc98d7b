"""The MTME readers (nlp_robustness.data.mtme): values, None as NaN, and every error naming file and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nlp_robustness.data.mtme import (
    read_mtme_documents,
    read_mtme_segment_scores,
    read_plain_scores,
    system_scores,
)
from nlp_robustness.errors import InputError


def _write(tmp_path: Path, name: str, text: str, bom: bool = False) -> str:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return str(path)


def test_segment_scores_by_system_in_file_order_with_none_as_nan(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.seg.score", "A\t-1.5\nA\tNone\nA\t0\nB\t2\nB\t3e-1\nB\tNone\n")
    scores = read_mtme_segment_scores(path, segments=3)
    assert list(scores) == ["A", "B"]
    np.testing.assert_array_equal(scores["A"], [-1.5, np.nan, 0.0])
    np.testing.assert_array_equal(scores["B"], [2.0, 0.3, np.nan])


def test_a_byte_order_mark_and_crlf_are_read_as_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.seg.score", "A\t1\r\nA\t2\r\n", bom=True)
    np.testing.assert_array_equal(read_mtme_segment_scores(path)["A"], [1.0, 2.0])
    assert list(read_mtme_documents(_write(tmp_path, "x.docs", "news\td1\n", bom=True))["domain"]) == ["news"]
    np.testing.assert_array_equal(read_plain_scores(_write(tmp_path, "p.txt", "0.5\n", bom=True)), [0.5])


@pytest.mark.parametrize(("text", "expected"), [
    ("A\t1\nA\tgood\n", r"x\.seg\.score: line 2: score 'good' is not a number"),
    ("A\t1\nA\tinf\n", r"x\.seg\.score: line 2: score 'inf' is not a finite number"),
    ("A\t1\nA 2\n", r"x\.seg\.score: line 2: expected 'system<TAB>score'"),
    ("A\t1\nB\t1\nA\t2\n", r"x\.seg\.score: line 3: system 'A' appears again after other systems"),
    ("", r"x\.seg\.score: no scores"),
])
def test_a_bad_segment_score_file_names_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        read_mtme_segment_scores(_write(tmp_path, "x.seg.score", text))


def test_wrong_counts_are_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.seg.score", "A\t1\nA\t2\nB\t1\n")
    with pytest.raises(InputError, match=r"x\.seg\.score: system 'B' has 1 lines, but the other systems' segments number 2"):
        read_mtme_segment_scores(path)
    with pytest.raises(InputError, match=r"system 'A' has 2 lines, but the test set's segments number 3"):
        read_mtme_segment_scores(path, segments=3)
    with pytest.raises(InputError, match=r"p\.txt: 2 lines, but the test set has 3 segments"):
        read_plain_scores(_write(tmp_path, "p.txt", "1\n2\n"), segments=3)
    with pytest.raises(InputError, match=r"d\.docs: 1 lines, but the test set has 2 segments"):
        read_mtme_documents(_write(tmp_path, "d.docs", "news\td1\n"), segments=2)


def test_plain_scores_empty_line_or_none_is_missing_and_a_word_is_named(tmp_path: Path) -> None:
    np.testing.assert_array_equal(read_plain_scores(_write(tmp_path, "p.txt", "1\n\nNone\n-2\n")), [1.0, np.nan, np.nan, -2.0])
    with pytest.raises(InputError, match=r"p2\.txt: line 2: score 'x' is not a number"):
        read_plain_scores(_write(tmp_path, "p2.txt", "1\nx\n"))


def test_documents_and_their_errors(tmp_path: Path) -> None:
    frame = read_mtme_documents(_write(tmp_path, "d.docs", "news\td1\nnews\td1\nsocial\td2\n"))
    assert frame.to_dict("list") == {"segment": [1, 2, 3], "domain": ["news", "news", "social"], "document": ["d1", "d1", "d2"]}
    with pytest.raises(InputError, match=r"e\.docs: line 3: document 'd1' appears again"):
        read_mtme_documents(_write(tmp_path, "e.docs", "news\td1\nnews\td2\nnews\td1\n"))
    with pytest.raises(InputError, match=r"f\.docs: line 2: expected 'domain<TAB>document'"):
        read_mtme_documents(_write(tmp_path, "f.docs", "news\td1\nnews\n"))


def test_system_scores_map_names_and_name_a_missing_system() -> None:
    scores = {"Online-B": np.array([1.0]), "refA": np.array([2.0])}
    assert system_scores(scores, {"B": "Online-B"}, "m.seg.score", "key")["B"][0] == 1.0
    with pytest.raises(InputError, match=r"key: system 'X' \(called 'Online-X' in the file\) has no scores in m\.seg\.score "
                                         r"\(its systems: Online-B, refA\)"):
        system_scores(scores, {"X": "Online-X"}, "m.seg.score", "key")
