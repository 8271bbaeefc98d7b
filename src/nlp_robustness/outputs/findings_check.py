"""The docs' numbers checked against a run: every number README.md and docs/*.md print has a named source.

A number written from memory drifts from the run that the report shows. So every number the pages print is listed,
passage by passage and in the order it is printed, in one sources file (``docs/numbers-sources.yaml``), either with
where it comes from in the default run or as deliberately not a result of the run, with the reason:

.. code-block:: yaml

    pages:
      - file: docs/paper-001-natural-robustness.md
        passages:
          - lead: What changed in issue 43.                        # the first words of a paragraph, item or table
            from: {file: results/tables/natural_robustness/scores.csv, where: {sample: all, type: all}}
            numbers:                                                # every number it prints, in order
              - "0.50"                                              # not a result: the reason below covers it
              - {text: "0.59", cell: {where: {responder: apertium-en-es-fr, criterion: exact}, column: score},
                 format: .2f}
              - {text: "0.13 [0.10, 0.18]", cell: {where: {responder: convs2s-tatoeba, criterion: exact}},
                 print: "{score:.2f} [{ci_low:.2f}, {ci_high:.2f}]"}
            excluded: the scores before issue 43 (an earlier run)
      - file: docs/config.md
        excluded: generated from the config schema, its numbers are defaults and bounds, no result

A passage (:mod:`nlp_robustness.outputs.doc_passages`: a heading, paragraph, list item, table or code block) is named
by its ``lead``, words it begins with that begin no other passage of its page. Its ``numbers`` are, in the order the
page prints them:

* a source (a mapping: ``text`` as printed, one or more numbers, and one kind of source; the kinds and ``print``
  templates: :mod:`nlp_robustness.outputs.number_sources`); the passage's ``from`` (a file and ``where``) completes
  its ``cell``, ``count`` and ``distinct`` sources;
* a string of numbers as printed, separated by spaces, that are not results of the default run (timings, job counts,
  config values, the paper's claims, earlier runs' numbers, one-off measurements): the passage's ``excluded`` says why;
* in a table passage, one ``table`` entry for the table's rows (after the header's numbers): ``table`` (``file``,
  ``where``, and ``key``: the column a row's label selects, or ``{column: "prefix-{}"}``), ``cells`` (a template per
  value column, the last cells of each row; a mapping ``{print, where, file}`` where a column selects its own rows)
  and ``rows`` (each row's label cells as printed, joined by " | ", or ``{lead, where, file}``), so a table copied
  from a results table is one entry.

:func:`check` returns one message per disagreement: a page or passage with numbers the sources do not list, a lead
that names no passage or several, numbers that are not the ones the page prints (a number added to a page without a
source fails here, without a run), and, given the run directory, a number that differs from its source at the
printed precision or a source that is missing. An empty list means the docs say what the run says.
``tests/unit/test_findings_check.py`` checks the sources' structure on every run of the tests and the check itself on
planted contradictions; ``make run`` ends with the whole check on the default run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from nlp_robustness.outputs.doc_passages import Passage, lead_words, number_tokens, passages, same_token
from nlp_robustness.outputs.number_sources import RunFiles, kind_of, merged, render, selected_row, selected_rows, \
    source_text, template_pattern

__all__ = ["check", "check_page", "draft", "main", "repository_pages"]


def repository_pages(root: Path) -> dict[str, str]:
    """The pages whose numbers are checked: README.md and every docs/*.md under ``root``, by relative path."""
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return {file.relative_to(root).as_posix(): file.read_text(encoding="utf-8") for file in files if file.is_file()}


def check(pages: Mapping[str, str], sources: Mapping[str, Any], run_directory: Path | None,
          config: Mapping[str, Any] | None = None) -> list[str]:
    """Every disagreement between ``pages`` (path -> Markdown) and the sources (module docstring); with
    ``run_directory`` None only the structure is checked (every number has an entry, in order, and every entry its
    number), not the values."""
    problems: list[str] = []
    listed: dict[str, Mapping[str, Any]] = {}
    for page in sources.get("pages", []):
        if str(page["file"]) in listed:
            problems.append(f"sources list {page['file']} twice")
        listed[str(page["file"])] = page
    problems += [f"{file}: a page the sources do not list" for file in pages if file not in listed]
    problems += [f"sources list {file}, which is not a page here" for file in listed if file not in pages]
    files = RunFiles(run_directory) if run_directory is not None else None
    for file, page in listed.items():
        if file not in pages:
            continue
        if "excluded" in page:
            if page.get("passages") or not str(page["excluded"]).strip():
                problems.append(f"{file}: an excluded page has a reason and no passages")
            continue
        problems += check_page(file, pages[file], page.get("passages") or [], files, config or {})
    return problems


def check_page(file: str, markdown: str, entries: Sequence[Mapping[str, Any]], files: RunFiles | None,
               config: Mapping[str, Any]) -> list[str]:
    """The disagreements of one page with its passages' entries."""
    problems: list[str] = []
    found = passages(markdown)
    claimed: dict[int, Mapping[str, Any]] = {}
    for entry in entries:
        lead = lead_words(str(entry["lead"]))
        matches = [index for index, passage in enumerate(found) if _begins(passage.words, lead)]
        if not matches:
            problems.append(f"{file}: the sources name a passage '{entry['lead']} …' that the page does not have")
        elif len(matches) > 1:
            lines = ", ".join(str(found[index].line) for index in matches)
            problems.append(f"{file}: '{entry['lead']} …' begins {len(matches)} passages (lines {lines}): give more words")
        elif matches[0] in claimed:
            problems.append(f"{file}:{found[matches[0]].line}: two entries name the passage '{entry['lead']} …'")
        else:
            claimed[matches[0]] = entry
    for index, passage in enumerate(found):
        if index in claimed:
            problems += _check_passage(file, passage, claimed[index], files, config)
        elif number_tokens(passage.text):
            problems.append(f"{file}:{passage.line}: '{passage.lead} …' prints {number_tokens(passage.text)} and has "
                            "no entry in the sources")
    return problems


def _begins(words: Sequence[str], lead: Sequence[str]) -> bool:
    """Whether a passage's words begin with a lead's: all but its last word the same, its last word the start of the
    passage's (``BIO'18`` begins ``BIO'18: the paper …``)."""
    if not lead or len(words) < len(lead):
        return False
    return tuple(words[:len(lead) - 1]) == tuple(lead[:-1]) and words[len(lead) - 1].startswith(lead[-1])


def _where(passage: Passage, file: str) -> str:
    return f"{file}:{passage.line} '{passage.lead} …'"


def _compare(printed: Sequence[str], expected: Sequence[str | None]) -> int | None:
    """The first position where the printed tokens differ from the expected (None: any one token), or None."""
    for position, (token, wanted) in enumerate(zip(printed, expected)):
        if wanted is not None and not same_token(token, wanted):
            return position
    return None if len(printed) == len(expected) else min(len(printed), len(expected))


def _check_passage(file: str, passage: Passage, entry: Mapping[str, Any], files: RunFiles | None,
                   config: Mapping[str, Any]) -> list[str]:
    where = _where(passage, file)
    items = list(entry.get("numbers") or [])
    tables = [item for item in items if isinstance(item, Mapping) and "table" in item]
    strings = [item for item in items if isinstance(item, str)]
    problems = []
    if strings and not str(entry.get("excluded", "")).strip():
        problems.append(f"{where}: numbers listed as not results ({', '.join(strings)}) without an 'excluded' reason")
    if tables and (passage.kind != "table" or items[-1] is not tables[0] or len(tables) > 1):
        problems.append(f"{where}: a 'table' entry is the last entry of a table passage, and its only one")
        return problems
    printed = number_tokens(passage.text if not tables else " | ".join(passage.rows[0]) if passage.rows else "")
    expected: list[str] = []
    for item in items[:len(items) - len(tables)]:
        tokens = number_tokens(item if isinstance(item, str) else str(item.get("text", "")))
        expected += tokens
        if not isinstance(item, str):
            problems += [f"{where}: {problem}" for problem in _entry_problems(item, tokens)]
    if not printed and not tables:
        problems.append(f"{where}: prints no number, so it needs no entry")
    position = _compare(printed, expected)
    if position is not None:
        problems.append(f"{where}: at number {position + 1} the page prints {printed[position:position + 3]}, the "
                        f"sources list {expected[position:position + 3]} ({len(printed)} printed, {len(expected)} listed)")
        return problems
    if tables:
        problems += _check_table(where, passage, tables[0], files)
    if files is None:
        return problems
    for item in items[:len(items) - len(tables)]:
        if isinstance(item, str):
            continue
        text = str(item.get("text", ""))
        try:
            said = source_text(item, files, config, entry.get("from"))
        except (LookupError, ValueError, KeyError) as error:
            problems.append(f"{where}, number {text}: {error}")
            continue
        same = said == text if not number_tokens(said) else _compare(number_tokens(text), number_tokens(said)) is None
        if not same:
            problems.append(f"{where}: prints {text} where the run says {said}")
    return problems


def _entry_problems(item: Mapping[str, Any], tokens: Sequence[str]) -> list[str]:
    """What is wrong with a source entry as written, without a run: no number in its text, no kind or several, a
    fixed number without its reason."""
    problems = []
    if not tokens:
        problems.append(f"the entry '{item.get('text')}' names no number")
    try:
        kind = kind_of(item)
    except ValueError as error:
        return [*problems, str(error)]
    if kind == "fixed" and not str(item["fixed"]).strip():
        problems.append(f"the fixed number {item.get('text')} does not say why it is no result")
    return problems


def _cell_spec(cell: Any) -> Mapping[str, Any]:
    return {"print": cell} if isinstance(cell, str) else cell


def _key(key: Any, lead: str) -> dict[str, str]:
    """The ``where`` a row's label means: ``key: system`` selects system = the label, ``key: {system: "defr-{}"}``
    system = the label put in the template."""
    if not key:
        return {}
    if isinstance(key, str):
        return {key: lead}
    return {str(column): str(template).replace("{}", lead) for column, template in key.items()}


def _check_table(where: str, passage: Passage, item: Mapping[str, Any], files: RunFiles | None) -> list[str]:
    """A table's rows against a ``table`` entry: each row's label cells are its row's lead, each value cell prints
    what its template prints (its literal numbers as written; with a run, every value)."""
    table = dict(item["table"])
    cells = [_cell_spec(cell) for cell in item.get("cells") or []]
    rows = list(item.get("rows") or [])
    body = passage.rows[1:]
    problems = []
    if len(rows) != len(body):
        return [f"{where}: the table has {len(body)} rows, the sources {len(rows)}"]
    for row, printed_row in zip(rows, body):
        row = {"lead": row} if isinstance(row, str) else dict(row)
        labels = len(printed_row) - len(cells)
        label = " | ".join(printed_row[:max(labels, 0)])
        if labels < 0 or lead_words(label) != lead_words(str(row["lead"])):
            problems.append(f"{where}: a row reads '{label}' where the sources have '{row['lead']}' "
                            f"({len(printed_row)} cells, {len(cells)} of them values)")
            continue
        for column, (cell, text) in enumerate(zip(cells, printed_row[labels:]), start=labels + 1):
            tokens = number_tokens(text)
            position = _compare(tokens, template_pattern(str(cell["print"])))
            if position is not None:
                problems.append(f"{where}, row '{row['lead']}', column {column}: prints '{text}', which is not "
                                f"'{cell['print']}'")
                continue
            if files is None:
                continue
            key = _key(table.get("key"), str(row["lead"])) if "where" not in row else {}
            spec = merged({"where": {**key, **dict(row.get("where") or {}), **dict(cell.get("where") or {})}}, table)
            path = str(cell.get("file", row.get("file", table.get("file"))))
            try:
                said = render(str(cell["print"]), selected_row(selected_rows(files.table(path), spec["where"], path),
                                                               spec, path), path)
            except (LookupError, ValueError) as error:
                problems.append(f"{where}, row '{row['lead']}', column {column}: {error}")
                continue
            if _compare(tokens, number_tokens(said)) is not None:
                problems.append(f"{where}, row '{row['lead']}', column {column}: prints {text} where the run says {said}")
    return problems


def draft(file: str, markdown: str) -> str:
    """A first sources entry for a page: every passage with numbers named by a lead that tells it apart, its
    numbers as one string to replace by sources or to give an ``excluded`` reason (the ``--draft`` option)."""
    found = passages(markdown)
    lines = [f"  - file: {file}", "    passages:"]
    for passage in found:
        tokens = number_tokens(passage.text)
        if not tokens:
            continue
        size = min(6, len(passage.words))
        while size < len(passage.words) and sum(other.words[:size] == passage.words[:size] for other in found) > 1:
            size += 1
        lead = " ".join(passage.words[:size])
        lines.append(f"      - lead: {yaml.safe_dump(lead, allow_unicode=True, width=1000).strip().removesuffix('...').strip()}")
        lines.append("        excluded: TODO")
        lines.append(f"        numbers: [\"{' '.join(tokens)}\"]")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nlp_robustness.outputs.findings_check docs/numbers-sources.yaml RUN_DIRECTORY``: exit 1 and print
    every disagreement, 0 when README.md and docs/*.md say what the run says; ``--draft PAGE`` prints a first sources
    entry for a page instead."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", type=Path, nargs="?")
    parser.add_argument("run_directory", type=Path, nargs="?")
    parser.add_argument("--root", type=Path, default=Path("."), help="where README.md and docs/ are (default: here)")
    parser.add_argument("--config", type=Path, default=Path("config.yaml"), help="the run's config (for config sources)")
    parser.add_argument("--draft", type=Path, help="print a first sources entry for this page and stop")
    arguments = parser.parse_args(argv)
    if arguments.draft is not None:
        print(draft(arguments.draft.as_posix(), arguments.draft.read_text(encoding="utf-8")), end="")
        return 0
    if arguments.sources is None or arguments.run_directory is None:
        parser.error("the sources file and the run directory are required")
    config = yaml.safe_load(arguments.config.read_text(encoding="utf-8")) if arguments.config.is_file() else {}
    sources = yaml.safe_load(arguments.sources.read_text(encoding="utf-8"))
    pages = repository_pages(arguments.root)
    problems = check(pages, sources, arguments.run_directory, config)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{len(pages)} pages: every number is its source's in {arguments.run_directory} ({arguments.sources})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
