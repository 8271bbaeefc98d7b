"""Every seeded random choice of the package: generators, hash ranks and the nested samples drawn with them.

Two mechanisms, both stable across processes, machines and Python versions:

* **Generators** (:func:`rng_for`): a ``numpy.random.Generator`` (PCG64) determined by the config seed and
  string labels (method, left-out domain, family, function, test set, segment, side...). Bagging blocks,
  validation splits, perturbations, attacks and bootstrap replicates each draw from their own generator,
  so no result depends on another one or on the order of jobs.
* **Hash ranks** (:func:`hash_rank`): BLAKE2b-128 of the seed and labels joined by U+001F. An item's rank
  depends on nothing but its own labels, so "the ``n`` lowest ranks" is a sample that is *nested* (a larger
  ``n`` only adds items) and does not change when other items are added. The segment samples of the
  perturbation families (:func:`sample_segments`), the DARR segment samples of the metric study
  (:func:`sample_sids`) and the record order of the Natural Robustness score (:func:`record_order`) are
  all drawn this way.

This module sits at the lowest layer of the package (beside :mod:`.errors` and the :mod:`.fileio` package), so every
layer draws from it and none imports a higher one for a seed.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError

__all__ = [
    "RECORD_COLUMNS",
    "block_size",
    "check_sample_size",
    "hash_rank",
    "lowest_ranked",
    "record_order",
    "rng_for",
    "sample_records",
    "sample_segments",
    "sample_sids",
    "segment_rng",
]

#: Columns of the records table :func:`record_order` reads: the record id, its part (test set or review
#: domain) and its item (segment or review id).
RECORD_COLUMNS: tuple[str, ...] = ("record", "part", "item")


# ---- generators -----------------------------------------------------------------------------------------


def rng_for(seed: int, *labels: str) -> np.random.Generator:
    """A generator determined by the config seed and string labels (e.g. method name, left-out test set).

    The labels enter as the ``spawn_key`` of a ``SeedSequence`` through CRC-32 of their UTF-8 bytes, which is
    stable across processes and Python versions (unlike ``hash()``, which is salted per process), so every
    (seed, labels) combination gets its own reproducible, statistically independent stream.
    Raises ValueError for a negative or non-integer seed.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    spawn_key = tuple(zlib.crc32(label.encode("utf-8")) for label in labels)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=int(seed), spawn_key=spawn_key)))


def segment_rng(seed: int, family: str, function: str, testset: str, segment_id: str, side: str) -> np.random.Generator:
    """The generator of one perturbation function on one side of one segment: ``rng_for(seed, family,
    function, testset, segment_id, side)``, so a function's output on one segment never depends on any
    other segment, function or test set."""
    return rng_for(seed, family, function, testset, str(segment_id), side)


def block_size(n_items: int, fraction: float) -> int:
    """Size of a ``fraction`` of ``n_items`` items (a bagging block, a validation split): ``fraction *
    n_items`` rounded half up, clipped to 1..n_items (paper: fraction 0.6).

    The product is formed in decimal arithmetic on the shortest decimal form of ``fraction`` (the number as
    written in the config), so that an exact half such as 0.5 * 5 = 2.5 rounds up to 3 and is not spoiled by
    binary floating-point error. Raises ValueError for n_items < 1 or a fraction outside (0, 1].
    """
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 1:
        raise ValueError(f"n_items must be an integer >= 1, got {n_items!r}")
    if not (math.isfinite(fraction) and 0 < fraction <= 1):
        raise ValueError(f"fraction must lie in (0, 1], got {fraction!r}")
    rounded = (Decimal(repr(float(fraction))) * int(n_items)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return min(max(int(rounded), 1), int(n_items))


# ---- hash ranks and nested samples ----------------------------------------------------------------------


def hash_rank(seed: int, *labels: object) -> bytes:
    """The pseudo-random rank of the item named by ``labels`` under ``seed``: BLAKE2b-128 of the seed and
    the labels (as ``str``) joined by U+001F. The lowest ranks are sampled; ranks of different parts (test
    sets, pairs) are comparable, so the lowest ranks of several parts' samples are a seeded sample of their
    pool."""
    text = "\x1f".join([f"{seed}", *(f"{label}" for label in labels)])
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def lowest_ranked(ranks: Sequence[bytes], size: int) -> list[int]:
    """The positions of the ``size`` lowest of ``ranks``, ascending (equal ranks: the earlier position first)."""
    return sorted(sorted(range(len(ranks)), key=ranks.__getitem__)[:size])


def sample_segments(table: pd.DataFrame, sample_size: int | None, seed: int, group: str, testset: str) -> pd.DataFrame:
    """The rows of a test-set table a perturbation family perturbs: all of them, or a seeded sample of
    ``sample_size``.

    Each segment is ranked by ``hash_rank(seed, group, testset, segment_id)`` (``group``: the family's
    sample group) and the ``sample_size`` lowest ranks are kept, in test-set order. So the sample of one
    test set does not depend on any other, and samples are nested: raising ``sample_size`` only adds
    segments.
    """
    if sample_size is None or sample_size >= len(table):
        return table.reset_index(drop=True)
    ranks = [hash_rank(seed, group, testset, str(segment_id)) for segment_id in table["segment_id"]]
    return table.iloc[lowest_ranked(ranks, sample_size)].reset_index(drop=True)


def sample_sids(darr_pair: pd.DataFrame, sample_size: int | None, seed: int, pair: str) -> list[int]:
    """A seeded sample of ``sample_size`` distinct SIDs of one pair's DARR rows (None: all), sorted.

    Each SID is ranked by ``hash_rank(seed, pair, sid)`` and the lowest ranks are kept, so the sample is
    nested in ``sample_size`` and independent of other pairs.

    Raises:
        ValueError: ``darr_pair`` holds rows of another pair, or ``sample_size`` is negative.
    """
    if "pair" in darr_pair.columns and not (darr_pair["pair"] == pair).all():
        raise ValueError(f"sample_sids for {pair} was given DARR rows of other pairs")
    if sample_size is not None and sample_size < 0:
        raise ValueError(f"sample_size must be >= 0 or None, not {sample_size}")
    sids = sorted({int(sid) for sid in darr_pair["sid"]})
    if sample_size is None or sample_size >= len(sids):
        return sids
    return [sids[position] for position in lowest_ranked([hash_rank(seed, pair, sid) for sid in sids], sample_size)]


def record_order(records: pd.DataFrame, seed: int, group: str) -> list[str]:
    """The record ids sorted by their seeded rank ``hash_rank(seed, group, part, item)``, lowest first
    (equal ranks: by record id).

    ``records`` has the columns :data:`RECORD_COLUMNS`. The k-record sample is the first k ids of the
    order (:func:`sample_records`), so samples are nested, and a record's rank does not depend on the
    others; a record's rank is the one its segment has in the perturbation families' samples drawn under
    the same group (:func:`sample_segments`).
    Raises InputError for missing columns or a duplicated record id.
    """
    missing = [column for column in RECORD_COLUMNS if column not in records.columns]
    if missing:
        raise InputError(f"records: missing column(s) {', '.join(missing)}")
    duplicated = records["record"][records["record"].duplicated()]
    if len(duplicated):
        raise InputError(f"records: duplicated record id(s) {', '.join(map(str, duplicated.unique()[:5]))}")
    keyed = [
        (hash_rank(seed, group, str(part), str(item)), str(record))
        for record, part, item in zip(records["record"], records["part"], records["item"])
    ]
    return [record for _, record in sorted(keyed)]


def check_sample_size(size: object) -> None:
    """Raise InputError unless ``size`` is a positive integer or None (every record)."""
    if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1):
        raise InputError(f"sample size must be a positive integer or None (every record), got {size!r}")


def sample_records(order: Sequence[str], size: int | None) -> list[str]:
    """The first ``size`` records of ``order`` (None, or a size beyond the order: every record)."""
    check_sample_size(size)
    return list(order) if size is None else list(order[: int(size)])
