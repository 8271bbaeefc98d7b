"""Assemble leave-one-out pools of sentence scores and compute Metrics I-III on each.

A *pool* is the concatenation, in config order, of the sentence scores of every test set except the
one left out (``none`` leaves nothing out). Segments are addressed by ``(testset, segment_id)`` so that
block files written by the ``bagging_blocks`` rule can be audited and re-applied to any system: all
systems are measured on the same blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlp_robustness.statistics.bagging import bagged_statistics
from nlp_robustness.errors import InputError
from nlp_robustness.statistics.robustness_metrics import gamma_curve, summarize

BLOCK_COLUMNS = ["block", "testset", "segment_id"]


def pool_keys(segment_ids: Mapping[str, Sequence[str]], testsets: Sequence[str]) -> pd.DataFrame:
    """Keys ``(testset, segment_id)`` of the pool formed by ``testsets``, in pool order."""
    frames = [
        pd.DataFrame({"testset": name, "segment_id": pd.Series(segment_ids[name], dtype=str)}) for name in testsets
    ]
    if not frames:
        raise InputError("the pool is empty: no test set remains")
    return pd.concat(frames, ignore_index=True)


def blocks_frame(block_indices: np.ndarray, keys: pd.DataFrame) -> pd.DataFrame:
    """Long table ``block, testset, segment_id`` of an ``(M, b)`` array of pool positions."""
    n_blocks, block_size = block_indices.shape
    flat = block_indices.reshape(-1)
    return pd.DataFrame(
        {
            "block": np.repeat(np.arange(1, n_blocks + 1), block_size),
            "testset": keys["testset"].to_numpy()[flat],
            "segment_id": keys["segment_id"].to_numpy()[flat],
        }
    )


def read_blocks(path: str | Path) -> pd.DataFrame:
    """Read a block file written by :func:`blocks_frame`."""
    frame = pd.read_csv(path, sep="\t", dtype={"block": int, "testset": str, "segment_id": str}, keep_default_na=False)
    if list(frame.columns) != BLOCK_COLUMNS:
        raise InputError(f"{path}: expected columns {BLOCK_COLUMNS}, found {list(frame.columns)}")
    return frame


def block_indices_in_pool(blocks: pd.DataFrame, keys: pd.DataFrame, source: str = "blocks") -> np.ndarray:
    """Map a block table onto positions in the pool given by ``keys``; returns an ``(M, b)`` array."""
    positions = keys.reset_index(drop=True).reset_index(names="position")
    merged = blocks.merge(positions, on=["testset", "segment_id"], how="left", sort=False)
    if merged["position"].isna().any():
        missing = merged.loc[merged["position"].isna(), ["testset", "segment_id"]].iloc[0]
        raise InputError(
            f"{source}: segment {missing['testset']}:{missing['segment_id']} is not in the pool "
            "(blocks were drawn for other test sets; rerun the bagging_blocks rule)"
        )
    sizes = merged.groupby("block").size()
    if sizes.nunique() != 1:
        raise InputError(f"{source}: blocks have different sizes {sorted(set(sizes))}")
    merged = merged.sort_values(["block"], kind="stable")
    return merged["position"].to_numpy(dtype=np.int64).reshape(len(sizes), int(sizes.iloc[0]))


def evaluate_pools(
    scores: Mapping[str, pd.DataFrame],
    testsets: Sequence[str],
    leave_out: Sequence[str],
    blocks: Mapping[tuple[str, str], pd.DataFrame],
    epsilons: np.ndarray,
    score_column: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Metrics I-III of one system for every leave-one-out pool and every method.

    ``scores`` maps test set -> table with ``segment_id`` and ``score_column``; ``blocks`` maps
    ``(method, left_out)`` -> block table for ``bagging`` and ``design_bagging``. Returns the summary
    table (``left_out, method, segments, blocks, block_size, mean, variance, cov``) and the gamma table
    (``left_out, method, epsilon, gamma, sigma``) where ``sigma`` is the sample standard deviation of the
    pool that the no-sampling gamma curve is scaled by (empty for the bagged curves, whose sigma varies
    per block).
    """
    summary_rows: list[dict[str, object]] = []
    gamma_frames: list[pd.DataFrame] = []
    for left_out in leave_out:
        members = [name for name in testsets if name != left_out]
        keys = pool_keys({name: scores[name]["segment_id"].tolist() for name in members}, members)
        pool = np.concatenate([scores[name][score_column].to_numpy(dtype=float) for name in members])

        summary = summarize(pool)
        sigma = float(np.std(pool, ddof=1)) if pool.size > 1 else 0.0
        summary_rows.append(
            {"left_out": left_out, "method": "pool", "segments": pool.size, "blocks": 1, "block_size": pool.size,
             "mean": summary.mean, "variance": summary.variance, "cov": summary.cov}
        )
        gamma_frames.append(
            pd.DataFrame({"left_out": left_out, "method": "pool", "epsilon": epsilons,
                          "gamma": gamma_curve(pool, epsilons), "sigma": sigma})
        )
        for method in ("bagging", "design_bagging"):
            block_table = blocks[(method, left_out)]
            indices = block_indices_in_pool(block_table, keys, source=f"blocks of {method}, left out {left_out}")
            bagged = bagged_statistics(pool, indices, epsilons)
            summary_rows.append(
                {"left_out": left_out, "method": method, "segments": pool.size, "blocks": indices.shape[0],
                 "block_size": indices.shape[1], "mean": bagged.mean, "variance": bagged.variance, "cov": bagged.cov}
            )
            gamma_frames.append(
                pd.DataFrame({"left_out": left_out, "method": method, "epsilon": epsilons,
                              "gamma": bagged.gamma, "sigma": np.nan})
            )
    return pd.DataFrame(summary_rows), pd.concat(gamma_frames, ignore_index=True)


__all__ = [
    "BLOCK_COLUMNS",
    "pool_keys",
    "blocks_frame",
    "read_blocks",
    "block_indices_in_pool",
    "evaluate_pools",
]
