"""One robustness profile per system: every branch's published numbers side by side, ranked, and compared.

The profile never recomputes a branch. It *reads* what the branches wrote -- their tables
(``results/tables/...``) and, for the gamma-area, their gamma curves (``results/.../<row>.gamma.tsv``, the
curves behind their gamma figures) -- and puts them on one scale: per column a rank (1 = most robust, or
best quality), per group of systems a Kendall tau between every two column rankings (do the axes agree?).

Groups of systems are the rows that share axes:

* **MT systems**, one group per MT study (``mt_studies``; the first is named ``mt``, the others ``mt-<study>``):
  mean quality; consistency across the test domains (COV and gamma-area, on the whole pool and by design
  bagging; Var, and the between-domain SD and its share of the variance, on the whole pool); per configured perturbation family either word-order robustness and
  faithfulness (mean beta1, beta2 and beta2 - beta1 over the functions, paper 004) or the drop beta - beta1
  under each function (character attacks at each p, paper 002); the Natural Robustness score with its
  interval (paper 001, both same-response criteria).
* **Sentiment classifiers**: mean accuracy, consistency across test domains, Natural Robustness (same label).
* **Each human study** (``human_studies``; group named after the study): quality = mean human score (MQM, DA z) and
  mean metric score; test domains = consistency of the metric score across the study's domains; *human judgements* =
  people's consistency, gamma-area and between-domain SD of the human score (not its COV: MQM and DA z means are
  negative or near 0). The tau between the two axes is the profile's answer to "does BLEU's consistency agree with
  people's?"
  and of the metric (COV and gamma-area).

Readings chosen where the sources leave room (documented in the README, tested):

* *gamma-area* is the mean of gamma over the branch's epsilon grid (as ``human_studies.<study>.ranking.gamma: area``); lower
  = more consistent, like COV. It compares systems within a column only (the grid is the branch's).
* *mean beta1 (beta2)* of a family weights every function equally: the mean of the per-function means of
  the branch's means table (functions that kept no segment are skipped).
* *drop* is beta - beta1 in metric points (positive = worse under the attack); a weak system has less to
  lose, which the tau against mean quality shows.
* beta2 - beta1 is descriptive, not a robustness: its rank 1 is the system that leans most to faithfulness.
* *Pooled Var and COV of sentence scores* (MT, WMT'21) mostly restate quality: a better system's scores sit
  nearer the bound and vary less. They stay columns (ranked, shown, marked ``tracks_quality``) but are left
  out of the test-domains axis ranking, so that axis does not rank by quality a second time; the
  between-domain SD (``answers_evenness``) answers "is this system more even across these domains?".
  Sentiment's COV is of domain accuracies (spread across the domains) and counts.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.display_names import METHOD_NAMES, family_name, metric_name
from nlp_robustness.errors import InputError
from nlp_robustness.statistics.engine import WHOLE_POOL, csv_group, read_summary
from nlp_robustness.statistics.rankings import kendall_tau, rank_values
from nlp_robustness.studies.plan import human_rows
from nlp_robustness.studies.profile_uncertainty import axis_intervals, axis_rows, axis_tau_intervals, rank_intervals
from nlp_robustness.studies.sentiment import sentiment_classifiers

__all__ = [
    "AXES",
    "FAMILY_VIEWS",
    "LONG_COLUMNS",
    "KENDALL_COLUMNS",
    "axis_kendall",
    "axis_rankings",
    "build_profile",
    "complete_profile",
    "config_hash",
    "kendall_matrix",
    "kendall_square",
    "plan_files",
    "profile_document",
    "profile_plan",
    "rank_profile",
    "read_profile",
    "wide_table",
]

#: Axes in the order the profile shows them.
AXES = ("quality", "test domains", "human judgements", "word order", "character attacks", "natural perturbations")
#: How a perturbation family appears in the profile: mean beta1/beta2 (faithfulness) or the drop per function.
FAMILY_VIEWS = ("faithfulness", "drop")
#: Columns of the long profile table (one row per group, system and measure).
LONG_COLUMNS = ("group", "system", "axis", "measure", "label", "metric", "role", "tracks_quality", "answers_evenness",
                "orientation", "value", "ci_low", "ci_high", "rank", "rank_lo", "rank_hi", "separated", "source")
#: Columns of the long Kendall table (one row per group and pair of measures).
KENDALL_COLUMNS = ("group", "first", "second", "systems", "tau", "p_value")

_DEFAULT_FAMILY_VIEWS = {"word_order": "faithfulness", "character_attacks": "drop"}


def _error(key: str, message: str) -> InputError:
    return InputError(f"invalid configuration at key 'robustness_profile.{key}': {message}")


def complete_profile(config: MutableMapping[str, Any]) -> None:
    """Check the ``robustness_profile`` section and fill its defaults that depend on other keys (in place;
    no-op without one): ``metric`` the first of ``metrics``; ``families`` word_order (faithfulness) and
    character_attacks (drop) where configured with that metric.

    Run after the perturbation and Natural Robustness sections are completed.

    Raises:
        InputError: naming the first offending key.
    """
    section = config.get("robustness_profile")
    if section is None:
        return
    metrics = list(config["metrics"])
    section.setdefault("metric", metrics[0])
    metric = section["metric"]
    if metric not in metrics:
        raise _error("metric", f"'{metric}' is not one of metrics ({', '.join(metrics)})")
    families = (config.get("perturbations") or {}).get("families", {})
    if "families" not in section:
        section["families"] = {
            family: view for family, view in _DEFAULT_FAMILY_VIEWS.items()
            if family in families and metric in families[family]["metrics"]
        }
    for family, view in section["families"].items():
        if family not in families:
            raise _error(f"families.{family}", f"'{family}' is not a family of perturbations.families "
                                               f"(configured: {', '.join(families) or 'none'})")
        if metric not in families[family]["metrics"]:
            raise _error(f"families.{family}", f"the family writes no tables for the profile's metric '{metric}' "
                                               f"(perturbations.families.{family}.metrics: {families[family]['metrics']})")
        if view not in FAMILY_VIEWS:
            raise _error(f"families.{family}", f"'{view}' is not a view ({', '.join(FAMILY_VIEWS)})")


def _measure(key: str, axis: str, label: str, metric: str | None, role: str, orientation: str, source: dict,
             tracks_quality: bool = False, answers_evenness: bool = False) -> dict:
    """One column of the plan. ``tracks_quality``: a statistic documented to restate quality on real systems
    (pooled Var and COV of sentence scores: a better system's scores sit nearer the bound), never named a
    winner on and left out of the axis ranking; ``answers_evenness``: the statistic that answers "is this
    system more even across these domains?" (the between-domain SD), which the reading leads with."""
    return {"key": key, "axis": axis, "label": label, "metric": metric, "role": role, "orientation": orientation,
            "source": source, "tracks_quality": tracks_quality, "answers_evenness": answers_evenness}


def _replicates(gammas: Mapping[str, str], statistic: str, scale: float = 1.0) -> dict[str, Any]:
    """Where a whole-pool column's bootstrap replicates are (beside each row's gamma table; see
    :mod:`.profile_uncertainty`): the source keys ``replicates``, ``statistic`` and ``scale``."""
    return {"replicates": {row: path.removesuffix(".gamma.tsv") + ".replicates.npz" for row, path in gammas.items()},
            "statistic": statistic, "scale": scale}


def _consistency(prefix: str, score: str, label: str, tables: str, gammas: Mapping[str, str], with_cov: bool = True,
                 sentence_scores: bool = True, axis: str = "test domains") -> list[dict]:
    """COV and gamma-area of one score on the whole pool and by design bagging (``axis``: test domains, or human
    judgements for a human score). The COV of ``sentence_scores`` tracks quality (:func:`_measure`); that of
    sentiment's domain accuracies does not."""
    measures = []
    for method in ("pool", "design_bagging"):
        pooled = method == "pool"  # only the whole pool has bootstrap replicates
        if with_cov:
            measures.append(_measure(
                f"{prefix}cov_{score}_{method}", axis, f"COV {label} ({METHOD_NAMES[method]})", score,
                "robustness", "lower", {"kind": "table_column", "path": f"{tables}/robustness_{method}.csv",
                                        "column": f"{csv_group(WHOLE_POOL)}_COV", **(_replicates(gammas, "cov") if pooled else {})},
                tracks_quality=sentence_scores))
        measures.append(_measure(
            f"{prefix}gamma_area_{score}_{method}", axis, f"γ-area {label} ({METHOD_NAMES[method]})", score,
            "robustness", "lower", {"kind": "gamma_area", "paths": dict(gammas), "method": method,
                                    **(_replicates(gammas, "gamma_area") if pooled else {})}))
    return measures


def _between_domains(prefix: str, score: str, label: str, tables: str, gammas: Mapping[str, str],
                     axis: str = "test domains") -> list[dict]:
    """Var on the whole pool (of sentence scores: it tracks quality), and the between-domain SD (the answer to
    "is this system more even across these domains?") and share of the variance (the decomposition of
    :mod:`nlp_robustness.statistics.variance_components`; axis: test domains)."""
    path = f"{tables}/robustness_pool.csv"
    pool = csv_group(WHOLE_POOL)
    return [
        _measure(f"{prefix}var_{score}_pool", axis, f"Var {label} (whole pool)", score, "robustness", "lower",
                 {"kind": "table_column", "path": path, "column": f"{pool}_Var", **_replicates(gammas, "variance")},
                 tracks_quality=True),
        _measure(f"{prefix}between_sd_{score}", axis, f"between-domain SD {label}", score, "robustness", "lower",
                 {"kind": "table_column", "path": path, "column": f"{pool}_between_SD", **_replicates(gammas, "between_sd")},
                 answers_evenness=True),
        _measure(f"{prefix}between_share_{score}", axis, f"between-domain share {label} (%)", score, "robustness",
                 "lower", {"kind": "table_column", "path": path, "column": f"{pool}_between_share_pct",
                           **_replicates(gammas, "between_share", 100.0)}),
    ]


def _natural(criteria: Sequence[str], rows: Sequence[str]) -> list[dict]:
    path = "results/tables/natural_robustness/scores.csv"
    return [
        _measure(f"natural_{criterion}", "natural perturbations", f"Natural Robustness ({criterion})", None,
                 "robustness", "higher", {"kind": "natural_score", "path": path, "criterion": criterion, "rows": list(rows)})
        for criterion in criteria
    ]


def _family_measures(family: str, view: str, metric: str, functions: Sequence[str], display: str) -> list[dict]:
    path = f"results/tables/perturbations/{family}/{metric}/means.csv"
    axis = family_name(family)
    if view == "faithfulness":
        return [
            _measure(f"beta1_{metric}", axis, f"β1 {display} (robustness)", metric, "robustness", "higher",
                     {"kind": "function_mean", "path": path, "column": "beta1"}),
            _measure(f"beta2_{metric}", axis, f"β2 {display} (faithfulness)", metric, "faithfulness", "higher",
                     {"kind": "function_mean", "path": path, "column": "beta2"}),
            _measure(f"beta2_minus_beta1_{metric}", axis, f"β2−β1 {display}", metric, "faithfulness", "higher",
                     {"kind": "function_mean", "path": path, "column": "beta2_minus_beta1"}),
        ]
    return [
        _measure(f"drop_{function}_{metric}", axis, f"drop {display} {function}", metric, "robustness", "lower",
                 {"kind": "function_drop", "path": path, "function": function})
        for function in functions
    ]


def profile_plan(config: Mapping[str, Any], gamma_curves: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """Every group of systems and every measure of the profile, each with the branch output it is read from.

    ``config`` is the validated, completed config; ``gamma_curves`` names, for every study table of the
    study plan (:meth:`nlp_robustness.studies.plan.StudyPlan.gamma_curves`: ``bleu``, ``sentiment``,
    ``human/human``, ...), the gamma curve of each of its rows, so the profile reads the files the plan writes.
    The plan is plain data (it is the profile job's parameters): ``{"metric": ..., "groups": [{"name", "label", "scores", "systems", "measures": [...]}]}``; a measure is
    ``{"key", "axis", "label", "metric", "role", "orientation", "source", "tracks_quality", "answers_evenness"}``
    (:func:`_measure`), its source a dict naming the file(s) and what to read there (:func:`read_profile`).
    """
    section = config["robustness_profile"]
    metric = section["metric"]
    display = metric_name(metric)
    families = (config.get("perturbations") or {}).get("families", {})
    natural = config.get("natural_robustness")
    groups = []

    for index, (study, spec) in enumerate(config["mt_studies"].items()):
        # one group per MT study (the first keeps the name "mt"); perturbation axes where its systems have them
        systems = list(spec["systems"])
        tables = f"results/tables/{study}/{metric}"
        measures = [
            _measure(f"mean_{metric}", "quality", f"mean {display}", metric, "quality", "higher",
                     {"kind": "table_column", "path": f"{tables}/robustness_pool.csv", "column": f"{csv_group(WHOLE_POOL)}_Mean",
                      **_replicates(gamma_curves[f"{study}/{metric}"], "mean")}),
            *_consistency("", metric, display, tables, gamma_curves[f"{study}/{metric}"]),
            *_between_domains("", metric, display, tables, gamma_curves[f"{study}/{metric}"]),
        ]
        for family, view in section["families"].items():
            if set(families[family]["systems"]) & set(systems):
                measures += _family_measures(family, view, metric, list(families[family]["functions"]), display)
        if natural and set(natural["systems"]) & set(systems):
            measures += _natural(["exact", "chrf"], natural["systems"])
        groups.append({"name": "mt" if index == 0 else f"mt-{study}", "label": f"MT systems ({study}, {spec['language_pair']})",
                       "scores": f"sentence {display}", "systems": systems, "measures": measures})

    sentiment = config.get("sentiment")
    if sentiment:
        classifiers = sentiment_classifiers(config)  # TF-IDF classifiers, then Hugging Face models
        measures = [
            _measure("mean_accuracy", "quality", "mean accuracy", "accuracy", "quality", "higher",
                     {"kind": "table_column", "path": "results/tables/sentiment/robustness_pool.csv", "column": f"{csv_group(WHOLE_POOL)}_Mean",
                      **_replicates(gamma_curves["sentiment"], "mean")}),
            *_consistency("", "accuracy", "accuracy", "results/tables/sentiment", gamma_curves["sentiment"], sentence_scores=False),
        ]
        if natural:
            measures += _natural(["label"], classifiers)
        groups.append({"name": "sentiment", "label": "Sentiment classifiers", "scores": "accuracy in %", "systems": classifiers,
                       "measures": measures})

    for study, spec in config.get("human_studies", {}).items():  # a human axis for the systems of each human study
        names = human_rows(spec)
        human_label = "MQM" if spec["format"] == "mqm" else f"DA {spec['score']}"
        measures = []
        for score, label in (("human", human_label), (metric, display)):
            measures.append(_measure(
                f"mean_{score}", "quality", f"mean {label}", score, "quality", "higher",
                {"kind": "table_column", "path": f"results/tables/human/{study}/{score}/robustness_pool.csv",
                 "column": f"{csv_group(WHOLE_POOL)}_Mean", **_replicates(gamma_curves[f"human/{study}/{score}"], "mean")}))
        for score, label in ((metric, display), ("human", human_label)):  # people's consistency: an axis of its own
            prefix, tables, gammas = f"{'human' if score == 'human' else 'metric'}_", f"results/tables/human/{study}/{score}", gamma_curves[f"human/{study}/{score}"]
            axis = "human judgements" if score == "human" else "test domains"
            measures += _consistency(prefix, score, label, tables, gammas, with_cov=score != "human", axis=axis)
            measures += _between_domains(prefix, score, label, tables, gammas, axis=axis)
        groups.append({"name": study, "label": f"{spec.get('description', study)} (human judgements)",
                       "scores": f"{human_label} and sentence {display}", "systems": names, "measures": measures})
    return {"metric": metric, "groups": groups}


def _source_files(source: Mapping[str, Any]) -> list[str]:
    """The file(s) one measure is read from: one table, or a gamma curve per system."""
    return [source["path"]] if "path" in source else list(source["paths"].values())


def plan_files(plan: Mapping[str, Any]) -> list[str]:
    """Every file the plan reads, once, in plan order (the profile job's input)."""
    files = [path for group in plan["groups"] for measure in group["measures"]
             for path in [*_source_files(measure["source"]), *measure["source"].get("replicates", {}).values()]]
    return list(dict.fromkeys(files))


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
                    "rank_lo": math.nan, "rank_hi": math.nan, "separated": pd.NA, "source": where,
                })
    columns = [column for column in LONG_COLUMNS if column != "rank"]
    return pd.DataFrame(rows, columns=columns)


def rank_profile(profile: pd.DataFrame) -> pd.DataFrame:
    """``profile`` with its ``rank`` column: per group and measure, 1 = best (the most robust, the best
    quality; for beta2 - beta1 the most faithful); ties share the better rank; NaN values are not ranked."""
    ranked = profile.copy()
    ranked["rank"] = pd.array([pd.NA] * len(ranked), dtype="Int64")
    ranked["rank_lo"] = ranked["rank_hi"] = np.nan  # filled by profile_uncertainty.rank_intervals
    ranked["separated"] = pd.array([pd.NA] * len(ranked), dtype="boolean")
    for _, rows in ranked.groupby(["group", "measure"], sort=False):
        finite = rows[np.isfinite(rows["value"].astype(float))]
        if finite.empty:
            continue
        ranks = rank_values(dict(zip(finite.index, finite["value"])), finite["orientation"].iloc[0] == "higher")
        for index, rank in ranks.items():
            ranked.loc[index, "rank"] = rank
    return ranked[list(LONG_COLUMNS)]


def _oriented(rows: pd.DataFrame) -> dict[str, float]:
    """Values of one measure with the better end up (lower-is-better values negated), NaN left out."""
    sign = 1.0 if rows["orientation"].iloc[0] == "higher" else -1.0
    return {system: sign * value for system, value in zip(rows["system"], rows["value"].astype(float)) if math.isfinite(value)}


def _pairwise_taus(group: str, rankings: Mapping[str, Mapping[str, float]], permutations: int | None,
                   seed: int) -> list[dict[str, Any]]:
    """Kendall's tau-b between every two of ``rankings`` (name -> system -> value, better up), on the systems
    both rank, as rows (group, first, second, systems, tau[, p_value]); NaN for fewer than two shared systems
    or a constant ranking. ``permutations``: the p-value's permutations (None: no p-value)."""
    from scipy import stats  # scipy.stats is slow to import; only the taus need it
    rows = []
    names = list(rankings)
    for index, first in enumerate(names):
        for second in names[index + 1:]:
            shared = [system for system in rankings[first] if system in rankings[second]]
            x = [rankings[first][system] for system in shared]
            y = [rankings[second][system] for system in shared]
            tau, p_value = (math.nan, math.nan)
            if len(shared) >= 2 and len(set(x)) > 1 and len(set(y)) > 1:
                if permutations is None:
                    tau = float(stats.kendalltau(x, y).statistic)
                else:
                    tau, p_value = kendall_tau(x, y, n_resamples=permutations, seed=seed)
            row = {"group": group, "first": first, "second": second, "systems": len(shared), "tau": tau}
            rows.append(row if permutations is None else {**row, "p_value": p_value})
    return rows


def kendall_matrix(profile: pd.DataFrame, permutations: int, seed: int) -> pd.DataFrame:
    """Kendall's tau-b between the rankings of every two measures of a group (:data:`KENDALL_COLUMNS`), on
    the systems both measure; tau = 1: the two columns order the systems alike (better with better). The
    p-value is a two-sided permutation test (exact for up to ``permutations``! orderings); fewer than three
    systems, or a constant column, give NaN."""
    rows = []
    for group, frame in profile.groupby("group", sort=False):
        oriented = {measure: _oriented(rows_) for measure, rows_ in frame.groupby("measure", sort=False)}
        rows += _pairwise_taus(group, oriented, permutations, seed)
    return pd.DataFrame(rows, columns=list(KENDALL_COLUMNS))


def axis_rankings(profile: pd.DataFrame) -> pd.DataFrame:
    """Per group, axis and system: the mean rank over the axis's columns (:func:`.profile_uncertainty.axis_rows`:
    its robustness columns but those that track quality; its quality columns for the quality axis) and the
    rank of that mean (1 = the most robust on the axis). Columns: group, axis, system, measures, mean_rank, rank."""
    ranked = axis_rows(profile)
    rows = []
    for (group, axis), frame in ranked.groupby(["group", "axis"], sort=False):
        means = frame.groupby("system", sort=False)["rank"].agg(lambda ranks: float(np.mean(ranks.astype(float))))
        counts = frame.groupby("system", sort=False)["rank"].size()
        ranks = rank_values(means.to_dict(), higher_is_better=False)
        for system, mean in means.items():
            rows.append({"group": group, "axis": axis, "system": system, "measures": int(counts[system]),
                         "mean_rank": mean, "rank": ranks[system]})
    return pd.DataFrame(rows, columns=["group", "axis", "system", "measures", "mean_rank", "rank"])


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the config as the workflow ran it (validated, defaults filled), serialised canonically
    (sorted keys), so equal configs hash alike whatever their file's layout, comments or key order."""
    text = json.dumps(config, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _finite(value: Any) -> float | None:
    return None if value is None or value is pd.NA or (isinstance(value, float) and not math.isfinite(value)) else float(value)


def _flag(value: Any) -> bool | None:
    """A separated flag for JSON: None where untested (no replicates)."""
    return None if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) else bool(value)


def profile_document(plan: Mapping[str, Any], profile: pd.DataFrame, kendall: pd.DataFrame, axes: pd.DataFrame,
                     axes_kendall: pd.DataFrame, reading: Sequence[str], digest: str) -> dict[str, Any]:
    """Every number of the profile as one JSON-ready document (``results/profile.json``): the config hash,
    the profile's metric, per group its systems, measures (with source, orientation and per-system value,
    interval and rank), axis rankings, the Kendall taus between measures and between axes, and the
    generated reading."""
    groups = []
    for group in plan["groups"]:
        frame = profile[profile["group"] == group["name"]]
        measures = []
        for measure in group["measures"]:
            rows = frame[frame["measure"] == measure["key"]]
            measures.append({
                **{key: measure[key] for key in ("key", "axis", "label", "metric", "role", "orientation")},
                "tracks_quality": bool(measure.get("tracks_quality", False)),
                "answers_evenness": bool(measure.get("answers_evenness", False)),
                "source": rows["source"].iloc[0] if not rows.empty else None,
                "systems": {
                    row.system: {"value": _finite(row.value), "ci_low": _finite(row.ci_low), "ci_high": _finite(row.ci_high),
                                 "rank": None if row.rank is pd.NA else int(row.rank),
                                 "rank_lo": _finite(row.rank_lo), "rank_hi": _finite(row.rank_hi),
                                 "separated": _flag(getattr(row, "separated", pd.NA))}
                    for row in rows.itertuples()
                },
            })
        group_axes = axes[axes["group"] == group["name"]]
        groups.append({
            "name": group["name"], "label": group["label"], "systems": list(group["systems"]), "measures": measures,
            "axes": [{"axis": row.axis, "system": row.system, "measures": int(row.measures), "mean_rank": float(row.mean_rank),
                      "rank": int(row.rank), "rank_lo": _finite(getattr(row, "rank_lo", None)),
                      "rank_hi": _finite(getattr(row, "rank_hi", None)), "tested": int(getattr(row, "tested", 0)),
                      "separated": _flag(getattr(row, "separated", pd.NA))} for row in group_axes.itertuples()],
            "kendall": [{"first": row.first, "second": row.second, "systems": int(row.systems), "tau": _finite(row.tau),
                         "p_value": _finite(row.p_value)} for row in kendall[kendall["group"] == group["name"]].itertuples()],
            "axes_kendall": [{"first": row.first, "second": row.second, "systems": int(row.systems), "tau": _finite(row.tau),
                              "p_value": _finite(getattr(row, "p_value", None)),
                              "tau_lo": _finite(getattr(row, "tau_lo", None)), "tau_hi": _finite(getattr(row, "tau_hi", None))}
                             for row in axes_kendall[axes_kendall["group"] == group["name"]].itertuples()],
        })
    return {"config_hash": digest, "metric": plan["metric"], "groups": groups, "reading": list(reading)}


def wide_table(profile: pd.DataFrame, group: str) -> pd.DataFrame:
    """One group's profile as a wide table: a row per system, per measure its value and its rank (and for
    Natural Robustness its interval), columns in plan order."""
    frame = profile[profile["group"] == group]
    systems = list(dict.fromkeys(frame["system"]))
    table = pd.DataFrame({"system": systems})
    for measure, rows in frame.groupby("measure", sort=False):
        by_system = rows.set_index("system")
        label = rows["label"].iloc[0]
        table[label] = [by_system["value"].get(system, math.nan) for system in systems]
        if by_system["ci_low"].notna().any():
            table[f"{label} CI low"] = [by_system["ci_low"].get(system, math.nan) for system in systems]
            table[f"{label} CI high"] = [by_system["ci_high"].get(system, math.nan) for system in systems]
        table[f"{label} rank"] = pd.array([by_system["rank"].get(system, pd.NA) for system in systems], dtype="Int64")
    return table


def axis_kendall(axes: pd.DataFrame, permutations: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Kendall's tau-b between the axis rankings of every two axes of a group (:func:`axis_rankings`), on
    the systems both rank: do the axes agree? Columns: group, first, second, systems, tau (NaN for fewer
    than two shared systems or a constant ranking) and, given ``permutations``, the two-sided permutation
    ``p_value`` (:func:`kendall_matrix`): with few systems it cannot be small (2 of 3! orderings are as
    extreme as a full reversal of three), which the reading says."""
    rows = []
    for group, frame in axes.groupby("group", sort=False):
        # the better end up: a lower mean rank is better
        ranking = {axis: dict(zip(rows_.system, -rows_.mean_rank)) for axis, rows_ in frame.groupby("axis", sort=False)}
        rows += _pairwise_taus(group, ranking, permutations=permutations, seed=seed)
    return pd.DataFrame(rows, columns=["group", "first", "second", "systems", "tau", *(["p_value"] if permutations else [])])


def build_profile(plan: Mapping[str, Any], permutations: int, seed: int,
                  confidence: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The whole profile from the branch outputs the plan names: the ranked long table with rank intervals
    and separated places, the Kendall taus between measures, the axis rankings with their rank intervals and
    separated places, and the Kendall taus between axes with their permutation p-values and intervals
    (:mod:`.profile_uncertainty`, at ``confidence``)."""
    profile = rank_profile(read_profile(plan))
    axes = axis_rankings(profile)
    profile, draws = rank_intervals(plan, profile, confidence)
    return (profile[list(LONG_COLUMNS)], kendall_matrix(profile, permutations, seed), axis_intervals(profile, axes, draws, confidence),
            axis_tau_intervals(profile, axis_kendall(axes, permutations, seed), draws, confidence))


def kendall_square(kendall: pd.DataFrame, profile: pd.DataFrame, group: str) -> pd.DataFrame:
    """One group's Kendall taus as a symmetric matrix labelled by the measures' labels (diagonal 1)."""
    frame = profile[profile["group"] == group]
    labels = dict(zip(frame["measure"], frame["label"]))
    measures = list(labels)
    matrix = pd.DataFrame(np.eye(len(measures)), index=measures, columns=measures)
    for row in kendall[kendall["group"] == group].itertuples():
        matrix.loc[row.first, row.second] = matrix.loc[row.second, row.first] = row.tau
    matrix.index = matrix.columns = [labels[measure] for measure in measures]
    return matrix.rename_axis("measure").reset_index()
