"""Local ``$ref`` references of a JSON schema, resolved: the config schema's definitions (``#/$defs/...``) read by
planning (defaults), the run directory (``x-path`` keys) and the config reference (docs/config.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlp_robustness.errors import InputError

__all__ = ["resolve_reference"]


def resolve_reference(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema ``schema`` stands for: itself, or what its ``$ref`` (followed as often as it leads to another)
    points at within ``root``.

    Raises:
        InputError: A reference that is not local (``#/...``): the workflow's schemas refer only within themselves.
    """
    while "$ref" in schema:
        reference = schema["$ref"]
        if not reference.startswith("#/"):
            raise InputError(f"config schema: only local references are supported, got {reference!r}")
        node: Any = root
        for part in reference[2:].split("/"):
            node = node[part]
        schema = node
    return schema
