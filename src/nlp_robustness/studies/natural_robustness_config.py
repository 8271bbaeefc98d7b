"""The ``natural_robustness`` config section (paper 001): its perturbation types, checked and completed with the
defaults that depend on other keys."""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.natural_robustness import FEW_PERTURBATIONS
from nlp_robustness.studies.natural_robustness_responses import IDENTITY

__all__ = ["complete_natural_robustness", "perturbation_types"]


def perturbation_types(section: Mapping[str, Any], families: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Every perturbation type (function) of the section's families -> its family, in config order."""
    return {function: family for family in section["families"] for function in families[family]["functions"]}


def complete_natural_robustness(config: MutableMapping[str, Any]) -> None:
    """Check the ``natural_robustness`` section and fill its defaults that depend on other keys (in place;
    no-op without one): ``leave_out`` every type, ``epsilon`` ``robustness.epsilon``,
    ``type_noise_floor_below`` :data:`~nlp_robustness.statistics.natural_robustness.FEW_PERTURBATIONS` (the
    tables' conservative-interval count), and ``systems``, the systems that translate the perturbed test sets
    of every one of its families.

    Run after :func:`~nlp_robustness.perturbations.configuration.complete_perturbations`.

    Raises:
        InputError: naming the first offending key.
    """
    section = config.get("natural_robustness")
    if section is None:
        return
    families = (config.get("perturbations") or {}).get("families", {})
    for index, family in enumerate(section["families"]):
        if family not in families:
            raise InputError(
                f"invalid configuration at key 'natural_robustness.families[{index}]': '{family}' is not a family of "
                f"perturbations.families (configured: {', '.join(families) or 'none'})"
            )
    seen: dict[str, str] = {}
    for family in section["families"]:
        for function in families[family]["functions"]:
            if function in seen:
                raise InputError(
                    f"invalid configuration at key 'natural_robustness.families': function '{function}' is in both "
                    f"{seen[function]} and {family}; perturbation types must have distinct names"
                )
            if function == IDENTITY:
                raise InputError(
                    f"invalid configuration at key 'perturbations.families.{family}.functions.{IDENTITY}': the name "
                    "is reserved for the identity test sets of the natural-robustness noise floor"
                )
            seen[function] = family
    types = list(seen)
    section.setdefault("leave_out", list(types))
    for index, name in enumerate(section["leave_out"]):
        if name not in types:
            raise InputError(
                f"invalid configuration at key 'natural_robustness.leave_out[{index}]': '{name}' is not a perturbation "
                f"type (known: {', '.join(types)})"
            )
    if len(types) < 2 and section["leave_out"]:
        raise InputError("invalid configuration at key 'natural_robustness.leave_out': leaving out the only type leaves no pool")
    section.setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))
    section.setdefault("type_noise_floor_below", FEW_PERTURBATIONS)
    if not isinstance(section["type_noise_floor_below"], int) or isinstance(section["type_noise_floor_below"], bool) \
            or section["type_noise_floor_below"] < 0:
        raise InputError("invalid configuration at key 'natural_robustness.type_noise_floor_below': must be an integer >= 0 "
                         f"(0: no per-type noise floor), not {section['type_noise_floor_below']!r}")
    if section["epsilon"]["stop"] < section["epsilon"]["start"]:
        raise InputError("invalid configuration at key 'natural_robustness.epsilon.stop': must be >= start")
    section["systems"] = [
        system for system in config["systems"] if all(system in families[family]["systems"] for family in section["families"])
    ]
    if not section["systems"]:
        raise InputError(
            "invalid configuration at key 'natural_robustness.families': no system translates the perturbed test "
            f"sets of all of {', '.join(section['families'])} (their systems keys)"
        )
