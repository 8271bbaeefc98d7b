"""The configuration reference, docs/config.md, rendered from the config schema (schemas/config.schema.yaml).

The schema is where every key of the workflow's config is declared, with its type, its default and its
description; this module turns it into one Markdown page, so the reference cannot drift from what the workflow
validates and fills in (tests/unit/test_config_reference.py fails when the page and the schema differ).

Every key is written as a dotted path, a name the config chooses (a test set, a system, a study) as a
placeholder: ``systems.<name>.kind``, ``perturbations.families.<family>.sample_size``. One table per top-level
key, in schema order. How the schema's constructs are read:

* ``properties`` are the keys of a record; ``required`` ones are marked "required" instead of a default.
* an object without ``properties`` whose ``additionalProperties`` (or ``patternProperties``) is a schema is a
  *map* keyed by the user's names; the keys of its values are listed under ``<name>`` (``<family>``,
  ``<domain>``: :data:`PLACEHOLDERS`).
* ``$ref`` and ``allOf`` branches without ``if`` are merged into the key (its own description and default
  win); ``oneOf``/``anyOf``/``not`` only restrict combinations of keys and are not listed.
* an ``if`` on a key's constant value (``kind: fairseq``, ``format: wmt-da``) with a ``then``: a ``then`` that
  closes the record (``additionalProperties: false``) is a *variant* with a subsection of its own
  ("``systems.<name>`` (kind: fairseq)"); any other ``then`` adds its keys, defaults and requirements to the
  record's, labelled with its condition.
* types: ``enum`` and ``const`` values, ``null`` as "or null", numeric bounds, ``x-path`` (a path relative to the
  launch directory: :mod:`nlp_robustness.run_directory`) and ``x-unordered`` (a map whose order means nothing:
  :mod:`nlp_robustness.planning`).

Command line (from the repository root): ``python -m nlp_robustness.config_reference`` prints the page;
``--write docs/config.md`` writes it (atomically); ``--check docs/config.md`` exits with status 1 and a
one-line message when the file is not the page the schema renders (``make config-reference`` rewrites it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.config_schema import load_schema, resolve_reference

__all__ = ["COMMAND", "PLACEHOLDERS", "SCHEMA", "Entry", "Section", "check", "describe", "entries", "inline_value",
           "main", "render", "sections"]

#: The schema, relative to the repository root (the command's working directory).
SCHEMA = Path("schemas") / "config.schema.yaml"

#: The command that regenerates the page (named in its opening paragraph and in the check's message).
COMMAND = "make config-reference"

#: The placeholder of a map's keys, by the map's own key; any other map's keys are ``<name>``.
PLACEHOLDERS: dict[str, str] = {"families": "<family>", "domains": "<domain>"}

#: What the ``x-path`` annotations mean (:mod:`nlp_robustness.run_directory`), as the type column writes them.
_PATH_MARKS = {"working-directory": "path", "model": "hub id or path", "download-or-path": "download or path"}

#: Keywords that say what a value is; a key's schema without any of them only documents (or sets a default).
_SHAPE = ("type", "enum", "const", "properties", "additionalProperties", "patternProperties", "items", "$ref")

_NO_DEFAULT = "—"


@dataclass(frozen=True)
class Entry:
    """One row of the reference: a key, its type, its default ("required", or "—" when it has none) and what
    it is for, each as the Markdown of its cell."""

    key: str
    type: str
    default: str
    description: str


@dataclass
class Section:
    """A heading (level 2: a top-level key; level 3: a variant, e.g. a system kind) and its rows."""

    title: str
    level: int
    entries: list[Entry] = field(default_factory=list)


# Reading the schema.

def _view(node: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` and its plain ``allOf`` branches (those without ``if``) merged in; the node's
    own keywords win, so a key's description and default override those of the schema it refers to."""
    merged: dict[str, Any] = {}
    if "$ref" in node:
        merged.update(_view(resolve_reference({"$ref": node["$ref"]}, root), root))
    conditional = []
    for branch in node.get("allOf", []):
        if "if" in branch:
            conditional.append(branch)
        else:
            merged.update(_view(branch, root))
    merged.update({key: value for key, value in node.items() if key not in ("$ref", "allOf")})
    if conditional:
        merged["allOf"] = conditional
    return merged


def _types(view: Mapping[str, Any]) -> list[str]:
    declared = view.get("type", [])
    return [declared] if isinstance(declared, str) else list(declared)


def _is_map(view: Mapping[str, Any]) -> bool:
    values = view.get("additionalProperties")
    return "properties" not in view and (isinstance(values, Mapping) or bool(view.get("patternProperties")))


def _map_values(view: Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(view.get("additionalProperties"), Mapping):
        return view["additionalProperties"]
    return next(iter(view["patternProperties"].values()))


def _condition(branch: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(key, value) of an ``if`` that tests one key's constant value, e.g. ``kind: fairseq``; else None."""
    tested = branch.get("if", {}).get("properties", {})
    if len(tested) == 1:
        (key, schema), = tested.items()
        if isinstance(schema, Mapping) and "const" in schema:
            return key, schema["const"]
    return None


def _conditional_branches(view: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(label, then) of every ``if``/``then`` of a record that tests a key's constant value: its own, and those
    of its ``allOf``."""
    branches = [view] if "if" in view else []
    branches += [branch for branch in view.get("allOf", []) if "if" in branch]
    found = []
    for branch in branches:
        condition = _condition(branch)
        if condition is not None and "then" in branch:
            found.append((f"{condition[0]}: {inline_value(condition[1])}", branch["then"]))
    return found


def _is_variant(then: Mapping[str, Any]) -> bool:
    return then.get("additionalProperties") is False and bool(then.get("properties"))


# Writing a cell.

def inline_value(value: Any) -> str:
    """A value as inline YAML (flow style): ``[bleu, chrf]``, ``{start: 1, stop: 100, step: 1}``, ``null``,
    ``""``; a string is quoted only where YAML would read it as something else."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        plain = re.fullmatch(r"[A-Za-z0-9_./-]+", value) is not None and yaml.safe_load(value) == value
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{inline_value(key)}: {inline_value(item)}" for key, item in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(inline_value(item) for item in value) + "]"
    raise TypeError(f"config schema: cannot write {value!r} as YAML")


def describe(text: str) -> str:
    """A description as one line of Markdown table cell: whitespace collapsed, ``|`` and ``<`` escaped."""
    line = " ".join(text.split())
    return line.replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<")


def _bounds(view: Mapping[str, Any]) -> str:
    signs = (("exclusiveMinimum", ">"), ("minimum", "≥"), ("exclusiveMaximum", "<"), ("maximum", "≤"))
    return ", ".join(f"{sign} {inline_value(view[key])}" for key, sign in signs if key in view)


def _alternatives(names: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _grouped(text: str) -> str:
    """A list's or a map's value type, in parentheses where it is itself a choice or has bounds."""
    return f"({text})" if " or " in text or "," in text else text


def _type_text(view: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    """The type cell of a key: ``integer ≥ 1 or null``, ``one of `a`, `b` ``, ``list of string``, ``map of
    object``, with ``(path)`` for an ``x-path`` and ``(unordered)`` for an ``x-unordered`` map."""
    types = _types(view)
    nullable = "null" in types or None in view.get("enum", [])
    if "const" in view:
        text = f"`{inline_value(view['const'])}`"
    elif "enum" in view:
        text = "one of " + ", ".join(f"`{inline_value(value)}`" for value in view["enum"] if value is not None)
    else:
        names = []
        for name in [name for name in types if name != "null"] or (["object"] if "properties" in view else []):
            if name == "array":
                name = "list of " + _grouped(_type_text(_view(view.get("items", {}), root), root))
            elif name == "object" and _is_map(view):
                name = "map of " + _grouped(_type_text(_view(_map_values(view), root), root))
            names.append(name)
        text = _alternatives(names) if names else "any"
        if bounds := _bounds(view):
            text += " " + bounds
    if nullable:
        text += " or null"
    if view.get("x-path") in _PATH_MARKS:
        text += f" ({_PATH_MARKS[view['x-path']]})"
    if view.get("x-unordered"):
        text += " (unordered)"
    return text


def _default_text(view: Mapping[str, Any], required: bool, conditions: Sequence[str] = ()) -> str:
    """``default`` as inline YAML, else "required" (with the conditions under which it is), else "—"."""
    if "default" in view:
        return f"`{inline_value(view['default'])}`"
    if required:
        return "required"
    if conditions:
        return "required (" + "; ".join(conditions) + ")"
    return _NO_DEFAULT


# Walking the schema.

class _Walk:
    """The sections of one top-level key: its own, then one per variant met below it."""

    def __init__(self, root: Mapping[str, Any], title: str) -> None:
        self.root = root
        self.sections = [Section(title, 2)]

    def key(self, path: str, node: Mapping[str, Any], required: bool, section: Section, label: str = "",
            required_when: Sequence[str] = (), conditional_defaults: Sequence[tuple[str, Any]] = (),
            inherited: str = "") -> None:
        """A row for the key at ``path`` (the one its section's table lists), then the keys below it."""
        view = _view(node, self.root)
        default = _default_text(view, required, required_when)
        for condition, value in conditional_defaults:
            conditional = f"`{inline_value(value)}` ({condition})"
            default = conditional if default == _NO_DEFAULT else f"{default}; {conditional}"
        description = describe(view.get("description", inherited))
        shown = f"`{path}`" + (f" ({label})" if label else "")
        section.entries.append(Entry(shown, _type_text(view, self.root), default, description))
        self.below(path, view, section)

    def below(self, path: str, view: Mapping[str, Any], section: Section) -> None:
        """The keys of a record, or those of a map's values (under a placeholder)."""
        if "properties" in view or _conditional_branches(view):
            self.record(path, view, section)
        elif _is_map(view):
            values = _view(_map_values(view), self.root)
            name = path.rsplit(".", 1)[-1]
            placeholder = PLACEHOLDERS.get(name, "<name>") if "." in path else "<name>"
            child = f"{path}.{placeholder}"
            if "description" in values:
                section.entries.append(Entry(f"`{child}`", _type_text(values, self.root), _NO_DEFAULT,
                                             describe(values["description"])))
            self.below(child, values, section)

    def record(self, path: str, view: Mapping[str, Any], section: Section) -> None:
        properties: Mapping[str, Any] = view.get("properties", {})
        required = set(view.get("required", []))
        branches = _conditional_branches(view)
        variants = [(label, then) for label, then in branches if _is_variant(then)]
        partial = [(label, then) for label, then in branches if not _is_variant(then)]
        extra: list[str] = []  # keys only a partial branch declares, in the order met
        for _, then in partial:
            extra += [name for name in then.get("properties", {}) if name not in properties and name not in extra]
        for name in [*properties, *extra]:
            base = properties.get(name, {})
            required_when = [label for label, then in partial if name in then.get("required", [])]
            shaped = [(label, then["properties"][name]) for label, then in partial
                      if any(keyword in then.get("properties", {}).get(name, {}) for keyword in _SHAPE)]
            defaults = [(label, then["properties"][name]["default"]) for label, then in partial
                        if "default" in then.get("properties", {}).get(name, {})
                        and not any(keyword in then["properties"][name] for keyword in _SHAPE)]
            child = f"{path}.{name}"
            if not shaped or any(keyword in _view(base, self.root) for keyword in _SHAPE):
                self.key(child, base, name in required, section, required_when=required_when,
                         conditional_defaults=defaults)
            for label, schema in shaped:  # a key whose shape depends on the condition: a row per condition
                self.key(child, schema, name in required or label in required_when, section, label=label,
                         inherited=_view(base, self.root).get("description", ""))
        for label, then in variants:
            subsection = Section(f"`{path}` ({label})", 3)
            self.sections.append(subsection)
            variant_required = required | set(then.get("required", []))
            for name, schema in then["properties"].items():
                inherited = _view(properties.get(name, {}), self.root).get("description", "")
                self.key(f"{path}.{name}", schema, name in variant_required, subsection, inherited=inherited)


def sections(schema: Mapping[str, Any]) -> list[Section]:
    """The reference's sections, in schema order: per top-level key, its table and its variants' tables."""
    found: list[Section] = []
    required = set(schema.get("required", []))
    for name, node in schema.get("properties", {}).items():
        walk = _Walk(schema, f"`{name}`")
        walk.key(name, node, name in required, walk.sections[0])
        found += walk.sections
    return found


def entries(schema: Mapping[str, Any]) -> Iterator[Entry]:
    """Every row of the reference, in page order."""
    for section in sections(schema):
        yield from section.entries


def _opening() -> str:
    return (
        "What this page is for: every key of the workflow's config (config.yaml, or the file given with "
        "`--configfile`), with its type, its default and what it does, one table per top-level key. It is generated "
        "from the descriptions of the config schema, [schemas/config.schema.yaml](../schemas/config.schema.yaml), by "
        f"`{COMMAND}` (`python -m nlp_robustness.config_reference --write docs/config.md`), and a unit test fails "
        "when the two differ, so do not edit it by hand: edit the schema and regenerate it. The defaults are filled in "
        "by the workflow before any job runs (nlp_robustness.planning), so a config writes only what it changes; "
        "\"required\" marks a key a config must give (in a record it gives), \"—\" a key without a default (absent unless given, or "
        "derived as its description says). `<name>` stands for a name the config chooses (a test set, a system, "
        "a study); a map keeps the order it is written in (the order of rows and columns in the tables) unless "
        "marked unordered. (path): a path, relative to the launch directory (where snakemake is started); "
        "(hub id or path): a Hugging Face hub id or a local model directory; (download or path): a download of the dataset "
        "manifest (its key) or else a path, relative to the launch directory."
    )


def render(schema: Mapping[str, Any]) -> str:
    """The whole page, as Markdown."""
    lines = ["# Configuration reference", "", _opening(), ""]
    for section in sections(schema):
        lines += [f"{'#' * section.level} {section.title}", "", "| Key | Type | Default | Description |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {entry.key} | {entry.type} | {entry.default} | {entry.description} |" for entry in section.entries]
        lines.append("")
    return "\n".join(lines)


def check(page: str | Path, schema: Mapping[str, Any]) -> str | None:
    """None when ``page`` holds the rendering of ``schema``; else a one-line message naming the file."""
    path = Path(page)
    if not path.is_file():
        return f"{path} does not exist; write it with `{COMMAND}`"
    if path.read_text(encoding="utf-8") != render(schema):
        return f"{path} differs from the reference the config schema renders; regenerate it with `{COMMAND}`"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the page, write it (``--write``) or check a file against it (``--check``)."""
    parser = argparse.ArgumentParser(prog="python -m nlp_robustness.config_reference",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--schema", type=Path, default=SCHEMA, help=f"the config schema (default {SCHEMA})")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", type=Path, metavar="FILE", help="write the page to FILE (atomically)")
    action.add_argument("--check", type=Path, metavar="FILE", help="exit with status 1 if FILE is not the page")
    arguments = parser.parse_args(argv)
    schema = load_schema(arguments.schema)
    if arguments.check is not None:
        problem = check(arguments.check, schema)
        if problem is not None:
            print(problem, file=sys.stderr)
            return 1
        return 0
    page = render(schema)
    if arguments.write is not None:
        with atomic_write(arguments.write) as handle:
            handle.write(page)
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
