"""Building blocks of the word-order functions: spans of tokens, filling slots, pairing, drawing, tree walks.

Every helper works on token *indices* and returns an order (a list of indices), so the functions in
:mod:`nlp_robustness.perturbations.word_order` produce a permutation of the input by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nlp_robustness.perturbations.parse import ParsedSegment, ParsedToken

#: A unit of tokens: the half-open index range ``(start, end)`` of a contiguous span.
Span = tuple[int, int]

#: Draws of a random arrangement before giving up (see :func:`draw_changed_order`).
MAX_DRAWS = 1000

PUNCTUATION = "PUNCT"


def trailing_punctuation_start(tokens: Sequence[ParsedToken], start: int, end: int) -> int:
    """Start of the maximal run of ``PUNCT`` tokens that ends at ``end`` within ``[start, end)``."""
    while end > start and tokens[end - 1].pos == PUNCTUATION:
        end -= 1
    return end


def token_spans(tokens: Sequence[ParsedToken], pos: frozenset[str]) -> list[Span]:
    """One single-token span per token whose POS tag is in ``pos``."""
    return [(index, index + 1) for index, token in enumerate(tokens) if token.pos in pos]


def noun_spans(segment: ParsedSegment, units: str, noun_pos: frozenset[str]) -> list[Span]:
    """Noun units: the noun chunks (``units == "noun_chunks"``) or single tokens tagged ``noun_pos``."""
    if units == "noun_chunks":
        return [(chunk.start, chunk.stop) for chunk in segment.noun_chunks()]
    return token_spans(segment.tokens, noun_pos)


def outside(spans: Sequence[Span], taken: Sequence[Span]) -> list[Span]:
    """The spans of ``spans`` that share no token with any span of ``taken``."""
    covered = {index for start, end in taken for index in range(start, end)}
    return [span for span in spans if not any(index in covered for index in range(*span))]


def span_texts(words: Sequence[str], spans: Sequence[Span]) -> list[tuple[str, ...]]:
    return [tuple(words[start:end]) for start, end in spans]


def fill_slots(count: int, spans: Sequence[Span], assignment: Sequence[int]) -> list[int]:
    """The order of ``count`` tokens in which slot ``k`` (``spans[k]``) holds unit ``assignment[k]``.

    ``spans`` are sorted and do not overlap. Tokens outside every span keep their relative order and
    their places between the slots; a slot takes the whole unit assigned to it, whatever its length.
    """
    starts = {start: slot for slot, (start, _) in enumerate(spans)}
    order: list[int] = []
    index = 0
    while index < count:
        slot = starts.get(index)
        if slot is None:
            order.append(index)
            index += 1
        else:
            order.extend(range(*spans[assignment[slot]]))
            index = spans[slot][1]
    return order


def gap(first: Span, second: Span) -> int:
    """Number of tokens strictly between two non-overlapping spans."""
    return second[0] - first[1] if first[1] <= second[0] else first[0] - second[1]


def greedy_pairs(xs: Sequence[Span], ys: Sequence[Span], farthest: bool) -> list[tuple[int, int]]:
    """Pair Xs with Ys one to one, the closest (or farthest) pair first: of all (X, Y) pairs, sorted by their
    gap (ascending, or descending for ``farthest``), then by X and Y position, each is taken when neither
    its X nor its Y is paired yet.

    Global rather than X by X from the left: with one adjective and three nouns ("Tom said he could n't
    find a decent place"), the adjective goes to its own noun (place), not to the first noun (Tom). On
    Figure 2's sentence both readings give the paper's NounVerbSwaps and NounVerbMismatched outputs.
    Returns ``(x index, y index)`` pairs in X order.
    """
    candidates = sorted(
        ((-gap(x, y) if farthest else gap(x, y), x_index, y_index) for x_index, x in enumerate(xs) for y_index, y in enumerate(ys))
    )
    paired_x: set[int] = set()
    paired_y: set[int] = set()
    pairs = []
    for _, x_index, y_index in candidates:
        if x_index not in paired_x and y_index not in paired_y:
            pairs.append((x_index, y_index))
            paired_x.add(x_index)
            paired_y.add(y_index)
    return sorted(pairs)


def swap_pairs(count: int, xs: Sequence[Span], ys: Sequence[Span], pairs: Sequence[tuple[int, int]]) -> list[int]:
    """The order in which each paired X and Y have exchanged slots (everything else in place)."""
    spans = sorted([*xs, *ys])
    slot_of = {span: slot for slot, span in enumerate(spans)}
    assignment = list(range(len(spans)))
    for x_index, y_index in pairs:
        x_slot, y_slot = slot_of[xs[x_index]], slot_of[ys[y_index]]
        assignment[x_slot], assignment[y_slot] = y_slot, x_slot
    return fill_slots(count, spans, assignment)


def draw_changed_order(
    words: Sequence[str], size: int, arrange: Callable[[np.ndarray], list[int]], rng: np.random.Generator
) -> list[int] | None:
    """Draw uniform permutations of ``size`` items until ``arrange(permutation)`` changes the token texts.

    Returns that order, or ``None`` after :data:`MAX_DRAWS` draws. With at least two distinct item
    texts a draw keeps the text with probability at most 1/2 (repeated texts) unless units of
    repeated words sit side by side (``[a][a a]``), where no arrangement may change it.
    """
    original = list(words)
    for _ in range(MAX_DRAWS):
        order = arrange(rng.permutation(size))
        if [words[index] for index in order] != original:
            return order
    return None


# --------------------------------------------------------------------------------------------
# Trees
# --------------------------------------------------------------------------------------------


def sentence_forest(tokens: Sequence[ParsedToken], sentence: range) -> tuple[list[int], dict[int, list[int]]]:
    """Roots and children (in linear order) of a sentence's tree.

    A root is a token that is its own head or whose head lies outside the sentence; a sentence may
    have several (e.g. after a dropped whitespace root), listed in linear order.
    """
    roots: list[int] = []
    children: dict[int, list[int]] = {index: [] for index in sentence}
    for index in sentence:
        head = tokens[index].head
        if head == index or head not in children:
            roots.append(index)
        else:
            children[head].append(index)
    return roots, children


def walk(root: int, before: Callable[[int], list[int]], after: Callable[[int], list[int]]) -> list[int]:
    """``walk(c)`` for each ``c`` in ``before(root)``, then ``root``, then ``walk(c)`` for each ``c`` in ``after(root)``.

    Iterative (a deep tree would exhaust Python's recursion limit).
    """
    order: list[int] = []
    stack: list[tuple[bool, int]] = [(False, root)]
    while stack:
        emit, node = stack.pop()
        if emit:
            order.append(node)
            continue
        stack.extend((False, child) for child in reversed(after(node)))
        stack.append((True, node))
        stack.extend((False, child) for child in reversed(before(node)))
    return order


def right_children(children: dict[int, list[int]]) -> Callable[[int], list[int]]:
    return lambda node: [child for child in children[node] if child > node]


def left_children(children: dict[int, list[int]]) -> Callable[[int], list[int]]:
    return lambda node: [child for child in children[node] if child < node]


def mirrored_children(children: dict[int, list[int]]) -> Callable[[int], list[int]]:
    """A node's children in the mirrored tree: its right children, then its left children (original order)."""
    rights, lefts = right_children(children), left_children(children)
    return lambda node: rights(node) + lefts(node)


def no_children(node: int) -> list[int]:
    return []
