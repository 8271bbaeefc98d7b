"""The 16 reorderings of paper 004's word-order family (:mod:`nlp_robustness.perturbations.word_order`): each
takes one parsed segment and gives the new order of its token indices, or :class:`~.base.Skipped` with the reason.

Readings chosen where the paper is vague (each function's docstring gives its exact rule):

* Final punctuation: the maximal run of ``PUNCT`` tokens at the end of the segment (random functions) or
  of each sentence (tree functions) stays at the end, as in every example of Figure 2; the setting
  ``keep_final_punctuation: false`` lets it move.
* Random draws are uniform permutations, drawn again until the token texts change; a part with fewer
  than two distinct token texts is skipped. Only the ``rng`` given is used, so outputs are reproducible.
* Nouns are noun chunks by default (Figure 2 moves "a decent place" as a whole); ``noun_units: tokens``
  makes them single tokens tagged ``noun_pos``. A unit moved into a slot of another length takes the
  whole slot; the tokens outside the units keep their relative order. Verbs are the tokens tagged
  ``verb_pos``; only where they meet noun units (NounVerbSwaps, NounVerbMismatched) are the verbs
  inside a noun chunk left out, so that no token belongs to two units. NounAdjSwaps works on noun
  *tokens* (a noun chunk holds its adjectives).
* "Linearly closest" is measured in tokens strictly between two units. Pairs are made closest first
  over all (X, Y) pairs (farthest first for NounVerbMismatched), ties to the leftmost X then the
  leftmost Y, each unit in at most one pair; unpaired units stay. This reproduces Figure 2's
  NounVerbSwaps and NounVerbMismatched exactly, and Table 3's "We have a cat white ." (the adjective
  goes to its own noun, not to the first noun from the left, "We"); pairing X by X from the left
  would give the same two Figure 2 outputs but "white have a We cat .".
* Tree mirroring: a node's mirrored children are its right children then its left children, each group
  in its original order (the authors' code sets ``left = t.rights``, ``right = t.lefts``); this
  reproduces Figure 2's three TreeMirror examples exactly.
* RotateAroundRoot: Figure 2 prints "live find said Tom he could n't a decent place to ." for "Tom said he
  could n't find a decent place to live .", which no rotation of spaCy's parse (nor any order built from
  the tree) yields; the authors' released code outputs the tokens after the root, the root, the tokens
  before the root and the final punctuation, which is what the rotation below gives on projective trees:
  "he could n't find a decent place to live said Tom .".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from nlp_robustness.perturbations import _units as units
from nlp_robustness.perturbations.base import Skipped
from nlp_robustness.perturbations.parse import ParsedSegment

__all__ = [
    "REORDERINGS", "Order", "Outcome", "adverb_verb_swaps", "functional_shuffle", "noun_adj_swaps", "noun_swaps",
    "noun_verb_mismatched", "noun_verb_swaps", "reversed_order", "rotate_around_root", "shuffle_first_half",
    "shuffle_last_half", "tree_mirror_in", "tree_mirror_post", "tree_mirror_pre", "verb_at_beginning", "verb_swaps",
    "word_shuffle",
]

#: A new order of a segment's tokens: the index of the input token at each output position.
Order = list[int]
#: What a reordering gives: the new order, or the reason it cannot reorder the segment.
Outcome = Order | Skipped


# --------------------------------------------------------------------------------------------
# Random shuffles
# --------------------------------------------------------------------------------------------


def _body_end(segment: ParsedSegment, settings: Mapping[str, Any]) -> int:
    count = len(segment.tokens)
    return units.trailing_punctuation_start(segment.tokens, 0, count) if settings["keep_final_punctuation"] else count


def _shuffle_part(segment: ParsedSegment, start: int, end: int, rng: np.random.Generator, part: str) -> Outcome:
    words = segment.words()
    if len(set(words[start:end])) < 2:
        return Skipped(f"fewer than 2 distinct tokens {part}")
    count = len(words)

    def arrange(permutation: np.ndarray) -> Order:
        return [*range(start), *(start + int(offset) for offset in permutation), *range(end, count)]

    order = units.draw_changed_order(words, end - start, arrange, rng)
    return Skipped(f"no shuffle changes the text {part}") if order is None else order


def word_shuffle(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Uniformly random permutation of the body (the tokens before the final punctuation run), redrawn
    until the text changes; skipped if the body has fewer than 2 distinct tokens."""
    return _shuffle_part(segment, 0, _body_end(segment, settings), rng, "before the final punctuation")


def shuffle_first_half(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As WordShuffle on the first ceil(n/2) of the n body tokens; the rest stays (Figure 2: 6 of 11)."""
    body = _body_end(segment, settings)
    return _shuffle_part(segment, 0, math.ceil(body / 2), rng, "in the first half")


def shuffle_last_half(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As WordShuffle on the body tokens after the first ceil(n/2) (Figure 2: the last 5 of 11)."""
    body = _body_end(segment, settings)
    return _shuffle_part(segment, math.ceil(body / 2), body, rng, "in the last half")


def reversed_order(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """The body in reverse order, then the final punctuation run; skipped if that reads the same."""
    body = _body_end(segment, settings)
    if len(set(segment.words()[:body])) < 2:
        return Skipped("fewer than 2 distinct tokens before the final punctuation")
    return [*reversed(range(body)), *range(body, len(segment.tokens))]


# --------------------------------------------------------------------------------------------
# Part-of-speech swaps
# --------------------------------------------------------------------------------------------


def _pos(settings: Mapping[str, Any], key: str) -> frozenset[str]:
    return frozenset(settings[key])


def _shuffle_units(segment: ParsedSegment, spans: list[units.Span], rng: np.random.Generator, what: str) -> Outcome:
    words = segment.words()
    if len(set(units.span_texts(words, spans))) < 2:
        return Skipped(f"fewer than 2 distinct {what}")

    def arrange(permutation: np.ndarray) -> Order:
        return units.fill_slots(len(words), spans, [int(unit) for unit in permutation])

    order = units.draw_changed_order(words, len(spans), arrange, rng)
    return Skipped(f"no arrangement of the {what} changes the text") if order is None else order


def noun_swaps(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Random arrangement of the noun units among their slots (uniform permutation, redrawn until the
    text changes); skipped if fewer than 2 distinct noun units. Units: noun chunks, or with
    ``noun_units: tokens`` single tokens tagged ``noun_pos``."""
    spans = units.noun_spans(segment, settings["noun_units"], _pos(settings, "noun_pos"))
    return _shuffle_units(segment, spans, rng, "noun units")


def verb_swaps(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As NounSwaps with the tokens tagged ``verb_pos`` (VERB, AUX): Figure 2 moves said, could, find, live."""
    return _shuffle_units(segment, units.token_spans(segment.tokens, _pos(settings, "verb_pos")), rng, "verbs")


def functional_shuffle(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As NounSwaps with the tokens tagged ``functional_pos``: ADP, CCONJ, DET, SCONJ by default (the
    paper: conjunctions, prepositions, determiners; the authors' code used DET and ADP only). The
    paper's "rearranged in positions of a different functional token" is read as any arrangement that
    changes the text, not as a derangement."""
    spans = units.token_spans(segment.tokens, _pos(settings, "functional_pos"))
    return _shuffle_units(segment, spans, rng, "functional tokens")


def _pair_swap(segment: ParsedSegment, xs: list[units.Span], ys: list[units.Span], farthest: bool, what: str) -> Outcome:
    ys = units.outside(ys, xs)
    if not xs or not ys:
        return Skipped(f"no {what}")
    pairs = units.greedy_pairs(xs, ys, farthest)
    return units.swap_pairs(len(segment.tokens), xs, ys, pairs)


def adverb_verb_swaps(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Adverbs (``adverb_pos`` tokens) and verbs (``verb_pos`` tokens) swap in pairs, closest pair first:
    of all (adverb, verb) pairs, by the number of tokens strictly between them, ties to the leftmost
    adverb then the leftmost verb, each pair taken when neither of its tokens is paired yet; unpaired
    tokens stay. Deterministic; skipped without an adverb or a verb."""
    xs = units.token_spans(segment.tokens, _pos(settings, "adverb_pos"))
    ys = units.token_spans(segment.tokens, _pos(settings, "verb_pos"))
    return _pair_swap(segment, xs, ys, farthest=False, what="adverb or no verb")


def noun_adj_swaps(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As AdverbVerbSwaps with noun TOKENS (``noun_pos``) and adjectives (``adjective_pos``): token level,
    because a noun chunk holds its adjectives. Table 3: "We have a cat white ."; Figure 2's sentence:
    "Tom said he could n't find a place decent to live ."."""
    xs = units.token_spans(segment.tokens, _pos(settings, "noun_pos"))
    ys = units.token_spans(segment.tokens, _pos(settings, "adjective_pos"))
    return _pair_swap(segment, xs, ys, farthest=False, what="noun or no adjective")


def _nouns_and_verbs(segment: ParsedSegment, settings: Mapping[str, Any]) -> tuple[list[units.Span], list[units.Span]]:
    nouns = units.noun_spans(segment, settings["noun_units"], _pos(settings, "noun_pos"))
    return nouns, units.token_spans(segment.tokens, _pos(settings, "verb_pos"))


def noun_verb_swaps(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As AdverbVerbSwaps with noun units (noun chunks by default) and verbs (``verb_pos`` tokens outside
    every noun unit); a unit takes the whole slot of its partner. Figure 2: "said Tom could he n't a
    decent place find to live ."."""
    nouns, verbs = _nouns_and_verbs(segment, settings)
    return _pair_swap(segment, nouns, verbs, farthest=False, what="noun unit or no verb")


def noun_verb_mismatched(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """As NounVerbSwaps, the FARTHEST pair first (ties to the leftmost noun unit, then the leftmost verb).
    Figure 2: "live a decent place find could n't he said to Tom ."."""
    nouns, verbs = _nouns_and_verbs(segment, settings)
    return _pair_swap(segment, nouns, verbs, farthest=True, what="noun unit or no verb")


def verb_at_beginning(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """In each sentence, the first token tagged ``verb_pos`` (VERB: main verbs, auxiliaries stay) moves to
    the sentence's start; the rest keeps its order (Table 3: "read She was able to the book ."). Skipped
    without a verb, or when every sentence already starts with its first verb."""
    verbs = _pos(settings, "verb_pos")
    order: Order = []
    found = False
    for sentence in segment.sentences():
        verb = next((index for index in sentence if segment.tokens[index].pos in verbs), None)
        found = found or verb is not None
        if verb is None:
            order.extend(sentence)
        else:
            order.extend([verb, *(index for index in sentence if index != verb)])
    if not found:
        return Skipped("no verb")
    if order == list(range(len(segment.tokens))):
        return Skipped("every sentence already begins with its first verb")
    return order


# --------------------------------------------------------------------------------------------
# Dependency trees
# --------------------------------------------------------------------------------------------

Children = dict[int, list[int]]
RootWalk = Callable[[int, Children], Order]


def _per_sentence(segment: ParsedSegment, settings: Mapping[str, Any], walk_root: RootWalk) -> Order:
    """Concatenate ``walk_root(root, children)`` over the sentences and, within one, its roots in linear order.

    A root is a token that is its own head or whose head lies in another sentence. With
    ``keep_final_punctuation``, the sentence's final run of ``PUNCT`` tokens is taken out of the
    walk's order wherever it landed and appended in its original order (a punctuation token's children,
    if it has any, stay where the walk put them), so every token appears exactly once.
    """
    order: Order = []
    for sentence in segment.sentences():
        roots, children = units.sentence_forest(segment.tokens, sentence)
        walked = [index for root in roots for index in walk_root(root, children)]
        if settings["keep_final_punctuation"]:
            final = range(units.trailing_punctuation_start(segment.tokens, sentence.start, sentence.stop), sentence.stop)
            walked = [index for index in walked if index not in final] + list(final)
        order.extend(walked)
    return order


def tree_mirror_pre(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Per sentence, pre-order of the mirrored tree: the node, then each mirrored child's pre-order.
    Figure 2: "said find place live to a decent he could n't Tom ."."""
    return _per_sentence(
        segment, settings, lambda root, children: units.walk(root, units.no_children, units.mirrored_children(children))
    )


def tree_mirror_post(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Per sentence, post-order of the mirrored tree: each mirrored child's post-order, then the node.
    Figure 2: "to live a decent place he could n't find Tom said ."."""
    return _per_sentence(
        segment, settings, lambda root, children: units.walk(root, units.mirrored_children(children), units.no_children)
    )


def tree_mirror_in(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Per sentence, in-order of the mirrored tree: the original right children's in-orders, the node, then
    the original left children's in-orders. Figure 2: "live to place a decent find he could n't said Tom ."."""
    return _per_sentence(
        segment, settings,
        lambda root, children: units.walk(root, units.right_children(children), units.left_children(children)),
    )


def _rotate(root: int, children: Children) -> Order:
    rights, lefts = units.right_children(children), units.left_children(children)
    return [
        *(index for child in rights(root) for index in units.walk(child, lefts, rights)),
        root,
        *(index for child in lefts(root) for index in units.walk(child, lefts, rights)),
    ]


def rotate_around_root(segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator) -> Outcome:
    """Per sentence, a rotation at the root only: the root's right subtrees (each in original in-order, i.e.
    linear order for a projective tree), the root, then its left subtrees (each in original in-order):
    "he could n't find a decent place to live said Tom ." (Figure 2's printed example cannot come from
    this parse; see the module docstring)."""
    return _per_sentence(segment, settings, _rotate)


#: Function name (as the config names it) -> the rule that reorders a segment.
REORDERINGS: dict[str, Callable[[ParsedSegment, Mapping[str, Any], np.random.Generator], Outcome]] = {
    "WordShuffle": word_shuffle,
    "ShuffleFirstHalf": shuffle_first_half,
    "ShuffleLastHalf": shuffle_last_half,
    "Reversed": reversed_order,
    "NounSwaps": noun_swaps,
    "VerbSwaps": verb_swaps,
    "AdverbVerbSwaps": adverb_verb_swaps,
    "NounAdjSwaps": noun_adj_swaps,
    "NounVerbSwaps": noun_verb_swaps,
    "NounVerbMismatched": noun_verb_mismatched,
    "FunctionalShuffle": functional_shuffle,
    "VerbAtBeginning": verb_at_beginning,
    "TreeMirrorPre": tree_mirror_pre,
    "TreeMirrorPost": tree_mirror_post,
    "TreeMirrorIn": tree_mirror_in,
    "RotateAroundRoot": rotate_around_root,
}
