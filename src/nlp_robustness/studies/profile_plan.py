"""The robustness profile's plan, made from the config before any job: its groups of systems, their measures,
and the branch output each measure is read from (:mod:`nlp_robustness.studies.profile` reads, ranks and
compares them).

The plan is plain data, the profile job's parameters; :func:`plan_files` are its inputs and
:func:`config_hash` identifies the config in ``results/profile.json``.

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
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from nlp_robustness.display_names import METHOD_NAMES, family_name, metric_name
from nlp_robustness.errors import InputError
from nlp_robustness.statistics.comparisons import COMPARED_STATISTICS
from nlp_robustness.statistics.pools import WHOLE_POOL, csv_group
from nlp_robustness.studies.study_settings import human_rows, human_unit
from nlp_robustness.studies.sentiment import sentiment_classifiers

__all__ = [
    "AXES",
    "FAMILY_VIEWS",
    "complete_profile",
    "config_hash",
    "plan_files",
    "profile_plan",
]

#: Axes in the order the profile shows them.
AXES = ("quality", "test domains", "human judgements", "word order", "character attacks", "natural perturbations")
#: How a perturbation family appears in the profile: mean beta1/beta2 (faithfulness) or the drop per function.
FAMILY_VIEWS = ("faithfulness", "drop")

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


def _replicates(gammas: Mapping[str, str], statistic: str, tables: str, scale: float = 1.0) -> dict[str, Any]:
    """Where a whole-pool column's bootstrap replicates are (beside each row's gamma table; see
    :mod:`.profile_uncertainty`) and, for a statistic the comparisons tables compare, the comparisons table
    of its study (``tables``) that holds its verdicts (:mod:`.profile_verdicts`): the source keys
    ``replicates``, ``statistic``, ``scale`` and ``comparisons``."""
    compared = {"comparisons": f"{tables}/comparisons.csv"} if statistic in COMPARED_STATISTICS and scale == 1.0 else {}
    return {"replicates": {row: path.removesuffix(".gamma.tsv") + ".replicates.npz" for row, path in gammas.items()},
            "statistic": statistic, "scale": scale, **compared}


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
                                        "column": f"{csv_group(WHOLE_POOL)}_COV", **(_replicates(gammas, "cov", tables) if pooled else {})},
                tracks_quality=sentence_scores))
        measures.append(_measure(
            f"{prefix}gamma_area_{score}_{method}", axis, f"γ-area {label} ({METHOD_NAMES[method]})", score,
            "robustness", "lower", {"kind": "gamma_area", "paths": dict(gammas), "method": method,
                                    **(_replicates(gammas, "gamma_area", tables) if pooled else {})}))
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
                 {"kind": "table_column", "path": path, "column": f"{pool}_Var", **_replicates(gammas, "variance", tables)},
                 tracks_quality=True),
        _measure(f"{prefix}between_sd_{score}", axis, f"between-domain SD {label}", score, "robustness", "lower",
                 {"kind": "table_column", "path": path, "column": f"{pool}_between_SD", **_replicates(gammas, "between_sd", tables)},
                 answers_evenness=True),
        _measure(f"{prefix}between_share_{score}", axis, f"between-domain share {label} (%)", score, "robustness",
                 "lower", {"kind": "table_column", "path": path, "column": f"{pool}_between_share_pct",
                           **_replicates(gammas, "between_share", tables, 100.0)}),
    ]


def _one_domain(study: str, kind: str, domains: Sequence[str], axes: Sequence[str]) -> list[dict[str, str]]:
    """The axes a study of fewer than two domains cannot enter, each with its reason (the profile states it):
    consistency across domains needs two of them; its quality and perturbation axes stay."""
    if len(domains) >= 2:
        return []
    reason = (f"{study} has one {kind} ({', '.join(domains)}): there are no domains to be consistent across "
              f"(give it two or more {kind}s for this axis)")
    return [{"axis": axis, "reason": reason} for axis in axes]


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
    (:func:`_measure`), its source a dict naming the file(s) and what to read there
    (:func:`~nlp_robustness.studies.profile_sources.read_profile`).
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
                      **_replicates(gamma_curves[f"{study}/{metric}"], "mean", tables)}),
        ]
        left_out = _one_domain(f"study {study}", "test set", spec["testsets"], ["test domains"])
        if not left_out:
            measures += [*_consistency("", metric, display, tables, gamma_curves[f"{study}/{metric}"]),
                         *_between_domains("", metric, display, tables, gamma_curves[f"{study}/{metric}"])]
        for family, view in section["families"].items():
            if set(families[family]["systems"]) & set(systems):
                measures += _family_measures(family, view, metric, list(families[family]["functions"]), display)
        if natural and set(natural["systems"]) & set(systems):
            measures += _natural(["exact", "chrf"], natural["systems"])
        groups.append({"name": "mt" if index == 0 else f"mt-{study}", "label": f"MT systems ({study}, {spec['language_pair']})",
                       "scores": f"sentence {display}", "systems": systems, "measures": measures, "left_out": left_out})

    sentiment = config.get("sentiment")
    if sentiment:
        classifiers = sentiment_classifiers(config)  # TF-IDF classifiers, then Hugging Face models
        measures = [
            _measure("mean_accuracy", "quality", "mean accuracy", "accuracy", "quality", "higher",
                     {"kind": "table_column", "path": "results/tables/sentiment/robustness_pool.csv", "column": f"{csv_group(WHOLE_POOL)}_Mean",
                      **_replicates(gamma_curves["sentiment"], "mean", "results/tables/sentiment")}),
        ]
        left_out = _one_domain("the sentiment study", "test domain", sentiment["test"]["domains"], ["test domains"])
        if not left_out:
            measures += _consistency("", "accuracy", "accuracy", "results/tables/sentiment", gamma_curves["sentiment"], sentence_scores=False)
        if natural:
            measures += _natural(["label"], classifiers)
        groups.append({"name": "sentiment", "label": "Sentiment classifiers", "scores": "accuracy in %", "systems": classifiers,
                       "measures": measures, "left_out": left_out})

    for study, spec in config.get("human_studies", {}).items():  # a human axis for the systems of each human study
        names = human_rows(spec)
        human_label = human_unit(spec)
        measures = []
        for score, label in (("human", human_label), (metric, display)):
            measures.append(_measure(
                f"mean_{score}", "quality", f"mean {label}", score, "quality", "higher",
                {"kind": "table_column", "path": f"results/tables/human/{study}/{score}/robustness_pool.csv",
                 "column": f"{csv_group(WHOLE_POOL)}_Mean", **_replicates(gamma_curves[f"human/{study}/{score}"], "mean", f"results/tables/human/{study}/{score}")}))
        left_out = _one_domain(f"human study {study}", "domain", spec["domains"], ["test domains", "human judgements"])
        for score, label in ((metric, display), ("human", human_label)) if not left_out else ():  # people's consistency: an axis of its own
            prefix, tables, gammas = f"{'human' if score == 'human' else 'metric'}_", f"results/tables/human/{study}/{score}", gamma_curves[f"human/{study}/{score}"]
            axis = "human judgements" if score == "human" else "test domains"
            measures += _consistency(prefix, score, label, tables, gammas, with_cov=score != "human", axis=axis)
            measures += _between_domains(prefix, score, label, tables, gammas, axis=axis)
        groups.append({"name": study, "label": f"{spec.get('description', study)} (human judgements)",
                       "scores": f"{human_label} and sentence {display}", "systems": names, "measures": measures,
                       "left_out": left_out})
    return {"metric": metric, "groups": groups}


def _source_files(source: Mapping[str, Any]) -> list[str]:
    """The file(s) one measure is read from: one table, or a gamma curve per system."""
    return [source["path"]] if "path" in source else list(source["paths"].values())


def plan_files(plan: Mapping[str, Any]) -> list[str]:
    """Every file the plan reads, once, in plan order (the profile job's input): the measures' sources, their
    replicates and the summaries beside them, and the comparisons tables that hold their verdicts."""
    files = []
    for group in plan["groups"]:
        for measure in group["measures"]:
            source = measure["source"]
            replicates = list(source.get("replicates", {}).values())
            files += [*_source_files(source), *replicates,
                      *(path.removesuffix(".replicates.npz") + ".summary.tsv" for path in replicates),
                      *([source["comparisons"]] if "comparisons" in source else [])]
    return list(dict.fromkeys(files))


def config_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 of the config as the workflow ran it (validated, defaults filled), serialised canonically
    (sorted keys), so equal configs hash alike whatever their file's layout, comments or key order."""
    text = json.dumps(config, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
