"""The robustness profile's measures read from the branch outputs its plan names (:mod:`.profile_plan`): the
long profile table, one row per group, system and measure, before it is ranked (:mod:`.profile`).

A measure's source is a column of a branch table (``table_column``, with its interval where the branch
wrote ``<column>_lo`` and ``<column>_hi``), the gamma-area of each row's gamma curve (``gamma_area``, its
interval from the summary beside the curve), the mean over a perturbation family's functions
(``function_mean``) or the drop under one function (``function_drop``) of the family's means table, or a
Natural Robustness score with its interval (``natural_score``). A missing file or column and a repeated
row raise :class:`~nlp_robustness.errors.InputError` naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.engine import read_summary
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.studies.profile_plan import _source_files

__all__ = [
    "LONG_COLUMNS",
    "read_profile",
]

#: Columns of the long profile table (one row per group, system and measure).
LONG_COLUMNS = ("group", "system", "axis", "measure", "label", "metric", "role", "tracks_quality", "answers_evenness",
                "orientation", "value", "ci_low", "ci_high", "rank", "rank_lo", "rank_hi", "separated", "letters", "source")


def _read_csv(path: str, cache: dict[str, pd.DataFrame]) -> pd.DataFrame:
    if path not in cache:
        try:
            cache[path] = pd.read_csv(path, sep="\t" if path.endswith(".tsv") else ",", keep_default_na=False,
                                      na_values=[""])
        except FileNotFoundError:
            raise InputError(f"branch output not found: {path}") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
            raise InputError(f"{path}: not a valid table: {error}") from None
    return cache[path]


def _column(frame: pd.DataFrame, column: str, path: str) -> pd.Series:
    if column not in frame.columns:
        raise InputError(f"{path}: no column {column!r} (columns: {', '.join(map(str, frame.columns))})")
    return frame[column]


def _row_values(frame: pd.DataFrame, path: str, key: str, values: pd.Series) -> dict[str, float]:
    rows = frame[key].astype(str)
    if rows.duplicated().any():
        raise InputError(f"{path}: row {rows[rows.duplicated()].iloc[0]!r} appears twice in column {key!r}")
    return dict(zip(rows, values.astype(float)))


def _gamma_area_interval(curve_path: str, method: str, cache: dict[str, pd.DataFrame]) -> tuple[float, float]:
    """The gamma-area interval of a row's whole pool by ``method``, from the summary beside its gamma table
    (the engine writes ``<stem>.summary.tsv`` beside ``<stem>.gamma.tsv``); NaN without one."""
    summary_path = curve_path.removesuffix(".gamma.tsv") + ".summary.tsv"
    if summary_path == curve_path + ".summary.tsv" or not Path(summary_path).exists():
        return math.nan, math.nan
    summary = cache.get(summary_path)
    if summary is None:
        summary = cache[summary_path] = read_summary(summary_path)
    rows = summary[(summary["left_out"].astype(str) == WHOLE_POOL) & (summary["method"] == method)]
    if rows.empty or "gamma_area_lo" not in rows.columns:
        return math.nan, math.nan
    return float(rows["gamma_area_lo"].iloc[0]), float(rows["gamma_area_hi"].iloc[0])


def _measure_values(source: Mapping[str, Any], systems: Sequence[str], cache: dict[str, pd.DataFrame]) -> dict[str, tuple[float, float, float]]:
    """(value, ci_low, ci_high) per system of one measure; systems the source has no row for are absent."""
    kind = source["kind"]
    nan = math.nan
    if kind == "table_column":  # a branch table: first column = the row (system, classifier); its interval, if any,
        frame = _read_csv(source["path"], cache)  # in the columns <column>_lo and <column>_hi
        path, column = source["path"], source["column"]
        found = _row_values(frame, path, frame.columns[0], _column(frame, column, path))
        if f"{column}_lo" in frame.columns:
            low = _row_values(frame, path, frame.columns[0], frame[f"{column}_lo"])
            high = _row_values(frame, path, frame.columns[0], frame[f"{column}_hi"])
        else:
            low = high = dict.fromkeys(found, nan)
        return {system: (found[system], low[system], high[system]) for system in systems if system in found}
    if kind == "gamma_area":
        values = {}
        for system, path in source["paths"].items():
            curve = _read_csv(path, cache)
            rows = curve[(_column(curve, "left_out", path).astype(str) == WHOLE_POOL) & (_column(curve, "method", path) == source["method"])]
            if rows.empty:
                raise InputError(f"{path}: no gamma curve of the whole pool by {source['method']}")
            values[system] = (float(_column(rows, "gamma", path).mean()), *_gamma_area_interval(path, source["method"], cache))
        return values
    if kind in ("function_mean", "function_drop"):
        path = source["path"]
        frame = _read_csv(path, cache)
        for column in ("system", "function", "beta", "beta1", "beta2", "beta2_minus_beta1"):
            _column(frame, column, path)
        frame = frame.assign(system=frame["system"].astype(str))
        values = {}
        for system, rows in frame.groupby("system", sort=False):
            if system not in systems:
                continue
            if kind == "function_mean":
                column = rows[source["column"]].astype(float).dropna()  # functions that kept no segment: NaN
                if not column.empty:
                    values[system] = (float(column.mean()), nan, nan)
            else:
                row = rows[rows["function"] == source["function"]]
                if len(row) > 1:
                    raise InputError(f"{path}: function {source['function']!r} appears twice for system {system!r}")
                if len(row) == 1 and not math.isnan(float(row["beta1"].iloc[0])):
                    values[system] = (float(row["beta"].iloc[0]) - float(row["beta1"].iloc[0]), nan, nan)
        return values
    if kind == "natural_score":
        path = source["path"]
        frame = _read_csv(path, cache)
        for column in ("responder", "criterion", "family", "sample", "type", "score", "ci_low", "ci_high"):
            _column(frame, column, path)
        rows = frame[(frame["criterion"] == source["criterion"]) & (frame["family"] == "all")
                     & (frame["sample"].astype(str) == "all") & (frame["type"] == "all")]
        found = {str(row.responder): (float(row.score), float(row.ci_low), float(row.ci_high)) for row in rows.itertuples()}
        return {system: found[system] for system in source["rows"] if system in found and system in systems}
    raise ValueError(f"unknown source kind {kind!r}")


def read_profile(plan: Mapping[str, Any]) -> pd.DataFrame:
    """The long profile table (:data:`LONG_COLUMNS` without ``rank``) read from the branch outputs the plan
    names: one row per group, system and measure that the branch measured (a system outside a family, say,
    has no row there).

    Raises:
        InputError: naming the branch file that is missing, lacks a column or repeats a row.
    """
    cache: dict[str, pd.DataFrame] = {}
    rows = []
    for group in plan["groups"]:
        for measure in group["measures"]:
            values = _measure_values(measure["source"], group["systems"], cache)
            source = measure["source"]
            where = ", ".join(_source_files(source))
            for system in group["systems"]:
                if system not in values:
                    continue
                value, low, high = values[system]
                rows.append({
                    "group": group["name"], "system": system, "axis": measure["axis"], "measure": measure["key"],
                    "label": measure["label"], "metric": measure["metric"], "role": measure["role"],
                    "tracks_quality": bool(measure.get("tracks_quality", False)),
                    "answers_evenness": bool(measure.get("answers_evenness", False)),
                    "orientation": measure["orientation"], "value": value, "ci_low": low, "ci_high": high,
                    "rank_lo": math.nan, "rank_hi": math.nan, "separated": pd.NA, "letters": "", "source": where,
                })
    columns = [column for column in LONG_COLUMNS if column != "rank"]
    return pd.DataFrame(rows, columns=columns)
