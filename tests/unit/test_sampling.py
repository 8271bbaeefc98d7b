"""The one sampling and seeding module (nlp_robustness.sampling): generators, hash ranks, nested samples.

The concrete draws below were computed with the code these functions replaced (``statistics.bagging.rng_for``,
``perturbations.derive.sample_rank``/``sample_segments``/``segment_rng``, ``data.wmt19.sample_sids``,
``statistics.natural_robustness.record_order``) and are written in literally: a change of generator,
hashing or order fails here before it changes a result of the workflow.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.data.wmt19 import read_darr
from nlp_robustness.errors import InputError
from nlp_robustness.sampling import (
    hash_rank,
    lowest_ranked,
    record_order,
    rng_for,
    sample_records,
    sample_segments,
    sample_sids,
    segment_rng,
)
from tests.paths import MIRROR

DARR_FILE = MIRROR / "wmt19-darr-subset" / "RR-seglevel.recovered.csv"


def _table(count: int) -> pd.DataFrame:
    return pd.DataFrame({"segment_id": [str(i) for i in range(1, count + 1)], "doc_id": "d", "source": "s", "reference": "r"})


# --- generators ------------------------------------------------------------------------------------------


def test_rng_for_draws_are_pinned() -> None:
    assert rng_for(7, "metric_attacks", "keyboard-p0.1", "lt-en", "12").integers(0, 10**6, 4).tolist() == [
        381164, 402810, 997026, 276727,
    ]
    assert rng_for(0, "design_bagging", "wmt15").bit_generator.random_raw() == 17454241899339908560


def test_segment_rng_is_rng_for_of_its_labels_and_pinned() -> None:
    assert segment_rng(0, "word_order", "Shuffle", "wmt14", "17", "source").integers(0, 10**6, 4).tolist() == [
        314363, 995058, 240915, 454597,
    ]
    # a segment id given as an int is its string
    assert segment_rng(0, "word_order", "Shuffle", "wmt14", 17, "reference").random(2).tolist() == [  # type: ignore[arg-type]
        0.439045177158888, 0.228588052539607,
    ]
    assert np.array_equal(segment_rng(3, "f", "g", "t", "1", "source").integers(0, 100, 9),
                          rng_for(3, "f", "g", "t", "1", "source").integers(0, 100, 9))


# --- hash ranks ------------------------------------------------------------------------------------------


def test_hash_rank_is_blake2b_of_the_labels_joined_by_unit_separators() -> None:
    assert hash_rank(0, "word_order", "wmt14", "17").hex() == "1dfb48bf81957742780cb4c4f8f2cb77"
    assert hash_rank(3, "natural_robustness", "books", "456").hex() == "5083c145062bfe82f2bcc7516307bb42"
    expected = hashlib.blake2b("5\x1flt-en\x1f12".encode("utf-8"), digest_size=16).digest()
    assert hash_rank(5, "lt-en", 12) == expected


def test_lowest_ranked_keeps_positions_in_order_and_breaks_ties_by_position() -> None:
    assert lowest_ranked([b"\x03", b"\x01", b"\x02", b"\x00"], 2) == [1, 3]
    assert lowest_ranked([b"\x01", b"\x01", b"\x01"], 2) == [0, 1]
    assert lowest_ranked([b"\x01"], 0) == []


# --- nested samples --------------------------------------------------------------------------------------


def test_sample_segments_is_pinned_nested_and_ordered() -> None:
    table = _table(30)
    assert sample_segments(table, 7, 0, "word_order", "wmt14")["segment_id"].tolist() == ["5", "14", "17", "21", "24", "25", "30"]
    assert sample_segments(table, 7, 5, "natural_robustness", "iwslt17")["segment_id"].tolist() == [
        "1", "2", "5", "12", "17", "20", "29",
    ]
    small = set(sample_segments(table, 7, 0, "word_order", "wmt14")["segment_id"])
    assert small < set(sample_segments(table, 12, 0, "word_order", "wmt14")["segment_id"])
    assert sample_segments(table, None, 0, "word_order", "wmt14").equals(table)
    assert sample_segments(table, 30, 0, "word_order", "wmt14").equals(table)


def test_sample_sids_is_pinned() -> None:
    darr = pd.DataFrame({"pair": "lt-en", "sid": [sid for sid in range(1, 41) for _ in range(2)]})
    assert sample_sids(darr, 6, 0, "lt-en") == [7, 17, 20, 21, 34, 38]
    assert sample_sids(darr, 6, 3, "lt-en") == [3, 6, 9, 25, 31, 38]
    assert sample_sids(darr, None, 0, "lt-en") == list(range(1, 41))
    with pytest.raises(ValueError, match="sample_size must be >= 0"):
        sample_sids(darr, -1, 0, "lt-en")


@pytest.mark.skipif(not DARR_FILE.is_file(), reason=f"offline data mirror not found at {MIRROR}")
def test_sample_sids_of_the_real_lt_en_judgements_is_pinned() -> None:
    assert sample_sids(read_darr(DARR_FILE, ["lt-en"]), 8, 1, "lt-en") == [74, 145, 219, 317, 422, 581, 739, 769]


def test_record_order_and_record_samples_are_pinned() -> None:
    records = pd.DataFrame({
        "record": [f"p{i % 3}/{i}" for i in range(12)], "part": [f"p{i % 3}" for i in range(12)], "item": [str(i) for i in range(12)],
    })
    order = record_order(records, 3, "natural_robustness")
    assert order == ["p0/6", "p1/7", "p0/3", "p1/1", "p2/11", "p0/0", "p0/9", "p2/5", "p1/10", "p2/2", "p1/4", "p2/8"]
    assert sample_records(order, 4) == ["p0/6", "p1/7", "p0/3", "p1/1"]
    # the order of records is the order of their segments' ranks in the families' samples of the same group
    ranks = [hash_rank(3, "natural_robustness", part, item) for part, item in zip(records["part"], records["item"])]
    assert order == [records["record"][i] for i in sorted(range(12), key=ranks.__getitem__)]
    with pytest.raises(InputError, match="sample size"):
        sample_records(order, 0)
