"""Exact n-gram statistics of many (hypothesis, reference) pairs at once: symbols to integer ids, clipped matches.

The sufficient statistics of sentence BLEU and chrF are, per pair and per n-gram order k, the number of
hypothesis n-grams, the number of reference n-grams and the clipped match count
``sum over distinct n-grams g of min(count in hypothesis, count in reference)``. This module computes the
match counts of a whole batch with numpy, without hashing (so without collisions):

1. Every sequence (a sentence's tokens or characters) is a run of small non-negative integer symbol ids in
   one flat array (a dictionary of the strings, or the ranks of the code points present). Per block of pairs,
   the ids are re-densified to ``1..V`` (ranks through a table); 0 pads hypotheses and ``V+1`` references, so
   one symbol takes ``b = (V+1).bit_length()`` bits.
2. Each sequence is followed by ``order`` pads, and at every position the window of the next ``order``
   symbols is packed into one integer, most significant symbol first (contiguous slices, shifts and ors),
   under the pair's index and above one side bit (hypothesis 0, reference 1):
   ``key = pair << (order*b + 1) | window << 1 | side``. The packing is injective as long as it fits in 63
   bits; a block that does not fit is halved (down to one pair; a single pair that still does not fit --
   thousands of distinct symbols -- is left to the caller's exact fallback).
3. One sort per block. Shifting a sorted key right keeps it sorted, and ``key >> ((order-k)*b + 1)`` is
   exactly (pair, k symbols from that position), so every order is read from the same sorted array: runs of
   equal shifted keys are the distinct (pair, k-gram)s, the side bits count the hypothesis and reference
   occurrences in each run, and the per-pair sum of ``min`` of the two counts is the clipped match count.
   A window reaching past its sequence's end holds a pad, 0 on one side and ``V+1`` on the other, so it
   never equals a window of the other side and adds nothing: no filtering is needed.

The n-gram totals need no matching: a sequence of length L has ``max(L - k + 1, 0)`` k-grams.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["FIRST_BLOCK", "character_ids", "clipped_matches", "distinct_ids", "gather_runs", "symbol_ids"]

#: Pairs per block tried first; blocks are halved while their keys do not fit in 63 bits.
FIRST_BLOCK = 512
_KEY_BITS = 63


def symbol_ids(sequences: list[list[str]] | list[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Flat integer ids (first-seen order, equal strings equal ids) and lengths of sequences of strings."""
    lengths = np.fromiter((len(sequence) for sequence in sequences), dtype=np.int64, count=len(sequences))
    flat = [symbol for sequence in sequences for symbol in sequence]
    index = {symbol: position for position, symbol in enumerate(dict.fromkeys(flat))}
    return np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat)), lengths


#: Fewer characters than this are ranked by sorting them; more, by a table over all of Unicode (1.1 million
#: entries: about 3 ms however few characters there are, which a sort of a short text beats many times over).
SORT_CHARACTERS_BELOW = 1 << 16


def character_ids(texts: list[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Flat ids of the characters of ``texts`` (code points, lone surrogates included, ranked among those that
    occur: equal characters equal ids, all below the number of distinct characters) and the texts' lengths."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    if len(codes) < SORT_CHARACTERS_BELOW:  # the same ranks: np.unique's inverse is each code's rank among them
        return np.unique(codes, return_inverse=True)[1].astype(np.int64, copy=False).reshape(-1), lengths
    present = np.zeros(0x110000, dtype=np.int64)
    present[codes] = 1
    return (np.cumsum(present) - 1)[codes], lengths


def distinct_ids(strings: list[str]) -> tuple[list[str], NDArray[np.int64]]:
    """The distinct strings (first-seen order) and the index of each input string among them."""
    distinct = list(dict.fromkeys(strings))
    index = {string: position for position, string in enumerate(distinct)}
    return distinct, np.fromiter(map(index.__getitem__, strings), dtype=np.int64, count=len(strings))


def gather_runs(
    flat: NDArray[np.int64], lengths: NDArray[np.int64], which: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Concatenate the runs ``which`` of ``flat`` (run i: ``lengths[i]`` values after runs 0..i-1), in order."""
    counts = lengths[which]
    total = int(counts.sum())
    first = np.repeat(_offsets(lengths)[:-1][which] - (np.cumsum(counts) - counts), counts)
    return flat[first + np.arange(total, dtype=np.int64)], counts


def _offsets(lengths: NDArray[np.int64]) -> NDArray[np.int64]:
    return np.concatenate(([0], np.cumsum(lengths)))


def _block_matches(
    hyp: NDArray[np.int64], hyp_lengths: NDArray[np.int64], ref: NDArray[np.int64], ref_lengths: NDArray[np.int64], order: int
) -> NDArray[np.int64] | None:
    """Clipped match counts (pairs, order) of one block, or None if its keys do not fit in 63 bits."""
    pairs = len(hyp_lengths)
    symbols = np.concatenate((hyp, ref))
    # Re-densify the block's symbols to 1..V by rank; 0 pads hypotheses and V+1 references, so that no window
    # reaching past a sequence's end can equal one of the other side.
    present = np.zeros(int(symbols.max(initial=0)) + 2, dtype=np.int64)
    present[symbols + 1] = 1
    rank = np.cumsum(present)
    reference_pad = int(rank[-1]) + 1
    symbol_bits = reference_pad.bit_length()
    pair_bits = max(pairs - 1, 0).bit_length()
    if pair_bits + order * symbol_bits + 1 > _KEY_BITS:
        return None
    # Every sequence followed by `order` pads in one flat array, so each window is a run of contiguous slices.
    lengths = np.concatenate((hyp_lengths, ref_lengths))
    padded_lengths = lengths + order
    padded = np.zeros(int(padded_lengths.sum()) + order, dtype=np.int64)
    real = np.arange(len(symbols), dtype=np.int64) + np.repeat(order * np.arange(len(lengths), dtype=np.int64), lengths)
    padded[real] = rank[symbols + 1]
    hyp_end = int(hyp_lengths.sum()) + order * pairs
    reference_part = padded[hyp_end:]
    reference_part[reference_part == 0] = reference_pad
    size = len(padded) - order
    window = padded[:size].copy()
    for step in range(1, order):
        window <<= symbol_bits
        window |= padded[step : step + size]
    sequence = np.arange(2 * pairs, dtype=np.int64)
    tag = np.repeat(((sequence % pairs) << (order * symbol_bits + 1)) | (sequence >= pairs), padded_lengths)
    keys = np.sort(tag | (window[: len(tag)] << 1))
    reference_before = np.concatenate(([0], np.cumsum(keys & 1)))
    matches = np.zeros((pairs, order), dtype=np.int64)
    for k in range(1, order + 1):
        shifted = keys >> ((order - k) * symbol_bits + 1)
        bounds = np.concatenate(([0], np.flatnonzero(shifted[1:] != shifted[:-1]) + 1, [len(shifted)]))
        references = np.diff(reference_before[bounds])
        common = np.minimum(np.diff(bounds) - references, references)
        matched = np.flatnonzero(common)
        run_pair = shifted[bounds[matched]] >> (k * symbol_bits)
        matches[:, k - 1] = np.bincount(run_pair, weights=common[matched], minlength=pairs).astype(np.int64)
    return matches


def clipped_matches(
    hyp: NDArray[np.int64],
    hyp_lengths: NDArray[np.int64],
    ref: NDArray[np.int64],
    ref_lengths: NDArray[np.int64],
    order: int,
    fallback: Callable[[int], list[int]],
) -> NDArray[np.int64]:
    """Clipped n-gram match counts, shape (pairs, order), column k-1 for order k.

    Args:
        hyp, ref: Flat symbol ids of the hypotheses / references, sequence after sequence; small non-negative
            integers (a table as long as the largest id is made per block), as :func:`symbol_ids` and
            :func:`character_ids` give.
        hyp_lengths, ref_lengths: Length of each pair's sequence on each side (equally many).
        order: Highest n-gram order.
        fallback: Exact match counts of pair ``i`` (a list of ``order`` ints), for a pair too wide to pack.
    """
    pairs = len(hyp_lengths)
    matches = np.zeros((pairs, order), dtype=np.int64)
    hyp_offsets, ref_offsets = _offsets(hyp_lengths), _offsets(ref_lengths)
    start, block = 0, FIRST_BLOCK
    while start < pairs:
        stop = min(start + block, pairs)
        result = _block_matches(
            hyp[hyp_offsets[start] : hyp_offsets[stop]],
            hyp_lengths[start:stop],
            ref[ref_offsets[start] : ref_offsets[stop]],
            ref_lengths[start:stop],
            order,
        )
        if result is not None:
            matches[start:stop] = result
            start, block = stop, min(block * 2, FIRST_BLOCK)
        elif block > 1:
            block //= 2
        else:
            matches[start] = fallback(start)
            start, block = start + 1, FIRST_BLOCK
    return matches
