"""The reading's claims as data, and their check against the comparisons tables they come from.

Every verdict the profile's reading states (:mod:`.profile_reading`) is also written to
``results/profile.json`` under ``claims``, one record per statement:

* ``kind``: ``pairs separated`` / ``none separated`` (how many pairs the rows separate), ``best named`` /
  ``worst named`` (the system separated from every other system in that direction), ``groups`` (the
  significance letters), ``column names the end`` / ``column does not name the end`` (which tested column of
  an axis separates the axis's named system), ``axis left out`` (with its ``reason``; no rows);
* ``group``, ``axis``, ``statistic`` (a measure key, or ``axis: <axis>``), ``label``, the ``sentence`` it
  belongs to, the ``systems`` named, ``compared`` (the systems whose pairs are the family), ``pairs_separated``
  and ``pairs``, ``largest_p_holm`` (the largest Holm p behind a separated claim), ``letters`` for groups,
  ``end`` (the word of the named place) for the by-column claims;
* ``rows``: where its verdict rows are: ``path`` (a CSV relative to the run directory, columns of
  :data:`nlp_robustness.statistics.comparisons.COMPARISON_COLUMNS`) and the filter ``statistic``,
  ``left_out``, ``family``.

:func:`check_claims` re-reads ``profile.json`` and every CSV it names, recomputes each claim from the rows
(separated = the verdict column is not "not distinguishable"; better = the verdict favours the system) and
returns one message per claim the rows do not support.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from nlp_robustness.statistics.significance_groups import shares_letter
from nlp_robustness.studies.profile_verdicts import NOT_SEPARATED, Verdicts

__all__ = ["claim", "check_claims"]

#: Claims with verdict rows behind them (``axis left out`` has none).
_ROW_KINDS = ("pairs separated", "none separated", "best named", "worst named", "groups", "column names the end",
              "column does not name the end")


def claim(kind: str, about: Mapping[str, str], verdicts: Verdicts, systems: Sequence[str], largest_p: float | None,
          **extra: Any) -> dict[str, Any]:
    """One claim record (module docstring); ``about``: group, axis, statistic, label. The sentence is added by
    the reading once the sentence is written."""
    return {"kind": kind, **about, "systems": list(systems), "compared": list(verdicts.order),
            "pairs_separated": len(verdicts.separated_pairs()), "pairs": verdicts.pairs,
            "largest_p_holm": largest_p, "rows": dict(verdicts.where),
            **{key: ({system: list(value) for system, value in value.items()} if key == "letters" else value)
               for key, value in extra.items()}}


def _rows(run_directory: Path, where: Mapping[str, str], compared: Sequence[str],
          cache: dict[str, pd.DataFrame]) -> pd.DataFrame | str:
    path = where["path"]
    if path not in cache:
        try:
            cache[path] = pd.read_csv(run_directory / path, dtype={"left_out": str, "row_a": str, "row_b": str, "family": str},
                                      keep_default_na=False, na_values=[""])
        except FileNotFoundError:
            return f"{path} not found"
    table = cache[path]
    wanted = set(compared)
    return table[(table["statistic"] == where["statistic"]) & (table["left_out"] == where["left_out"])
                 & (table["family"] == where["family"]) & table["row_a"].isin(wanted) & table["row_b"].isin(wanted)]


def _close(first: float | None, second: float | None) -> bool:
    if first is None or second is None:
        return first is None and second is None
    return math.isclose(first, second, rel_tol=1e-9, abs_tol=1e-300)


def _problem(item: Mapping[str, Any], rows: pd.DataFrame) -> str | None:
    """What the rows contradict in one claim, or None."""
    compared = list(item["compared"])
    verdicts = Verdicts(rows.reset_index(drop=True), dict(item["rows"]), compared)
    expected_pairs = len(compared) * (len(compared) - 1) // 2
    if verdicts.pairs != expected_pairs:
        return f"the rows hold {verdicts.pairs} pairs of the {len(compared)} systems, not {expected_pairs}"
    separated = len(verdicts.separated_pairs())
    if (item["pairs_separated"], item["pairs"]) != (separated, verdicts.pairs):
        return f"claims {item['pairs_separated']} of {item['pairs']} pairs separated; the rows separate {separated} of {verdicts.pairs}"
    kind, systems = item["kind"], item["systems"]
    if kind == "none separated" and separated:
        return f"claims no pair separated; the rows separate {separated}"
    if kind == "pairs separated" and not _close(item["largest_p_holm"], verdicts.largest_p()):
        return f"claims largest Holm p {item['largest_p_holm']}; the rows give {verdicts.largest_p()}"
    others = set(compared) - set(systems)
    if kind in ("best named", "worst named") or (kind == "column names the end"):
        [system] = systems
        first = kind == "best named" or (kind == "column names the end" and item.get("end") in ("best", "most robust", "most even"))
        won = verdicts.beats(system) if first else verdicts.loses_to(system)
        if won != others:
            return (f"claims {system} separated as {'best' if first else 'worst'} from every other system; the rows do not "
                    f"separate it in that direction from {', '.join(sorted(others - won))}")
        if not _close(item["largest_p_holm"], verdicts.largest_p(system)):
            return f"claims largest Holm p {item['largest_p_holm']} for {system}; the rows give {verdicts.largest_p(system)}"
    if kind == "column does not name the end":
        [system] = systems
        first = item.get("end") in ("best", "most robust", "most even")
        won = verdicts.beats(system) if first else verdicts.loses_to(system)
        if won == others:
            return f"claims the column does not separate {system}; its rows separate it from every other system"
    if kind == "groups":
        letters = item["letters"]
        pairs = {frozenset(pair) for pair in verdicts.separated_pairs()}
        for row in rows.itertuples():
            apart = frozenset((row.row_a, row.row_b)) in pairs
            shared = shares_letter(letters[row.row_a], letters[row.row_b])
            if shared == apart:
                return (f"letters {row.row_a} {letters[row.row_a]}, {row.row_b} {letters[row.row_b]} say "
                        f"{'not ' if shared else ''}separated; the rows say {row.verdict}")
    return None


def check_claims(run_directory: Path) -> list[str]:
    """One message per claim of ``<run_directory>/results/profile.json`` that its verdict rows do not support
    (module docstring); an empty list: every claim is what the rows say (a run without a profile has none)."""
    run_directory = Path(run_directory)
    if not (run_directory / "results/profile.json").exists():
        return []
    document = json.loads((run_directory / "results/profile.json").read_text(encoding="utf-8"))
    messages, cache = [], {}
    for item in document.get("claims", []):
        where = f"{item['group']} / {item.get('label') or item.get('axis')} ({item['kind']})"
        if item["kind"] not in _ROW_KINDS:
            continue
        rows = _rows(run_directory, item["rows"], item["compared"], cache)
        if isinstance(rows, str):
            messages.append(f"{where}: {rows}")
            continue
        if (rows["verdict"] == NOT_SEPARATED).sum() + (rows["verdict"] != NOT_SEPARATED).sum() != len(rows):
            messages.append(f"{where}: verdict column unreadable in {item['rows']['path']}")
            continue
        problem = _problem(item, rows)
        if problem:
            messages.append(f"{where}: {problem} ({item['rows']['path']}, statistic {item['rows']['statistic']}, "
                            f"family {item['rows']['family']})")
    return messages
