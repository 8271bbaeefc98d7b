"""A perturbed reference written in the gold reference's own form, so beta1 and beta2 are scored like for like.

beta1 scores a translation against the gold reference as the test set writes it ("…d'endroit décent."),
beta2 against the perturbed reference. Written as its tokens joined by single spaces ("…d' endroit
décent ."), the perturbed reference would differ from the gold in form as well as in order: sacrebleu's
13a tokeniser does not split French elisions, so the same hypothesis scores sentence BLEU 100 against the
gold and about 52 against its space-joined tokens, and the normalised Levenshtein similarity counts every
added space. That lowers beta2 against beta1 for reasons that have nothing to do with the perturbation.

The perturbed reference is therefore joined with the gold's spacing (:func:`join_with_gold_spacing`):
two tokens that follow each other in the perturbed order as they did in the gold keep the gold's text
between them ("" for ``d'|endroit`` and ``décent|.``, a space, a non-breaking space or a run of spaces
as the gold has them); tokens that the perturbation brought together get one space; the gold's leading and
trailing whitespace is kept. An identity perturbation gives the gold byte for byte, so an unchanged
hypothesis has beta2 = beta1 under every metric, and beta1 stays the ordinary score of the perturbed test
set against the gold (comparable with beta, which the test set's own scores give). What remains is the
form a permutation really changes: a token moved away from the one it was written against in the gold
("d'" away from "endroit") stands apart, as a system would have to write it.

The source side is not touched: the system reads the perturbed source as space-joined tokens ("could
n't"), as in paper 004, and alpha compares it with the source tokens joined the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from nlp_robustness.errors import InputError

__all__ = ["gold_gaps", "join_with_gold_spacing", "token_positions"]


def gold_gaps(words: Sequence[str], gold: str, where: str = "reference") -> list[str]:
    """The text of ``gold`` around its tokens: ``[before the first, between 1 and 2, ..., after the last]``
    (``len(words) + 1`` strings, each whitespace only).

    Raises:
        InputError: ``words`` do not spell ``gold`` in order with only whitespace around them (the parse
            is not of this text).
    """
    gaps: list[str] = []
    position = 0
    for number, word in enumerate(words):
        start = position
        while start < len(gold) and gold[start].isspace():
            start += 1
        if not word or not gold.startswith(word, start):
            raise InputError(
                f"{where}: token {number} {word!r} of the parse is not at character {start} of the text "
                f"{gold!r}: the parse is not of this text"
            )
        gaps.append(gold[position:start])
        position = start + len(word)
    rest = gold[position:]
    if rest.strip():
        raise InputError(f"{where}: the parse ends before the text does ({rest!r} left): the parse is not of this text")
    gaps.append(rest)
    return gaps


def token_positions(tokens: Sequence[str], words: Sequence[str]) -> list[int | None]:
    """The gold position of every perturbed token (a repeated word is matched where it keeps its gold
    neighbours): the position after the previous token's when the gold has this token there, else an
    occurrence the next token follows in the gold, else the first unused occurrence; a token the gold
    does not have (a family that inserts words) has None."""
    unused: dict[str, list[int]] = {}
    for index, word in enumerate(words):
        unused.setdefault(word, []).append(index)
    taken: set[int] = set()
    positions: list[int | None] = []
    previous: int | None = None
    for number, token in enumerate(tokens):
        candidates = [index for index in unused.get(token, []) if index not in taken]
        following = tokens[number + 1] if number + 1 < len(tokens) else None
        position: int | None
        if previous is not None and previous + 1 in candidates:
            position = previous + 1
        else:
            runs = [index for index in candidates
                    if index + 1 < len(words) and index + 1 not in taken and words[index + 1] == following]
            position = runs[0] if runs else candidates[0] if candidates else None
        if position is not None:
            taken.add(position)
        positions.append(position)
        previous = position
    return positions


def join_with_gold_spacing(tokens: Sequence[str], words: Sequence[str], gold: str, where: str = "reference") -> str:
    """``tokens`` (a perturbation of the gold's tokens ``words``) as text in the gold's form (module docstring).

    Raises:
        InputError: ``words`` are not the tokens of ``gold`` (:func:`gold_gaps`).
    """
    gaps = gold_gaps(words, gold, where)
    if not tokens:
        return gold
    positions = token_positions(tokens, words)
    parts = [gaps[0], tokens[0]]
    for left, right, token in zip(positions, positions[1:], tokens[1:]):
        adjacent = left is not None and right == left + 1
        parts.append(gaps[right] if adjacent else " ")
        parts.append(token)
    parts.append(gaps[-1])
    return "".join(parts)
