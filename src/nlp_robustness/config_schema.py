"""The config schema (schemas/config.schema.yaml) as the workflow reads it: loaded once per use, and its local
``$ref`` references (``#/$defs/...``) resolved, for validation (:mod:`nlp_robustness.config.validation`), planning (defaults),
the run directory (``x-path`` keys) and the config reference (docs/config.md)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from nlp_robustness.errors import InputError

__all__ = ["load_schema", "resolve_reference"]


def load_schema(path: str | Path) -> dict[str, Any]:
    """The schema at ``path``, as plain YAML (``$ref`` left for :func:`resolve_reference`)."""
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


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
