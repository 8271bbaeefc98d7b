"""The perturbation interface every family implements (:class:`PerturbationFamily`), and the two outcomes
of perturbing one text.

A *family* (word order, character attacks, ...) is a module, registered in
:mod:`nlp_robustness.perturbations.registry`, that satisfies :class:`PerturbationFamily`: the required
members of :data:`REQUIRED_HOOKS`, and any of the optional ones of :data:`OPTIONAL_HOOKS` (some come in
pairs: a family that defines one of a pair defines both). :func:`check_family` checks a module against
the protocol (members present, constants of the right type, functions with the declared parameters);
the registry runs it on every module it hands out, so a family that breaks the contract fails with an
error naming the family and the member, before any job runs.

The rules, the scoring of pairs and the tables only see the derived test sets the family's outcomes are
written into; they do not know which family made them.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from nlp_robustness.errors import InputError

__all__ = [
    "HOOK_PAIRS", "OPTIONAL_HOOKS", "PerturbationFamily", "PerturbationResult", "Perturbed", "REQUIRED_HOOKS", "Skipped",
    "check_family",
]


@dataclass(frozen=True)
class Perturbed:
    """A perturbed text as its tokens; the text fed to a system is the tokens joined by single spaces."""

    tokens: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


@dataclass(frozen=True)
class Skipped:
    """A segment the function cannot perturb (e.g. one noun and no verb), with the reason."""

    reason: str


PerturbationResult = Perturbed | Skipped


class PerturbationFamily(Protocol):
    """What a perturbation family module defines. Members under "Optional" may be left out (see
    :data:`OPTIONAL_HOOKS`); the workflow then uses the default each names."""

    # ---- required ----

    FUNCTIONS: Mapping[str, Mapping[str, Any]]
    """``{function name: JSON schema of its settings}`` in display order; each schema is an object with
    ``additionalProperties: false`` whose properties carry their defaults, so a config that names a
    function with ``{}`` gets every default, and an unknown or mistyped setting is a config error."""

    CATEGORIES: Mapping[str, str]
    """``{function name: category}`` (e.g. ``random``, ``pos``, ``tree``), used to group functions in
    tables and figures."""

    OPTIONS_SCHEMA: Mapping[str, Any]
    """JSON schema of the family's own options (e.g. which spaCy models parse the two sides)."""

    NEEDS_PARSE: bool
    """Whether :meth:`perturb` takes parsed segments
    (:class:`~nlp_robustness.perturbations.parse.ParsedSegment`; the workflow parses each side of the
    family's sample once) or plain texts."""

    def perturb(self, function: str, segment: Any, settings: Mapping[str, Any], rng: np.random.Generator,
                context: Any) -> PerturbationResult:
        """Perturb one segment (one side: source or reference) with one function.

        ``segment`` is the side's text, or its parse when :attr:`NEEDS_PARSE`; ``settings`` are the
        function's (defaults filled); ``rng`` is seeded by the workflow from (config seed, family,
        function, test set, segment id, side) (:func:`nlp_robustness.sampling.segment_rng`), so a
        function's output on one segment never depends on any other segment, function or test set;
        ``context`` is what :meth:`load_context` returned (None for a family without resources). The
        result differs from the input, or is :class:`Skipped` with the reason (the character attacks
        keep an unchanged attacked text: at a low level an attack may change nothing)."""
        ...

    # ---- optional ----

    PERTURBED_SIDES: tuple[str, ...]
    """The sides it perturbs (default both, ``("source", "reference")``); a side left out is kept as it
    is (character attacks, natural perturbations and paraphrases perturb the source only)."""

    def languages(self, options: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """The (source, target) languages its rules are written for, given its options (None: any; default
        (None, None)). A family's test sets default to those of the MT studies whose language pair fits
        (:func:`nlp_robustness.perturbations.configuration.family_applies`)."""
        ...

    SAMPLE_GROUP: str
    """The name a family's seeded sample is drawn under (default: the family's own name). Families that
    share one (the natural perturbations and the paraphrases of paper 001) perturb the same records, so
    their functions can be compared record by record."""

    RESOURCE_DOWNLOADS: Mapping[str, str]
    """Files of the dataset manifest the family reads: resource name -> download key (default none).
    Comes with :meth:`load_context`."""

    def load_context(self, paths: Mapping[str, Any]) -> Any:
        """Load the family's resource files (resource name -> path, the names of
        :attr:`RESOURCE_DOWNLOADS`) once per job; the result is :meth:`perturb`'s ``context``."""
        ...

    def expand_functions(self, functions: Mapping[str, Mapping[str, Any]], options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """One function per level: each configured function (settings with defaults) becomes several
        (``visual`` -> ``visual-p0.1``, ``visual-p0.3``), which are the functions the workflow sees.
        Comes with :meth:`instance_category`."""
        ...

    def instance_category(self, name: str) -> str:
        """The category of an expanded function (``visual-p0.3`` -> ``substitution``), in place of
        :attr:`CATEGORIES`, which names the configured functions."""
        ...

    def perturb_batch(self, function: str, texts: Sequence[str], settings: Mapping[str, Any],
                      rngs: Sequence[np.random.Generator], context: Any) -> list[PerturbationResult]:
        """Perturb many texts of one side at once (``rngs[i]`` is the generator of ``texts[i]``;
        ``context`` as for :meth:`perturb`), one outcome per text, each the one :meth:`perturb` gives:
        for functions that run an external program over a whole file (paraphrases: an Apertium round
        trip), whose start-up would dominate one call per text. When the module defines it (and does
        not need parses), it is used instead of :meth:`perturb`, for every function of the family."""
        ...

    def attack_rate(self, original: str, attacked: str) -> Any:
        """How much a function changed a source (an object with ``word_rate`` and ``char_rate``): the
        achieved attack rates the workflow tables for families whose achieved rate differs from the
        requested level. Comes with :meth:`parse_instance`."""
        ...

    def parse_instance(self, name: str) -> tuple[str, float]:
        """The configured function and level of an expanded function name (``visual-p0.3`` ->
        ``("visual", 0.3)``), for the achieved-rate tables."""
        ...


#: Members every family defines, and whether each is a function.
REQUIRED_HOOKS: dict[str, bool] = {"FUNCTIONS": False, "CATEGORIES": False, "OPTIONS_SCHEMA": False, "NEEDS_PARSE": False,
                                   "perturb": True}
#: Members a family may define, and whether each is a function.
OPTIONAL_HOOKS: dict[str, bool] = {
    "PERTURBED_SIDES": False, "SAMPLE_GROUP": False, "RESOURCE_DOWNLOADS": False, "load_context": True,
    "expand_functions": True, "instance_category": True, "perturb_batch": True, "attack_rate": True,
    "parse_instance": True, "languages": True,
}
#: Optional members that only work together: a family defines both or neither.
HOOK_PAIRS: tuple[tuple[str, str], ...] = (
    ("RESOURCE_DOWNLOADS", "load_context"), ("expand_functions", "instance_category"), ("attack_rate", "parse_instance"),
)
#: The type each constant must have.
_CONSTANT_TYPES: dict[str, type | tuple[type, ...]] = {
    "FUNCTIONS": Mapping, "CATEGORIES": Mapping, "OPTIONS_SCHEMA": Mapping, "NEEDS_PARSE": bool,
    "PERTURBED_SIDES": tuple, "SAMPLE_GROUP": str, "RESOURCE_DOWNLOADS": Mapping,
}
_SIDES = ("source", "reference")


def _parameters(function: Any) -> list[str]:
    return [parameter.name for parameter in inspect.signature(function).parameters.values() if parameter.name != "self"]


def check_family(module: ModuleType, family: str) -> None:
    """Check that ``module`` satisfies :class:`PerturbationFamily`: every required member, constants of
    the declared types, every function (required or optional) with the protocol's parameters in order
    (defaults may differ), paired hooks together, categories for every function, known sides.

    Raises:
        InputError: Naming the family, its module and the first member that breaks the contract.
    """
    where = f"perturbation family {family!r} ({module.__name__})"
    missing = [name for name in REQUIRED_HOOKS if not hasattr(module, name)]
    if missing:
        raise InputError(f"{where}: missing required member(s) {', '.join(missing)} of PerturbationFamily")
    for name, is_function in {**REQUIRED_HOOKS, **OPTIONAL_HOOKS}.items():
        if not hasattr(module, name):
            continue
        value = getattr(module, name)
        if is_function:
            expected = _parameters(getattr(PerturbationFamily, name))
            if not callable(value) or _parameters(value) != expected:
                found = f"({', '.join(_parameters(value))})" if callable(value) else f"a {type(value).__name__}"
                raise InputError(f"{where}: {name} must be a function ({', '.join(expected)}), found {found}")
        elif not isinstance(value, _CONSTANT_TYPES[name]):
            raise InputError(f"{where}: {name} must be a {_CONSTANT_TYPES[name]}, found {type(value).__name__}")
    for first, second in HOOK_PAIRS:
        if hasattr(module, first) != hasattr(module, second):
            present, absent = (first, second) if hasattr(module, first) else (second, first)
            raise InputError(f"{where}: defines {present} but not {absent} (they come together)")
    if not hasattr(module, "instance_category") and set(module.CATEGORIES) != set(module.FUNCTIONS):
        raise InputError(f"{where}: CATEGORIES must name every function of FUNCTIONS and no other")
    unknown_sides = [side for side in getattr(module, "PERTURBED_SIDES", _SIDES) if side not in _SIDES]
    if unknown_sides:
        raise InputError(f"{where}: PERTURBED_SIDES names unknown side(s) {', '.join(unknown_sides)} (known: {', '.join(_SIDES)})")
