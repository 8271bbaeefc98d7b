"""What the workflow plans from a config before any job runs: the config checked, completed and made
canonical, and the dataset manifest it refers to, checked against it.

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
from typing import Any

import jsonschema
import yaml
from jsonschema import validators

from nlp_robustness.config import (
    check_duplicate_keys,
    fill_dependent_defaults,
    validate_config,
    validate_dataset_references,
    validate_human_studies,
    validate_sentiment_references,
    validate_system_references,
)
from nlp_robustness.data.local_testsets import LocalFiles, check_local_testsets
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.manifest_entries import Manifest
from nlp_robustness.data.testset_preparation import check_text_files
from nlp_robustness.data.testset_selection import check_testset_selections
from nlp_robustness.config_schema import load_schema, resolve_reference
from nlp_robustness.errors import InputError
from nlp_robustness.fileio import read_text_lines
from nlp_robustness.perturbations.configuration import complete_perturbations
from nlp_robustness.run_directory import rebase_paths
from nlp_robustness.studies.metric_attacks import complete_metric_robustness
from nlp_robustness.studies.metric_files import check_study_metric_files, complete_metric_files
from nlp_robustness.studies.mt_studies import complete_mt_studies
from nlp_robustness.studies.natural_robustness import complete_natural_robustness
from nlp_robustness.studies.profile_plan import complete_profile
from nlp_robustness.systems.kinds.hypotheses import check_submissions

__all__ = ["canonical_config", "canonical_number", "check_human_files", "check_mirror_dir", "fill_schema_defaults", "prepare_config"]


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


def check_mirror_dir(mirror_dir: str | None) -> None:
    """Raise :class:`InputError` naming the key and path when ``mirror_dir`` is set but is not a folder.

    A mirror that is not there would otherwise turn every dataset into a download without a word (offline,
    the first one fails half a minute later with a name-resolution error that says nothing of the mirror).
    Downloads are what ``mirror_dir: null`` asks for.
    """
    if mirror_dir is None or Path(mirror_dir).is_dir():
        return
    where = f" (relative to the working directory {Path.cwd()})" if not Path(mirror_dir).is_absolute() else ""
    state = "is not a folder" if Path(mirror_dir).exists() else "does not exist"
    raise InputError(
        f"mirror_dir: {mirror_dir} {state}{where}; point it at the datasets' mirror, or set mirror_dir: null "
        "to download every dataset from its canonical URL"
    )


def check_human_files(config: Mapping[str, Any], manifest: Manifest) -> None:
    """Check every WMT DA and MTME study's files against each other, and every study's metric files
    (:func:`.studies.human.check_da_study`, :mod:`.studies.human_files`), where they can be read now: a file path, or
    a download the mirror holds; a download still to fetch is checked by its job."""
    studies = config.get("human_studies", {})
    if not any(spec["format"] != "mqm" or spec["metric_files"] for spec in studies.values()):
        return
    from nlp_robustness.data.acquisition import mirror_download_file
    from nlp_robustness.studies.human import check_da_study
    from nlp_robustness.studies.human_files import check_metric_files, check_mtme_study
    from nlp_robustness.studies.plan import metric_file_values

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
    if launch_directory is not None:  # relative paths keep naming the launch directory's files from the run directory
        rebase_paths(config, schema, launch_directory, downloads=manifest.downloads)  # a human study's download stays
    check_mirror_dir(config["mirror_dir"])
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
    canonical = canonical_config(config, schema)
    config.clear()
    config.update(canonical)
    return manifest
