"""Leave-one-out pools and the mapping of audited block files back onto pools."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.engine import block_indices_in_pool, blocks_frame, evaluate_pools, pool_keys


def scores_frame(values: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"segment_id": [str(i + 1) for i in range(len(values))], "bleu": values})


SCORES = {"a": scores_frame([0.0, 10.0, 20.0]), "b": scores_frame([30.0, 40.0]), "c": scores_frame([50.0])}


def test_blocks_round_trip_through_their_table() -> None:
    keys = pool_keys({name: frame["segment_id"].tolist() for name, frame in SCORES.items()}, ["a", "b", "c"])
    indices = np.array([[0, 3, 5], [1, 2, 4]])
    table = blocks_frame(indices, keys)
    assert table.iloc[1].tolist() == [1, "b", "1"] and table.iloc[5].tolist() == [2, "b", "2"]
    np.testing.assert_array_equal(block_indices_in_pool(table, keys), indices)


def test_blocks_of_another_pool_are_refused() -> None:
    keys = pool_keys({"a": ["1", "2"]}, ["a"])
    table = pd.DataFrame({"block": [1], "testset": ["b"], "segment_id": ["1"]})
    with pytest.raises(InputError, match="segment b:1 is not in the pool"):
        block_indices_in_pool(table, keys, source="blocks.tsv")


def test_leave_one_out_pools_by_hand() -> None:
    keys_without_b = pool_keys({"a": ["1", "2", "3"], "c": ["1"]}, ["a", "c"])
    keys_all = pool_keys({name: frame["segment_id"].tolist() for name, frame in SCORES.items()}, ["a", "b", "c"])
    blocks = {
        ("bagging", "none"): blocks_frame(np.array([[0, 1], [4, 5]]), keys_all),
        ("design_bagging", "none"): blocks_frame(np.array([[0, 5], [1, 2]]), keys_all),
        ("bagging", "b"): blocks_frame(np.array([[0, 3]]), keys_without_b),
        ("design_bagging", "b"): blocks_frame(np.array([[1, 2]]), keys_without_b),
    }
    summary, gamma = evaluate_pools(SCORES, ["a", "b", "c"], ["none", "b"], blocks, np.array([5.0, 25.0]), "bleu")
    summary = summary.set_index(["left_out", "method"])
    # whole pool 0..50 step 10: mean 25, population variance 291.67
    assert summary.loc[("none", "pool"), "mean"] == pytest.approx(25.0)
    assert summary.loc[("none", "pool"), "variance"] == pytest.approx(1750 / 6)
    assert summary.loc[("none", "pool"), "cov"] == pytest.approx(np.sqrt(1750 / 6) / 25)
    # without b: 0, 10, 20, 50 -> mean 20, variance 350
    assert summary.loc[("b", "pool"), "mean"] == pytest.approx(20.0)
    assert summary.loc[("b", "pool"), "variance"] == pytest.approx(350.0)
    # bagging over {0, 10} and {40, 50}: block means 5, 45 -> 25; block variances 25, 25 -> 25
    assert summary.loc[("none", "bagging"), "mean"] == pytest.approx(25.0)
    assert summary.loc[("none", "bagging"), "variance"] == pytest.approx(25.0)
    assert summary.loc[("none", "bagging"), "cov"] == pytest.approx(5 / 25)
    # design bagging without b: one block {10, 20}
    assert summary.loc[("b", "design_bagging"), "mean"] == pytest.approx(15.0)
    assert summary.loc[("b", "design_bagging"), "block_size"] == 2
    whole = gamma[(gamma["left_out"] == "none") & (gamma["method"] == "pool")].set_index("epsilon")
    # |x - 25| = 25, 15, 5, 5, 15, 25; sample variance 350. eps=5: Pr[|x-mu|<5] = 0 -> gamma = 25/350
    assert whole.at[5.0, "gamma"] == pytest.approx(25 / 350)
    # eps=25: 4 of 6 strictly inside -> (1 - 4/6) * 625 / 350
    assert whole.at[25.0, "gamma"] == pytest.approx((2 / 6) * 625 / 350)
    assert whole["sigma"].iloc[0] == pytest.approx(np.sqrt(350))
