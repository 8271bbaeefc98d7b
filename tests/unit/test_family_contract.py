"""Every registered perturbation family through the PerturbationFamily protocol on real WMT14 sentences.

For each family of the registry: the module passes the protocol check; every function (expanded, with
default settings) perturbs every perturbed side of a few real segments (spaCy parses for a family that
needs them, its real resource files from the mirror) into a :class:`Perturbed` text that differs from the
input, or a :class:`Skipped` with a reason; the same seed gives the same outcome; the optional hooks a
family defines behave as the protocol declares (``perturb_batch`` equals ``perturb`` text by text, attack
rates lie in [0, 1], expanded names parse back). A module that breaks the contract fails with an error
naming the family and the member.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import shutil
import textwrap
import types
from typing import Any

import pytest

from nlp_robustness.data.acquisition import mirror_download_file
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import base
from nlp_robustness.perturbations.base import PerturbationFamily, Perturbed, Skipped, check_family
from nlp_robustness.perturbations.configuration import fill_schema_defaults
from nlp_robustness.perturbations.derive import SIDES, perturbed_sides, sample_group
from nlp_robustness.perturbations.parse import ParsedSegment
from nlp_robustness.perturbations.spacy_parsing import parse_texts
from nlp_robustness.perturbations.registry import FAMILIES, family_module
from nlp_robustness.sampling import segment_rng
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

WMT14 = MIRROR / "wmt14-newstest2014-enfr" / "derived"
#: Real segments (line numbers of newstest2014): short and long ones, with numbers, quotes, contractions.
LINES = (0, 3, 7, 12)
#: Families whose Perturbed text may equal its input (an attack at a low level may change nothing; the
#: protocol's perturb docstring says so): for them, at least one segment must change per function.
MAY_KEEP_TEXT = {"character_attacks"}

needs_mirror = pytest.mark.skipif(not WMT14.is_dir(), reason=f"offline data mirror not found at {MIRROR}")


@functools.cache
def texts(side: str) -> tuple[str, ...]:
    name = "newstest2014.en-fr.en" if side == "source" else "newstest2014.en-fr.fr"
    lines = (WMT14 / name).read_text(encoding="utf-8").split("\n")
    return tuple(lines[number] for number in LINES)


@functools.cache
def options(family: str) -> dict[str, Any]:
    filled: dict[str, Any] = {}
    fill_schema_defaults(filled, family_module(family).OPTIONS_SCHEMA, f"{family}.options")
    return filled


@functools.cache
def functions(family: str) -> dict[str, dict[str, Any]]:
    """The family's functions as the workflow sees them: default settings, expanded per level."""
    module = family_module(family)
    configured = {}
    for function, schema in module.FUNCTIONS.items():
        settings: dict[str, Any] = {}
        fill_schema_defaults(settings, schema, f"{family}.functions.{function}")
        configured[function] = settings
    return module.expand_functions(configured, options(family)) if hasattr(module, "expand_functions") else configured


@functools.cache
def context(family: str) -> Any:
    module = family_module(family)
    if not hasattr(module, "RESOURCE_DOWNLOADS"):
        return None
    downloads = load_manifest(MANIFEST, MANIFEST_SCHEMA).downloads
    return module.load_context({name: mirror_download_file(downloads[key], MIRROR) for name, key in module.RESOURCE_DOWNLOADS.items()})


@functools.cache
def segments(family: str, side: str) -> tuple[Any, ...]:
    """What ``perturb`` takes for one side: the texts, or their parses by the model the family's options name."""
    if not family_module(family).NEEDS_PARSE:
        return texts(side)
    parsed, _ = parse_texts([str(number) for number in LINES], list(texts(side)), options(family)[f"{side}_model"])
    return tuple(parsed)


def as_text(segment: Any) -> str:
    return " ".join(segment.words()) if isinstance(segment, ParsedSegment) else segment


def needs_apertium(family: str) -> None:
    if family == "paraphrase" and shutil.which("apertium") is None:
        pytest.skip("apertium is not installed")


# ---- the protocol itself ----------------------------------------------------------------------------------


def test_the_protocol_declares_every_hook_and_documents_it() -> None:
    """Every member the checker knows is declared in the protocol, each with its docstring."""
    body = ast.parse(textwrap.dedent(inspect.getsource(PerturbationFamily))).body[0].body
    documented = {}
    for index, node in enumerate(body):
        if isinstance(node, ast.AnnAssign):
            following = body[index + 1] if index + 1 < len(body) else None
            documented[node.target.id] = isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant) \
                and bool(str(following.value.value).strip())
        elif isinstance(node, ast.FunctionDef):
            documented[node.name] = bool(ast.get_docstring(node))
    assert set(documented) == set(base.REQUIRED_HOOKS) | set(base.OPTIONAL_HOOKS)
    assert all(documented.values()), [name for name, has_doc in documented.items() if not has_doc]
    assert {hook for pair in base.HOOK_PAIRS for hook in pair} <= set(base.OPTIONAL_HOOKS)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_registered_family_passes_the_protocol_check(family: str) -> None:
    module = family_module(family)
    check_family(module, family)
    for name, is_function in {**base.REQUIRED_HOOKS, **base.OPTIONAL_HOOKS}.items():
        if is_function and hasattr(module, name):
            declared = [p for p in inspect.signature(getattr(PerturbationFamily, name)).parameters if p != "self"]
            assert list(inspect.signature(getattr(module, name)).parameters) == declared, (family, name)
    assert sample_group(module, family) == getattr(module, "SAMPLE_GROUP", family)
    assert set(perturbed_sides(module)) <= set(SIDES)


def _fake_family(**members: Any) -> types.ModuleType:
    module = types.ModuleType("fake_family")
    defaults = {"FUNCTIONS": {"f": {}}, "CATEGORIES": {"f": "random"}, "OPTIONS_SCHEMA": {}, "NEEDS_PARSE": False,
                "perturb": lambda function, segment, settings, rng, context: Skipped("never")}
    for name, value in {**defaults, **members}.items():
        if value is not None:
            setattr(module, name, value)
    return module


@pytest.mark.parametrize("members, message", [
    ({"perturb": None}, r"'fake' \(fake_family\): missing required member\(s\) perturb"),
    ({"NEEDS_PARSE": "no"}, r"NEEDS_PARSE must be a <class 'bool'>, found str"),
    ({"perturb": lambda function, text, settings, rng: None}, r"perturb must be a function \(function, segment, settings, rng, "
                                                               r"context\), found \(function, text, settings, rng\)"),
    ({"RESOURCE_DOWNLOADS": {"x": "y"}}, r"defines RESOURCE_DOWNLOADS but not load_context"),
    ({"parse_instance": lambda name: ("f", 0.1)}, r"defines parse_instance but not attack_rate"),
    ({"CATEGORIES": {}}, r"CATEGORIES must name every function"),
    ({"PERTURBED_SIDES": ("target",)}, r"unknown side\(s\) target"),
    ({"perturb_batch": "yes"}, r"perturb_batch must be a function .* found a str"),
])
def test_a_module_that_breaks_the_protocol_names_the_family_and_member(members: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        check_family(_fake_family(**members), "fake")
    check_family(_fake_family(), "fake")  # the defaults alone satisfy it


def test_an_unknown_family_is_an_error() -> None:
    with pytest.raises(InputError, match="unknown perturbation family 'shuffle'"):
        family_module("shuffle")


# ---- every family on real segments ----------------------------------------------------------------------


def _outcomes(family: str, function: str, side: str, seed: int = 0) -> list[Perturbed | Skipped]:
    module = family_module(family)
    settings = copy.deepcopy(functions(family)[function])
    return [
        module.perturb(function, segment, settings, segment_rng(seed, family, function, "wmt14", str(number), side), context(family))
        for number, segment in zip(LINES, segments(family, side))
    ]


@needs_mirror
@pytest.mark.parametrize("family", FAMILIES)
def test_every_function_changes_the_segment_or_says_why_not_and_is_deterministic(family: str) -> None:
    needs_apertium(family)
    module = family_module(family)
    for function in functions(family):
        for side in perturbed_sides(module):
            outcomes = _outcomes(family, function, side)
            changed = 0
            for segment, outcome in zip(segments(family, side), outcomes):
                assert isinstance(outcome, (Perturbed, Skipped)), (family, function, outcome)
                if isinstance(outcome, Skipped):
                    assert isinstance(outcome.reason, str) and outcome.reason.strip(), (family, function)
                    continue
                assert outcome.tokens and all(isinstance(token, str) for token in outcome.tokens)
                changed += outcome.text != as_text(segment)
                if family not in MAY_KEEP_TEXT:
                    assert outcome.text != as_text(segment), (family, function, side, outcome.text)
            if family in MAY_KEEP_TEXT:
                assert changed, (family, function, side)
            # the same seed gives the same outcome; the workflow's seeds are per segment and side
            assert _outcomes(family, function, side) == outcomes, (family, function, side)


@needs_mirror
@pytest.mark.parametrize("family", FAMILIES)
def test_the_seed_reaches_the_random_functions(family: str) -> None:
    """At least one function of a family that draws anything gives another outcome under another seed."""
    needs_apertium(family)
    if family in ("paraphrase", "structure"):  # every paraphrase and structure rewrite is deterministic (their docstrings)
        function = next(iter(functions(family)))
        assert _outcomes(family, function, "source", 0) == _outcomes(family, function, "source", 1)
        return
    differs = [function for function in functions(family)
               if _outcomes(family, function, "source", 0) != _outcomes(family, function, "source", 1)]
    assert differs, family


@needs_mirror
@pytest.mark.parametrize("family", [family for family in FAMILIES if hasattr(family_module(family), "perturb_batch")])
def test_perturb_batch_gives_perturbs_outcomes(family: str) -> None:
    needs_apertium(family)
    module = family_module(family)
    for function in functions(family):
        rngs = [segment_rng(0, family, function, "wmt14", str(number), "source") for number in LINES]
        batch = module.perturb_batch(function, list(texts("source")), functions(family)[function], rngs, context(family))
        assert batch == _outcomes(family, function, "source"), (family, function)


@needs_mirror
@pytest.mark.parametrize("family", [family for family in FAMILIES if hasattr(family_module(family), "expand_functions")])
def test_expanded_functions_name_their_category_level_and_attack_rate(family: str) -> None:
    module = family_module(family)
    categories = set(module.CATEGORIES.values())
    for function in functions(family):
        assert module.instance_category(function) in categories
        if not hasattr(module, "parse_instance"):
            continue
        configured, level = module.parse_instance(function)
        assert configured in module.FUNCTIONS and isinstance(level, float)
        for segment, outcome in zip(texts("source"), _outcomes(family, function, "source")):
            if isinstance(outcome, Perturbed):
                rate = module.attack_rate(segment, outcome.text)
                assert 0 <= rate.word_rate <= 1 and 0 <= rate.char_rate <= 1
