"""The profile's one verdict source: the paired-comparison rows behind every separated place it shows or says.

The comparisons tables (:func:`nlp_robustness.statistics.comparisons.compare_rows`, written by the
``robustness_comparisons`` rule to ``results/tables/<study table>/comparisons.csv``) test every pair of
systems of a study on each statistic: a paired bootstrap difference, Holm over all the pairs of the table,
a Holm-adjusted interval and a verdict. The profile says nothing those rows do not say:

* a **profile column that is a compared statistic** (mean, Var, COV, gamma-area, between-domain SD of the
  whole pool) takes exactly the rows of its study's ``comparisons.csv`` (left_out the whole pool, that
  statistic);
* a **column with bootstrap replicates that the tables do not compare** (the between-domain share) and an
  **axis score** (the mean rank over the axis's columns with replicates, recomputed in every replicate) get
  their rows from the same :func:`~nlp_robustness.statistics.comparisons.compare_rows` -- the same
  difference, Holm over every pair of the group's systems and adjusted interval -- fed with that score as
  the statistic of a lower-is-better slot (its rows then renamed: statistic = the measure key or
  ``axis: <axis>``, family = the profile group, verdicts ``better``/``worse``). The profile writes them to
  ``results/profile/comparisons.csv``, same columns, so a table exists for every verdict the reading states.

From a set of rows (:class:`Verdicts`): two systems are *separated* when their row's verdict is not "not
distinguishable" (the table's Holm-adjusted p below the level, a non-zero difference); a system is
*separated from every other system* when all its rows are; it is **named best** (most robust) exactly when
it alone holds the first place and its rows say it is better than every other system (likewise worst);
significance groups are the compact letter display of the separated pairs
(:mod:`nlp_robustness.statistics.significance_groups`). The heatmaps fade a cell whose system is not
separated from every other system, the reading's sentences and ``profile.json``'s claims
(:mod:`nlp_robustness.outputs.profile_claims`) are made from these same objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.comparisons import COMPARED_STATISTICS, COMPARISON_COLUMNS, compare_rows
from nlp_robustness.statistics.engine import read_summary
from nlp_robustness.statistics.pool_uncertainty import read_replicates
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.statistics.significance_groups import letter_groups

__all__ = ["BETTER_VERDICTS", "NOT_SEPARATED", "PROFILE_COMPARISONS", "Verdicts", "axis_key", "column_verdicts", "computed_rows",
           "computed_table", "measure_replicates", "profile_verdicts", "read_table_rows", "summary_path"]

#: Where the profile writes the rows it computes (columns :data:`COMPARISON_COLUMNS`).
PROFILE_COMPARISONS = "results/profile/comparisons.csv"
#: A row's verdict that separates nothing (the comparisons tables' word, for the mean too).
NOT_SEPARATED = "not distinguishable"
#: Verdicts saying row_a is the better of the pair (the tables' words, then the profile's own).
BETTER_VERDICTS = frozenset({"more consistent", "higher", "better"})
#: The lower-is-better statistic of compare_rows that carries a score the tables do not compare.
_SLOT = "between_sd"
_GENERIC = {"more consistent": "better", "less consistent": "worse", NOT_SEPARATED: NOT_SEPARATED}


@dataclass
class Verdicts:
    """The verdict rows of one profile column or axis and what they say. ``rows``: :data:`COMPARISON_COLUMNS`;
    ``where``: the CSV (relative to the run directory) and the filter (statistic, left_out, family) they are
    read back with; ``order``: the systems best first by the column's or axis's point ranking."""

    rows: pd.DataFrame
    where: dict[str, str]
    order: list[str]
    ranks: dict[str, int] = field(default_factory=dict)

    @property
    def pairs(self) -> int:
        return len(self.rows)

    def separated_pairs(self) -> list[tuple[str, str]]:
        rows = self.rows[self.rows["verdict"] != NOT_SEPARATED]
        return list(zip(rows["row_a"], rows["row_b"]))

    def beats(self, system: str) -> set[str]:
        """The systems ``system`` is separated from and better than."""
        won = set()
        for row in self.rows.itertuples():
            if row.verdict == NOT_SEPARATED or system not in (row.row_a, row.row_b):
                continue
            a_better = row.verdict in BETTER_VERDICTS
            if (row.row_a == system) == a_better:
                won.add(row.row_b if row.row_a == system else row.row_a)
        return won

    def loses_to(self, system: str) -> set[str]:
        """The systems separated from ``system`` and better than it."""
        return {other for other in self.order if other != system and system in self.beats(other)}

    def separated_from_all(self, system: str) -> bool:
        others = set(self.order) - {system}
        return bool(others) and self.beats(system) | self.loses_to(system) == others

    def _end(self, first: bool) -> str | None:
        if len(self.order) < 2 or not self.ranks:
            return None
        target = min(self.ranks.values()) if first else max(self.ranks.values())
        holders = [system for system in self.order if self.ranks.get(system) == target]
        if len(holders) != 1:
            return None
        others = set(self.order) - set(holders)
        won = self.beats(holders[0]) if first else self.loses_to(holders[0])
        return holders[0] if won == others else None

    def best(self) -> str | None:
        """The system named best: alone in the first place and better than every other system in its rows."""
        return self._end(True)

    def worst(self) -> str | None:
        return self._end(False)

    def letters(self) -> dict[str, tuple[str, ...]]:
        return letter_groups(self.order, self.separated_pairs())

    def largest_p(self, system: str | None = None) -> float | None:
        """The largest Holm p of the separated rows (of ``system``'s rows): the weakest evidence behind a claim."""
        rows = self.rows[self.rows["verdict"] != NOT_SEPARATED]
        if system is not None:
            rows = rows[(rows["row_a"] == system) | (rows["row_b"] == system)]
        return float(rows["p_holm"].max()) if not rows.empty else None


def summary_path(replicates_path: str) -> str:
    """The summary beside a row's replicates (``<stem>.replicates.npz`` -> ``<stem>.summary.tsv``)."""
    return replicates_path.removesuffix(".replicates.npz") + ".summary.tsv"


def read_table_rows(path: str, statistic: str, systems: Sequence[str]) -> tuple[pd.DataFrame, dict[str, str]] | None:
    """The whole-pool rows of ``statistic`` between ``systems`` in a study's comparisons table, with where they are;
    None when the table has none (a statistic the study does not compare)."""
    try:
        table = pd.read_csv(path, dtype={"left_out": str, "row_a": str, "row_b": str}, keep_default_na=False, na_values=[""])
    except FileNotFoundError:
        raise InputError(f"comparisons table not found: {path}") from None
    missing = [column for column in COMPARISON_COLUMNS if column not in table.columns]
    if missing:
        raise InputError(f"{path}: not a comparisons table (missing {', '.join(missing)})")
    wanted = set(systems)
    rows = table[(table["left_out"] == WHOLE_POOL) & (table["statistic"] == statistic)
                 & table["row_a"].isin(wanted) & table["row_b"].isin(wanted)]
    if rows.empty:
        return None
    families = rows["family"].unique()
    if len(families) != 1:
        raise InputError(f"{path}: the systems {sorted(wanted)} span families {list(families)}")
    return rows.reset_index(drop=True)[list(COMPARISON_COLUMNS)], {
        "path": path, "statistic": statistic, "left_out": WHOLE_POOL, "family": str(families[0])}


def computed_rows(scores: Mapping[str, float], replicates: Mapping[str, NDArray[np.float64]], summaries: Mapping[str, str],
                  digests: Mapping[str, str], statistic: str, family: str, higher_is_better: bool, confidence: float,
                  power: float, seed: int) -> pd.DataFrame:
    """Pairwise rows of a score the tables do not compare (module docstring), through
    :func:`~nlp_robustness.statistics.comparisons.compare_rows`: ``scores`` (system -> point) and ``replicates``
    (system -> (B,)) of the score, each system's summary file (units, domains: what the comparisons read
    besides the statistic) and replicates digest (paired or not). Rows are named ``statistic`` and ``family``."""
    sign = -1.0 if higher_is_better else 1.0  # the slot is lower-is-better
    frames, reps = {}, {}
    for system in scores:
        summary = read_summary(summaries[system])
        pool = summary[(summary["left_out"].astype(str) == WHOLE_POOL) & (summary["method"] == "pool")].head(1).copy()
        pool[_SLOT] = sign * float(scores[system])
        frames[system] = pool
        reps[system] = ({WHOLE_POOL: {_SLOT: sign * np.asarray(replicates[system], dtype=np.float64)}}, digests[system])
    compared = compare_rows(frames, reps, WHOLE_POOL, confidence, power, seed, dict.fromkeys(scores, family))
    compared = compared[compared["statistic"] == _SLOT].reset_index(drop=True)
    for column in ("estimate_a", "estimate_b", "difference", "lo", "hi", "lo_unadjusted", "hi_unadjusted"):
        compared[column] = sign * compared[column]
    if higher_is_better:  # the slot negated the score: swap the interval ends back
        compared[["lo", "hi"]] = compared[["hi", "lo"]].to_numpy()
        compared[["lo_unadjusted", "hi_unadjusted"]] = compared[["hi_unadjusted", "lo_unadjusted"]].to_numpy()
    compared["statistic"] = statistic
    compared["verdict"] = compared["verdict"].map(_GENERIC)
    return compared


def measure_replicates(source: Mapping[str, Any], systems: Sequence[str]) -> tuple[dict, dict, dict] | None:
    """Per system: the whole-pool replicates of a measure (scaled as its column), its summary path and its
    replicates digest; None where a system lacks its replicates (then the measure has no verdict rows:
    branch outputs written before the engine kept them).

    Raises:
        InputError: A replicates file without the summary beside it.
    """
    paths = source.get("replicates") or {}
    found, summaries, digests = {}, {}, {}
    for system in systems:
        path = paths.get(system)
        if path is None or not Path(path).exists():
            return None
        archive, digest = read_replicates(path)
        values = archive.get(WHOLE_POOL, {}).get(source["statistic"])
        if values is None:
            return None
        if not Path(summary_path(path)).exists():
            raise InputError(f"branch output not found: {summary_path(path)} (the summary beside {path})")
        found[system] = values * float(source.get("scale", 1.0))
        summaries[system], digests[system] = summary_path(path), digest
    return found, summaries, digests


def column_verdicts(source: Mapping[str, Any], key: str, group: str, scores: Mapping[str, float], ranks: Mapping[str, int],
                    higher_is_better: bool, settings: Mapping[str, Any]) -> Verdicts | None:
    """The verdict rows of one profile column (``scores``, ``ranks``: its ranked systems): its study's comparisons
    table for a compared statistic, else computed (:func:`computed_rows`); None without replicates."""
    order = sorted(scores, key=lambda system: (ranks[system], list(scores).index(system)))
    drawn = measure_replicates(source, order) if len(order) >= 2 else None
    if drawn is None:
        return None
    comparisons = source.get("comparisons")
    if comparisons:
        found = read_table_rows(comparisons, source["statistic"], order)
        if found is None:
            raise InputError(f"{comparisons}: no whole-pool rows of {source['statistic']!r} between {', '.join(order)}")
        return Verdicts(found[0], found[1], order, dict(ranks))
    values, summaries, digests = drawn
    rows = computed_rows(scores, values, summaries, digests, key, group, higher_is_better, settings["confidence"],
                         settings["power"], settings["seed"])
    where = {"path": PROFILE_COMPARISONS, "statistic": key, "left_out": WHOLE_POOL, "family": group}
    return Verdicts(rows, where, order, dict(ranks))


def axis_key(axis: str) -> str:
    """The statistic name of an axis score's rows in :data:`PROFILE_COMPARISONS`."""
    return f"axis: {axis}"


def _axis_verdicts(plan_group: Mapping[str, Any], frame: pd.DataFrame, axes: pd.DataFrame, draws: Mapping,
                   settings: Mapping[str, Any], columns: Mapping[tuple[str, str], Verdicts]) -> dict[str, Verdicts]:
    """Every tested axis of one group: rows of the axis score (the mean rank over the axis's columns with
    replicates, per replicate) between its systems, through :func:`computed_rows`; an axis with one tested
    column takes that column's rows (``columns``), as its score is that column's rank, which only loses
    information (a system always first on the column would not be separated from the second by rank
    differences of 1)."""
    from nlp_robustness.studies.profile_uncertainty import _axis_draws  # the replicate axis scores

    group = plan_group["name"]
    sources = {measure["key"]: measure["source"] for measure in plan_group["measures"]}
    _, _, tested = _axis_draws(frame, group, draws)
    found = {}
    for axis, scores in tested.items():
        selected = axes[(axes["group"] == group) & (axes["axis"] == axis)]
        systems = list(selected["system"])
        if len(systems) < 2 or any(system not in scores for system in systems):
            continue
        backed = frame[(frame["axis"] == axis) & frame["measure"].isin([key[1] for key in draws if key[0] == group])]
        ranks = dict(zip(selected["system"], selected["rank"].astype(int)))
        order = sorted(systems, key=lambda system: (ranks[system], systems.index(system)))
        if backed["measure"].nunique() == 1:
            column = columns.get((group, backed["measure"].iloc[0]))
            if column is not None and set(column.order) == set(systems):
                found[axis] = Verdicts(column.rows, column.where, order, ranks)
            continue
        point = backed.groupby("system")["rank"].agg(lambda values: float(np.mean(values.astype(float))))
        drawn = measure_replicates(sources[backed["measure"].iloc[0]], systems)
        if drawn is None:
            continue
        _, summaries, digests = drawn
        rows = computed_rows({system: point[system] for system in systems}, {system: scores[system] for system in systems},
                             summaries, digests, axis_key(axis), group, False, settings["confidence"], settings["power"],
                             settings["seed"])
        rows["units_to_detect"] = np.nan  # a mean rank has no units to plan
        found[axis] = Verdicts(rows, {"path": PROFILE_COMPARISONS, "statistic": axis_key(axis), "left_out": WHOLE_POOL,
                                      "family": group}, order, ranks)
    return found


def _mark(frame: pd.DataFrame, index: pd.Index, verdicts: Verdicts) -> None:
    """``separated`` (from every other system) and the significance ``letters`` of the rows at ``index``."""
    letters = verdicts.letters()
    for row_index in index:
        system = frame.at[row_index, "system"]
        frame.at[row_index, "separated"] = verdicts.separated_from_all(system)
        frame.at[row_index, "letters"] = "".join(letters[system]) if system in letters else ""


def profile_verdicts(plan: Mapping[str, Any], profile: pd.DataFrame, axes: pd.DataFrame, draws: Mapping,
                     settings: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, dict[tuple[str, str], Verdicts]]:
    """``profile`` and ``axes`` with ``separated`` and ``letters`` from the verdict rows, and the rows themselves by
    (group, measure key or :func:`axis_key`). ``settings``: the run's uncertainty (confidence, power, seed).
    Columns and axes without rows stay untested (``separated`` NA, no letters)."""
    from nlp_robustness.studies.profile_uncertainty import axis_rows

    profile, axes = profile.copy(), axes.copy()
    for frame in (profile, axes):
        frame["separated"] = pd.array([pd.NA] * len(frame), dtype="boolean")
        frame["letters"] = ""
    found: dict[tuple[str, str], Verdicts] = {}
    for group in plan["groups"]:
        for measure in group["measures"]:
            index = profile.index[(profile["group"] == group["name"]) & (profile["measure"] == measure["key"])
                                  & profile["rank"].notna()]
            rows = profile.loc[index]
            verdicts = column_verdicts(measure["source"], measure["key"], group["name"], dict(zip(rows["system"], rows["value"])),
                                       dict(zip(rows["system"], rows["rank"].astype(int))),
                                       measure["orientation"] == "higher", settings)
            if verdicts is not None:
                found[(group["name"], measure["key"])] = verdicts
                _mark(profile, index, verdicts)
        frame = axis_rows(profile[profile["group"] == group["name"]])
        for axis, verdicts in _axis_verdicts(group, frame, axes, draws, settings, found).items():
            found[(group["name"], axis_key(axis))] = verdicts
            _mark(axes, axes.index[(axes["group"] == group["name"]) & (axes["axis"] == axis)], verdicts)
    return profile, axes, found


def computed_table(verdicts: Mapping[tuple[str, str], Verdicts]) -> pd.DataFrame:
    """The rows the profile computed (those of :data:`PROFILE_COMPARISONS`), in profile order."""
    frames = list({(found.where["statistic"], found.where["family"]): found.rows for found in verdicts.values()
                   if found.where["path"] == PROFILE_COMPARISONS}.values())  # an axis of one column shares its rows
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COMPARISON_COLUMNS))
