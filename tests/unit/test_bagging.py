"""Bagging and design bagging (nlp_robustness.statistics.bagging): block properties, reproducibility, bagged metrics."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlp_robustness.statistics.bagging import (
    BaggedStatistics,
    _compose_within_segments,
    bagged_statistics,
    bagging_blocks,
    bagging_blocks_literal,
    design_bagging_blocks,
    design_bagging_blocks_literal,
)
from nlp_robustness.sampling import block_size, rng_for
from nlp_robustness.statistics.robustness_metrics import cov_from_moments, epsilon_grid, gamma_curve, summarize

FAST = [bagging_blocks, design_bagging_blocks]
ALL = FAST + [bagging_blocks_literal, design_bagging_blocks_literal]


@st.composite
def designs(draw, max_items=40, max_blocks=12):
    """(n_items, block_size, n_blocks, seed) with 1 <= block_size <= n_items."""
    n_items = draw(st.integers(1, max_items))
    return n_items, draw(st.integers(1, n_items)), draw(st.integers(1, max_blocks)), draw(st.integers(0, 2**32))


def assert_valid_blocks(blocks, n_items, size, n_blocks):
    assert blocks.shape == (n_blocks, size)
    assert blocks.dtype == np.int64
    assert np.all(np.diff(blocks, axis=1) > 0), "rows must be sorted ascending with distinct members"
    assert blocks.min() >= 0 and blocks.max() < n_items


# --- block_size and rng_for -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_items, fraction, expected",
    [
        (10, 0.6, 6),
        (1_000_000, 0.6, 600_000),
        (5, 0.5, 3),  # 2.5 rounds half up
        (3, 0.5, 2),
        (50, 0.29, 15),  # 14.5 exactly, although 0.29 * 50 == 14.499999999999998 in binary floating point
        (4, 0.125, 1),  # 0.5 -> 1
        (100, 0.001, 1),  # at least one member
        (7, 1.0, 7),
    ],
)
def test_block_size(n_items, fraction, expected):
    assert block_size(n_items, fraction) == expected


@pytest.mark.parametrize("n_items, fraction", [(10, 0.0), (10, 1.5), (10, -0.1), (10, math.nan), (0, 0.5), (-3, 0.5)])
def test_block_size_rejects_bad_input(n_items, fraction):
    with pytest.raises(ValueError):
        block_size(n_items, fraction)


def test_rng_for_is_pinned():
    """The raw PCG64 output is stable across numpy versions; a change here means the blocks of every run change."""
    assert rng_for(0, "design_bagging", "wmt15").bit_generator.random_raw() == 17454241899339908560


def test_rng_for_depends_on_seed_labels_and_their_order():
    first = [
        rng_for(seed, *labels).bit_generator.random_raw()
        for seed, labels in [(0, ("a", "b")), (1, ("a", "b")), (0, ("b", "a")), (0, ("a",)), (0, ())]
    ]
    assert len(set(first)) == len(first)
    assert rng_for(0).bit_generator.random_raw() == np.random.default_rng(0).bit_generator.random_raw()


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_rng_for_rejects_bad_seeds(seed):
    with pytest.raises(ValueError):
        rng_for(seed, "bagging")


# --- block properties ------------------------------------------------------------------------------------


@pytest.mark.parametrize("draw_blocks", ALL, ids=lambda function: function.__name__)
@settings(max_examples=60, deadline=None)
@given(design=designs())
def test_every_block_has_exactly_b_distinct_members(draw_blocks, design):
    n_items, size, n_blocks, seed = design
    blocks = draw_blocks(n_items, size, n_blocks, np.random.default_rng(seed))
    assert_valid_blocks(blocks, n_items, size, n_blocks)


@settings(max_examples=300, deadline=None)
@given(design=designs(max_items=80, max_blocks=40))
def test_design_bagging_frequencies_are_exactly_balanced(design):
    n_items, size, n_blocks, seed = design
    blocks = design_bagging_blocks(n_items, size, n_blocks, np.random.default_rng(seed))
    assert_valid_blocks(blocks, n_items, size, n_blocks)
    frequency = np.bincount(blocks.ravel(), minlength=n_items)
    copies, extra = divmod(size * n_blocks, n_items)
    assert set(np.unique(frequency)) <= {copies, copies + 1}
    assert np.count_nonzero(frequency == copies + 1) == extra
    if size * n_blocks >= n_items:
        assert frequency.min() >= 1


@pytest.mark.parametrize(
    "n_items, size, n_blocks", [(3000, 2999, 30), (2000, 1200, 30), (997, 601, 7), (5000, 5000, 3)]
)
def test_design_bagging_at_larger_sizes(n_items, size, n_blocks):
    """Long chains of straddling elements (b close to N) exercise the recursive prefix scan."""
    blocks = design_bagging_blocks(n_items, size, n_blocks, np.random.default_rng(11))
    assert_valid_blocks(blocks, n_items, size, n_blocks)
    frequency = np.bincount(blocks.ravel(), minlength=n_items)
    assert frequency.max() - frequency.min() <= 1 and frequency.min() >= (size * n_blocks) // n_items


@settings(max_examples=60, deadline=None)
@given(design=designs(max_items=25, max_blocks=8))
def test_literal_design_bagging_covers_every_element(design):
    """While some element is unused it is a least-frequent element outside any block, so it is picked first."""
    n_items, size, n_blocks, seed = design
    blocks = design_bagging_blocks_literal(n_items, size, n_blocks, np.random.default_rng(seed))
    frequency = np.bincount(blocks.ravel(), minlength=n_items)
    assert frequency.sum() == size * n_blocks
    if size * n_blocks >= n_items:
        assert frequency.min() >= 1


def test_literal_design_bagging_is_not_always_exactly_balanced():
    """Algorithm 6 taken literally can be forced to a more used element (all least used ones already in L):
    with N=3, b=2, M=3 frequencies such as (1, 2, 3) occur. The fast version is exactly balanced instead."""
    spreads = {
        int(np.ptp(np.bincount(design_bagging_blocks_literal(3, 2, 3, np.random.default_rng(seed)).ravel())))
        for seed in range(100)
    }
    assert 2 in spreads


@pytest.mark.parametrize("draw_blocks", ALL, ids=lambda function: function.__name__)
def test_same_seed_same_blocks_other_seed_other_blocks(draw_blocks):
    first = draw_blocks(60, 25, 6, rng_for(3, "x"))
    assert np.array_equal(first, draw_blocks(60, 25, 6, rng_for(3, "x")))
    assert not np.array_equal(first, draw_blocks(60, 25, 6, rng_for(4, "x")))


@pytest.mark.parametrize("draw_blocks", FAST, ids=lambda function: function.__name__)
def test_every_element_is_equally_likely_in_every_block(draw_blocks):
    """By symmetry P(element e in block m) = b/N for both fast algorithms; 600 draws, 5-sigma tolerance."""
    n_items, size, n_blocks, draws = 12, 5, 4, 600
    inclusion = np.zeros((n_blocks, n_items))
    for seed in range(draws):
        blocks = draw_blocks(n_items, size, n_blocks, np.random.default_rng(seed))
        np.add.at(inclusion, (np.repeat(np.arange(n_blocks), size), blocks.ravel()), 1.0)
    p = size / n_items
    assert np.all(np.abs(inclusion / draws - p) < 5 * math.sqrt(p * (1 - p) / draws))


@pytest.mark.parametrize("draw_blocks", ALL, ids=lambda function: function.__name__)
@pytest.mark.parametrize("n_items, size, n_blocks", [(0, 1, 1), (5, 0, 1), (5, 6, 1), (5, 2, 0)])
def test_invalid_designs_raise(draw_blocks, n_items, size, n_blocks):
    with pytest.raises(ValueError):
        draw_blocks(n_items, size, n_blocks, np.random.default_rng(0))


def test_chunked_prefix_scan_matches_the_sequential_recurrence():
    rng = np.random.default_rng(5)
    for rounds in (1, 31, 32, 33, 1025, 40_000):
        for restart_probability in (0.0, 0.02, 0.5):
            factors = np.argsort(rng.random((rounds, 7)), axis=1).astype(np.uint8)
            restart = rng.random(rounds) < restart_probability
            restart[0] = True
            expected = factors.copy()
            for k in range(1, rounds):
                if not restart[k]:
                    expected[k] = expected[k - 1][expected[k]]
            _compose_within_segments(factors, restart)
            np.testing.assert_array_equal(factors, expected)


# --- bagged statistics -----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(design=designs(max_items=50, max_blocks=10))
def test_bagged_statistics_equal_a_direct_per_block_computation(design):
    n_items, size, n_blocks, seed = design
    rng = np.random.default_rng(seed)
    scores = rng.beta(2, 5, n_items) * 100
    blocks = design_bagging_blocks(n_items, size, n_blocks, rng)
    epsilons = epsilon_grid(1, 100, 1)
    bagged = bagged_statistics(scores, blocks, epsilons)

    direct = [summarize(scores[block]) for block in blocks]
    np.testing.assert_array_equal(bagged.block_means, [summary.mean for summary in direct])
    np.testing.assert_array_equal(bagged.block_variances, [summary.variance for summary in direct])
    assert bagged.mean == pytest.approx(np.mean([summary.mean for summary in direct]))
    assert bagged.variance == pytest.approx(np.mean([summary.variance for summary in direct]))
    expected_gamma = np.mean([gamma_curve(scores[block], epsilons) for block in blocks], axis=0)
    np.testing.assert_allclose(bagged.gamma, expected_gamma, rtol=1e-12, atol=0)
    assert bagged.gamma.shape == epsilons.shape
    if bagged.mean > 0:
        assert bagged.cov == cov_from_moments(bagged.mean, bagged.variance)


def test_bagged_cov_is_formed_from_averaged_moments():
    scores = np.array([0.0, 10.0, 20.0, 30.0, 60.0, 90.0])
    blocks = np.array([[0, 1, 2], [3, 4, 5]])
    bagged = bagged_statistics(scores, blocks, [1.0])
    assert isinstance(bagged, BaggedStatistics)
    np.testing.assert_allclose(bagged.block_means, [10.0, 60.0])
    np.testing.assert_allclose(bagged.block_variances, [200.0 / 3.0, 600.0])
    assert bagged.cov == pytest.approx(math.sqrt((200.0 / 3.0 + 600.0) / 2) / 35.0)
    average_of_block_covs = np.mean([summarize(scores[block]).cov for block in blocks])
    assert bagged.cov != pytest.approx(average_of_block_covs)


@pytest.mark.parametrize("n_items, size, n_blocks", [(40, 24, 5), (30, 18, 30), (7, 7, 3)])
def test_balanced_design_bagging_preserves_the_pool_mean(n_items, size, n_blocks):
    """With b*M divisible by N every score is used equally often, so the mean of block means is the pool mean."""
    assert (size * n_blocks) % n_items == 0
    scores = np.random.default_rng(1).beta(2, 5, n_items) * 100
    blocks = design_bagging_blocks(n_items, size, n_blocks, np.random.default_rng(2))
    assert bagged_statistics(scores, blocks, [1.0]).mean == pytest.approx(scores.mean(), rel=1e-12)


@pytest.mark.parametrize(
    "scores, blocks",
    [
        ([1.0, 2.0, 3.0], [[0, 3]]),  # index out of range
        ([1.0, 2.0, 3.0], [[-1, 0]]),
        ([1.0, 2.0, 3.0], [0, 1]),  # not 2-D
        ([1.0, 2.0, 3.0], [[0.0, 1.0]]),  # not integer
        ([1.0, math.nan, 3.0], [[0, 2]]),
        ([], [[0]]),
    ],
)
def test_bagged_statistics_rejects_bad_input(scores, blocks):
    with pytest.raises(ValueError):
        bagged_statistics(scores, blocks, [1.0])


def test_draw_blocks_dispatches_by_method_with_the_rounded_block_size() -> None:
    from nlp_robustness.statistics.bagging import draw_blocks

    for method, draw in (("bagging", bagging_blocks), ("design_bagging", design_bagging_blocks)):
        expected = draw(25, block_size(25, 0.6), 7, rng_for(3, method))
        np.testing.assert_array_equal(draw_blocks(method, 25, 0.6, 7, rng_for(3, method)), expected)
    with pytest.raises(ValueError, match="method must be bagging or design_bagging"):
        draw_blocks("bootstrap", 25, 0.6, 7, rng_for(3))
