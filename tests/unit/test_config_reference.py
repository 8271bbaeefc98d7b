"""The configuration reference (docs/config.md) is the rendering of the config schema, and the schema documents
every key: :mod:`nlp_robustness.config_reference`.

The page is generated; when the schema changes, ``make config-reference`` rewrites it and this test passes again.
The renderer itself is tested on a small hand-written schema, so a change of how a construct is written shows here
rather than only as a changed page.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from nlp_robustness.config_reference import (
    COMMAND,
    entries,
    inline_value,
    main,
    render,
    sections,
)
from nlp_robustness.config_schema import load_schema, resolve_reference
from tests.paths import REPOSITORY

SCHEMA_PATH = REPOSITORY / "schemas" / "config.schema.yaml"
PAGE = REPOSITORY / "docs" / "config.md"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return load_schema(SCHEMA_PATH)


def test_the_page_is_the_rendering_of_the_schema(schema: dict[str, Any]) -> None:
    assert PAGE.is_file(), f"{PAGE.relative_to(REPOSITORY)} is missing: run `{COMMAND}`"
    assert PAGE.read_text(encoding="utf-8") == render(schema), (
        f"{PAGE.relative_to(REPOSITORY)} differs from what schemas/config.schema.yaml renders: run `{COMMAND}` "
        "(.venv/bin/python -m nlp_robustness.config_reference --write docs/config.md)")


# Every key is documented.

def _described(node: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    """A key's own description, or that of the schema it refers to (``$ref``, a plain ``allOf`` branch)."""
    if isinstance(node.get("description"), str) and node["description"].strip():
        return True
    if "$ref" in node and _described(resolve_reference({"$ref": node["$ref"]}, root), root):
        return True
    return any(_described(branch, root) for branch in node.get("allOf", []) if "if" not in branch)


def _undocumented(node: Mapping[str, Any], root: Mapping[str, Any], path: str,
                  inherited: Mapping[str, Any]) -> Iterator[str]:
    """Every property without a description, below ``node``. A ``then`` branch's property may lean on the
    description of the record's own property of that name (``kind: {const: fairseq}``); the properties of
    ``if``, ``oneOf``, ``anyOf`` and ``not`` only restrict documented keys and are not keys of their own."""
    if "$ref" in node:
        yield from _undocumented(resolve_reference({"$ref": node["$ref"]}, root), root, path, inherited)
    for name, schema in node.get("properties", {}).items():
        if not (_described(schema, root) or (name in inherited and _described(inherited[name], root))):
            yield f"{path}.{name}".lstrip(".")
        yield from _undocumented(schema, root, f"{path}.{name}", {})
    for keyword in ("additionalProperties", "items"):
        if isinstance(node.get(keyword), Mapping):
            yield from _undocumented(node[keyword], root, f"{path}.*", {})
    for schema in node.get("patternProperties", {}).values():
        yield from _undocumented(schema, root, f"{path}.*", {})
    own = {**inherited, **node.get("properties", {})}
    for branch in node.get("allOf", []):
        if "if" in branch:
            if "then" in branch:
                yield from _undocumented(branch["then"], root, path, own)
        else:
            yield from _undocumented(branch, root, path, inherited)
    if "then" in node:
        yield from _undocumented(node["then"], root, path, own)


def _stray_keys(node: Any, path: str = "") -> Iterator[str]:
    """Keys with a space and no value: what an unquoted description with a comma leaves in a flow mapping
    (``{type: integer, description: M, the number of blocks.}`` is the description "M" and a key
    "the number of blocks.")."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if value is None and " " in str(key):
                yield f"{path}: {key!r}"
            yield from _stray_keys(value, f"{path}/{key}")
    elif isinstance(node, list):
        for position, value in enumerate(node):
            yield from _stray_keys(value, f"{path}[{position}]")


def test_every_property_of_the_schema_has_a_description(schema: dict[str, Any]) -> None:
    missing = list(_undocumented(schema, schema, "", {}))
    assert not missing, "properties without a description in schemas/config.schema.yaml: " + ", ".join(missing)
    stray = list(_stray_keys(schema))
    assert not stray, "a description cut at a comma (quote it): " + "; ".join(stray)
    empty = [entry.key for entry in entries(schema) if not entry.description.strip()]
    assert not empty, f"rows without a description: {empty}"


def test_the_walk_finds_an_undocumented_property() -> None:
    fragment = {"properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}, "description": "A."}},
                "allOf": [{"if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"a": {}, "c": {}}}}]}
    assert list(_undocumented(fragment, fragment, "", {})) == ["a.b", "c"]


@pytest.mark.parametrize("config", ["config.yaml", "config/paper.yaml"])
def test_every_top_level_key_of_the_shipped_configs_has_a_section(schema: dict[str, Any], config: str) -> None:
    page = render(schema)
    keys = yaml.safe_load((REPOSITORY / config).read_text(encoding="utf-8"))
    missing = [key for key in keys if f"\n## `{key}`\n" not in page or f"| `{key}` |" not in page]
    assert not missing, f"{config}: top-level keys without a section in the reference: {missing}"


def test_the_page_opens_with_what_it_is_for_and_how_it_is_made(schema: dict[str, Any]) -> None:
    page = render(schema)
    opening = page.split("\n## ")[0]
    assert page.startswith("# Configuration reference\n\n")
    assert "It is generated" in opening and COMMAND in opening and "--write docs/config.md" in opening
    assert "do not edit it by hand" in opening and "filled in by the workflow" in opening
    assert len([line for line in opening.splitlines() if line.strip()]) == 2  # the title and one paragraph


# The renderer, on a hand-written schema.

FRAGMENT: dict[str, Any] = {
    "type": "object",
    "required": ["names"],
    "$defs": {"grid": {"type": "object", "description": "A grid.", "required": ["start"],
                       "properties": {"start": {"type": "number", "exclusiveMinimum": 0, "description": "First."}}}},
    "properties": {
        "size": {"type": ["integer", "null"], "minimum": 1, "default": None, "description": "How   many\n  of them."},
        "mode": {"enum": ["fast", "slow"], "default": "fast", "description": "Speed | style."},
        "tokenize": {"type": ["string", "null"], "enum": [None, "13a", "none"], "description": "A tokenizer."},
        "names": {
            "type": "object",
            "description": "Things by name.",
            "additionalProperties": {
                "type": "object",
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "x-path": "working-directory", "description": "Its file (<name>.txt)."},
                    "format": {"enum": ["x", "y"], "description": "Its format."},
                    "source": {"type": "string", "description": "Its source."},
                    "translator": {"type": "string", "description": "Who translated it."},
                    "tags": {"type": "array", "items": {"type": "string"}, "default": [], "description": "Tags."},
                    "levels": {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                               "default": [0.1, 1.0], "description": "Levels."},
                    "options": {"type": "object", "x-unordered": True, "default": {},
                                "additionalProperties": {"type": ["string", "number", "boolean"]}, "description": "Options."},
                },
                "if": {"properties": {"format": {"const": "x"}}},
                "then": {"required": ["source"], "properties": {"translator": {"default": "A"}}},
            },
        },
        "grid": {"$ref": "#/$defs/grid", "default": {"start": 1}},
        "machines": {
            "type": "object",
            "description": "Machines by name.",
            "additionalProperties": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": ["a", "b"], "description": "The kind."}},
                "allOf": [{"if": {"properties": {"kind": {"const": "a"}}},
                           "then": {"additionalProperties": False, "required": ["kind", "speed"],
                                    "properties": {"kind": {"const": "a"},
                                                   "speed": {"type": "number", "description": "How fast."},
                                                   "label": {"type": "string", "default": "", "description": "Shown."}}}}],
            },
        },
    },
}


def test_the_renderer_writes_types_defaults_requirements_and_descriptions() -> None:
    page = render(FRAGMENT)
    expected = [
        "## `size`",
        "| `size` | integer ≥ 1 or null | `null` | How many of them. |",
        "| `mode` | one of `fast`, `slow` | `fast` | Speed \\| style. |",
        "| `tokenize` | one of `13a`, `none` or null | — | A tokenizer. |",
        "| `names` | map of object | required | Things by name. |",
        "| `names.<name>.path` | string (path) | required | Its file (\\<name>.txt). |",
        "| `names.<name>.format` | one of `x`, `y` | — | Its format. |",
        "| `names.<name>.source` | string | required (format: x) | Its source. |",
        "| `names.<name>.translator` | string | `A` (format: x) | Who translated it. |",
        "| `names.<name>.tags` | list of string | `[]` | Tags. |",
        "| `names.<name>.levels` | list of (number > 0, ≤ 1) | `[0.1, 1.0]` | Levels. |",
        "| `names.<name>.options` | map of (string, number or boolean) (unordered) | `{}` | Options. |",
        "| `grid` | object | `{start: 1}` | A grid. |",
        "| `grid.start` | number > 0 | required | First. |",
        "| `machines` | map of object | — | Machines by name. |",
        "| `machines.<name>.kind` | one of `a`, `b` | required | The kind. |",
        "### `machines.<name>` (kind: a)",
        "| `machines.<name>.kind` | `a` | required | The kind. |",
        "| `machines.<name>.speed` | number | required | How fast. |",
        "| `machines.<name>.label` | string | `\"\"` | Shown. |",
    ]
    lines = page.splitlines()
    missing = [line for line in expected if line not in lines]
    assert not missing, "\n".join(missing) + "\n\nin:\n" + page
    headings = [line for line in lines if line.startswith("#")]
    assert headings == ["# Configuration reference", "## `size`", "## `mode`", "## `tokenize`", "## `names`", "## `grid`",
                        "## `machines`", "### `machines.<name>` (kind: a)"]  # schema order, variants after their key
    assert render(FRAGMENT) == page  # deterministic


def test_sections_hold_their_rows() -> None:
    found = {section.title: [entry.key for entry in section.entries] for section in sections(FRAGMENT)}
    assert found["`grid`"] == ["`grid`", "`grid.start`"]
    assert found["`machines.<name>` (kind: a)"] == ["`machines.<name>.kind`", "`machines.<name>.speed`",
                                                    "`machines.<name>.label`"]


@pytest.mark.parametrize(("value", "written"), [
    (None, "null"), (True, "true"), (1.0, "1.0"), (0.005, "0.005"), ("resources/datasets.yaml", "resources/datasets.yaml"),
    ("", '""'), ("null", '"null"'), ("1", '"1"'), ("a b", '"a b"'), ([5, None], "[5, null]"),
    ({"start": 1, "stop": 100}, "{start: 1, stop: 100}"),
])
def test_inline_value(value: Any, written: str) -> None:
    assert inline_value(value) == written
    assert yaml.safe_load(written) == value


def test_the_command_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema_file = tmp_path / "schema.yaml"
    schema_file.write_text(yaml.safe_dump(FRAGMENT, sort_keys=False), encoding="utf-8")
    page = tmp_path / "docs" / "config.md"
    assert main(["--schema", str(schema_file), "--check", str(page)]) == 1
    assert main(["--schema", str(schema_file), "--write", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == render(FRAGMENT)
    assert main(["--schema", str(schema_file), "--check", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["--schema", str(schema_file), "--check", str(page)]) == 1
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and str(page) in message and COMMAND in message
    assert main(["--schema", str(schema_file)]) == 0
    assert capsys.readouterr().out == render(FRAGMENT)
