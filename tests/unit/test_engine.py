"""The robustness engine: leave-one-out pools, blocks keyed by unit, both aggregations, too-small pools."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.sampling import rng_for
from nlp_robustness.statistics.bagging import draw_blocks
from nlp_robustness.statistics.blocks import (
    BLOCK_COLUMNS,
    block_positions,
    draw_study_blocks,
    write_blocks,
)
from nlp_robustness.statistics.engine import evaluate_study
from nlp_robustness.statistics.pools import (
    WHOLE_POOL,
    leave_out_labels,
    pool_label,
    pool_units,
    units_from_tables,
)
from nlp_robustness.statistics.study_design import units_in_domains

DOMAINS = ["a", "b", "c"]
UNITS = units_from_tables(
    {
        "a": pd.DataFrame({"segment_id": ["1", "2", "3"], "bleu": [0.0, 10.0, 20.0]}),
        "b": pd.DataFrame({"segment_id": ["1", "2"], "bleu": [30.0, 40.0]}),
        "c": pd.DataFrame({"segment_id": ["1"], "bleu": [50.0]}),
    },
    "segment_id",
    "bleu",
)


def block_table(method: str, left_out: str, blocks: list[list[tuple[str, str]]]) -> pd.DataFrame:
    rows = [(method, left_out, number, domain, unit) for number, block in enumerate(blocks, 1) for domain, unit in block]
    return pd.DataFrame(rows, columns=list(BLOCK_COLUMNS))


def test_labels_of_pools() -> None:
    assert leave_out_labels(["a", "b"]) == [WHOLE_POOL, "a", "b"]
    assert pool_label(WHOLE_POOL) == "whole pool" and pool_label("wmt14") == "without wmt14"


def test_pools_keep_domain_order_and_unit_order() -> None:
    pool = pool_units(UNITS, ["c", "a", "b"], "b")
    assert pool[["domain", "unit_id"]].values.tolist() == [["c", "1"], ["a", "1"], ["a", "2"], ["a", "3"]]
    with pytest.raises(InputError, match="study: domain d has no units"):
        pool_units(UNITS, ["a", "d"], WHOLE_POOL)


def test_block_positions_follow_the_keys_and_refuse_foreign_units() -> None:
    pool = pool_units(UNITS, DOMAINS, WHOLE_POOL)
    table = block_table("bagging", WHOLE_POOL, [[("a", "1"), ("b", "1"), ("c", "1")], [("a", "2"), ("a", "3"), ("b", "2")]])
    np.testing.assert_array_equal(block_positions(table, pool), [[0, 3, 5], [1, 2, 4]])
    foreign = block_table("bagging", WHOLE_POOL, [[("d", "1")]])
    with pytest.raises(InputError, match="blocks.tsv: unit d:1 is not in the pool"):
        block_positions(foreign, pool, source="blocks.tsv")


def test_block_files_are_what_to_csv_writes() -> None:
    """write_blocks writes a drawn table as to_csv does, byte for byte; text the CSV writer would quote (and an
    empty table) too."""
    keys = pd.DataFrame({"domain": np.repeat(["a", "b", "c"], 20), "unit_id": [f"s {i}" for i in range(60)]})
    drawn = draw_study_blocks(keys, DOMAINS, leave_out_labels(DOMAINS), seed=3, namespace=["t"], n_blocks=4, fraction=0.5)
    quoted = drawn.assign(unit_id=drawn["unit_id"].where(drawn.index != 5, 'say "hi"\tthere'))
    for table in (drawn, quoted, drawn.iloc[:0]):
        written, expected = io.StringIO(), io.StringIO()
        write_blocks(table, written)
        table.to_csv(expected, sep="\t", index=False, lineterminator="\n")
        assert written.getvalue() == expected.getvalue()


def test_unit_aggregation_by_hand() -> None:
    blocks = pd.concat([
        block_table("bagging", WHOLE_POOL, [[("a", "1"), ("a", "2")], [("b", "2"), ("c", "1")]]),
        block_table("design_bagging", WHOLE_POOL, [[("a", "1"), ("c", "1")], [("a", "2"), ("a", "3")]]),
        block_table("bagging", "b", [[("a", "1"), ("a", "2")], [("a", "3"), ("c", "1")]]),
        block_table("design_bagging", "b", [[("a", "2"), ("a", "3")], [("a", "1"), ("c", "1")]]),
    ])
    result = evaluate_study(UNITS, DOMAINS, [WHOLE_POOL, "b"], blocks, np.array([5.0, 25.0]), units_in_domains())
    summary = result.summary.set_index(["left_out", "method"])
    # whole pool 0..50 step 10: mean 25, population variance 291.67
    assert summary.loc[(WHOLE_POOL, "pool"), "mean"] == pytest.approx(25.0)
    assert summary.loc[(WHOLE_POOL, "pool"), "variance"] == pytest.approx(1750 / 6)
    assert summary.loc[(WHOLE_POOL, "pool"), "cov"] == pytest.approx(np.sqrt(1750 / 6) / 25)
    assert summary.loc[(WHOLE_POOL, "pool"), ["domains", "units", "blocks", "block_size"]].tolist() == [3, 6, 1, 6]
    # without b: 0, 10, 20, 50 -> mean 20, variance 350
    assert summary.loc[("b", "pool"), "mean"] == pytest.approx(20.0)
    assert summary.loc[("b", "pool"), "variance"] == pytest.approx(350.0)
    # bagging over {0, 10} and {40, 50}: block means 5, 45 -> 25; block variances 25, 25 -> 25; COV from the averages
    assert summary.loc[(WHOLE_POOL, "bagging"), "mean"] == pytest.approx(25.0)
    assert summary.loc[(WHOLE_POOL, "bagging"), "variance"] == pytest.approx(25.0)
    assert summary.loc[(WHOLE_POOL, "bagging"), "cov"] == pytest.approx(5 / 25)
    # design bagging without b: {10, 20} and {0, 50}: means 15, 25 -> 20; variances 25, 625 -> 325
    assert summary.loc[("b", "design_bagging"), "mean"] == pytest.approx(20.0)
    assert summary.loc[("b", "design_bagging"), "variance"] == pytest.approx(325.0)
    assert summary.loc[("b", "design_bagging"), "block_size"] == 2
    whole = result.gamma[(result.gamma["left_out"] == WHOLE_POOL) & (result.gamma["method"] == "pool")].set_index("epsilon")
    # |x - 25| = 25, 15, 5, 5, 15, 25; sample variance 350. eps=5: Pr[|x-mu|<5] = 0 -> gamma = 25/350
    assert whole.at[5.0, "gamma"] == pytest.approx(25 / 350)
    # eps=25: 4 of 6 strictly inside -> (1 - 4/6) * 625 / 350
    assert whole.at[25.0, "gamma"] == pytest.approx((2 / 6) * 625 / 350)
    assert whole["sigma"].iloc[0] == pytest.approx(np.sqrt(350))
    assert result.block_scores.empty


def test_domain_aggregation_scores_domain_means_of_each_block() -> None:
    # reviews: a has 3 (2 right), b has 2 (1 right), c has 1 (right); scores 100 / 0
    reviews = units_from_tables(
        {"a": pd.DataFrame({"id": ["1", "2", "3"], "s": [100.0, 100.0, 0.0]}),
         "b": pd.DataFrame({"id": ["1", "2"], "s": [100.0, 0.0]}),
         "c": pd.DataFrame({"id": ["1"], "s": [100.0]})},
        "id", "s",
    )
    blocks = pd.concat([
        block_table(method, WHOLE_POOL, [[("a", "1"), ("a", "3"), ("b", "1")], [("a", "2"), ("b", "2"), ("c", "1")]])
        for method in ("bagging", "design_bagging")
    ])
    result = evaluate_study(reviews, DOMAINS, [WHOLE_POOL], blocks, np.array([10.0]), units_in_domains(), aggregation="domain")
    summary = result.summary.set_index("method")
    # whole pool: accuracies 66.67, 50, 100
    assert summary.at["pool", "mean"] == pytest.approx((200 / 3 + 50 + 100) / 3)
    assert summary.loc["pool", ["domains", "units"]].tolist() == [3, 6]
    # block 1: a 50, b 100 -> mean 75, variance 625; block 2: a 100, b 0, c 100 -> mean 66.67, variance 2222.2
    assert summary.at["bagging", "mean"] == pytest.approx((75 + 200 / 3) / 2)
    assert summary.at["bagging", "variance"] == pytest.approx((625 + 20000 / 9) / 2)
    first = result.block_scores[(result.block_scores["method"] == "bagging") & (result.block_scores["block"] == 1)]
    assert first[["domain", "units", "score"]].values.tolist() == [["a", 2, 50.0], ["b", 1, 100.0]]


def test_too_small_pools_are_errors_never_perfect_scores() -> None:
    single = units_from_tables({"a": pd.DataFrame({"id": ["1", "2"], "s": [1.0, 2.0]}),
                                "b": pd.DataFrame({"id": ["1"], "s": [3.0]})}, "id", "s")
    with pytest.raises(InputError, match=r"without a: the pool gives 1 value\(s\)"):
        evaluate_study(single, ["a", "b"], ["a"], pd.DataFrame(columns=list(BLOCK_COLUMNS)), np.array([1.0]), units_in_domains())
    keys = single[["domain", "unit_id"]]
    with pytest.raises(InputError, match="the pool has 3 units, too few for 30 blocks"):
        draw_study_blocks(keys, ["a", "b"], [WHOLE_POOL], seed=0, namespace=[], n_blocks=30, fraction=0.6)
    with pytest.raises(InputError, match="block size here: 1"):
        draw_study_blocks(keys, ["a", "b"], [WHOLE_POOL], seed=0, namespace=[], n_blocks=2, fraction=0.3)


def test_study_blocks_are_the_seeded_draws_of_each_pool() -> None:
    keys = UNITS[["domain", "unit_id"]]
    blocks = draw_study_blocks(keys, DOMAINS, [WHOLE_POOL, "c"], seed=7, namespace=["human"], n_blocks=3, fraction=0.6)
    assert list(blocks.columns) == list(BLOCK_COLUMNS)
    for method in ("bagging", "design_bagging"):
        for left_out in (WHOLE_POOL, "c"):
            pool = pool_units(keys, DOMAINS, left_out)
            expected = draw_blocks(method, len(pool), 0.6, 3, rng_for(7, "human", method, left_out))
            selected = blocks[(blocks["method"] == method) & (blocks["left_out"] == left_out)]
            np.testing.assert_array_equal(block_positions(selected, pool), expected)
    again = draw_study_blocks(keys, DOMAINS, [WHOLE_POOL, "c"], seed=7, namespace=["human"], n_blocks=3, fraction=0.6)
    pd.testing.assert_frame_equal(blocks, again)
    # a pool's blocks do not depend on which other pools are drawn
    only_c = draw_study_blocks(keys, DOMAINS, ["c"], seed=7, namespace=["human"], n_blocks=3, fraction=0.6)
    pd.testing.assert_frame_equal(only_c, blocks[blocks["left_out"] == "c"].reset_index(drop=True))
