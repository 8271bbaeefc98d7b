"""Significance groups (compact letter display) from separated pairs: known cases, the non-transitive one."""

import itertools

import pytest

from nlp_robustness.statistics.significance_groups import letter_groups, letter_text, shares_letter


def _consistent(order, separated, letters):
    """A letter display is correct when two systems share a letter exactly when they are not separated."""
    pairs = {frozenset(pair) for pair in separated}
    return all(shares_letter(letters[a], letters[b]) == (frozenset((a, b)) not in pairs)
               for a, b in itertools.combinations(order, 2))


def test_no_separated_pair_gives_one_group():
    assert letter_groups(["A", "B", "C"], []) == {"A": ("a",), "B": ("a",), "C": ("a",)}


def test_every_pair_separated_gives_a_letter_each_in_order():
    order = ["A", "B", "C"]
    letters = letter_groups(order, itertools.combinations(order, 2))
    assert letters == {"A": ("a",), "B": ("b",), "C": ("c",)}


def test_non_transitive_pairs_share_the_middle_system():
    # A ~ B, B ~ C, but A separated from C: B belongs to both groups
    letters = letter_groups(["A", "B", "C"], [("C", "A")])
    assert letters == {"A": ("a",), "B": ("a", "b"), "C": ("b",)}
    assert letter_text(letters) == "A a, B ab, C b"


def test_two_clusters_of_a_ranking():
    order = ["A", "B", "C", "D"]
    separated = [(a, b) for a in ("A", "B") for b in ("C", "D")]
    assert letter_groups(order, separated) == {"A": ("a",), "B": ("a",), "C": ("b",), "D": ("b",)}


def test_letters_follow_the_order_not_the_pairs():
    letters = letter_groups(["C", "B", "A"], [("C", "A")])
    assert letters == {"C": ("a",), "B": ("a", "b"), "A": ("b",)}


@pytest.mark.parametrize("seed", range(20))
def test_random_verdicts_are_displayed_exactly(seed):
    import random
    rng = random.Random(seed)
    order = [f"s{index}" for index in range(8)]
    separated = [pair for pair in itertools.combinations(order, 2) if rng.random() < 0.4]
    assert _consistent(order, separated, letter_groups(order, separated))


def test_more_than_26_groups_get_two_letter_names():
    order = [f"s{index}" for index in range(28)]
    letters = letter_groups(order, itertools.combinations(order, 2))
    assert letters["s26"] == ("aa",) and letters["s27"] == ("ab",)
    assert _consistent(order, list(itertools.combinations(order, 2)), letters)


def test_a_pair_outside_the_order_is_refused():
    with pytest.raises(ValueError, match="not a pair"):
        letter_groups(["A", "B"], [("A", "Z")])
