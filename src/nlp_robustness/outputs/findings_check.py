"""The README's findings checked against the run's tables: every number a finding prints comes from a named cell.

README.md's section "What the default run finds" states each finding with numbers (estimates, interval ends,
Holm p-values, counts of separated pairs). A finding written from memory drifts from the run that the report shows;
so every number in a finding's bullet is listed, in the order it is printed, in a sources file
(``docs/findings-sources.yaml``) with where it comes from:

* ``cell``: one row of a CSV under the run directory (``file``, ``where``: column -> value, or a list of accepted
  values) and its ``column``, printed with ``format`` (a Python format spec such as ``.2f``, ``+.1f``, ``,d``, or
  ``p`` for a p-value as the tables print it, whose "< 0.001" the README's text reads as 0.001) after
  multiplying by ``scale`` (100 for a share printed in %); ``agg: max`` or ``min`` takes the largest or smallest of
  several rows (of its ``by`` column, its ``column`` printed) instead of requiring exactly one;
  ``complement: true`` prints 1 - the value (a noise floor from a share unchanged);
* ``count``: the number of rows of ``file`` that ``where`` selects;
* ``distinct``: the number of distinct values in ``columns`` of the rows ``where`` selects (e.g. the systems of a
  comparisons table);
* ``config``: a value of the run's config (a dotted key), printed with ``format``;
* ``fixed``: a number that is not a result (a paper's claim, a name) with the reason.

:func:`check` reads the README and the sources and returns one message per disagreement: a number of the text
without a source, a source without its number, a number that differs from its cell at the printed precision, a
file or row that is missing. An empty list means the README says what the tables say. ``make run`` runs it after
the report; ``tests/unit/test_findings_check.py`` checks the sources' structure on every run of the tests and the
check itself on planted contradictions.

Numbers are read as the README prints them: a sign (``−``, U+2212, or ``+``) and digits with ``,`` thousands and a
``.`` decimal part; digits glued to a letter or an apostrophe (WMT22, β2, WMT'14) are part of a name, not numbers.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

__all__ = ["Finding", "check", "findings", "main", "number_tokens", "printed"]

#: The README section whose bullets are findings.
SECTION = "What the default run finds"

_NUMBER = re.compile(r"(?<![\w.'’−+\-])[−+\-]?\d[\d,]*(?:\.\d+)?(?![\w'])")


@dataclass(frozen=True)
class Finding:
    """One bullet of the findings section: its first words (how the sources file names it) and its whole text."""

    lead: str
    text: str


def findings(readme: str, section: str = SECTION) -> list[Finding]:
    """The bullets of ``section`` of a Markdown ``readme`` (continuation lines joined), in order.

    Raises:
        ValueError: the README has no such section.
    """
    lines = readme.splitlines()
    try:
        start = next(index for index, line in enumerate(lines) if re.fullmatch(rf"#+ {re.escape(section)}\s*", line))
    except StopIteration:
        raise ValueError(f"README.md has no section '{section}'") from None
    bullets: list[list[str]] = []
    open_bullet = False  # a blank line or a paragraph ends a bullet
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("- "):
            bullets.append([line[2:].strip()])
            open_bullet = True
        elif open_bullet and line.startswith("  ") and line.strip():
            bullets[-1].append(line.strip())
        else:
            open_bullet = False
    texts = [" ".join(bullet) for bullet in bullets]
    return [Finding(_lead(text), _without_links(text)) for text in texts]


def _lead(text: str) -> str:
    return " ".join(text.replace("*", "").split()[:6])


def _without_links(text: str) -> str:
    """The text without Markdown link targets (``[More](docs/x.md#y-2)``: the target's digits are no finding)."""
    return re.sub(r"\]\([^)]*\)", "]", text)


def number_tokens(text: str) -> list[str]:
    """The numbers of ``text`` as printed, in order (module docstring)."""
    return _NUMBER.findall(text)


def printed(value: float, spec: str, scale: float = 1.0) -> str:
    """``value * scale`` printed with the format ``spec``, a minus as U+2212 (as the README prints it); ``,d``-like
    integer specs round first."""
    scaled = value * scale
    if spec == "p":  # as every table prints a p-value (table_writer.p_value_text): "< 0.001" reads as 0.001
        return "0.001" if scaled < 0.001 else f"{scaled:.3f}"
    if spec.endswith("d"):
        scaled = int(round(scaled))
    text = format(scaled, spec)
    return text.replace("-", "−")


def _normal(text: str) -> str:
    return text.replace("−", "-").replace("\u2009", "")


def _selected(frame: pd.DataFrame, where: Mapping[str, Any], path: str) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for column, wanted in (where or {}).items():
        if column not in frame.columns:
            raise LookupError(f"{path}: no column '{column}'")
        accepted = [str(value) for value in (wanted if isinstance(wanted, list) else [wanted])]
        mask &= frame[column].astype(str).isin(accepted)
    return frame[mask]


def _config_value(config: Mapping[str, Any], key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise LookupError(f"config has no key '{key}'")
        value = value[part]
    return value


class _Tables:
    """The run's CSVs, each read once."""

    def __init__(self, run_directory: Path) -> None:
        self.run_directory = run_directory
        self._frames: dict[str, pd.DataFrame] = {}

    def __call__(self, path: str) -> pd.DataFrame:
        if path not in self._frames:
            file = self.run_directory / path
            if not file.is_file():
                raise LookupError(f"{path}: no such file in {self.run_directory}")
            self._frames[path] = pd.read_csv(file, keep_default_na=False, na_values=[""])
        return self._frames[path]


def source_text(source: Mapping[str, Any], tables: _Tables, config: Mapping[str, Any]) -> str:
    """What a source says, printed as the README must print it (module docstring).

    Raises:
        LookupError: its file, column, key or row is missing, or a ``cell`` without ``agg`` selects not one row.
        ValueError: a source of no known kind.
    """
    spec = str(source.get("format", "d"))
    if "fixed" in source:
        return str(source["text"])
    if "config" in source:
        return printed(float(_config_value(config, str(source["config"]))), spec, float(source.get("scale", 1.0)))
    kind = next((kind for kind in ("cell", "count", "distinct") if kind in source), None)
    if kind is None:
        raise ValueError(f"source of '{source.get('text')}' names none of cell, count, distinct, config, fixed")
    where = source[kind]
    path = str(where["file"])
    rows = _selected(tables(path), where.get("where", {}), path)
    if kind == "count":
        return printed(float(len(rows)), spec)
    if kind == "distinct":
        columns = list(where["columns"])
        values = set()
        for column in columns:
            if column not in rows.columns:
                raise LookupError(f"{path}: no column '{column}'")
            values |= set(rows[column].astype(str))
        return printed(float(len(values)), spec)
    column = str(where["column"])
    if column not in rows.columns:
        raise LookupError(f"{path}: no column '{column}'")
    values = pd.to_numeric(rows[column], errors="coerce")
    aggregate = where.get("agg")
    if aggregate in ("max", "min"):
        by = str(where.get("by", column))  # the row with the largest (smallest) ``by``; its ``column``
        if by not in rows.columns:
            raise LookupError(f"{path}: no column '{by}'")
        keys = pd.to_numeric(rows[by], errors="coerce")
        if keys.dropna().empty:
            raise LookupError(f"{path}: no row with a value of '{by}' where {dict(where.get('where', {}))}")
        value = float(values.loc[keys.idxmax() if aggregate == "max" else keys.idxmin()])
    else:
        if len(rows) != 1:
            raise LookupError(f"{path}: {len(rows)} rows where {dict(where.get('where', {}))}, not one")
        value = float(values.iloc[0])
    if not math.isfinite(value):
        raise LookupError(f"{path}: '{column}' is not a number where {dict(where.get('where', {}))}")
    if source.get("complement"):  # a share printed as its complement (a noise floor: 1 - the share unchanged)
        value = 1.0 - value
    return printed(value, spec, float(source.get("scale", 1.0)))


def check(readme: str, sources: Mapping[str, Any], run_directory: Path | None, config: Mapping[str, Any] | None = None) -> list[str]:
    """Every disagreement between the README's findings and the sources (module docstring); with
    ``run_directory`` None only the structure is checked (every number has a source, in order, and every source its
    number), not the values."""
    problems = []
    bullets = {finding.lead: finding for finding in findings(readme)}
    listed = {str(entry["lead"]): entry for entry in sources.get("findings", [])}
    for lead in bullets.keys() - listed.keys():
        problems.append(f"finding '{lead} …' has no entry in the sources")
    for lead in listed.keys() - bullets.keys():
        problems.append(f"sources name a finding '{lead} …' that the README does not have")
    tables = _Tables(run_directory) if run_directory is not None else None
    for lead in [lead for lead in bullets if lead in listed]:
        tokens = number_tokens(bullets[lead].text)
        entries: Sequence[Mapping[str, Any]] = listed[lead].get("numbers", [])
        texts = [str(entry["text"]) for entry in entries]
        if [_normal(token) for token in tokens] != [_normal(text) for text in texts]:
            problems.append(f"finding '{lead} …': the text prints {tokens}, the sources list {texts}")
            continue
        if tables is None:
            continue
        for entry in entries:
            try:
                expected = source_text(entry, tables, config or {})
            except (LookupError, ValueError) as error:
                problems.append(f"finding '{lead} …', number {entry['text']}: {error}")
                continue
            if _normal(expected) != _normal(str(entry["text"])):
                problems.append(f"finding '{lead} …': prints {entry['text']} where the run's table says {expected}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nlp_robustness.outputs.findings_check README.md docs/findings-sources.yaml RUN_DIRECTORY``:
    exit 1 and print every disagreement, 0 when the README says what the run's tables say."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("readme", type=Path)
    parser.add_argument("sources", type=Path)
    parser.add_argument("run_directory", type=Path)
    parser.add_argument("--config", type=Path, default=Path("config.yaml"), help="the run's config (for config sources)")
    arguments = parser.parse_args(argv)
    config = yaml.safe_load(arguments.config.read_text(encoding="utf-8")) if arguments.config.is_file() else {}
    sources = yaml.safe_load(arguments.sources.read_text(encoding="utf-8"))
    problems = check(arguments.readme.read_text(encoding="utf-8"), sources, arguments.run_directory, config)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"{arguments.readme}: every number of '{SECTION}' is its table's ({arguments.sources})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
