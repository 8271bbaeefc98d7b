"""The blocks of a study: drawn once over the unit keys of every pool, written to one file per study, read back
and re-applied by key.

Both bagging methods (bagging, Algorithm 5, Tables 3/4; design bagging, Algorithm 6, Tables 5/6;
:mod:`.bagging`) measure a pool (:mod:`.pools`) on blocks of its units. Blocks are drawn over a pool's unit keys
``(domain, unit_id)`` by :func:`draw_study_blocks`, written to one file per study (:func:`write_blocks`,
:func:`read_blocks`) and re-applied by key (:func:`block_positions`), so every row of a study (every system,
every metric) is measured on the same blocks and a reader can audit them.

Blocks need at least two units each and at least as many units in the pool as there are blocks: a pool too
small for them is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.sampling import block_size, rng_for
from nlp_robustness.statistics.bagging import BAGGING_METHODS, draw_blocks
from nlp_robustness.statistics.pools import pool_label, pool_units

__all__ = [
    "BLOCK_COLUMNS",
    "block_positions",
    "draw_study_blocks",
    "read_blocks",
    "write_blocks",
]

BLOCK_COLUMNS = ("method", "left_out", "block", "domain", "unit_id")


def _check_blocks_fit(n_units: int, size: int, n_blocks: int, where: str) -> None:
    if n_units < n_blocks or size < 2:
        raise InputError(
            f"{where}: the pool has {n_units} units, too few for {n_blocks} blocks of at least 2 units "
            f"(block size here: {size}); lower robustness.bagging.blocks, raise the fraction or keep more units"
        )


def draw_study_blocks(
    keys: pd.DataFrame,
    domains: Sequence[str],
    leave_out: Sequence[str],
    *,
    seed: int,
    namespace: Sequence[str],
    n_blocks: int,
    fraction: float,
    study: str = "study",
) -> pd.DataFrame:
    """The blocks of both bagging methods over every pool of a study, as one long table.

    ``keys`` has the study's unit keys (``domain, unit_id``); ``leave_out`` the pool labels
    (:func:`.pools.leave_out_labels`). The generator of a pool is seeded by (``seed``, ``namespace``, method,
    left-out label) only, so adding a domain or a system leaves the other pools' blocks alone.
    Returns columns :data:`BLOCK_COLUMNS`, blocks numbered from 1, units ascending in pool order.

    Raises:
        InputError: A pool is too small for the blocks (see the module docstring).
    """
    frames = []
    for method in BAGGING_METHODS:
        for left_out in leave_out:
            pool = pool_units(keys, domains, left_out, study)
            size = block_size(len(pool), fraction)
            _check_blocks_fit(len(pool), size, n_blocks, f"{study}, {pool_label(left_out)}, {method}")
            indices = draw_blocks(method, len(pool), fraction, n_blocks, rng_for(seed, *namespace, method, left_out))
            flat = indices.reshape(-1)
            frames.append(pd.DataFrame({
                "method": method,
                "left_out": left_out,
                "block": np.repeat(np.arange(1, n_blocks + 1), indices.shape[1]),
                "domain": pool["domain"].to_numpy()[flat],
                "unit_id": pool["unit_id"].to_numpy()[flat],
            }))
    return pd.concat(frames, ignore_index=True)[list(BLOCK_COLUMNS)]


#: Characters that make the CSV writer quote a field (tab: the separator), and NUL, which it may refuse.
_QUOTED = ("\t", '"', "\r", "\n", "\0")


def _run_starts(*columns: NDArray[Any]) -> NDArray[np.intp]:
    """Where each run of rows with the same values in every one of ``columns`` (equal lengths) begins; none for
    no rows."""
    rows = len(columns[0])
    changed = np.zeros(max(rows - 1, 0), dtype=bool)
    for values in columns:
        changed |= values[1:] != values[:-1]
    return np.flatnonzero(np.concatenate(([rows > 0], changed)))


def write_blocks(blocks: pd.DataFrame, handle: TextIO) -> None:
    """Write a block table (:func:`draw_study_blocks`) exactly as ``blocks.to_csv(handle, sep="\\t", index=False,
    lineterminator="\\n")`` writes it, byte for byte, several times faster: the rows of each block share their
    method, pool and block number, so a block is one ``join`` of its units' ``domain<TAB>unit_id`` (pandas' writer
    was most of a study_blocks job). A table it cannot vouch for (other columns or dtypes, missing values, text
    the CSV writer would quote) is written by ``to_csv`` itself."""
    text = _blocks_text(blocks)
    if text is None:
        blocks.to_csv(handle, sep="\t", index=False, lineterminator="\n")
    else:
        handle.write(text)


def _blocks_text(blocks: pd.DataFrame) -> str | None:
    """:func:`write_blocks`' text of ``blocks``, or None where ``to_csv`` must write it."""
    if tuple(blocks.columns) != BLOCK_COLUMNS or blocks["block"].dtype != np.int64:
        return None
    columns = {}
    for column in ("method", "left_out", "domain", "unit_id"):
        if not isinstance(blocks[column].dtype, pd.StringDtype):
            return None
        values = blocks[column].to_numpy(dtype=object)
        if any(not isinstance(value, str) or any(mark in value for mark in _QUOTED) for value in set(values)):
            return None
        columns[column] = values
    numbers = blocks["block"].to_numpy()
    methods, left_outs = columns["method"], columns["left_out"]
    starts = _run_starts(methods, left_outs, numbers)
    units = (columns["domain"] + "\t" + columns["unit_id"]).tolist()
    parts = ["\t".join(BLOCK_COLUMNS) + "\n"]
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(blocks)]):
        prefix = f"{methods[start]}\t{left_outs[start]}\t{numbers[start]}\t"
        parts.append(prefix + ("\n" + prefix).join(units[start:end]) + "\n")
    return "".join(parts)


def read_blocks(path: str) -> pd.DataFrame:
    """Read a block file written from :func:`draw_study_blocks`.

    Raises:
        InputError: The columns are not :data:`BLOCK_COLUMNS` (the path is named).
    """
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    if tuple(frame.columns) != BLOCK_COLUMNS:
        raise InputError(f"{path}: expected columns {list(BLOCK_COLUMNS)}, found {list(frame.columns)}")
    frame["block"] = frame["block"].astype(np.int64)
    return frame


def block_positions(blocks: pd.DataFrame, pool: pd.DataFrame, source: str = "blocks") -> NDArray[np.int64]:
    """Positions in ``pool`` (a :func:`.pools.pool_units` table) of the units of ``blocks`` (one method and pool);
    an ``(M, b)`` array, one block per row.

    Raises:
        InputError: A block unit is not in the pool, or blocks differ in size (``source`` names them).
    """
    fast = _block_positions_by_key(blocks, pool, source)
    if fast is not None:
        return fast
    positions = pool[["domain", "unit_id"]].reset_index(drop=True).reset_index(names="position")
    merged = blocks[["block", "domain", "unit_id"]].merge(positions, on=["domain", "unit_id"], how="left", sort=False)
    if merged["position"].isna().any():
        missing = merged.loc[merged["position"].isna(), ["domain", "unit_id"]].iloc[0]
        raise InputError(
            f"{source}: unit {missing['domain']}:{missing['unit_id']} is not in the pool "
            "(the blocks were drawn for other units; rerun the study_blocks rule)"
        )
    sizes = merged.groupby("block").size()
    if sizes.empty or sizes.nunique() != 1:
        raise InputError(f"{source}: no blocks, or blocks of different sizes {sorted(set(sizes))}")
    merged = merged.sort_values(["block"], kind="stable")
    return merged["position"].to_numpy(dtype=np.int64).reshape(len(sizes), int(sizes.iloc[0]))


def _block_positions_by_key(blocks: pd.DataFrame, pool: pd.DataFrame, source: str) -> NDArray[np.int64] | None:
    """:func:`block_positions` by a dictionary of the pool's keys instead of a merge (a large study looks blocks
    up dozens of times); None where the merge's answer could differ: key columns of other dtypes than the
    pool's, keys missing or repeated in the pool, blocks not numbered by integers. Same results, same errors."""
    keys = ("domain", "unit_id")
    if (any(blocks[key].dtype != pool[key].dtype or pool[key].isna().any() for key in keys)
            or blocks["block"].dtype.kind not in "iu"):
        return None
    lookup = dict(zip(zip(pool["domain"].to_numpy(), pool["unit_id"].to_numpy()), range(len(pool))))
    if len(lookup) != len(pool):  # a repeated key: the merge would give several rows
        return None
    domains, unit_ids = blocks["domain"].to_numpy(), blocks["unit_id"].to_numpy()
    try:
        found = np.fromiter(map(lookup.__getitem__, zip(domains, unit_ids)), dtype=np.int64, count=len(blocks))
    except KeyError:  # the first unit not in the pool, named as the merge's check names it
        first = next(index for index, key in enumerate(zip(domains, unit_ids)) if key not in lookup)
        raise InputError(
            f"{source}: unit {domains[first]}:{unit_ids[first]} is not in the pool "
            "(the blocks were drawn for other units; rerun the study_blocks rule)"
        ) from None
    numbers = blocks["block"].to_numpy()
    sizes = np.unique(numbers, return_counts=True)[1].tolist()  # by block number, as groupby counts them
    if not sizes or len(set(sizes)) != 1:
        raise InputError(f"{source}: no blocks, or blocks of different sizes {sorted(set(sizes))}")
    return found[np.argsort(numbers, kind="stable")].reshape(len(sizes), sizes[0])


def _blocks_by_pool(blocks: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """The rows of ``blocks`` of every (method, left-out label), in table order: one pass over the table instead
    of comparing its string columns once per pool and method (that was most of a large study's time).

    :func:`draw_study_blocks` writes every pool's blocks as one run of rows, so each key is a slice; a table
    where a key comes back after another (or has missing keys) is grouped in full instead.
    """
    if blocks.empty:
        return {}
    methods, left_outs = blocks["method"].to_numpy(), blocks["left_out"].to_numpy()
    starts = _run_starts(methods, left_outs)
    keys = [(methods[start], left_outs[start]) for start in starts]
    if len(set(keys)) == len(keys) and not pd.isna(np.array(keys, dtype=object)).any():
        ends = [*starts[1:], len(blocks)]
        return {key: blocks.iloc[start:end] for key, start, end in zip(keys, starts, ends)}
    groups = blocks.groupby(["method", "left_out"], sort=False).indices
    return {(method, left_out): blocks.take(rows) for (method, left_out), rows in groups.items()}
