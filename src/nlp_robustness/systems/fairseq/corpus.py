"""Training and development text of an in-house fairseq model: holdout split, joint BPE, encoded and filtered pairs."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from typing import Any, Sequence

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.subwords import SubwordCodec, learn_joint_bpe, single_line

__all__ = ["MAX_TRAINING_TOKENS", "TrainingCorpus", "prepare_training_corpus", "split_holdout"]

#: Training pairs longer than this (BPE units, either side) are dropped, as fairseq's recipes do with
#: ``clean-corpus-n.perl ... 1 250``; empty pairs are dropped too. Development pairs are kept whole.
MAX_TRAINING_TOKENS = 250


def split_holdout(count: int, holdout: int, seed: int) -> tuple[list[int], list[int]]:
    """Split ``range(count)`` into training and held-out indices (both in ascending order).

    The held-out indices are a seeded uniform random sample (corpora such as Tatoeba are sorted
    alphabetically, so the last lines would be a biased development set).

    Raises:
        InputError: ``holdout`` leaves no training data.
    """
    if not 0 < holdout < count:
        raise InputError(f"cannot hold out {holdout} of {count} training segments as development set")
    order = list(range(count))
    random.Random(seed).shuffle(order)
    held_out = sorted(order[:holdout])
    held = set(held_out)
    return [index for index in range(count) if index not in held], held_out


@dataclass
class TrainingCorpus:
    """BPE-encoded training and development text of an in-house model, and the BPE codes learnt."""

    bpe_codes: str
    train_source: list[str]
    train_target: list[str]
    valid_source: list[str]
    valid_target: list[str]
    dev_sources: list[str]
    dev_references: list[str]
    statistics: dict[str, Any]


def prepare_training_corpus(
    pairs: Sequence[tuple[str, str]],
    *,
    source_language: str,
    target_language: str,
    bpe_merges: int,
    bpe_min_frequency: int = 2,
    dev_pairs: Sequence[tuple[str, str]] | None = None,
    holdout: int | None = None,
    seed: int = 1,
    max_segments: int | None = None,
) -> TrainingCorpus:
    """Split off the development set, learn joint BPE on the training side only, and encode both.

    Args:
        pairs: (source, reference) training pairs, in corpus order.
        dev_pairs: A separate development set; otherwise ``holdout`` pairs are drawn from ``pairs``
            (:func:`split_holdout`, seeded).
        max_segments: Keep only the first N training pairs (before the holdout is drawn).

    Raises:
        InputError: Neither or both of ``dev_pairs`` and ``holdout``; too few pairs.
    """
    if (dev_pairs is None) == (holdout is None):
        raise InputError("give either a development dataset or a holdout size")
    pairs = list(pairs[:max_segments] if max_segments is not None else pairs)
    if dev_pairs is None:
        train_indices, dev_indices = split_holdout(len(pairs), holdout, seed)
        dev_pairs = [pairs[index] for index in dev_indices]
        pairs = [pairs[index] for index in train_indices]
    codec = SubwordCodec()
    train_source_tokens = codec.tokenize([source for source, _ in pairs], source_language)
    train_target_tokens = codec.tokenize([target for _, target in pairs], target_language)
    codes = learn_joint_bpe(train_source_tokens + train_target_tokens, bpe_merges, bpe_min_frequency)

    from subword_nmt.apply_bpe import BPE

    bpe = BPE(io.StringIO(codes))
    train_source = [bpe.process_line(line) for line in train_source_tokens]
    train_target = [bpe.process_line(line) for line in train_target_tokens]
    kept = [
        index
        for index, (source, target) in enumerate(zip(train_source, train_target))
        if source.strip() and target.strip()
        and len(source.split()) <= MAX_TRAINING_TOKENS and len(target.split()) <= MAX_TRAINING_TOKENS
    ]
    dev_sources = [single_line(source) for source, _ in dev_pairs]
    dev_references = [single_line(reference) for _, reference in dev_pairs]
    valid_source = [bpe.process_line(line) for line in codec.tokenize(dev_sources, source_language)]
    valid_target = [bpe.process_line(line) for line in codec.tokenize(dev_references, target_language)]
    if not kept:
        raise InputError("no training pair is left after dropping empty and over-long pairs")
    statistics = {
        "training_pairs": len(kept),
        "dropped_training_pairs": len(pairs) - len(kept),
        "development_pairs": len(dev_pairs),
        "bpe_merges": bpe_merges,
        "source_bpe_tokens": sum(len(train_source[index].split()) for index in kept),
        "target_bpe_tokens": sum(len(train_target[index].split()) for index in kept),
    }
    return TrainingCorpus(
        bpe_codes=codes,
        train_source=[train_source[index] for index in kept],
        train_target=[train_target[index] for index in kept],
        valid_source=valid_source,
        valid_target=valid_target,
        dev_sources=dev_sources,
        dev_references=dev_references,
        statistics=statistics,
    )
