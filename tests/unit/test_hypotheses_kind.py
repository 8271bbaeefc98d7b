"""The hypotheses kind's job-time check: a file is compared whole with its test set, then cut to max_segments."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.kinds.hypotheses import checked_hypotheses, whole_testset_segments

LINES = [f"line {number}" for number in range(1, 41)]


def test_a_whole_file_is_cut_to_max_segments_after_the_check() -> None:
    assert checked_hypotheses(LINES, "hyp.fr", "mine", 40, 10) == LINES[:10]
    assert checked_hypotheses(LINES, "hyp.fr", "mine", 40, None) == LINES
    assert checked_hypotheses(LINES, "hyp.fr", "mine", 40, 100) == LINES


@pytest.mark.parametrize("lines", [LINES[:-1], LINES + ["one more"], LINES[:5] + ["inserted"] + LINES[5:]])
def test_a_file_one_line_short_long_or_shifted_is_refused_although_max_segments_would_hide_it(lines: list[str]) -> None:
    with pytest.raises(InputError) as raised:
        checked_hypotheses(lines, "hyp.fr", "mine", 40, 10)
    assert str(raised.value) == (
        f"hyp.fr: {len(lines)} lines but test set mine has 40 segments (max_segments 10 keeps the first 10): "
        "a hypotheses file translates the whole test set, one line per segment"
    )


def test_the_whole_test_set_is_read_from_its_provenance() -> None:
    assert whole_testset_segments({"segments_read": 1984, "segments_selected": 515, "dropped_source_equals_reference": 3,
                                   "segments_before_cut": 512, "segments": 40}) == 512
    # a provenance file written before segments_before_cut existed
    assert whole_testset_segments({"segments_read": 1984, "segments_selected": 515, "dropped_source_equals_reference": 3}) == 512
    assert whole_testset_segments({"segments_read": 3003, "dropped_source_equals_reference": 0}) == 3003
