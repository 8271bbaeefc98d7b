"""Config files as written: refused when they are neither YAML nor JSON (naming the line and column), or when they
write a key twice in one mapping (which Snakemake's loader would keep silently, the last one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

import yaml

from nlp_robustness.errors import InputError

__all__ = ["check_config_syntax", "check_duplicate_keys"]


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else repr(key)


def _first_duplicate(node: yaml.Node, loader: yaml.SafeLoader, path: list[str], visited: set[int]):
    """(key path, line of the first occurrence, line of the second) of the first key a mapping repeats, or None."""
    if id(node) in visited:  # an alias repeats a node: it was checked where it was defined
        return None
    visited.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = loader.construct_object(key_node)  # "1" and 1 differ, as in the config dict
                line = key_node.start_mark.line + 1
                if key in seen:
                    return ".".join([*path, _key_text(key)]), seen[key], line
                seen[key] = line
                child_path = [*path, _key_text(key)]
            else:
                child_path = [*path, "<key>"]
            found = _first_duplicate(value_node, loader, child_path, visited)
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            parent = path[:-1] + [f"{path[-1]}[{index}]"] if path else [f"[{index}]"]
            found = _first_duplicate(item, loader, parent, visited)
            if found is not None:
                return found
    return None


def check_config_syntax(path: str | Path) -> None:
    """Refuse a config file that is neither YAML nor JSON, naming the file, line and column of the fault.

    Snakemake's own loader says only "Config file is not valid JSON or YAML" (it drops the parser's position);
    the Snakefile calls this on its default config file before Snakemake reads it. A missing file is left to
    Snakemake, which names it.

    Raises:
        InputError: ``<file>: line L, column C: <what the YAML parser found>`` (a tab in the indentation is
            named as such), or the file is not UTF-8.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read config file {path}: {error}") from None
    try:
        json.loads(text)
        return
    except ValueError:
        pass
    try:
        yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        lines = text.splitlines()
        line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
        indentation = line[: len(line) - len(line.lstrip())]
        hint = " (a tab in the indentation: YAML indents with spaces only)" if "\t" in indentation else ""
        context = error.context
        opened = error.context_mark
        if context and opened is not None and mark is not None and (opened.line, opened.column) != (mark.line, mark.column):
            # where the unclosed bracket, quote or block began: the parser notices only where it ran out
            context += f" begun at line {opened.line + 1}, column {opened.column + 1},"
        what = " ".join(part for part in (context, error.problem) if part)
        raise InputError(f"{path}: {where}not valid YAML: {what}{hint}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML: {' '.join(str(error).split())}") from None


def check_duplicate_keys(paths: Iterable[str | Path]) -> None:
    """Refuse a config file that writes a key twice in one mapping (a system or test set given twice, say).

    Snakemake reads config files with a plain YAML (or JSON) loader, which keeps the last of two equal
    keys without a word; this re-reads each file and stops at the first repeated key. Keys are compared
    as the loader reads them (``1`` and ``"1"`` differ; ``wmt14`` and ``"wmt14"`` do not); a merge key
    (``<<``) may repeat what it merges. A file YAML cannot parse (JSON-only syntax) is checked as JSON.

    Raises:
        InputError: Naming the file, the line of the second occurrence, the key path (e.g.
            ``testsets.wmt14``) and the line of the first; or the file cannot be read.
    """
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read config file {path}: {error}") from None
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            found = None if root is None else _first_duplicate(root, loader, [], set())
        except yaml.YAMLError:
            _check_duplicate_json_keys(path, text)
            continue
        finally:
            loader.dispose()
        if found is not None:
            key_path, first, second = found
            raise InputError(
                f"{path}: line {second}: key '{key_path}' is written twice (first on line {first}); "
                "Snakemake would keep only the last, silently: remove or rename one of them"
            )


def _check_duplicate_json_keys(path: str | Path, text: str) -> None:
    def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        repeated = next((key for index, key in enumerate(keys) if key in keys[:index]), None)
        if repeated is not None:
            raise InputError(
                f"{path}: key '{repeated}' is written twice in one object; Snakemake would keep only the last, silently"
            )
        return dict(pairs)

    try:
        json.loads(text, object_pairs_hook=refuse_duplicates)
    except ValueError:
        return  # neither YAML nor JSON to us: Snakemake, which read it, reports what is wrong with it
