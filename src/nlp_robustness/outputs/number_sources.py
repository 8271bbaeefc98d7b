"""Where a number of the docs comes from in a run, printed as the docs must print it.

One entry of the sources file (``docs/numbers-sources.yaml``) names its number (``text``, as printed: one number or
several, such as an estimate and its interval) and one kind of source; :func:`source_text` returns what that source
says, printed the same way:

* ``cell``: a row of a CSV (or TSV) under the run directory: ``file`` and ``where`` (column -> a value, a list of
  accepted values, a comparison such as ``{"<": 0.05}``, or values left out, ``{not: [HUMAN-B]}``; a number matches
  however the file prints it). Exactly one row, unless ``agg`` says which: ``max``, ``min`` or ``median`` take the row
  with the largest, smallest or median ``by`` (default: the column), ``sum``, ``mean`` and ``range`` (largest less
  smallest) a row of the rows' sums, means or spreads. Printed is its ``column`` with ``format``, or several of its
  columns by a template, ``print: "{score:.2f} [{ci_low:.2f}, {ci_high:.2f}]"``. A column may be an expression of
  columns (``ci_high - ci_low``, ``1 - score``; a name with spaces in backticks);
* ``count``: the number of rows of ``file`` that ``where`` selects;
* ``distinct``: the number of distinct values in ``columns`` of the rows ``where`` selects;
* ``json``: a value of a JSON file under the run directory (``file``, a dotted ``key``), printed with ``format``; a
  string value (a weights digest) is compared with the text as printed, with ``prefix: true`` its first
  ``len(text)`` characters (a sha256 printed as its first 16 hex digits);
* ``config``: a value of the run's config (a dotted key), printed with ``format``;
* ``fixed``: a number that is not a result of the run (a paper's claim, a name), with the reason.

``format`` is a Python format spec (``.2f``, ``+.1f``, ``,d``, ``.1%``) or ``p`` for a p-value as the tables print it
(their "< 0.001" reads as 0.001); a minus prints as U+2212. Before it, ``complement: true`` takes 1 - the value (a
noise floor from a share unchanged, a test's level from the confidence), ``scale`` multiplies (100 for a share printed
in %) and ``round`` rounds to fewer digits than the format shows ("about 29,000": ``round: -3``). A template's
placeholders are ``{column:spec}`` with a spec as ``format`` (default ``g``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from nlp_robustness.outputs.doc_passages import number_tokens

__all__ = ["KINDS", "RunFiles", "column_values", "kind_of", "merged", "printed", "render", "selected_row", "selected_rows",
           "source_text", "template_pattern"]

#: The kinds of source an entry may name (module docstring).
KINDS = ("cell", "count", "distinct", "json", "config", "fixed")

_PLACEHOLDER = re.compile(r"\{([^{}:]+)(?::([^{}]*))?\}")
_COMPARISONS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "!=": "ne"}


def printed(value: float, spec: str, scale: float = 1.0) -> str:
    """``value * scale`` printed with the format ``spec``, a minus as U+2212 (as the docs print it); ``d``-like
    integer specs round first; ``p`` prints a p-value as every table does (``table_writer.p_value_text``: "< 0.001"
    reads as 0.001)."""
    scaled = value * scale
    if spec == "p":
        return "0.001" if scaled < 0.001 else f"{scaled:.3f}"
    if spec.endswith("d"):
        scaled = int(round(scaled))
    return format(scaled, spec).replace("-", "−")


class RunFiles:
    """The run's CSV and JSON files, each read once."""

    def __init__(self, run_directory: Path) -> None:
        self.run_directory = run_directory
        self._frames: dict[str, pd.DataFrame] = {}
        self._documents: dict[str, Any] = {}

    def _file(self, path: str) -> Path:
        file = self.run_directory / path
        if not file.is_file():
            raise LookupError(f"{path}: no such file in {self.run_directory}")
        return file

    def table(self, path: str) -> pd.DataFrame:
        if path not in self._frames:
            separator = "\t" if path.endswith(".tsv") else ","
            self._frames[path] = pd.read_csv(self._file(path), sep=separator, keep_default_na=False, na_values=[""])
        return self._frames[path]

    def json(self, path: str) -> Any:
        if path not in self._documents:
            self._documents[path] = json.loads(self._file(path).read_text(encoding="utf-8"))
        return self._documents[path]


def selected_rows(frame: pd.DataFrame, where: Mapping[str, Any], path: str) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for column, wanted in (where or {}).items():
        if column not in frame.columns:
            raise LookupError(f"{path}: no column '{column}'")
        if isinstance(wanted, Mapping):  # comparisons with numbers ({"<": 0.05}), or values left out ({not: [a, b]})
            values = pd.to_numeric(frame[column], errors="coerce")
            for operator, bound in wanted.items():
                if operator == "not":
                    left_out = bound if isinstance(bound, list) else [bound]
                    mask &= ~frame[column].astype(str).isin([str(value) for value in left_out])
                    continue
                if operator not in _COMPARISONS:
                    raise ValueError(f"{path}: '{operator}' is no comparison (one of {', '.join(_COMPARISONS)})")
                mask &= getattr(values, _COMPARISONS[operator])(float(bound)).fillna(False).astype(bool)
            continue
        accepted = wanted if isinstance(wanted, list) else [wanted]
        numbers = [float(value) for value in accepted if isinstance(value, (int, float)) and not isinstance(value, bool)]
        matches = frame[column].astype(str).isin([str(value) for value in accepted])
        if numbers:  # a number matches however the file prints it (70 and 70.0)
            matches |= pd.to_numeric(frame[column], errors="coerce").isin(numbers)
        mask &= matches
    return frame[mask]


def selected_row(rows: pd.DataFrame, spec: Mapping[str, Any], path: str) -> pd.Series:
    """The one row of ``rows`` a ``cell`` source means: exactly one, or the one with the largest (``agg: max``),
    smallest (``min``) or median (``median``) value of ``by`` (default: its ``column``), or the rows' sums, means or
    spreads, largest less smallest (``sum``, ``mean``, ``range``), column by column."""
    aggregate = spec.get("agg")
    where = dict(spec.get("where") or {})
    if aggregate in ("sum", "mean", "range"):  # a row of the rows' sums, means or spreads (largest - smallest)
        if rows.empty:
            raise LookupError(f"{path}: no row where {where}")
        numbers = rows.apply(pd.to_numeric, errors="coerce")
        return numbers.sum() if aggregate == "sum" else numbers.mean() if aggregate == "mean" else numbers.max() - numbers.min()
    if aggregate in ("max", "min", "median"):
        by = str(spec.get("by", spec.get("column", "")))
        keys = column_values(rows, by, path).dropna()
        if keys.empty:
            raise LookupError(f"{path}: no row with a value of '{by}' where {where}")
        if aggregate == "median":  # the row of the median (the lower of the middle two)
            return rows.loc[keys.sort_values(kind="stable").index[(len(keys) - 1) // 2]]
        return rows.loc[keys.idxmax() if aggregate == "max" else keys.idxmin()]
    if aggregate is not None:
        raise ValueError(f"{path}: agg '{aggregate}' is none of max, min, median, sum, mean, range")
    if len(rows) != 1:
        raise LookupError(f"{path}: {len(rows)} rows where {where}, not one")
    return rows.iloc[0]


def _number(row: pd.Series, column: str, path: str) -> float:
    """A row's value of ``column``, or of an expression of its columns (``ci_high - ci_low``, ``1 - score``)."""
    try:
        value = float(row[column]) if column in row.index else float(_expression(row.to_frame().T, column, path).iloc[0])
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise LookupError(f"{path}: '{column}' is not a number in the row chosen")
    return value


def _expression(rows: pd.DataFrame, expression: str, path: str) -> pd.Series:
    """The values of an arithmetic expression of ``rows``' columns (a name with spaces in backticks)."""
    try:
        values = rows.apply(pd.to_numeric, errors="coerce").eval(expression, engine="python")
    except Exception:  # pandas raises many kinds for a name it does not know or a malformed expression
        raise LookupError(f"{path}: '{expression}' is no column and no expression of its columns") from None
    if not isinstance(values, pd.Series):
        raise LookupError(f"{path}: '{expression}' is no column and no expression of its columns")
    return values


def column_values(rows: pd.DataFrame, column: str, path: str) -> pd.Series:
    """The values of ``column`` (or an expression of columns) in ``rows``, as numbers."""
    if column in rows.columns:
        return pd.to_numeric(rows[column], errors="coerce")
    return _expression(rows, column, path)


def render(template: str, row: pd.Series, path: str = "") -> str:
    """``template`` with each ``{column:spec}`` replaced by the row's value printed with ``spec`` (default ``g``)."""
    return _PLACEHOLDER.sub(lambda match: printed(_number(row, match.group(1), path), match.group(2) or "g"), template)


def template_pattern(template: str) -> list[str | None]:
    """The tokens a template prints, in order: a literal number as written, ``None`` for a placeholder (what a page
    may print there without a run: any one number)."""
    pattern: list[str | None] = []
    position = 0
    for match in _PLACEHOLDER.finditer(template):
        pattern.extend(number_tokens(template[position:match.start()]))
        pattern.append(None)
        position = match.end()
    pattern.extend(number_tokens(template[position:]))
    return pattern


def _dotted(value: Any, key: str, what: str) -> Any:
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise LookupError(f"{what} has no key '{key}'")
        value = value[part]
    return value


def merged(spec: Mapping[str, Any], defaults: Mapping[str, Any] | None) -> dict[str, Any]:
    """A table source completed by a passage's ``from``: its file, and its ``where`` under the entry's own (an
    entry's ``column: null`` drops the passage's condition on that column)."""
    if not defaults:
        return dict(spec)
    result = {**{key: value for key, value in defaults.items() if key != "where"}, **spec}
    where = {**dict(defaults.get("where") or {}), **dict(spec.get("where") or {})}
    result["where"] = {column: value for column, value in where.items() if value is not None}  # null: not this one
    return result


def kind_of(entry: Mapping[str, Any]) -> str:
    """The one kind of source an entry names.

    Raises:
        ValueError: it names none or several.
    """
    kinds = [kind for kind in KINDS if kind in entry]
    if len(kinds) != 1:
        raise ValueError(f"source of '{entry.get('text')}' names {kinds or 'no kind'}, not one of {', '.join(KINDS)}")
    return kinds[0]


def source_text(entry: Mapping[str, Any], files: RunFiles, config: Mapping[str, Any],
                defaults: Mapping[str, Any] | None = None) -> str:
    """What an entry's source says, printed as the page must print it (module docstring); ``defaults`` is the
    passage's ``from``.

    Raises:
        LookupError: its file, column, key or row is missing, or a ``cell`` without ``agg`` selects not one row.
        ValueError: a source of no known kind, or two.
    """
    kind = kind_of(entry)
    if kind == "fixed":
        return str(entry["text"])
    if kind == "config":
        return _value_printed(float(_dotted(config, str(entry["config"]), "config")), entry)
    if kind == "json":
        source = entry["json"]
        value = _dotted(files.json(str(source["file"])), str(source["key"]), str(source["file"]))
        if isinstance(value, str):
            return value[:len(str(entry["text"]))] if entry.get("prefix") else value
        return _value_printed(float(value), entry)
    source = merged(entry[kind], defaults)
    path = str(source["file"])
    rows = selected_rows(files.table(path), source.get("where") or {}, path)
    spec = str(entry.get("format", "d"))
    if kind == "count":
        return printed(float(len(rows)), spec)
    if kind == "distinct":
        values: set[str] = set()
        for column in source["columns"]:
            if column not in rows.columns:
                raise LookupError(f"{path}: no column '{column}'")
            values |= set(rows[column].astype(str))
        return printed(float(len(values)), spec)
    row = selected_row(rows, source, path)
    if "print" in entry:
        return render(str(entry["print"]), row, path)
    return _value_printed(_number(row, str(source["column"]), path), entry)


def _value_printed(value: float, entry: Mapping[str, Any]) -> str:
    if entry.get("complement"):  # printed as 1 - the value (a noise floor from a share unchanged, a test's level)
        value = 1.0 - value
    value *= float(entry.get("scale", 1.0))
    if "round" in entry:  # printed to fewer digits than the format shows ("about 29,000": round: -3)
        value = round(value, int(entry["round"]))
    return printed(value, str(entry.get("format", "d")))
