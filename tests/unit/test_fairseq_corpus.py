"""An in-house model's training corpus: the seeded holdout, joint BPE, dropped pairs."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.corpus import prepare_training_corpus, split_holdout

pytest.importorskip("sacremoses")
pytest.importorskip("subword_nmt")


def test_holdout_is_a_seeded_disjoint_sample() -> None:
    train, dev = split_holdout(100, 10, seed=3)
    assert len(dev) == 10 and len(train) == 90
    assert sorted(train + dev) == list(range(100))
    assert split_holdout(100, 10, seed=3) == (train, dev)
    assert split_holdout(100, 10, seed=4)[1] != dev
    assert dev != list(range(90, 100))  # not simply the end of a sorted corpus
    for bad in (0, 100, 200):
        with pytest.raises(InputError, match="cannot hold out"):
            split_holdout(100, bad, seed=3)


PAIRS = [
    ("The cat sleeps.", "Le chat dort."),
    ("The dog sleeps.", "Le chien dort."),
    ("", "Vide."),
    ("I like the cat.", "J'aime le chat."),
    ("I like the dog.", "J'aime le chien."),
    ("The cat and the dog sleep.", "Le chat et le chien dorment."),
] * 5


def test_training_corpus_with_a_holdout() -> None:
    corpus = prepare_training_corpus(
        PAIRS, source_language="en", target_language="fr", bpe_merges=30, bpe_min_frequency=1, holdout=6, seed=1
    )
    assert corpus.statistics["development_pairs"] == 6
    assert len(corpus.dev_sources) == len(corpus.valid_source) == len(corpus.valid_target) == 6
    # the pairs with an empty side are dropped from training only
    empty_in_dev = sum(1 for source in corpus.dev_sources if not source)
    assert corpus.statistics["dropped_training_pairs"] == 5 - empty_in_dev
    assert corpus.statistics["training_pairs"] == len(corpus.train_source) == 24 - (5 - empty_in_dev)
    assert all(line.strip() for line in corpus.train_source)
    assert len(corpus.bpe_codes.splitlines()) - 1 <= 30


def test_training_corpus_with_a_separate_dev_set_and_a_size_limit() -> None:
    dev = [("The bird sings.", "L'oiseau chante.")]
    corpus = prepare_training_corpus(
        PAIRS, source_language="en", target_language="fr", bpe_merges=20, dev_pairs=dev, max_segments=6
    )
    assert corpus.dev_sources == ["The bird sings."] and corpus.dev_references == ["L'oiseau chante."]
    assert corpus.statistics["training_pairs"] == 5
    with pytest.raises(InputError, match="either a development dataset or a holdout"):
        prepare_training_corpus(PAIRS, source_language="en", target_language="fr", bpe_merges=20)
    with pytest.raises(InputError, match="either a development dataset or a holdout"):
        prepare_training_corpus(PAIRS, source_language="en", target_language="fr", bpe_merges=20, dev_pairs=dev, holdout=3)
