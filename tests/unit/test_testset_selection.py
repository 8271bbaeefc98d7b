"""Tests of nlp_robustness.data.testset_selection and of select in prepare_testset: a test set made of one
domain of a WMT'22 dataset keeps the dataset's segment ids, before the drop and the cut."""

from __future__ import annotations

import pandas as pd
import pytest

from nlp_robustness.data.acquisition import plan_dataset, read_dataset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testset_preparation import prepare_testset
from nlp_robustness.data.testset_selection import check_testset_selections, declared_values, select_rows
from nlp_robustness.data.testsets import TABLE_COLUMNS
from nlp_robustness.errors import InputError
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

needs_mirror = pytest.mark.skipif(not (MIRROR / "wmt22-general-defr-frde").is_dir(), reason=f"WMT'22 mirror not found under {MIRROR}")


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(MANIFEST, MANIFEST_SCHEMA)


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "segment_id": ["1", "2", "3", "4", "5"],
            "doc_id": ["a", "a", "b", "c", "c"],
            "source": ["s1", "same", "s3", "s4", "s5"],
            "reference": ["r1", "same", "r3", "r4", "r5"],
            "domain": ["news", "news", "social", "news", "news"],
            "hypothesis:X": ["h1", "h2", "h3", "h4", "h5"],
        },
        dtype=str,
    )


def test_select_runs_before_the_drop_and_the_cut_and_keeps_ids() -> None:
    table, counts = prepare_testset(
        _table(), max_segments=2, allow_empty_segments=False, drop_source_equals_reference=True, select={"domain": "news"}
    )
    assert list(table.columns) == list(TABLE_COLUMNS)  # domain and hypotheses are not part of a test set
    assert table["segment_id"].tolist() == ["1", "4"]  # 2 dropped (source = reference), then the first 2 of the rest
    assert counts["segments_read"] == 5 and counts["segments_selected"] == 4
    assert counts["dropped_source_equals_reference"] == 1 and counts["segments"] == 2 and counts["documents"] == 2


def test_without_select_the_counts_are_as_before() -> None:
    table, counts = prepare_testset(_table(), max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False)
    assert "segments_selected" not in counts and list(counts)[:2] == ["segments_read", "empty_source"]
    assert len(table) == 5 and list(table.columns) == list(TABLE_COLUMNS)


def test_select_errors_name_the_table() -> None:
    with pytest.raises(InputError, match=r"test set t \(x\.tsv\): no segment has domain = 'sports'"):
        select_rows(_table(), {"domain": "sports"}, "test set t (x.tsv)")
    with pytest.raises(InputError, match=r"here: no column 'genre' to select on \(columns: segment_id, doc_id"):
        select_rows(_table(), {"genre": "news"}, "here")


def test_declared_values(manifest) -> None:
    assert declared_values(manifest.datasets["wmt22-general-defr"]) == {"domain": ("conversation", "ecommerce", "news", "social")}
    assert declared_values(manifest.datasets["wmt14-newstest2014-enfr"]) == {}
    assert declared_values(manifest.datasets["amazon-sentiment-acl"]) == {}  # reviews: not a test set


def test_plan_time_check_names_the_key(manifest) -> None:
    good = {
        "news": {"domain": "news", "dataset": "wmt22-general-defr", "select": {"domain": "news"}},
        "plain": {"domain": "news", "dataset": "wmt14-newstest2014-enfr"},
    }
    check_testset_selections(good, manifest)
    cases = [
        ({"dataset": "wmt22-general-defr", "select": {"domain": "foo"}},
         "testsets.t.select.domain: 'foo' is not a domain of dataset wmt22-general-defr "
         "(its domains: conversation, ecommerce, news, social)"),
        ({"dataset": "wmt22-general-defr", "select": {"genre": "news"}},
         "testsets.t.select.genre: unknown column 'genre' (a test set selects on: domain)"),
        ({"dataset": "wmt14-newstest2014-enfr", "select": {"domain": "news"}},
         "testsets.t.select.domain: dataset wmt14-newstest2014-enfr declares no domains (resources/datasets.yaml), "
         "so its rows cannot be selected by domain"),
        ({"source": "a.txt", "reference": "b.txt", "format": "plain", "select": {"domain": "news"}},
         "testsets.t.select: applies only to a test set with domains: a manifest dataset (testsets.t.dataset), a WMT XML "
         "file (testsets.t.file, format: wmt-xml) or plain files with a domain file (testsets.t.domain_file)"),
    ]
    for spec, message in cases:
        with pytest.raises(InputError) as caught:
            check_testset_selections({"t": {"domain": "x", **spec}}, manifest)
        assert str(caught.value) == message


@needs_mirror
def test_the_four_domains_of_wmt22_defr_partition_it_with_unique_ids(manifest) -> None:
    dataset = read_dataset(plan_dataset(manifest.datasets["wmt22-general-defr"], manifest, MIRROR, "unused"))
    sizes, ids = {}, []
    for domain in ("conversation", "ecommerce", "news", "social"):
        table, counts = prepare_testset(
            dataset, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False, select={"domain": domain}
        )
        sizes[domain] = counts["segments"]
        ids += table["segment_id"].tolist()
        # each row is the dataset's row of that id
        assert table.merge(dataset, on=list(TABLE_COLUMNS)).shape[0] == len(table)
    assert sizes == {"conversation": 462, "ecommerce": 501, "news": 506, "social": 515}
    assert sorted(ids, key=int) == [str(i) for i in range(1, 1985)]
