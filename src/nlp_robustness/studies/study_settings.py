"""Each study's settings as the validated config gives them: its pools, rows and scores, their epsilon grids, the
names of its human score, and the paths of its unit files.

Small functions of a config section, read by the study plan (:mod:`nlp_robustness.studies.plan`), the rules and
the profile, so each is computed in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlp_robustness.statistics.pools import leave_out_labels
from nlp_robustness.studies.natural_robustness_scores import CRITERIA
from nlp_robustness.studies.sentiment import sentiment_classifiers

__all__ = [
    "METRIC_AGREEMENT", "human_cov_meaningful", "human_leave_out", "human_rows", "human_score_directions",
    "human_score_epsilons", "human_score_label", "human_scores", "human_unit", "metric_file_values", "mt_leave_out",
    "mt_score_files", "mt_study_directory", "natural_rows", "pair_score_files", "review_response_files",
    "sentiment_leave_out",
]

#: The DARR agreement units of the metric-robustness study (written by its ``metric_tau`` rule).
METRIC_AGREEMENT = "results/metric_robustness/agreement.tsv"


def mt_leave_out(study: Mapping[str, Any]) -> list[str]:
    """Pools of an MT domain study (an entry of ``mt_studies``): the whole pool, then each test set of its ``leave_out``."""
    return leave_out_labels(study["leave_out"])


def mt_study_directory(study: str, metric: str) -> str:
    """Where an MT study's tables and figures of one metric go (``results/tables/<this>/``, ``results/figures/<this>/``)."""
    return f"{study}/{metric}"


def sentiment_leave_out(config: Mapping[str, Any]) -> list[str]:
    """Pools of the sentiment study: the whole pool, then each test domain of ``sentiment.leave_out`` (none
    without a sentiment section)."""
    section = config.get("sentiment")
    return [] if section is None else leave_out_labels(section["leave_out"])


def human_leave_out(study: Mapping[str, Any]) -> list[str]:
    """Pools of a human study (an entry of ``human_studies``): the whole pool, then every domain in turn when
    there are several."""
    domains = list(study["domains"])
    return leave_out_labels(domains if len(domains) > 1 else [])


def human_rows(study: Mapping[str, Any]) -> list[str]:
    """The rows of a human study's tables: its systems, then the rated references that join as rows (wmt-da)."""
    return [*study["systems"], *study.get("rated_references", {})] if study["format"] == "wmt-da" else list(study["systems"])


def human_scores(study: Mapping[str, Any], metrics: Sequence[str]) -> list[str]:
    """The scores of a human study's engine rows: ``human``, each of the workflow's ``metrics``, then each metric of
    its ``metric_files`` (config order)."""
    return ["human", *metrics, *study.get("metric_files", {})]


def metric_file_values(spec: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Every file value of a study's metric files: (config key, value, domain or "" for the study's own segments)."""
    found = []
    for name, metric in spec.get("metric_files", {}).items():
        where = f"metric_files.{name}"
        entries = [(f"{where}.domains.{domain}", entry, domain) for domain, entry in metric["domains"].items()] \
            if "domains" in metric else [(where, metric, "")]
        for key, entry, domain in entries:
            if "file" in entry:
                found.append((f"{key}.file", entry["file"], domain))
            for row, value in entry.get("files", {}).items():
                found.append((f"{key}.files.{row}", value, domain))
    return found


def human_score_epsilons(study: Mapping[str, Any], metrics: Sequence[str], default: Mapping[str, float]) -> dict[str, Mapping[str, float]]:
    """The epsilon grid of each score of :func:`human_scores`: the study's for ``human``, a file metric's from its config,
    ``default`` (``robustness.epsilon``) for the workflow's own metrics."""
    files = study.get("metric_files", {})
    return {score: study["epsilon"] if score == "human" else files[score]["epsilon"] if score in files else default
            for score in human_scores(study, metrics)}


def human_score_directions(study: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, bool]:
    """Whether a higher score is better, for each score of :func:`human_scores` (a file metric's from its config)."""
    files = study.get("metric_files", {})
    return {score: files[score]["higher_is_better"] if score in files else True for score in human_scores(study, metrics)}


def human_unit(study: Mapping[str, Any]) -> str:
    """The human score's short name (MQM, DA z, or an mtme study's ``score_label``)."""
    if study["format"] == "mqm":
        return "MQM"
    if study["format"] == "mtme":
        return study.get("score_label", "human score")
    return f"DA {study['score']}"


def human_score_label(study: Mapping[str, Any]) -> str:
    """What a human study's human score is, for table captions."""
    if study["format"] == "mtme":
        return (f"Segment {human_unit(study)} score (higher = better; its mean is near or below 0, so COV means nothing "
                "and is not printed)")
    if study["format"] == "mqm":
        return "Segment MQM score (0 = perfect, higher = better; its mean is negative, so COV means nothing and is not printed)"
    if study["score"] == "z":
        return ("Segment DA z score (rater-standardised direct assessment; higher = better; its mean is near 0, so COV "
                "means nothing and is not printed)")
    return "Segment DA raw score (0-100 direct assessment; higher = better)"


def human_cov_meaningful(study: Mapping[str, Any]) -> bool:
    """Whether COV = sigma / mu means something for a human study's human score: not for MQM (0 = perfect, the
    mean is negative) nor for DA z scores (centred on 0 per rater) nor for an mtme study's (MQM or DA z); yes for raw DA (0-100)."""
    return study["format"] == "wmt-da" and study["score"] != "z"


def mt_score_files(system: str, testsets: Sequence[str]) -> dict[str, str]:
    """The sentence score tables of one MT system, by test set (the MT study's units; also read by the
    perturbation pair scores and the test-set means)."""
    return {testset: f"results/scores/{system}/{testset}.tsv" for testset in testsets}


def pair_score_files(family: str, system: str, functions: Sequence[str]) -> dict[str, str]:
    """One system's pair-score tables of a family, by function (a family study's units; also its tables')."""
    return {function: f"results/perturbations/{family}/{function}/scores/{system}.tsv" for function in functions}


def review_response_files(types: Mapping[str, str]) -> dict[str, str]:
    """The perturbed reviews of every perturbation type (``types``: type -> family), by type."""
    return {kind: f"results/natural_robustness/sentiment/perturbed/{family}/{kind}.tsv" for kind, family in types.items()}


def natural_rows(config: Mapping[str, Any]) -> dict[str, list[str]]:
    """The rows of the Natural Robustness consistency study by criterion: MT systems twice, classifiers once."""
    section = config.get("natural_robustness")
    if not section:
        return {}
    systems = list(section["systems"])
    classifiers = sentiment_classifiers(config)
    rows = {"exact": systems, "chrf": systems, "label": classifiers}
    return {criterion: rows[criterion] for criterion in CRITERIA if rows[criterion]}
