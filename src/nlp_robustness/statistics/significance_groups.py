"""Significance groups (a compact letter display) from the verdicts of paired comparisons.

A table of S systems with S(S - 1)/2 pairwise verdicts is hard to read; WMT's findings print instead a
letter (or a cluster) per system: two systems that share a letter are not separated, two that share none
are. :func:`letter_groups` computes such a display from the pairs a comparisons table separates, so it
says exactly what the table's verdict column says (the robustness profile's reading prints it).

**Algorithm** (Piepho 2004, "An algorithm for a letter-based representation of all-pairwise comparisons",
*J. Comput. Graph. Stat.* 13(2), the *insert-and-absorb* method): start with one group holding every
system. For each separated pair (i, j), every group holding both is replaced by two copies, one without i
and one without j (*insert*); then every group contained in another is dropped (*absorb*). When the pairs
are done, two systems share a group exactly when they are not separated -- which is what a letter display
must show, also where "not separated" is not transitive (A ~ B and B ~ C but A separated from C gives
A "a", B "ab", C "b"). The groups are then lettered in the order of their best member (``order``: the
systems best first), so "a" holds the best system, and each system's letters are listed alphabetically.

The display is exact but not always minimal in letters for many non-transitive pairs (Piepho's method
keeps every maximal group, which is the honest answer: each group is a largest set of mutually
indistinguishable systems). Deterministic: the pairs are processed in ``order``, groups kept as sorted
tuples of positions.
"""

from __future__ import annotations

import string
from collections.abc import Collection, Iterable, Sequence

__all__ = ["letter_groups", "letter_text", "shares_letter"]


def _letter(index: int) -> str:
    """The index-th letter: a ... z, then aa, ab, ... (more than 26 groups)."""
    letters = string.ascii_lowercase
    return letters[index] if index < len(letters) else _letter(index // len(letters) - 1) + letters[index % len(letters)]


def letter_groups(order: Sequence[str], separated: Iterable[Collection[str]]) -> dict[str, tuple[str, ...]]:
    """Every system of ``order`` (best first) -> its letters (``("a", "b")``), from the pairs that are ``separated`` (each a
    pair of systems of ``order``); see the module docstring.

    Raises:
        ValueError: A pair naming a system not in ``order``, a pair of one system, or repeated systems in ``order``.
    """
    position = {system: index for index, system in enumerate(order)}
    if len(position) != len(order):
        raise ValueError(f"systems repeated in the order: {list(order)}")
    pairs = set()
    for pair in separated:
        members = tuple(pair)
        if len(set(members)) != 2 or any(member not in position for member in members):
            raise ValueError(f"not a pair of the ordered systems: {members}")
        pairs.add(tuple(sorted(position[member] for member in members)))
    groups: list[tuple[int, ...]] = [tuple(range(len(order)))] if order else []
    for first, second in sorted(pairs):
        split: list[tuple[int, ...]] = []
        for group in groups:
            if first in group and second in group:
                split += [tuple(x for x in group if x != first), tuple(x for x in group if x != second)]
            else:
                split.append(group)
        unique = sorted(set(split))
        groups = [group for group in unique if not any(set(group) < set(other) for other in unique)]
    groups.sort(key=lambda group: (group[0], group))
    letters: dict[str, list[str]] = {system: [] for system in order}
    for index, group in enumerate(groups):
        for member in group:
            letters[order[member]].append(_letter(index))
    return {system: tuple(found) for system, found in letters.items()}


def shares_letter(first: Sequence[str], second: Sequence[str]) -> bool:
    """Whether two systems' letters (:func:`letter_groups`) share one: the systems are not separated."""
    return bool(set(first) & set(second))


def letter_text(letters: dict[str, Sequence[str]]) -> str:
    """The display in one line, systems in the mapping's order: ``A a, B ab, C b`` (letters beyond z are
    joined with a dot: ``y.z.aa``)."""
    return ", ".join(f"{system} {('.' if any(len(letter) > 1 for letter in group) else '').join(group)}"
                     for system, group in letters.items())
