"""The ``perturbations`` section of the config: completed, checked, and turned into the workflow's plan.

The config schema checks the shape of the section and fills the defaults it can state; this module
fills the ones that depend on other keys or on a family's own schemas, and checks what a schema cannot:

* every family is a known module (:mod:`~nlp_robustness.perturbations.registry`);
* every function is one of the family's, and its settings match the function's schema (an unknown
  setting or one of the wrong type is an error naming the key, before any job runs);
* test sets, systems and left-out functions exist; a hypotheses system that translates perturbed test
  sets gives a file for each of them.

A family whose functions take a level (character attacks: ``p``) expands each configured function into
one function per level (``module.expand_functions``, e.g. ``visual`` -> ``visual-p0.1``, ``visual-p0.3``):
the expanded names are the functions the rules, tables and consistency study see, and the configured
ones are kept under ``configured_functions``.

Defaults: ``testsets`` every test set; ``systems`` every system that is not a hypotheses system (those
translate nothing: they give files); ``functions`` every function of the family with its default
settings; ``leave_out`` every configured function; ``epsilon`` ``robustness.epsilon``; ``metrics`` (those
its beta tables, figures and consistency study are written for) ``perturbations.metrics``.

:func:`derived_testsets` names the perturbed test sets: ``perturbed/<family>/<function>/<part>``, where
``part`` is a test set (``derived_testsets: per_testset``) or :data:`POOLED` (one per function holding
the sample of every test set).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any

import jsonschema

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.registry import FAMILIES, family_module

__all__ = [
    "POOLED",
    "DERIVED_PREFIX",
    "complete_perturbations",
    "derived_testset",
    "derived_testsets",
    "fill_schema_defaults",
    "function_category",
    "parts",
]

#: The part name of a pooled perturbed test set (one per function, every test set's sample).
POOLED = "pooled"
#: Derived test sets are named ``perturbed/<family>/<function>/<part>``.
DERIVED_PREFIX = "perturbed"


def _with_defaults(validator_class: type) -> type:
    """A validator class that also writes each property's ``default`` into the instance (as
    ``snakemake.utils.validate(set_default=True)`` does for the config schema)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator: Any, properties: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]) -> Any:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


_DefaultFillingValidator = _with_defaults(jsonschema.Draft202012Validator)


def fill_schema_defaults(instance: MutableMapping[str, Any], schema: Mapping[str, Any], key: str) -> None:
    """Validate ``instance`` against ``schema`` and fill in the schema's defaults, in place.

    Raises:
        InputError: naming ``key`` and the path of the first offending value inside it.
    """
    errors = sorted(_DefaultFillingValidator(schema).iter_errors(instance), key=lambda error: list(error.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        path = ".".join([key, *(str(part) for part in error.absolute_path)])
        raise InputError(f"invalid configuration at key '{path}': {error.message}")


def _check_names(names: list[str], known: list[str], key: str, what: str) -> None:
    for index, name in enumerate(names):
        if name not in known:
            raise InputError(
                f"invalid configuration at key '{key}[{index}]': '{name}' is not {what} (known: {', '.join(known)})"
            )


def family_applies(module: Any, options: Mapping[str, Any], language_pair: str) -> bool:
    """Whether a family (options filled) can perturb test sets of ``language_pair`` (``src-tgt``): its
    ``languages`` hook (any language without one) names the pair's languages or None."""
    source, target = language_pair.split("-", 1)
    wanted = module.languages(options) if hasattr(module, "languages") else (None, None)
    return wanted[0] in (None, source) and wanted[1] in (None, target)


def _languages_text(module: Any, options: Mapping[str, Any]) -> str:
    source, target = module.languages(options) if hasattr(module, "languages") else (None, None)
    return f"{source or 'any'} -> {target or 'any'}"


def _check_family_pairs(key: str, module: Any, spec: Mapping[str, Any], config: Mapping[str, Any]) -> None:
    """A family's test sets must be of a language pair it applies to (the pair of the studies they are in)."""
    pairs = {testset: study["language_pair"] for study in config["mt_studies"].values() for testset in study["testsets"]}
    for index, testset in enumerate(spec["testsets"]):
        pair = pairs.get(testset)
        if pair is not None and not family_applies(module, spec["options"], pair):
            raise InputError(
                f"invalid configuration at key '{key}.testsets[{index}]': test set {testset} is {pair}, but the family's "
                f"rules are written for {_languages_text(module, spec['options'])}"
            )


def complete_perturbations(config: MutableMapping[str, Any]) -> None:
    """Fill the ``perturbations`` section's remaining defaults and check it (in place; no-op without one).

    Run after the schema's own defaults are filled.

    Raises:
        InputError: naming the first offending key.
    """
    section = config.get("perturbations")
    if section is None:
        return
    testsets = list(config["testsets"])
    systems = list(config["systems"])
    for family, spec in section["families"].items():
        key = f"perturbations.families.{family}"
        if family not in FAMILIES:
            raise InputError(
                f"invalid configuration at key '{key}': unknown perturbation family (known: {', '.join(FAMILIES)})"
            )
        module = family_module(family)
        fill_schema_defaults(spec["options"], module.OPTIONS_SCHEMA, f"{key}.options")
        fitting = [study for study in config["mt_studies"].values() if family_applies(module, spec["options"], study["language_pair"])]
        spec.setdefault("testsets", list(dict.fromkeys(name for study in fitting for name in study["testsets"])))
        spec.setdefault("systems", list(dict.fromkeys(
            name for study in fitting for name in study["systems"] if config["systems"][name]["kind"] != "hypotheses")))
        if not spec["testsets"] or not spec["systems"]:
            raise InputError(
                f"invalid configuration at key '{key}': no MT study has a language pair the family applies to "
                f"(its languages: {_languages_text(module, spec['options'])}); give its testsets and systems, or remove it"
            )
        _check_family_pairs(key, module, spec, config)
        spec.setdefault("functions", {name: {} for name in module.FUNCTIONS})
        if "configured_functions" in spec:  # completed before: expand the configured functions again
            spec["functions"] = copy.deepcopy(spec["configured_functions"])
        spec.setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))
        if "metrics" in section:  # the schema's default fills it in the workflow
            spec.setdefault("metrics", list(section["metrics"]))
            _check_names(spec["metrics"], list(section["metrics"]), f"{key}.metrics", "one of perturbations.metrics")
        for function, settings in spec["functions"].items():
            if function not in module.FUNCTIONS:
                raise InputError(
                    f"invalid configuration at key '{key}.functions.{function}': unknown function of family "
                    f"{family} (known: {', '.join(module.FUNCTIONS)})"
                )
            fill_schema_defaults(settings, module.FUNCTIONS[function], f"{key}.functions.{function}")
        if hasattr(module, "expand_functions"):  # one function per level (see the module docstring)
            spec["configured_functions"] = copy.deepcopy(spec["functions"])
            spec["functions"] = module.expand_functions(spec["functions"], spec["options"])
        spec.setdefault("leave_out", list(spec["functions"]))
        _check_names(spec["testsets"], testsets, f"{key}.testsets", "a test set")
        _check_names(spec["systems"], systems, f"{key}.systems", "a system")
        _check_names(spec["leave_out"], list(spec["functions"]), f"{key}.leave_out", "a function of this family")
        if len(spec["functions"]) - 1 < 1 and spec["leave_out"]:
            raise InputError(f"invalid configuration at key '{key}.leave_out': leaving out the only function leaves no pool")
        if spec["epsilon"]["stop"] < spec["epsilon"]["start"]:
            raise InputError(f"invalid configuration at key '{key}.epsilon.stop': must be >= start")
        if spec["derived_testsets"] == "pooled" and POOLED in testsets:
            raise InputError(
                f"invalid configuration at key '{key}.derived_testsets': a test set is named '{POOLED}', the name "
                "of pooled perturbed test sets; rename it or use per_testset"
            )
        for system in spec["systems"]:
            system_spec = config["systems"][system]
            if system_spec["kind"] != "hypotheses":
                continue
            if "submission" in system_spec:
                raise InputError(
                    f"invalid configuration at key '{key}.systems': {system} is a dataset's submission, which cannot "
                    "translate perturbed test sets; leave it out"
                )
            missing = [name for name in derived_testsets(family, spec) if name not in system_spec["files"]]
            if missing:
                raise InputError(
                    f"invalid configuration at key 'systems.{system}.files': {key}.systems names this hypotheses "
                    f"system, so it needs a file for every perturbed test set; missing: {', '.join(missing)}"
                )


def function_category(module: Any, function: str) -> str:
    """The category of one (expanded) function of a family, for grouping in tables and figures."""
    if hasattr(module, "instance_category"):
        return module.instance_category(function)
    return module.CATEGORIES[function]


def parts(spec: Mapping[str, Any]) -> dict[str, list[str]]:
    """The perturbed test sets' parts of one family -> the test sets each holds."""
    if spec["derived_testsets"] == "pooled":
        return {POOLED: list(spec["testsets"])}
    return {testset: [testset] for testset in spec["testsets"]}


def derived_testset(family: str, function: str, part: str) -> str:
    """The name of a perturbed test set (its table is ``results/testsets/<name>.tsv``)."""
    return f"{DERIVED_PREFIX}/{family}/{function}/{part}"


def derived_testsets(family: str, spec: Mapping[str, Any]) -> list[str]:
    """Every perturbed test set of one family (function-major order)."""
    return [derived_testset(family, function, part) for function in spec["functions"] for part in parts(spec)]
