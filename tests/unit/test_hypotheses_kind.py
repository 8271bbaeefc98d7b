"""The hypotheses kind's job-time check: a file is compared whole with its test set, then cut to max_segments."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.kinds.hypotheses import checked_hypotheses, hypotheses_by_segment_id, whole_testset_segments

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


def test_a_file_of_the_whole_file_gives_the_test_sets_lines_by_segment_id() -> None:
    assert hypotheses_by_segment_id(LINES, "hyp.fr", "news", 40, ["3", "7", "40"]) == ["line 3", "line 7", "line 40"]
    with pytest.raises(InputError) as raised:
        hypotheses_by_segment_id(LINES[:-1], "hyp.fr", "news", 40, ["3"])
    assert str(raised.value) == (
        "hyp.fr: 39 lines but the file test set news is read from has 40 segments: a hypotheses file of a test set of a "
        "WMT XML file or with a domain file translates the whole file, one line per segment"
    )


def test_a_local_test_sets_jobs_read_the_whole_file_or_the_xml_and_other_jobs_are_unchanged() -> None:
    from nlp_robustness.data.manifest import load_manifest
    from nlp_robustness.systems.registry import SystemContext, system_kind
    from tests.paths import MANIFEST, MANIFEST_SCHEMA

    xml = {"file": "own.xml", "format": "wmt-xml", "translator": "A", "domain": "news", "select": {"domain": "news"}}
    plain = {"source": "s.txt", "reference": "r.txt", "format": "plain", "domain_file": "d.tsv", "domain": "news"}
    context = SystemContext(load_manifest(MANIFEST, MANIFEST_SCHEMA), "resources/downloads", 10,
                            local_testsets={"xml-news": xml, "plain-news": plain})
    kind = system_kind("hypotheses")
    submission = kind.needs("b", {"kind": "hypotheses", "submission": "Online-B"}, ["xml-news"], context)
    assert submission.inputs == {"wmt_xml": "own.xml"}
    assert submission.params == {"submission": "Online-B", "file": "own.xml", "translator": "A"}
    files = {"kind": "hypotheses", "files": {"plain-news": "all.txt", "pair": "pair.txt"}}
    picked = kind.needs("f", files, ["plain-news"], context)
    assert picked.inputs == {"hypotheses": "all.txt", "testset_provenance": "results/testsets/plain-news.provenance.json"}
    assert picked.params == {"by_segment_id": True}
    assert kind.needs("f", files, ["pair"], context).params == {"max_segments": 10}  # a pair of files: as before
    with pytest.raises(InputError, match=r"systems\.b\.submission: test set plain-news is not made from a manifest dataset or a WMT XML file"):
        kind.needs("b", {"kind": "hypotheses", "submission": "Online-B"}, ["plain-news"], context)
