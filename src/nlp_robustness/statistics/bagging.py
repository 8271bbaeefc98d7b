"""Bagging (Algorithm 5) and design bagging (Algorithm 6): blocks of a test pool and bagged robustness metrics.

A *block* is a set of ``b`` distinct pool indices; ``M`` blocks are drawn, the metrics of :mod:`.metrics`
are computed on every block and averaged over the blocks (the paper: 30 blocks of 60 % of the pool).

Blocks are returned as an ``(M, b)`` int64 array, one block per row, each row sorted ascending. The fast
functions are what the workflow uses; the ``*_literal`` functions transcribe Algorithms 5 and 6 step by step
with Python sets and lists, as the reference for the tests and for the speed-up reported by the benchmark.
All randomness comes from the ``numpy.random.Generator`` passed in, so a seed fixes the blocks; the block
size and the seeded generators come from :mod:`nlp_robustness.sampling` (:func:`~nlp_robustness.sampling.block_size`,
:func:`~nlp_robustness.sampling.rng_for`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.sampling import block_size
from nlp_robustness.statistics.robustness_metrics import cov_from_moments, gamma_curve, summarize

__all__ = [
    "BAGGING_METHODS",
    "BaggedStatistics",
    "average_over_blocks",
    "bagged_statistics",
    "bagging_blocks",
    "bagging_blocks_literal",
    "design_bagging_blocks",
    "design_bagging_blocks_literal",
    "draw_blocks",
]


#: The sampling methods: Algorithm 5 (bagging) and Algorithm 6 (design bagging). The engine adds the whole pool.
BAGGING_METHODS = ("bagging", "design_bagging")


def _check_design(n_items: int, block_size: int, n_blocks: int) -> None:
    """Raise ValueError unless 1 <= block_size <= n_items and n_blocks >= 1."""
    if n_items < 1 or n_blocks < 1 or not 1 <= block_size <= n_items:
        raise ValueError(
            "need n_items >= 1, 1 <= block_size <= n_items and n_blocks >= 1, "
            f"got n_items={n_items}, block_size={block_size}, n_blocks={n_blocks}"
        )


def bagging_blocks(n_items: int, block_size: int, n_blocks: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Algorithm 5 (bagging): ``n_blocks`` independent uniformly random subsets of ``block_size`` pool indices.

    Algorithm 5 fills, in turn, a random block among those with the fewest members with an element drawn
    uniformly from the elements not yet in it. What a block receives depends only on its own earlier draws:
    given its current members, its next member is uniform over the rest, whichever block was served before.
    So each block is built by sequential sampling without replacement, which makes it a uniform random
    b-subset, and the blocks are independent of each other; the interleaving of the blocks is irrelevant.
    That distribution is drawn here directly, one ``rng.choice(..., replace=False)`` per block.

    Returns an int64 array of shape (n_blocks, block_size), each row sorted ascending.
    Raises ValueError unless 1 <= block_size <= n_items and n_blocks >= 1.
    """
    _check_design(n_items, block_size, n_blocks)
    blocks = np.empty((n_blocks, block_size), dtype=np.int64)
    member = np.empty(n_items, dtype=bool)
    for row in blocks:
        member.fill(False)
        member[rng.choice(n_items, size=block_size, replace=False)] = True
        row[:] = np.flatnonzero(member)  # ascending, no sort needed
    return blocks


def _round_permutations(
    head: NDArray[np.int64], limit: NDArray[np.int64], n_blocks: int, rng: np.random.Generator
) -> NDArray[np.integer]:
    """One Fisher-Yates shuffle of 0..M-1 per round, vectorised over rounds; returns shape (rounds, M).

    Round k's permutation sigma is uniform among those whose first ``head[k]`` entries lie below
    ``limit[k]``: while i < head[k] the swap partner is drawn from [i, limit[k]) (there sit exactly the
    values < limit[k] not used yet), afterwards from [i, M) as in the plain shuffle. head[k] = 0 gives a
    uniform permutation. head[k] <= limit[k] is guaranteed by the caller.
    """
    rounds = head.size
    slots = np.tile(np.arange(n_blocks, dtype=np.min_scalar_type(n_blocks - 1))[:, None], (1, rounds))
    flat = slots.reshape(-1)
    column = np.arange(rounds)
    for i in range(n_blocks - 1):
        partner = rng.integers(i, np.where(i < head, limit, n_blocks))
        where = partner * rounds + column
        current = slots[i].copy()
        slots[i] = flat[where]
        flat[where] = current
    return np.ascontiguousarray(slots.T)


_CHUNK = 32  # rounds per chunk of the two-level prefix scan in _compose_within_segments


def _compose_rows(table: NDArray[np.integer], table_rows: NDArray[np.intp], right: NDArray[np.integer]) -> NDArray:
    """Row-wise composition table[table_rows[i]][right[i]] (i.e. f[g] for each pair of rows f, g)."""
    n_slots = table.shape[1]
    return table.reshape(-1)[(table_rows * n_slots)[:, None] + right]


def _compose_within_segments(factors: NDArray[np.integer], restart: NDArray[np.bool_]) -> None:
    """In place, replace row k of ``factors`` by factors[k-1][factors[k]] for every k not flagged ``restart``.

    That is, sequentially, perm_k = perm_{k-1}[sigma_k], and perm_k = sigma_k where a new chain begins
    (``restart[0]`` must be True). A chain is a product of permutations under (f o g)[i] = f[g[i]], which
    is associative, so the sequential recurrence is evaluated as a two-level (chunked) prefix scan:

    1. within every chunk of _CHUNK rounds, the recurrence runs position by position, for all chunks at
       once; row k then holds the product from the start of its chain or of its chunk, whichever is later;
    2. the chunks' last rows form the same problem, _CHUNK times smaller (a chunk restarts when its last
       row's chain began inside it), solved recursively: each then holds its complete product;
    3. a row whose chain began before its chunk is composed with the complete product of the previous
       chunk's last row, which lies in the same chain.

    Work is O(rounds * M) at every chain length; there are about _CHUNK * log_CHUNK(rounds) numpy steps.
    """
    rounds = factors.shape[0]
    index = np.arange(rounds)
    for position in range(1, min(_CHUNK, rounds)):
        rows = index[position::_CHUNK]
        rows = rows[~restart[rows]]
        factors[rows] = _compose_rows(factors, rows - 1, factors[rows])
    if rounds <= _CHUNK:
        return
    chain_start = np.maximum.accumulate(np.where(restart, index, 0))
    carried = chain_start < index - index % _CHUNK
    last_rows = np.minimum(index[::_CHUNK] + _CHUNK - 1, rounds - 1)
    chunk_products = factors[last_rows]
    _compose_within_segments(chunk_products, ~carried[last_rows])
    rows = np.flatnonzero(carried)
    factors[rows] = _compose_rows(chunk_products, rows // _CHUNK - 1, factors[rows])


def design_bagging_blocks(
    n_items: int, block_size: int, n_blocks: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Algorithm 6 (design bagging), fast: blocks with exactly balanced element frequencies.

    Guaranteed, as by Algorithm 6 (which fills the smallest block with one of the least used elements
    not in it): every block has exactly b distinct members; every element occurs in q = floor(bM/N) or
    q + 1 blocks (exactly r = bM mod N elements in q + 1), so frequencies differ by at most 1 and every
    element is used once b*M >= N. The same generator state gives the same blocks.

    Construction (Algorithm 6 taken literally is quadratic in N):

    1. r uniformly chosen elements get q + 1 copies, the others q (q <= M; q = M only if b = N, r = 0).
    2. The copies are laid out element by element, in a uniformly random order of the elements, as a
       sequence of length b*M, which is dealt in b rounds of M positions. Like the literal algorithm's
       smallest-block-first rule, every round gives each block exactly one position, through a
       permutation perm_k of the blocks (slot j of round k goes to block perm_k[j]), so every block gets
       exactly b positions.
    3. An element's copies are contiguous and at most M long, so they lie in one round (distinct slots,
       hence distinct blocks) or straddle two consecutive rounds: t copies in the last slots M-t..M-1 of
       round k and h copies in the first slots 0..h-1 of round k+1, with h + t <= M. Writing
       perm_{k+1} = perm_k[sigma_{k+1}] with sigma_{k+1} uniform among permutations whose first h entries
       lie below M - t gives the head the blocks of perm_k's slots 0..M-t-1, which are not the tail's
       blocks; so every element's copies land in distinct blocks and each block's b members are distinct.
       Given perm_k, perm_{k+1} is then uniform among all permutations that keep the straddling element
       out of the blocks it already has. Where no element straddles (and in round 0) perm is a fresh
       uniform permutation, which also restarts the chain of compositions.
    4. The sigmas are independent, so all are drawn at once (:func:`_round_permutations`) and composed
       within each chain by a chunked parallel prefix scan (:func:`_compose_within_segments`).

    The blocks are therefore exactly as balanced as Algorithm 6 makes them and random (uniform element
    order, uniform choice of the elements with an extra copy, uniform block permutations subject only to
    the distinctness constraint), but their sampling distribution is *not* identical to that of the
    literal sequential algorithm: here an element's copies go to consecutive rounds, whereas Algorithm 6
    hands out copies in waves of increasing frequency. Only the design properties above are shared.

    Returns an int64 array of shape (n_blocks, block_size), each row sorted ascending.
    Raises ValueError unless 1 <= block_size <= n_items and n_blocks >= 1.
    """
    _check_design(n_items, block_size, n_blocks)
    copies, extra = divmod(block_size * n_blocks, n_items)
    counts = np.full(n_items, copies, dtype=np.int64)
    counts[rng.choice(n_items, size=extra, replace=False)] += 1
    layout = rng.permutation(n_items)
    ends = np.cumsum(counts[layout])
    starts = ends - counts[layout]

    # The element (if any) crossing the boundary before round k: head[k] copies in round k, the other
    # (M - limit[k]) copies at the end of round k - 1.
    boundary = (starts // n_blocks + 1) * n_blocks
    straddles = boundary < ends
    later_round = boundary[straddles] // n_blocks
    head = np.zeros(block_size, dtype=np.int64)
    limit = np.full(block_size, n_blocks, dtype=np.int64)
    head[later_round] = ends[straddles] - boundary[straddles]
    limit[later_round] = n_blocks - (boundary[straddles] - starts[straddles])

    perms = _round_permutations(head, limit, n_blocks, rng)
    _compose_within_segments(perms, restart=head == 0)
    block_at = perms.reshape(-1)  # block of every sequence position (round-major)

    # Mark membership copy by copy, element-major, so the writes stream through the M rows.
    first_position = np.empty(n_items, dtype=np.int64)
    first_position[layout] = starts
    member = np.zeros((n_blocks, n_items), dtype=bool)
    elements = np.arange(n_items)
    for copy in range(copies):
        member[block_at[first_position + copy], elements] = True
    with_extra = np.flatnonzero(counts > copies)
    member[block_at[first_position[with_extra] + copies], with_extra] = True

    blocks = np.flatnonzero(member).reshape(n_blocks, block_size)  # row-major: ascending within each block
    blocks -= (np.arange(n_blocks, dtype=np.int64) * n_items)[:, None]
    return blocks


def draw_blocks(method: str, n_items: int, fraction: float, n_blocks: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``n_blocks`` blocks of ``block_size(n_items, fraction)`` pool indices by ``method``: ``bagging``
    (Algorithm 5, :func:`bagging_blocks`) or ``design_bagging`` (Algorithm 6, :func:`design_bagging_blocks`).

    Raises ValueError for another method (and as the block functions do).
    """
    draw = dict(zip(BAGGING_METHODS, (bagging_blocks, design_bagging_blocks))).get(method)
    if draw is None:
        raise ValueError(f"method must be bagging or design_bagging, got {method!r}")
    return draw(n_items, block_size(n_items, fraction), n_blocks, rng)


def _random_smallest_block(blocks: list[set[int]], rng: np.random.Generator) -> set[int]:
    """Algorithm 5/6: "choose L at random from the set of blocks with current min number of elements"."""
    smallest = min(len(block) for block in blocks)
    candidates = [block for block in blocks if len(block) == smallest]
    return candidates[rng.integers(len(candidates))]


def _as_array(blocks: list[set[int]]) -> NDArray[np.int64]:
    """Blocks as an (M, b) int64 array with sorted rows."""
    return np.array([sorted(block) for block in blocks], dtype=np.int64)


def bagging_blocks_literal(
    n_items: int, block_size: int, n_blocks: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Algorithm 5 transcribed step by step (reference for tests; O(b M N)).

    For b*M steps, a random smallest block L receives an element drawn uniformly from the universe minus L.
    Same output format as :func:`bagging_blocks`.
    """
    _check_design(n_items, block_size, n_blocks)
    blocks: list[set[int]] = [set() for _ in range(n_blocks)]
    for _ in range(block_size * n_blocks):
        target = _random_smallest_block(blocks, rng)
        outside = [element for element in range(n_items) if element not in target]
        target.add(outside[rng.integers(len(outside))])
    return _as_array(blocks)


def design_bagging_blocks_literal(
    n_items: int, block_size: int, n_blocks: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Algorithm 6 transcribed step by step (reference for tests and the benchmark; O(b M N)).

    For b*M steps, a random smallest block L receives an element drawn uniformly from those not in L
    that appear least frequently, read as: the minimum frequency *among the elements not in L*. Elements
    are kept in sets by their current frequency, scanned from the lowest. Same output format as
    :func:`design_bagging_blocks`.

    Every element is used once b*M >= N (while an element is unused, it is a least used element outside
    any block, so it is taken first), but frequencies are *not* always within 1 of each other: when all
    least used elements are already in L a more used one is taken, e.g. N=3, b=2, M=3 can end with
    frequencies 1, 2, 3, and spreads of 3 occur for b close to N with many blocks.
    """
    _check_design(n_items, block_size, n_blocks)
    blocks: list[set[int]] = [set() for _ in range(n_blocks)]
    by_frequency: list[set[int]] = [set(range(n_items))] + [set() for _ in range(n_blocks)]
    for _ in range(block_size * n_blocks):
        target = _random_smallest_block(blocks, rng)
        for frequency, level in enumerate(by_frequency):
            least_used = sorted(level - target)
            if least_used:
                break
        element = least_used[rng.integers(len(least_used))]
        target.add(element)
        level.remove(element)
        by_frequency[frequency + 1].add(element)
    return _as_array(blocks)


@dataclass(frozen=True)
class BaggedStatistics:
    """Metrics averaged over blocks, AV(T) = 1/M sum_m R(B_m), plus the per-block values behind them.

    ``cov`` is sqrt(variance) / mean of the *averaged* moments (see :func:`bagged_statistics`); ``gamma`` is the
    block-averaged gamma curve on the epsilon grid passed in, ``block_gamma`` every block's curve (M, G).
    """

    mean: float
    variance: float
    cov: float
    gamma: NDArray[np.float64]
    block_means: NDArray[np.float64]
    block_variances: NDArray[np.float64]
    block_gamma: NDArray[np.float64]


def average_over_blocks(samples: Sequence[ArrayLike], epsilons: ArrayLike) -> BaggedStatistics:
    """Mean, Metric I and Metric III of every block's sample, averaged over the blocks (Algorithms 5/6, last lines).

    R(B_m) is computed by :func:`.robustness_metrics.summarize` (mean, population variance) and
    :func:`.robustness_metrics.gamma_curve` on ``samples[m]``; AV(T) = 1/M sum_m R(B_m). The coefficient of
    variation is *not* the average of block coefficients: as the paper states for Tables 3 and 5 ("We
    calculate the mean and variance of each of the bootstrap and finally average values of these measures
    to calculate the coefficient of variation") it is cov_from_moments(average mean, average variance).

    A block's sample is what the study makes of its units: their scores, or one score per domain (the
    samples may then differ in length). Raises ValueError for no samples or invalid scores or epsilons.
    """
    if len(samples) == 0:
        raise ValueError("need at least one block")
    summaries = [summarize(sample) for sample in samples]
    block_means = np.array([summary.mean for summary in summaries])
    block_variances = np.array([summary.variance for summary in summaries])
    block_gamma = np.array([gamma_curve(sample, epsilons) for sample in samples])
    gamma = block_gamma.mean(axis=0)
    mean = float(block_means.mean())
    variance = float(block_variances.mean())
    return BaggedStatistics(
        mean=mean,
        variance=variance,
        cov=cov_from_moments(mean, variance),
        gamma=gamma,
        block_means=block_means,
        block_variances=block_variances,
        block_gamma=block_gamma,
    )


def bagged_statistics(scores: ArrayLike, blocks: ArrayLike, epsilons: ArrayLike) -> BaggedStatistics:
    """:func:`average_over_blocks` of the unit scores in each block: ``blocks`` is an integer array of shape
    (M, b) of indices into ``scores`` (rows as returned by the block functions of this module).

    Raises ValueError for invalid scores, epsilons or blocks.
    """
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(f"scores must be a non-empty one-dimensional array of finite values, got shape {values.shape}")
    indices = np.asarray(blocks)
    if indices.ndim != 2 or 0 in indices.shape or not np.issubdtype(indices.dtype, np.integer):
        raise ValueError(f"blocks must be a non-empty 2-D integer array, got shape {indices.shape}, {indices.dtype}")
    if indices.min() < 0 or indices.max() >= values.size:
        raise ValueError(f"block indices must lie in [0, {values.size}), the range of the scores")
    return average_over_blocks(list(values[indices]), epsilons)
