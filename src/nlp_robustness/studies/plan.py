"""The study plan: every study the one robustness engine measures, computed once from the validated config.

A *study* is a set of units with a domain label (segments of test sets, reviews of product domains,
perturbations of functions, ...). For each study the plan says which files its units are read from, its
domains in order, its pools (the whole pool, then each left-out domain), how units become a sample, and
its blocks. For every *row* of a study under a *score* (a system under BLEU, a classifier, a metric
variant) it names the statistics job, and for every group of rows it names a table and a gamma figure.

Three generic rules (``robustness_statistics``, ``robustness_tables``, ``gamma_curves``) and the blocks
rule ``study_blocks`` are keyed by this plan; the profile reads its paths from it. A new study is one
:func:`study_plan` section here, one module in :mod:`nlp_robustness.studies.registry` and its caption.

Every path keeps the layout the branches had before the plan existed (``results/robustness/<metric>/``,
``results/sentiment/robustness/``, ...), so results and the paths the docs name are unchanged.

The plan's entries are :mod:`nlp_robustness.studies.plan_entries`; what the config says of each study (pools, rows,
scores, unit files) is :mod:`nlp_robustness.studies.study_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.configuration import derived_testset, parts
from nlp_robustness.statistics.pools import METHODS, leave_out_labels
from nlp_robustness.studies.metric_attack_conditions import conditions as metric_conditions
from nlp_robustness.studies.metric_attack_conditions import metric_variants
from nlp_robustness.studies.metric_attacks import aggregation_of as metric_aggregation_of
from nlp_robustness.studies.metric_files import metric_file_score_files
from nlp_robustness.studies.natural_robustness_config import perturbation_types
from nlp_robustness.studies.plan_entries import BlockSet, GammaFigure, RowStatistics, Study, StudyTable
from nlp_robustness.studies.registry import study_module
from nlp_robustness.studies.sentiment import aggregation_of as sentiment_aggregation_of
from nlp_robustness.studies.sentiment import sentiment_classifiers, sentiment_models
from nlp_robustness.studies.study_settings import (
    METRIC_AGREEMENT,
    human_cov_meaningful,
    human_leave_out,
    human_rows,
    human_score_epsilons,
    human_score_label,
    human_scores,
    human_unit,
    mt_leave_out,
    mt_score_files,
    mt_study_directory,
    natural_rows,
    pair_score_files,
    review_response_files,
    sentiment_leave_out,
)

__all__ = ["StudyPlan", "study_plan"]


@dataclass
class StudyPlan:
    """Every study, block set, statistics job, table and gamma figure of a config, by key."""

    studies: dict[str, Study] = field(default_factory=dict)
    block_sets: dict[str, BlockSet] = field(default_factory=dict)
    statistics: dict[str, RowStatistics] = field(default_factory=dict)  # by stem
    tables: dict[str, StudyTable] = field(default_factory=dict)  # by directory
    gamma_figures: dict[str, GammaFigure] = field(default_factory=dict)  # by directory
    uncertainty: dict[str, Any] = field(default_factory=dict)  # the config's uncertainty section

    def add_rows(self, study: str, block_set: str, score: str, rows: Mapping[str, Mapping[str, str]],
                  stem: str, epsilon: Mapping[str, float], row_label: str) -> dict[str, str]:
        """Add one statistics job per row (``rows``: row -> its unit files); ``stem`` has a ``{row}`` field."""
        stems = {}
        for row, unit_files in rows.items():
            path = stem.format(row=row)
            self.statistics[path] = RowStatistics(path, study, row, score, dict(unit_files), block_set, dict(epsilon), row_label)
            stems[row] = path
        return stems

    def block_set_job(self, name: str, seed: int) -> dict[str, Any]:
        """Everything the ``study_blocks`` job of a block set uses: its study, unit files, pools, seed and design."""
        block_set = self.block_sets[name]
        study = self.studies[block_set.study]
        return {
            "study": study.module, "label": study.name, "unit_files": block_set.unit_files, "domains": study.domains,
            "leave_out": study.leave_out, "namespace": study.namespace, "options": study.options, "seed": seed,
            "blocks": study.bagging["blocks"], "fraction": study.bagging["fraction"],
        }

    def statistics_job(self, stem: str) -> dict[str, Any]:
        """Everything a ``robustness_statistics`` job uses (its params: an edit reruns exactly the rows it touches)."""
        row = self.statistics[stem]
        study = self.studies[row.study]
        return {
            "study": study.module, "label": study.name, "row": row.row, "score": row.score, "unit_files": row.unit_files,
            "domains": study.domains, "leave_out": study.leave_out, "aggregation": study.aggregation, "options": study.options,
            "epsilon": row.epsilon, "row_label": row.row_label, "uncertainty": self.uncertainty_of(row.study),
        }

    def uncertainty_of(self, study: str) -> dict[str, Any]:
        """The bootstrap settings of a study's statistics jobs (confidence, resamples, seed, resample_domains)."""
        settings = self.uncertainty
        return {"confidence": settings["confidence"], "resamples": settings["resamples"], "seed": settings["seed"],
                "resample_domains": study in settings["resample_domains"]}

    def statistics_inputs(self, stem: str) -> dict[str, Any]:
        """The unit files and the block set of one statistics job."""
        row = self.statistics[stem]
        return {"units": list(row.unit_files.values()), "blocks": f"results/blocks/{row.block_set}.tsv"}

    def table_summaries(self, directory: str) -> dict[str, str]:
        """The summary of every row of a table, by row name (table order)."""
        return {row: self.statistics[stem].path("summary") for row, stem in self.tables[directory].rows.items()}

    def table_replicates(self, directory: str) -> dict[str, str]:
        """The bootstrap replicates of every row of a table, by row name (its paired comparisons)."""
        return {row: f"results/{stem}.replicates.npz" for row, stem in self.tables[directory].rows.items()}

    def table_aggregation(self, directory: str) -> str:
        """The aggregation (``unit`` or ``domain``) of the study a table's rows belong to (the first row's)."""
        stem = next(iter(self.tables[directory].rows.values()))
        return self.studies[self.statistics[stem].study].aggregation

    def table_curves(self, directory: str) -> dict[str, str]:
        """The gamma table of every row of a table, by row name (the profile's gamma-areas)."""
        return {row: self.statistics[stem].path("gamma") for row, stem in self.tables[directory].rows.items()}

    def gamma_curves(self) -> dict[str, dict[str, str]]:
        """The gamma table of every row of every table, by table directory and row name (what the profile reads)."""
        return {directory: self.table_curves(directory) for directory in self.tables}

    def figure_curves(self, directory: str) -> dict[str, str]:
        """The gamma table of every row of a figure, by row name."""
        return {row: self.statistics[stem].path("gamma") for row, stem in self.gamma_figures[directory].rows.items()}

    def outputs(self, extensions: Sequence[str] = ("csv", "md", "tex", "html")) -> list[str]:
        """Every table of every method and every gamma figure."""
        tables = [f"results/tables/{directory}/robustness_{method}.{extension}"
                  for directory in self.tables for method in METHODS for extension in extensions]
        figures = [f"results/figures/{directory}/gamma_curves.{extension}" for directory in self.gamma_figures for extension in ("png", "pdf")]
        comparisons = [f"results/tables/{directory}/comparisons.{extension}" for directory in self.tables for extension in ("csv", "md")]
        return tables + figures + comparisons


def _mt_domains(plan: StudyPlan, config: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    for name, spec in config["mt_studies"].items():
        study = f"domains/{name}"
        testsets, leave_out = list(spec["testsets"]), mt_leave_out(spec)
        # namespace []: every MT study's blocks are seeded as the one MT study's were (its units differ)
        plan.studies[study] = Study(study, "domains", testsets, leave_out, "unit", [], {}, dict(config["robustness"]["bagging"]))
        plan.block_sets[study] = BlockSet(study, study, {testset: f"results/testsets/{testset}.tsv" for testset in testsets})
        pair = spec["language_pair"]
        for metric in config["metrics"]:
            rows = {system: mt_score_files(system, testsets) for system in spec["systems"]}
            stems = plan.add_rows(study, study, metric, rows, f"robustness/{name}/{metric}/{{row}}", config["robustness"]["epsilon"], "system")
            directory = mt_study_directory(name, metric)
            variables = {"metric": metric, "study": name, "language_pair": pair}
            plan.tables[directory] = StudyTable(
                directory, stems, "system", leave_out, "mt", f"Sentence {metric}, study {name} ({pair})", "test set", "",
                f"robustness-{name}-{metric}", 2, "robustness_table", variables, sections["domains"], f"{name}: {metric}")
            plan.gamma_figures[directory] = GammaFigure(directory, stems, metric, None, "gamma_curves", variables,
                                                        sections["domains"], f"{name}: {metric}")
        _mt_file_metrics(plan, name, spec, sections)


def _mt_file_metrics(plan: StudyPlan, name: str, spec: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    """An MT study's metrics read from files (``metric_files``): rows, tables and gamma figures like a computed
    metric's, on the study's blocks, from the aligned score tables (:mod:`nlp_robustness.studies.metric_files`)."""
    study, testsets, pair = f"domains/{name}", list(spec["testsets"]), spec["language_pair"]
    for metric, files in spec.get("metric_files", {}).items():
        rows = {system: metric_file_score_files(name, metric, system, testsets) for system in spec["systems"]}
        stems = plan.add_rows(study, study, metric, rows, f"robustness/{name}/{metric}/{{row}}", files["epsilon"], "system")
        directory = mt_study_directory(name, metric)
        direction = "higher is better" if files["higher_is_better"] else "lower is better"
        described = f"{metric} ({files['description']}; read from files; {direction})" if files["description"] != metric \
            else f"{metric} (read from files; {direction})"
        variables = {"metric": described, "study": name, "language_pair": pair}
        plan.tables[directory] = StudyTable(
            directory, stems, "system", mt_leave_out(spec), "mt", f"Sentence {described}, study {name} ({pair})", "test set",
            "", f"robustness-{name}-{metric}", files["decimals"], "robustness_table", variables, sections["domains"],
            f"{name}: {metric}", cov_meaningful=files["cov_meaningful"], higher_is_better=files["higher_is_better"])
        plan.gamma_figures[directory] = GammaFigure(directory, stems, metric, None, "gamma_curves", variables,
                                                    sections["domains"], f"{name}: {metric}")


def _sentiment(plan: StudyPlan, config: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    section = config.get("sentiment")
    if not section:
        return
    classifiers = sentiment_classifiers(config)  # a TF-IDF classifier per training domain, then the Hugging Face models
    plan.studies["sentiment"] = Study(
        "sentiment", "sentiment", list(section["test"]["domains"]), sentiment_leave_out(config),
        sentiment_aggregation_of(section["bagging_unit"]), ["sentiment"], {"bagging_unit": section["bagging_unit"]},
        dict(config["robustness"]["bagging"]))
    stems = {}
    for classifier in classifiers:
        # each classifier has its own units (its own domain is tested on its held-out split; a model tests on every
        # review): its own block set
        files = {"predictions": f"results/sentiment/predictions/{classifier}.tsv"}
        plan.block_sets[f"sentiment/{classifier}"] = BlockSet(f"sentiment/{classifier}", "sentiment", files)
        stems |= plan.add_rows("sentiment", f"sentiment/{classifier}", "accuracy", {classifier: files},
                                "sentiment/robustness/{row}", section["epsilon"], "classifier")
    plan.tables["sentiment"] = StudyTable(
        "sentiment", stems, "classifier (training domain or model)" if sentiment_models(config) else "training domain",
        sentiment_leave_out(config), "sentiment",
        "Domain-level accuracy (%) of sentiment classifiers", "test domain",
        "COV is sigma/mu as in the MT tables; the paper's sentiment tables print 100*Var/Mean under that name.",
        "sentiment-robustness", 3, "sentiment_robustness_table", {}, sections["sentiment"], "robustness")
    plan.gamma_figures["sentiment"] = GammaFigure(
        "sentiment", stems, "accuracy", "domain-level accuracy (%) on the pooled test domains", "sentiment_gamma_curves", {},
        sections["sentiment"], "robustness")


def _human(plan: StudyPlan, config: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    for name, spec in config.get("human_studies", {}).items():
        domains, leave_out, rows = list(spec["domains"]), human_leave_out(spec), human_rows(spec)
        description = spec.get("description", name)
        study = f"human/{name}"
        files = {domain: f"results/human/{name}/segments/{domain}.tsv" for domain in domains}
        options = {"format": spec["format"]}
        bagging = dict(config["robustness"]["bagging"])
        plan.studies[study] = Study(study, "human", domains, leave_out, "unit", ["human", name], options, bagging)
        plan.block_sets[study] = BlockSet(study, study, files)
        unit = human_unit(spec)
        metric_files = spec.get("metric_files", {})
        epsilons = human_score_epsilons(spec, config["metrics"], config["robustness"]["epsilon"])
        for score in human_scores(spec, config["metrics"]):
            epsilon = epsilons[score]
            stems = plan.add_rows(study, study, score, {row: files for row in rows},
                                  f"human/{name}/robustness/{score}/{{row}}", epsilon, "system")
            scores = human_score_label(spec) if score == "human" else \
                f"Segment {score} (scores from files) on the human-rated segments" if score in metric_files else \
                f"Sentence {score} on the human-rated segments"
            plan.tables[f"{study}/{score}"] = StudyTable(
                f"{study}/{score}", stems, "system", leave_out, "human", scores, "domain", "",
                f"human-{name}-{score}", 3, "human_robustness_table",
                {"human_score": score if score != "human" else unit, "study_description": description},
                sections["human"], f"{name}: scored by {score}", cov_meaningful=score != "human" or human_cov_meaningful(spec))
            if score == "human":  # paper Figure 5: gamma on human scores only
                plan.gamma_figures[study] = GammaFigure(
                    study, stems, unit, f"segment {unit} scores on the pooled domains", "human_gamma_curves",
                    {"study_description": description, "human_unit": unit}, sections["human"], f"{name}: scored by human")
        if spec["format"] == "wmt-da" and spec["all_segments"]:
            every = f"{study}/all"
            all_files = {domain: f"results/human/{name}/all_segments/{domain}.tsv" for domain in domains}
            plan.studies[every] = Study(every, "human", domains, leave_out, "unit", ["human", name, "all"], options, bagging)
            plan.block_sets[every] = BlockSet(every, every, all_files)
            for score in config["metrics"]:
                stems = plan.add_rows(every, every, score, {row: all_files for row in rows},
                                      f"human/{name}/robustness/{score}-all/{{row}}", config["robustness"]["epsilon"], "system")
                plan.tables[f"{study}/{score}-all"] = StudyTable(
                    f"{study}/{score}-all", stems, "system", leave_out, "human", f"Sentence {score} on every segment of each domain",
                    "domain", "", f"human-{name}-{score}-all", 3, "human_robustness_table",
                    {"human_score": f"{score} (every segment, rated or not)", "study_description": description},
                    sections["human"], f"{name}: scored by {score}, every segment")


def _perturbations(plan: StudyPlan, config: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    section = config.get("perturbations")
    if not section:
        return
    for family, spec in section["families"].items():
        study = f"perturbations/{family}"
        functions = list(spec["functions"])
        plan.studies[study] = Study(study, "perturbations", functions, leave_out_labels(spec["leave_out"]), "unit",
                                    ["perturbations", family], {}, dict(config["robustness"]["bagging"]))
        plan.block_sets[study] = BlockSet(study, study, {
            f"{function}/{part}": f"results/testsets/{derived_testset(family, function, part)}.tsv"
            for function in functions for part in parts(spec)})
        for metric in spec["metrics"]:
            rows = {system: pair_score_files(family, system, functions) for system in spec["systems"]}
            stems = plan.add_rows(study, study, metric, rows, f"perturbations/{family}/robustness/{metric}/{{row}}", spec["epsilon"], "system")
            directory = f"perturbations/{family}/{metric}"
            variables = {"family": family, "perturbation_metric": metric}
            plan.tables[directory] = StudyTable(
                directory, stems, "system", leave_out_labels(spec["leave_out"]), f"perturbations ({family})",
                f"beta1 = sentence {metric} of the translation of the perturbed source against the reference", "function", "",
                f"perturbations-{family}-{metric}", 2, "perturbation_robustness_table", variables, sections[family], metric)
            plan.gamma_figures[directory] = GammaFigure(
                directory, stems, metric, f"beta1 (sentence {metric}, perturbed sources) on all {family} functions pooled",
                "perturbation_gamma_curves", variables, sections[family], metric)


def _metric_attacks(plan: StudyPlan, config: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    section = config.get("metric_robustness")
    if not section:
        return
    leave_out = leave_out_labels(section["leave_out"])
    plan.studies["metric_attacks"] = Study(
        "metric_attacks", "metric_attacks", metric_conditions(section), leave_out, metric_aggregation_of(section["bagging_unit"]),
        ["metric_attacks"], {"bagging_unit": section["bagging_unit"]}, dict(section["bagging"]))  # its own number and size of blocks
    files = {"agreement": METRIC_AGREEMENT}
    plan.block_sets["metric_attacks"] = BlockSet("metric_attacks", "metric_attacks", files)
    stems = plan.add_rows("metric_attacks", "metric_attacks", "tau", {variant: files for variant in metric_variants(section)},
                           "metric_robustness/robustness/{row}", section["epsilon"], "metric")
    plan.tables["metric_robustness"] = StudyTable(
        "metric_robustness", stems, "metric", leave_out,
        "metric robustness (character attacks on WMT19 references)",
        "tau = WMT19 DARR Kendall-like agreement of the metric with human judgements, per condition (clean, attack x level)",
        "condition", "Each condition's tau pools the DARR judgements of every configured pair.", "metric-robustness", 3,
        "metric_robustness_table", {}, sections["metric_robustness"], "robustness")
    plan.gamma_figures["metric_robustness"] = GammaFigure(
        "metric_robustness", stems, "tau", "tau (WMT19 DARR) of each metric across clean and attacked references",
        "metric_gamma_curves", {}, sections["metric_robustness"], "robustness")


def _natural_robustness(plan: StudyPlan, config: Mapping[str, Any], sections: Mapping[str, str]) -> None:
    section = config.get("natural_robustness")
    if not section:
        return
    families = config["perturbations"]["families"]
    types = perturbation_types(section, families)  # type -> family
    leave_out = leave_out_labels(section["leave_out"])
    unit_files = {
        "mt": {f"{kind}/{part}": f"results/testsets/{derived_testset(family, kind, part)}.tsv"
               for kind, family in types.items() for part in parts(families[family])},
        "sentiment": review_response_files(types),
    }
    rows = natural_rows(config)
    stems, families = {}, {}
    for criterion, responders in rows.items():
        side = "sentiment" if criterion == "label" else "mt"
        study = f"natural_robustness/{side}"
        if study not in plan.studies:
            plan.studies[study] = Study(study, "natural_robustness", list(types), leave_out, "domain",
                                        ["natural_robustness", side], {}, dict(config["robustness"]["bagging"]))
            plan.block_sets[study] = BlockSet(study, study, unit_files[side])
        responses = {responder: {"responses": f"results/natural_robustness/responses/{side}/{responder}.tsv"} for responder in responders}
        added = plan.add_rows(study, study, criterion, responses, f"natural_robustness/robustness/{criterion}/{{row}}",
                               section["epsilon"], "responder")
        stems |= {f"{responder} ({criterion})": stem for responder, stem in added.items()}
        # MT systems are compared with MT systems, classifiers with classifiers
        families |= {f"{responder} ({criterion})": "sentiment classifiers" if side == "sentiment" else "MT systems"
                     for responder in added}
    threshold = section["same_response"]["chrf_threshold"]
    plan.tables["natural_robustness"] = StudyTable(
        "natural_robustness", stems, "system or classifier (same response)", leave_out, "natural robustness",
        "Share of perturbations leaving the response unchanged, in percent (100 = robust), per perturbation type",
        "perturbation type",
        "Same response: exact = equal translations after normalisation, chrf = sentence chrF to the original "
        f"translation >= {threshold:g}, label = same predicted label.",
        "natural-robustness", 2, "natural_robustness_consistency_table", {}, sections["natural"], "robustness",
        families if len(set(families.values())) > 1 else {})
    plan.gamma_figures["natural_robustness"] = GammaFigure(
        "natural_robustness", stems, "share unchanged",
        "share of perturbations leaving the response unchanged (%) per perturbation type", "natural_robustness_gamma_curves", {},
        sections["natural"], "robustness")


def study_plan(config: Mapping[str, Any], sections: Mapping[str, str]) -> StudyPlan:
    """The plan of a validated, completed config.

    ``sections`` names the report section of each branch (keys ``domains``, ``sentiment``, ``human``,
    ``metric_robustness``, ``natural`` and every perturbation family), so the plan never imports the
    presentation layer. Study order: MT domains, sentiment, human, perturbation families, metric attacks,
    Natural Robustness.
    """
    plan = StudyPlan(uncertainty=dict(config["uncertainty"]))
    for add in (_mt_domains, _sentiment, _human, _perturbations, _metric_attacks, _natural_robustness):
        add(plan, config, sections)
    _check_resampled_domains(plan)
    return plan


def _check_resampled_domains(plan: StudyPlan) -> None:
    """Every study named in ``uncertainty.resample_domains`` exists and has units nested in its domains.

    Raises:
        InputError: An unknown study, or one whose units are shared across domains (named with the key).
    """
    for name in plan.uncertainty["resample_domains"]:
        if name not in plan.studies:
            raise InputError(f"uncertainty.resample_domains: unknown study {name!r} (studies: {', '.join(plan.studies)})")
        study = plan.studies[name]
        # the design's crossedness depends on the options alone: asked without files, none is read
        if study_module(study.module).resampling_design(None, study.domains, "", "", study.options).crossed:
            raise InputError(f"uncertainty.resample_domains: study {name!r} has units shared across its domains; "
                             "its domains cannot be resampled as strata")
