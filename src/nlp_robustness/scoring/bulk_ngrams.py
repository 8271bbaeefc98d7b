"""Exact n-gram statistics of many (hypothesis, reference) pairs at once: symbols to integer ids, clipped matches.

The sufficient statistics of sentence BLEU and chrF are, per pair and per n-gram order k, the number of
hypothesis n-grams, the number of reference n-grams and the clipped match count
``sum over distinct n-grams g of min(count in hypothesis, count in reference)``. This module computes the
match counts of a whole batch with numpy, without hashing (so without collisions):

1. Every sequence (a sentence's tokens or characters) is a run of non-negative integer symbol ids in one flat
   array. Per block of pairs, the ids are re-densified to ``1..V`` (``np.unique``; 0 is kept as padding), so
   one symbol takes ``b = V.bit_length()`` bits.
2. At every position, the window of the next ``order`` symbols (0 past the sequence's end) is packed into one
   integer, most significant symbol first, under the pair's index and above one side bit (hypothesis 0,
   reference 1): ``key = pair << (order*b + 1) | window << 1 | side``. The packing is injective as long as it
   fits in 63 bits; a block that does not fit is halved (down to one pair; a single pair that still does not
   fit -- thousands of distinct symbols -- is left to the caller's exact fallback).
3. One sort per block. Shifting a sorted key right keeps it sorted, and ``key >> ((order-k)*b + 1)`` is
   exactly (pair, k-gram at that position), so every order is read from the same sorted array: runs of equal
   shifted keys are the distinct (pair, k-gram)s, the side bits count the hypothesis and reference
   occurrences in each run, and the per-pair sum of ``min`` of the two counts is the clipped match count.
   Windows whose k-th symbol is the padding 0 do not hold a k-gram and are left out.

The n-gram totals need no matching: a sequence of length L has ``max(L - k + 1, 0)`` k-grams.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["FIRST_BLOCK", "clipped_matches", "symbol_ids", "utf32_codes"]

#: Pairs per block tried first; blocks are halved while their keys do not fit in 63 bits.
FIRST_BLOCK = 4096
_KEY_BITS = 63


def symbol_ids(sequences: list[list[str]] | list[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Flat integer ids (first-seen order, equal strings equal ids) and lengths of sequences of strings."""
    lengths = np.fromiter((len(sequence) for sequence in sequences), dtype=np.int64, count=len(sequences))
    flat = [symbol for sequence in sequences for symbol in sequence]
    index = {symbol: position for position, symbol in enumerate(dict.fromkeys(flat))}
    return np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat)), lengths


def utf32_codes(texts: list[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Code points (one per Python character, lone surrogates included) and lengths of ``texts``."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return codes.astype(np.int64), lengths


def _offsets(lengths: NDArray[np.int64]) -> NDArray[np.int64]:
    return np.concatenate(([0], np.cumsum(lengths)))


def _block_matches(
    hyp: NDArray[np.int64], hyp_lengths: NDArray[np.int64], ref: NDArray[np.int64], ref_lengths: NDArray[np.int64], order: int
) -> NDArray[np.int64] | None:
    """Clipped match counts (pairs, order) of one block, or None if its keys do not fit in 63 bits."""
    pairs = len(hyp_lengths)
    unique, dense = np.unique(np.concatenate((hyp, ref)), return_inverse=True)
    symbol_bits = len(unique).bit_length()  # ids 1..V, 0 = padding
    pair_bits = max(pairs - 1, 0).bit_length()
    if pair_bits + order * symbol_bits + 1 > _KEY_BITS:
        return None
    dense = dense.reshape(-1).astype(np.int64) + 1
    lengths = np.concatenate((hyp_lengths, ref_lengths))
    sequence_end = np.repeat(_offsets(lengths)[1:], lengths)
    position = np.arange(len(dense), dtype=np.int64)
    padded = np.concatenate((dense, np.zeros(order, dtype=np.int64)))
    window = np.zeros(len(dense), dtype=np.int64)
    for step in range(order):
        symbol = np.where(position + step < sequence_end, padded[position + step], 0)
        window = (window << symbol_bits) | symbol
    pair = np.concatenate((np.repeat(np.arange(pairs, dtype=np.int64), hyp_lengths), np.repeat(np.arange(pairs, dtype=np.int64), ref_lengths)))
    side = np.concatenate((np.zeros(len(hyp), dtype=np.int64), np.ones(len(ref), dtype=np.int64)))
    keys = np.sort((pair << (order * symbol_bits + 1)) | (window << 1) | side)
    is_reference = keys & 1
    matches = np.zeros((pairs, order), dtype=np.int64)
    symbol_mask = (1 << symbol_bits) - 1
    for k in range(1, order + 1):
        shifted = keys >> ((order - k) * symbol_bits + 1)
        kept = (shifted & symbol_mask) != 0
        shifted, kept_reference = shifted[kept], is_reference[kept]
        if len(shifted) == 0:
            continue
        starts = np.flatnonzero(np.concatenate(([True], shifted[1:] != shifted[:-1])))
        sizes = np.diff(np.append(starts, len(shifted)))
        references = np.add.reduceat(kept_reference, starts)
        common = np.minimum(sizes - references, references)
        run_pair = shifted[starts] >> (k * symbol_bits)
        matches[:, k - 1] = np.bincount(run_pair, weights=common, minlength=pairs).astype(np.int64)
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
        hyp, ref: Flat non-negative symbol ids of the hypotheses / references, sequence after sequence.
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
