"""Building blocks of the structure family: a sentence's dependency tree, the word lists its rules use, and
rebuilding a detokenised text after tokens move, drop or change.

A rewrite is a list of :class:`Piece`: a token's text and whether a space follows it. Pieces start as the
parse's tokens with their own ``space_after`` (:func:`pieces`), so every token a rule does not touch keeps
its text and the whitespace after it; :func:`render` joins them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nlp_robustness.perturbations.parse import ParsedSegment, ParsedToken

__all__ = [
    "FROZEN_BINOMIALS", "FRAME_ADVERBS", "TEMPORAL_NOUNS", "Piece", "Tree", "capitalised", "decapitalised",
    "is_year", "pieces", "render",
]


@dataclass(frozen=True)
class Piece:
    """One token of a rewritten text."""

    text: str
    space_after: bool


def pieces(tokens: Sequence[ParsedToken]) -> list[Piece]:
    return [Piece(token.text, token.space_after) for token in tokens]


def render(parts: Sequence[Piece]) -> str:
    """The pieces joined: a space after each piece that has one, none at the end."""
    return "".join(part.text + (" " if part.space_after else "") for part in parts).rstrip(" ")


class Tree:
    """The dependency tree of one segment, sentence by sentence: children and contiguous subtrees."""

    def __init__(self, segment: ParsedSegment) -> None:
        self.tokens = segment.tokens
        self.sentence_of = [token.sentence for token in self.tokens]
        self.children: list[list[int]] = [[] for _ in self.tokens]
        for index, token in enumerate(self.tokens):
            if self.has_head(index):
                self.children[token.head].append(index)

    def has_head(self, index: int) -> bool:
        """Whether the token has a head in its own sentence (a token headed across sentences is a root)."""
        head = self.tokens[index].head
        return head != index and self.sentence_of[head] == self.sentence_of[index]

    def roots(self, sentence: range) -> list[int]:
        return [index for index in sentence if not self.has_head(index)]

    def subtree(self, index: int) -> list[int]:
        """The token and its descendants, in order."""
        found, stack = [], [index]
        while stack:
            node = stack.pop()
            found.append(node)
            stack.extend(self.children[node])
        return sorted(found)

    def span(self, index: int) -> range | None:
        """The subtree of ``index`` as a range, None if it is not contiguous."""
        nodes = self.subtree(index)
        return range(nodes[0], nodes[-1] + 1) if nodes[-1] - nodes[0] + 1 == len(nodes) else None

    def child(self, index: int, deps: frozenset[str]) -> int | None:
        """The first child with one of the dependency labels ``deps``."""
        return next((child for child in self.children[index] if self.tokens[child].dep in deps), None)

    def lower(self, index: int) -> str:
        return self.tokens[index].text.lower()


def keeps_capital(token: ParsedToken) -> bool:
    """Whether a word keeps its capital wherever it stands: a proper noun, "I" ("I'm"), an acronym."""
    text = token.text
    return token.pos == "PROPN" or text == "I" or text.startswith("I'") or (len(text) > 1 and text.isupper())


def decapitalised(token: ParsedToken) -> str:
    """A sentence's old first word once it no longer starts the sentence."""
    text = token.text
    return text if keeps_capital(token) or not text[:1].isupper() else text[0].lower() + text[1:]


def capitalised(text: str) -> str:
    """A sentence's new first word."""
    return text[:1].upper() + text[1:]


def is_year(text: str) -> bool:
    return text.isdigit() and len(text) == 4 and 1000 <= int(text) <= 2099


#: Adverbs that frame a whole clause (time, sequence, contrast) and read the same at its start or end. Left
#: out: "now", "then", "finally", "again", "still", whose reading changes with their place ("Finally, ..."
#: enumerates; "Again, ..." means "moreover"), and manner adverbs ("quietly"), which fronting emphasises.
FRAME_ADVERBS: frozenset[str] = frozenset({
    "yesterday", "today", "tomorrow", "tonight", "recently", "currently", "previously", "eventually", "meanwhile",
    "nowadays", "lately", "later", "afterwards", "afterward", "subsequently", "initially", "originally", "however",
    "nevertheless", "nonetheless", "instead", "ago",
})

#: Nouns of time: a noun-phrase adverbial ("last week") or the object of in/on/at/by/over/for ("in 2010", "on
#: Monday", "for the first time") headed by one is a time adjunct, which moves freely. "may" and "march" count
#: only as proper nouns (the months), "fall" not at all.
TEMPORAL_NOUNS: frozenset[str] = frozenset({
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "april",
    "june", "july", "august", "september", "october", "november", "december", "morning", "mornings", "afternoon",
    "afternoons", "evening", "evenings", "night", "nights", "day", "days", "week", "weeks", "weekend", "weekends",
    "month", "months", "year", "years", "decade", "decades", "century", "centuries", "time", "past", "future",
    "meantime", "season", "seasons", "summer", "winter", "spring", "autumn", "hour", "hours", "minute",
    "minutes", "moment", "period", "quarter", "today", "yesterday", "tomorrow", "tonight", "era",
})
MONTHS_ONLY_AS_NAMES: frozenset[str] = frozenset({"may", "march"})

#: "X and Y" pairs whose order is fixed by usage: swapping them reads as a mistake (lower-cased heads).
FROZEN_BINOMIALS: frozenset[frozenset[str]] = frozenset(frozenset(pair) for pair in (
    ("ladies", "gentlemen"), ("research", "development"), ("bed", "breakfast"), ("law", "order"),
    ("trial", "error"), ("rock", "roll"), ("bread", "butter"), ("arts", "crafts"), ("pros", "cons"),
    ("checks", "balances"), ("fish", "chips"), ("odds", "ends"), ("wear", "tear"), ("nuts", "bolts"),
))
