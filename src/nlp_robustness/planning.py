"""What the workflow plans from a config before any job runs: the config checked, completed and made
canonical, and the dataset manifest it refers to, checked against it; then what rules/common.smk derives from
them: the warnings the log opens with (:func:`plan_warnings`), every test set's BLEU tokenizer
(:func:`bleu_tokenizers`), and what a study's table and caption jobs are given (:func:`study_table_job`,
:func:`render_study_caption`).

``rules/common.smk`` calls :func:`prepare_config` once when Snakemake parses the workflow; tests call the
same function in-process, so a bad config is caught by the same code (and with the same message) with or
without Snakemake's start-up.

**Canonical config.** Every default is written once, in the schema, and filled in here; then every
*record* of the config (an object with fixed ``properties``: a system's entry, ``robustness.bagging``,
``sentiment.classifier``, a function's settings) has its keys sorted, while every *map* (an object whose
keys the user names: ``systems``, ``testsets``, a family's ``functions``) keeps the user's order, which is
the order of rows, domains and columns in the tables. A map whose order means nothing is marked
``x-unordered: true`` in the schema (``training.train_args``) and sorted too. Every whole number is written as an integer (``1.0`` becomes ``1``, :func:`canonical_number`), the way JSON
Schema compares numbers. So two configs that differ only in the order of a record's keys, in writing out a
default, or in writing ``1`` for ``1.0``, are the same dict, and Snakemake (which compares a job's params by
their ``repr``) reruns nothing for such an edit.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import yaml
from jsonschema import validators

from nlp_robustness.config.files import check_duplicate_keys
from nlp_robustness.config.references import (
    validate_dataset_references,
    validate_human_studies,
    validate_sentiment_references,
    validate_system_references,
)
from nlp_robustness.config.validation import fill_dependent_defaults, validate_config
from nlp_robustness.data.acquisition import missing_mirror_files
from nlp_robustness.data.document_ids import segments_as_units_note, segments_as_units_warning
from nlp_robustness.data.local_testsets import LocalFiles, check_local_testsets
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.manifest_entries import Manifest
from nlp_robustness.data.testset_preparation import check_text_files
from nlp_robustness.data.testset_selection import check_testset_selections
from nlp_robustness.config_schema import load_schema, resolve_reference
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines
from nlp_robustness.outputs.report_sections import render_caption
from nlp_robustness.perturbations.configuration import complete_perturbations, derived_testsets
from nlp_robustness.run_directory import named_as_written, rebase_paths, written_paths
from nlp_robustness.studies.metric_attack_conditions import complete_metric_robustness
from nlp_robustness.studies.metric_files import check_study_metric_files, complete_metric_files
from nlp_robustness.studies.mt_studies import complete_mt_studies, mt_study_warnings, testset_tokenizers
from nlp_robustness.studies.natural_robustness_config import complete_natural_robustness
from nlp_robustness.studies.profile_plan import complete_profile
from nlp_robustness.systems.kinds.hypotheses import check_submissions

if TYPE_CHECKING:
    from nlp_robustness.studies.plan import StudyPlan
    from nlp_robustness.studies.plan_entries import GammaFigure, StudyTable

__all__ = [
    "bleu_tokenizers", "canonical_config", "canonical_number", "check_human_files", "check_mirror_dir", "fill_schema_defaults",
    "plan_warnings", "prepare_config", "render_study_caption", "study_comparisons_job", "study_table_job", "study_testsets",
]


def fill_schema_defaults(config: MutableMapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Fill every ``default`` of ``schema`` that ``config`` leaves out, in place (the jsonschema recipe
    Snakemake's ``validate(..., set_default=True)`` uses, so both fill the same keys).

    Defaults are copied, so no two configs share a mutable default.
    """
    base = jsonschema.Draft202012Validator
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            for name, property_schema in properties.items():
                if "default" in property_schema:
                    instance.setdefault(name, copy.deepcopy(property_schema["default"]))
        yield from validate_properties(validator, properties, instance, subschema)

    filling = validators.extend(base, {"properties": set_defaults})
    filling(schema).validate(config)


def _branches(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A schema and the branches of its ``oneOf``/``anyOf``/``allOf``/``then``/``else``, resolved."""
    schema = resolve_reference(schema, root)
    found = [schema]
    for key in ("oneOf", "anyOf", "allOf"):
        for branch in schema.get(key, []):
            found += _branches(branch, root)
    for key in ("then", "else"):
        if key in schema:
            found += _branches(schema[key], root)
    return found


def _canonical(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    branches = _branches(schema, root)
    if isinstance(value, dict):
        properties: dict[str, Any] = {}
        additional: list[Mapping[str, Any]] = []
        for branch in branches:
            properties.update(branch.get("properties", {}))
            if isinstance(branch.get("additionalProperties"), dict):
                additional.append(branch["additionalProperties"])
        is_map = not properties and bool(additional) and not any(branch.get("x-unordered") for branch in branches)
        keys = list(value) if is_map else sorted(value)
        result = {}
        for key in keys:
            if key in properties:
                subschema = properties[key]
            elif additional:
                subschema = additional[0]
            else:
                subschema = {}  # free settings: records all the way down
            result[key] = _canonical(value[key], subschema, root)
        return result
    if isinstance(value, list):
        items = next((branch["items"] for branch in branches if isinstance(branch.get("items"), dict)), {})
        return [_canonical(item, items, root) for item in value]
    return canonical_number(value)


def canonical_number(value: Any) -> Any:
    """A whole number written as a float (``1.0``) as the integer it is (``1``); anything else as it is.

    JSON Schema counts ``1`` and ``1.0`` as the same number (an integral float is even a valid ``integer``),
    and so does the config: without this, ``lenpen: 1`` and the default ``1.0`` would be different params and
    rerun every job they reach, and ``max_epoch: 10.0`` would reach fairseq as ``--max-epoch 10.0``.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def canonical_config(config: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with every record's keys sorted and every map in the user's order (see the module doc)."""
    return _canonical(dict(config), schema, schema)


def check_mirror_dir(mirror_dir: str | None, launch_directory: str | Path | None = None) -> None:
    """Raise :class:`InputError` naming the key and path when ``mirror_dir`` is set but is not a folder.

    A mirror that is not there would otherwise turn every dataset into a download without a word (offline,
    the first one fails half a minute later with a name-resolution error that says nothing of the mirror).
    Downloads are what ``mirror_dir: null`` asks for. ``launch_directory``: where snakemake was launched, when
    ``mirror_dir`` was rebased from there onto the run directory (the message names the path as written).
    """
    if mirror_dir is None or Path(mirror_dir).is_dir():
        return
    base = f"{Path(launch_directory).absolute()}, where snakemake was launched" if launch_directory is not None else (
        f"the working directory {Path.cwd()}")
    where = f" (relative to {base})" if not Path(mirror_dir).is_absolute() else ""
    state = "is not a folder" if Path(mirror_dir).exists() else "does not exist"
    raise InputError(
        f"mirror_dir: {mirror_dir} {state}{where}; point it at the datasets' mirror, or set mirror_dir: null "
        "to download every dataset from its canonical URL"
    )


def check_human_files(config: Mapping[str, Any], manifest: Manifest) -> None:
    """Check every WMT DA and MTME study's files against each other, and every study's metric files
    (:func:`.studies.human_da.check_da_study`, :mod:`.studies.human_files`), where they can be read now: a file path, or
    a download the mirror holds; a download still to fetch is checked by its job."""
    studies = config.get("human_studies", {})
    if not any(spec["format"] != "mqm" or spec["metric_files"] for spec in studies.values()):
        return
    from nlp_robustness.data.acquisition import mirror_download_file
    from nlp_robustness.studies.human_da import check_da_study
    from nlp_robustness.studies.human_files import check_metric_files, check_mtme_study
    from nlp_robustness.studies.study_settings import metric_file_values

    def readable(value: str) -> str | None:
        if value in manifest.downloads:
            return mirror_download_file(manifest.downloads[value], config["mirror_dir"])
        return value if Path(value).is_file() else None

    for name, spec in studies.items():
        where = f"human_studies.{name}"
        metric_values = [value for _key, value, _domain in metric_file_values(spec)]
        if spec["format"] == "wmt-da":
            values = [spec[key] for key in ("scores", "domain_file", "source")]
            values += [*spec["systems"].values(), *spec["rated_references"].values()]
            path_of = {value: readable(value) for value in [*values, *metric_values]}
            check_da_study(spec, where, path_of)
            source = path_of[spec["source"]]
            segments = len(read_text_lines(source, segments=True)) if source is not None else None
            check_metric_files(spec, where, path_of, segments, None)  # rated segments: checked by the segment jobs
        elif spec["format"] == "mtme":
            values = [spec[key] for key in ("scores", "documents", "source", "reference")] + list(spec["systems"].values())
            check_mtme_study(spec, where, {value: readable(value) for value in [*values, *metric_values]})
        else:
            path_of = {value: readable(value) for value in metric_values}
            for domain in spec["domains"]:
                check_metric_files(spec, where, path_of, None, None, domain)


def prepare_config(config: MutableMapping[str, Any], workflow_dir: str | Path, configfiles: Iterable[str | Path] = (),
                   launch_directory: str | Path | None = None) -> Manifest:
    """Check, complete and canonicalise ``config`` in place; load and check the manifest it names.

    Raises :class:`InputError` naming the config key (or the config file and line of a duplicate key) of
    the first problem. ``workflow_dir`` is where ``schemas/`` and relative manifest paths are found;
    ``configfiles`` are the files the config was read from (a key written twice in one would otherwise keep
    its last value silently). ``launch_directory``: where snakemake was launched, when the working directory is
    the config's run directory; the config's relative paths are then rebased onto it
    (:mod:`nlp_robustness.run_directory`).
    """
    workflow_dir = Path(workflow_dir)
    schema_path = workflow_dir / "schemas" / "config.schema.yaml"
    check_duplicate_keys(configfiles)
    validate_config(config, schema_path)  # names the first bad key
    schema = load_schema(schema_path)
    fill_schema_defaults(config, schema)
    fill_dependent_defaults(config)  # sentiment.epsilon, human.epsilon: robustness.epsilon unless given
    try:  # relative to the workflow directory, never rebased
        manifest = load_manifest(workflow_dir / config["dataset_manifest"], workflow_dir / "schemas" / "datasets.schema.yaml")
    except InputError as error:
        raise InputError(f"config key 'dataset_manifest': {error}") from None
    as_written: dict[str, str] = {}
    if launch_directory is not None:  # relative paths keep naming the launch directory's files from the run directory
        written = copy.deepcopy(config)
        rebased = rebase_paths(config, schema, launch_directory, downloads=manifest.downloads)  # a human study's download stays
        as_written = written_paths(written, rebased)
    try:
        _check_and_complete(config, manifest, launch_directory)
    except InputError as error:  # a file named as the user wrote it, not as rebased onto the run directory
        raise named_as_written(error, as_written) from None
    canonical = canonical_config(config, schema)
    config.clear()
    config.update(canonical)
    return manifest


def _check_and_complete(config: MutableMapping[str, Any], manifest: Manifest, launch_directory: str | Path | None) -> None:
    """What :func:`prepare_config` does after the paths are rebased: every study, family and file checked against
    the manifest and each other, and the config completed."""
    check_mirror_dir(config["mirror_dir"], launch_directory)
    # studies first: a perturbation family's default test sets and systems are those of the studies it applies to
    complete_mt_studies(config, {key: (dataset.source_language, dataset.target_language) for key, dataset in manifest.datasets.items()})
    complete_metric_files(config)  # an MT study's metrics read from files: their test sets and systems
    check_testset_selections(config["testsets"], manifest)  # a select names a field value the dataset declares
    local_files = LocalFiles()  # a user's WMT XML and domain files, each read once
    whole_files = check_local_testsets(config["testsets"], local_files)  # their select, translator, lengths, empty lines
    for study in config["mt_studies"].values():  # a submission system has its submission in every test set of its studies
        for system in study["systems"]:
            check_submissions(system, config["systems"][system], study["testsets"], config["testsets"], manifest, local_files)
    complete_perturbations(config)  # families' functions, settings and options checked against their own schemas
    complete_natural_robustness(config)  # its families, types, left-out types and systems checked
    complete_profile(config)  # its metric and perturbation families checked
    dataset_kinds = {key: dataset.kind for key, dataset in manifest.datasets.items()}
    validate_dataset_references(config, dataset_kinds, config["dataset_manifest"])
    validate_system_references(config, dataset_kinds, manifest.models, config["dataset_manifest"])
    validate_sentiment_references(
        config, {key: dataset.domains for key, dataset in manifest.datasets.items()}, dataset_kinds, config["dataset_manifest"]
    )
    validate_human_studies(config, manifest.downloads, config["dataset_manifest"])
    check_human_files(config, manifest)  # a DA study's files against each other, where they are on disk already
    complete_metric_robustness(config, list(manifest.downloads))  # attacks, pairs, layers, conditions checked
    # a bad test-set or hypotheses file (unequal lines, invalid UTF-8, an empty line) fails now, before any job
    check_text_files(config["testsets"], config["systems"], config["max_segments"],
                     {key: dataset.segments for key, dataset in manifest.datasets.items()}, whole_files)
    # an MT study's metric scores read from files: each file, system, line count and needed score, before any job
    check_study_metric_files(config, {key: dataset.segments for key, dataset in manifest.datasets.items()}, local_files)


def plan_warnings(config: Mapping[str, Any], manifest: Manifest, acquired: Iterable[str], without_document_ids: Iterable[str]) -> list[str]:
    """What the log says of a prepared config before any job, in this order: an MT study of two test sets whose
    leave-one-out pools are single domains; a mirror holding only part of an ``acquired`` dataset (which is then
    taken from its downloads); an MT study with test sets ``without_document_ids`` (its segments resampled as
    independent units)."""
    warnings = mt_study_warnings(config)
    mirror_dir = config["mirror_dir"]
    for key in acquired:
        missing = missing_mirror_files(manifest.datasets[key], mirror_dir) if mirror_dir is not None else []
        if missing and len(missing) < len(manifest.datasets[key].mirror.files):
            warnings.append(f"dataset {key}: mirror_dir {mirror_dir} holds only part of it (missing {', '.join(missing)}); "
                            f"the whole dataset is taken from its downloads")
    without = set(without_document_ids)
    for study, spec in config["mt_studies"].items():
        if testsets := [testset for testset in spec["testsets"] if testset in without]:
            warnings.append(segments_as_units_warning(study, testsets))
    return warnings


def bleu_tokenizers(config: Mapping[str, Any]) -> dict[str, str]:
    """The BLEU tokenizer of every test set of an MT study (its study's) and of every perturbed test set (that of the
    first test set it was drawn from; ``13a``, sacrebleu's default, when that has none)."""
    tokenizers = testset_tokenizers(config)
    families = config["perturbations"]["families"] if config.get("perturbations") else {}
    return tokenizers | {
        name: tokenizers.get(spec["testsets"][0], "13a") for family, spec in families.items() for name in derived_testsets(family, spec)
    }


def study_table_job(plan: StudyPlan, study_table: str) -> dict[str, Any]:
    """Everything a study's table uses: its rows' summaries, pools, texts and rounding."""
    table = plan.tables[study_table]
    return {
        "summaries": plan.table_summaries(study_table), "row_label": table.row_label, "leave_out": table.leave_out,
        "branch": table.branch, "scores": table.scores, "pool": table.pool, "note": table.note,
        "latex_label": table.latex_label, "decimals": table.decimals, "with_cov": table.cov_meaningful,
    }


def study_comparisons_job(plan: StudyPlan, study_table: str) -> dict[str, Any]:
    """Everything a study's paired comparisons use: its table's job (:func:`study_table_job`) and its rows' replicates."""
    return study_table_job(plan, study_table) | {
        "replicates": plan.table_replicates(study_table), "families": plan.tables[study_table].families,
        "aggregation": plan.table_aggregation(study_table),
    } | ({} if plan.tables[study_table].higher_is_better else {"higher_is_better": False})  # a file metric's direction


def study_testsets(plan: StudyPlan, rows: Mapping[str, str]) -> list[str]:
    """The test sets behind a study table's or figure's rows (``rows``: row -> statistics stem), those of an MT domain
    study; none for the other studies (their units are not segments of configured test sets)."""
    study = plan.studies[plan.statistics[next(iter(rows.values()))].study]
    return list(study.domains) if study.module == "domains" else []


def render_study_caption(
    template: str, item: StudyTable | GammaFigure, plan: StudyPlan, without_document_ids: Iterable[str], **variables: Any
) -> str:
    """The report caption of a study's table or figure ``item``: its caption ``template`` rendered with its variables,
    then the sentence on those of its test sets ``without_document_ids`` (none: no sentence)."""
    caption = render_caption(template, {**item.caption_context(), **variables})
    without = set(without_document_ids)
    note = segments_as_units_note([testset for testset in study_testsets(plan, item.rows) if testset in without])
    return f"{caption.rstrip()}\n{note}\n" if note else caption
