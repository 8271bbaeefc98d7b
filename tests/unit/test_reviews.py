"""The Amazon multi-domain review parser: real mirror files, raw '&' and '<', malformed files."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.data.reviews import REVIEW_COLUMNS, read_blitzer_reviews
from tests.paths import MIRROR

ACL = MIRROR / "amazon-multidomain-sentiment" / "sorted_data_acl"
DOMAINS = ["books", "dvd", "electronics", "kitchen_&_housewares"]

needs_mirror = pytest.mark.skipif(not ACL.is_dir(), reason=f"offline data mirror not found at {MIRROR}")


@needs_mirror
@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("label", ["positive", "negative"])
def test_real_files_parse_completely(domain: str, label: str) -> None:
    path = ACL / domain / f"{label}.review"
    frame = read_blitzer_reviews(path, domain=domain, label=label)
    assert list(frame.columns) == list(REVIEW_COLUMNS)
    assert len(frame) == 1000 == path.read_text(encoding="utf-8").count("<review>\n")
    assert frame["review_text"].str.len().gt(0).all()
    assert set(frame["domain"]) == {domain} and set(frame["label"]) == {label}
    assert frame["review_id"].iloc[-1] == f"{domain}/{label}/1000"
    # the labels follow the star ratings: positive 4-5 stars, negative 1-2
    ratings = set(frame["rating"])
    assert ratings <= ({"4.0", "5.0"} if label == "positive" else {"1.0", "2.0"})


@needs_mirror
def test_first_review_fields_and_entities() -> None:
    frame = read_blitzer_reviews(ACL / "books" / "positive.review", domain="books", label="positive")
    first = frame.iloc[0]
    assert first["unique_id"] == "0785758968:one_of_the_best_crichton_novels:joseph_m"
    assert (first["asin"], first["rating"], first["helpful"]) == ("0785758968", "5.0", "0 of 1")
    assert first["title"] == "One of the best Crichton novels"
    assert first["review_text"].startswith("Sphere by Michael Crichton is an excellant novel.")
    assert first["review_text"].endswith("I would strongly recommend this book")
    texts = "\n".join(frame["review_text"])
    assert "&quot;" not in texts and '"Great Work of Time"' in texts  # entities decoded
    assert "light & funny read!" in texts  # raw ampersands kept


@needs_mirror
def test_real_escaped_markup_becomes_angle_brackets() -> None:
    """The ACL files escape markup inside values (no raw '<' in them): decoded, it is text, not structure."""
    frame = read_blitzer_reviews(ACL / "electronics" / "negative.review", domain="electronics", label="negative")
    texts = "\n".join(frame["review_text"])
    assert "lasted < 5 months" in texts and "cannot be <whatever>." in texts
    assert "&lt;" not in texts and "&gt;" not in texts


def test_raw_markup_inside_values(tmp_path: Path) -> None:
    path = tmp_path / "positive.review"
    path.write_text(
        "<review>\n<unique_id>\nA1\n</unique_id>\n<rating>\n5.0\n</rating>\n<review_text>\n"
        "I <3 it & so does R&D: &lt;b&gt;\n<review>\n</title>\n\nSecond paragraph.\n</review_text>\n</review>\n"
        "<review>\n<review_text>\nshort\n</review_text>\n<unique_id>\nB2\n</unique_id>\n<unique_id>\nB3\n</unique_id>\n</review>\n",
        encoding="utf-8",
    )
    frame = read_blitzer_reviews(path, domain="toys_&_games", label="positive")
    assert frame["review_text"].tolist() == ["I <3 it & so does R&D: <b>\n<review>\n</title>\n\nSecond paragraph.", "short"]
    assert frame["unique_id"].tolist() == ["A1", "B2"]  # a duplicated field keeps its first value
    assert frame["rating"].tolist() == ["5.0", ""]  # a missing field is empty
    assert frame["review_id"].tolist() == ["toys_&_games/positive/1", "toys_&_games/positive/2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<review>\n<review_text>\nx\n</review>\n", r"line 4: </review> while <review_text> \(line 2\) is still open"),
        ("<review>\n<review>\n", r"line 2: <review> inside the review opened on line 1"),
        ("</review>\n", r"line 1: </review> without an open <review>"),
        ("<review>\n<title>\nx\n</title>\n</review>\n", r"line 1: review without <review_text>"),
        ("stray text\n", r"line 1: unexpected text outside every <review>"),
        ("<review>\nloose\n", r"line 2: unexpected text between fields"),
        ("<review>\n<review_text>\nx\n", r"line 2: <review_text> is never closed"),
        ("<review>\n<review_text>\nx\n</review_text>\n", r"line 1: <review> is never closed"),
    ],
)
def test_broken_structure_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "broken.review"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=rf"broken\.review: {message}"):
        read_blitzer_reviews(path, domain="d", label="negative")


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"file not found: .*absent\.review"):
        read_blitzer_reviews(tmp_path / "absent.review", domain="d", label="positive")
    path = tmp_path / "latin1.review"
    path.write_bytes(b"<review>\n<review_text>\ncaf\xe9\n</review_text>\n</review>\n")
    with pytest.raises(InputError, match=r"latin1\.review: line 3: invalid UTF-8"):
        read_blitzer_reviews(path, domain="d", label="positive")
