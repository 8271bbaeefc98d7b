"""Every perturbation family, by the name the config gives it: the module that implements it."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.base import check_family

__all__ = ["FAMILIES", "family_module"]

#: Family name (config key under ``perturbations.families``) -> its module (a
#: :class:`~nlp_robustness.perturbations.base.PerturbationFamily`).
FAMILIES: dict[str, str] = {
    "word_order": "nlp_robustness.perturbations.word_order",  # paper 004: 16 word-order permutations
    "character_attacks": "nlp_robustness.perturbations.character_attacks",  # paper 002: 5 attacks x levels
    "natural": "nlp_robustness.perturbations.natural",  # paper 001: punctuation, casing, natural typos
    "paraphrase": "nlp_robustness.perturbations.paraphrase",  # paper 001: Apertium round trips, rewrites
    "structure": "nlp_robustness.perturbations.structure",  # paper 001: sentence-structure and style rewrites
}


@functools.cache
def family_module(family: str) -> ModuleType:
    """The module of ``family``, checked against the family protocol
    (:func:`~nlp_robustness.perturbations.base.check_family`) the first time it is asked for.

    Raises:
        InputError: No such family, or its module breaks the protocol (naming the family and the member).
    """
    if family not in FAMILIES:
        raise InputError(f"unknown perturbation family {family!r} (known: {', '.join(FAMILIES)})")
    module = importlib.import_module(FAMILIES[family])
    check_family(module, family)
    return module
