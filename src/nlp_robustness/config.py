"""Validate the workflow configuration and answer questions about it.

JSON Schema (schemas/config.schema.yaml) checks shape and types; :func:`validate_config` adds the
cross-references a schema cannot express (a left-out test set must exist, a hypotheses system must
give a file for every test set, ...). Every error names the offending config key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Iterable

import jsonschema
import yaml

from nlp_robustness.errors import InputError

#: Label of the leave-one-out column that removes nothing (the whole pool).
NOTHING_LEFT_OUT = "none"

#: Ways of computing robustness: the whole pool (paper Table 1), Algorithm 5 bagging (Table 3),
#: Algorithm 6 design bagging (Table 5).
METHODS = ("pool", "bagging", "design_bagging")


#: Defaults of the optional keys of a fairseq system (schemas/config.schema.yaml documents the same values).
FAIRSEQ_DEFAULTS: dict[str, Any] = {"device": "auto", "cpu_threads": 2, "gpus": 1, "mem_mb": 8000}

#: Defaults of the optional keys of the sentiment section (the schema documents the same values; the
#: classifier's defaults are those of :class:`nlp_robustness.studies.sentiment.ClassifierSettings`).
SENTIMENT_TRAINING_DEFAULTS: dict[str, Any] = {"validation_fraction": 0.15, "seed": 0}
SENTIMENT_BAGGING_UNIT_DEFAULT = "review"

#: What to say when a config entry matches none of the alternatives of a ``oneOf``.
_ONE_OF_DETAILS = {
    "testsets": "give either 'dataset' or all of 'source', 'reference' and 'format'",
    "systems": "a fairseq system gives either 'pretrained' (a manifest model) or 'training' (an in-house model)",
    "training.dev": "give either 'datasets' (manifest datasets) or 'holdout' (segments held out of the training data)",
}


def _key_path(path: Any) -> str:
    return ".".join(str(part) for part in path) or "<top level>"


def _schema_branch(path: Any) -> str:
    parts = [str(part) for part in path]
    if parts[-2:] == ["training", "dev"] or parts[-1:] == ["dev"]:
        return "training.dev"
    return parts[0] if parts else ""


def fairseq_settings(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A fairseq system's config entry with the defaults of its optional keys filled in."""
    return {**FAIRSEQ_DEFAULTS, "generation": {}, **spec}


def validate_config(config: Mapping[str, Any], schema_path: str | Path) -> None:
    """Raise :class:`InputError` naming the key of the first problem found in ``config``."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda error: list(error.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        detail = error.message
        if error.validator == "oneOf":
            detail = _ONE_OF_DETAILS.get(_schema_branch(error.absolute_path), detail)
        raise InputError(f"invalid configuration at key '{_key_path(error.absolute_path)}': {detail}")

    testsets = list(config["testsets"])
    if NOTHING_LEFT_OUT in testsets:
        raise InputError(f"invalid configuration at key 'testsets.{NOTHING_LEFT_OUT}': the name is reserved")
    for index, name in enumerate(config["robustness"]["leave_out"]):
        if name not in testsets:
            raise InputError(
                f"invalid configuration at key 'robustness.leave_out[{index}]': "
                f"'{name}' is not a test set (known: {', '.join(testsets)})"
            )
    if len(testsets) - 1 < 1 and config["robustness"]["leave_out"]:
        raise InputError("invalid configuration at key 'robustness.leave_out': leaving out the only test set leaves no pool")
    grids = [("robustness.epsilon", config["robustness"]["epsilon"])]
    for branch in ("sentiment", "human"):
        if "epsilon" in config.get(branch, {}):
            grids.append((f"{branch}.epsilon", config[branch]["epsilon"]))
    for key, epsilon in grids:
        if epsilon["stop"] < epsilon["start"]:
            raise InputError(f"invalid configuration at key '{key}.stop': must be >= start")
    for system, spec in config["systems"].items():
        if spec["kind"] == "hypotheses":
            missing = [name for name in testsets if name not in spec["files"]]
            unknown = [name for name in spec["files"] if name not in testsets]
            if missing:
                raise InputError(
                    f"invalid configuration at key 'systems.{system}.files': no file for test set(s) {', '.join(missing)}"
                )
            if unknown:
                raise InputError(
                    f"invalid configuration at key 'systems.{system}.files': unknown test set(s) {', '.join(unknown)}"
                )


def leave_out_labels(config: Mapping[str, Any]) -> list[str]:
    """Columns of the leave-one-out tables: ``none`` first, then each left-out test set."""
    return [NOTHING_LEFT_OUT, *config["robustness"]["leave_out"]]


def pool_testsets(config: Mapping[str, Any], left_out: str) -> list[str]:
    """Test sets forming the pool when ``left_out`` is removed (config order)."""
    return [name for name in config["testsets"] if name != left_out]


def training_datasets(config: Mapping[str, Any]) -> list[str]:
    """Manifest datasets that in-house fairseq systems train and stop early on (config order)."""
    names: list[str] = []
    for spec in config["systems"].values():
        training = spec.get("training") if spec["kind"] == "fairseq" else None
        if training is not None:
            names += training["datasets"]
            names += training["dev"].get("datasets", [])
    return list(dict.fromkeys(names))


def sentiment_settings(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``sentiment`` section with the defaults of its optional keys filled in (None: no sentiment branch)."""
    section = config.get("sentiment")
    if section is None:
        return None
    return {
        **section,
        "training": {**SENTIMENT_TRAINING_DEFAULTS, **section["training"]},
        "classifier": dict(section.get("classifier", {})),
        "bagging_unit": section.get("bagging_unit", SENTIMENT_BAGGING_UNIT_DEFAULT),
        "epsilon": section.get("epsilon", config["robustness"]["epsilon"]),
    }


def sentiment_leave_out_labels(config: Mapping[str, Any]) -> list[str]:
    """Columns of the sentiment tables: ``none`` first, then each left-out test domain."""
    section = config.get("sentiment")
    return [] if section is None else [NOTHING_LEFT_OUT, *section["leave_out"]]


def acquired_datasets(config: Mapping[str, Any]) -> list[str]:
    """Manifest datasets the config uses: the test sets' (config order), the training data, the sentiment
    branch's reviews, then ``extra_datasets``."""
    names = [spec["dataset"] for spec in config["testsets"].values() if "dataset" in spec]
    names += training_datasets(config)
    if "sentiment" in config:
        names += [config["sentiment"]["training"]["dataset"], config["sentiment"]["test"]["dataset"]]
    names += list(config.get("extra_datasets", []))
    return list(dict.fromkeys(names))


def validate_system_references(
    config: Mapping[str, Any], dataset_kinds: Mapping[str, str], model_keys: Iterable[str], manifest: str
) -> None:
    """Check what fairseq systems name: pretrained models and training data of the manifest.

    Raises:
        InputError: Naming the config key, e.g. ``systems.convs2s.training.dev.datasets[0]`` or
            ``systems.convs2s.training.train_args.save-dir`` (an option the workflow sets itself).
    """
    from nlp_robustness.systems.fairseq_mt import reserved_train_options

    models = list(model_keys)
    for name, spec in config["systems"].items():
        if spec["kind"] != "fairseq":
            continue
        if "pretrained" in spec and spec["pretrained"] not in models:
            raise InputError(
                f"invalid configuration at key 'systems.{name}.pretrained': '{spec['pretrained']}' is not a model of "
                f"{manifest} (known: {', '.join(models) or 'none'})"
            )
        training = spec.get("training")
        if training is None:
            continue
        references = [(f"datasets[{index}]", dataset) for index, dataset in enumerate(training["datasets"])]
        references += [(f"dev.datasets[{index}]", dataset) for index, dataset in enumerate(training["dev"].get("datasets", []))]
        for key, dataset in references:
            _check_dataset_reference(f"systems.{name}.training.{key}", dataset, dataset_kinds, manifest, "parallel text")
        reserved = reserved_train_options(training.get("train_args", {}))
        if reserved:
            raise InputError(
                f"invalid configuration at key 'systems.{name}.training.train_args.{reserved[0]}': the workflow sets "
                f"--{reserved[0]} itself (from training.arch, seed, max_epoch, patience, device)"
            )


def validate_dataset_references(config: Mapping[str, Any], dataset_kinds: Mapping[str, str], manifest: str) -> None:
    """Check that every dataset the config names is in the manifest (test sets: a parallel one).

    Args:
        config: The configuration (already schema-valid).
        dataset_kinds: Kind of every manifest dataset, by key (``"parallel"``, ``"reviews"``).
        manifest: The manifest's path, for messages.

    Raises:
        InputError: Naming the config key, e.g. ``testsets.bio18.dataset`` or ``extra_datasets[0]``.
    """
    for name, spec in config["testsets"].items():
        if "dataset" in spec:
            _check_dataset_reference(f"testsets.{name}.dataset", spec["dataset"], dataset_kinds, manifest, "a parallel test set")
    for index, dataset in enumerate(config.get("extra_datasets", [])):
        _check_dataset_reference(f"extra_datasets[{index}]", dataset, dataset_kinds, manifest)


def _check_dataset_reference(
    key: str, dataset: str, dataset_kinds: Mapping[str, str], manifest: str, parallel_as: str | None = None
) -> None:
    """``dataset`` (named at config ``key``) is in the manifest and, if ``parallel_as`` says what for, parallel."""
    if dataset not in dataset_kinds:
        raise InputError(
            f"invalid configuration at key '{key}': '{dataset}' is not a dataset of {manifest} (known: {', '.join(dataset_kinds)})"
        )
    if parallel_as is not None and dataset_kinds[dataset] != "parallel":
        raise InputError(
            f"invalid configuration at key '{key}': '{dataset}' is a {dataset_kinds[dataset]} dataset, not {parallel_as}"
        )


def validate_sentiment_references(
    config: Mapping[str, Any], dataset_domains: Mapping[str, Sequence[str]], dataset_kinds: Mapping[str, str], manifest: str
) -> None:
    """Check the sentiment section against the manifest: review datasets, their domains, the left-out domains.

    Args:
        config: The configuration (already schema-valid).
        dataset_domains: Domains of every manifest dataset, by key (empty for parallel datasets).
        dataset_kinds: Kind of every manifest dataset, by key.
        manifest: The manifest's path, for messages.

    Raises:
        InputError: Naming the config key, e.g. ``sentiment.test.domains[3]`` or ``sentiment.leave_out[0]``.
    """
    section = config.get("sentiment")
    if section is None:
        return
    for part in ("training", "test"):
        key = f"sentiment.{part}.dataset"
        dataset = section[part]["dataset"]
        _check_dataset_reference(key, dataset, dataset_kinds, manifest)
        if dataset_kinds[dataset] != "reviews":
            raise InputError(f"invalid configuration at key '{key}': '{dataset}' is a {dataset_kinds[dataset]} dataset, not reviews")
        known = list(dataset_domains[dataset])
        for index, domain in enumerate(section[part]["domains"]):
            if domain not in known:
                raise InputError(
                    f"invalid configuration at key 'sentiment.{part}.domains[{index}]': '{domain}' is not a domain of "
                    f"dataset {dataset} (known: {', '.join(known)})"
                )
    test_domains = list(section["test"]["domains"])
    for index, domain in enumerate(section["leave_out"]):
        if domain not in test_domains:
            raise InputError(
                f"invalid configuration at key 'sentiment.leave_out[{index}]': '{domain}' is not a test domain "
                f"(sentiment.test.domains: {', '.join(test_domains)})"
            )
    if section["leave_out"] and len(test_domains) < 2:
        raise InputError("invalid configuration at key 'sentiment.leave_out': leaving out the only test domain leaves no pool")
    if NOTHING_LEFT_OUT in test_domains:
        raise InputError(f"invalid configuration at key 'sentiment.test.domains': the name '{NOTHING_LEFT_OUT}' is reserved")


#: Defaults of the optional keys of ``human.ranking`` (the schema documents the same values).
HUMAN_RANKING_DEFAULTS: dict[str, Any] = {"gamma": "area", "permutations": 100000}


def human_settings(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``human`` section with defaults filled in (None: no human-judgement branch)."""
    section = config.get("human")
    if section is None:
        return None
    return {
        **section,
        "epsilon": section.get("epsilon", config["robustness"]["epsilon"]),
        "ranking": {**HUMAN_RANKING_DEFAULTS, **section.get("ranking", {})},
    }


def validate_human_references(config: Mapping[str, Any], downloads: Iterable[str], manifest: str) -> None:
    """Check the human section: downloads of the manifest, outputs for every system, gamma_at complete.

    Raises:
        InputError: Naming the config key, e.g. ``human.domains.news.outputs`` or ``human.ranking.gamma_at``.
    """
    section = config.get("human")
    if section is None:
        return
    known = set(downloads)
    systems = list(section["systems"])
    for domain, spec in section["domains"].items():
        if domain == NOTHING_LEFT_OUT:
            raise InputError(f"invalid configuration at key 'human.domains.{domain}': the name is reserved")
        references = [(key, spec[key]) for key in ("scores", "source", "reference", "errors") if key in spec]
        references += [(f"outputs.{system}", download) for system, download in spec.get("outputs", {}).items()]
        for key, download in references:
            if download not in known:
                raise InputError(
                    f"invalid configuration at key 'human.domains.{domain}.{key}': '{download}' is not a download of {manifest}"
                )
        if "outputs" in spec:
            missing = [system for system in systems if system not in spec["outputs"]]
            unknown = [system for system in spec["outputs"] if system not in systems]
            if missing or unknown:
                detail = f"no output for {', '.join(missing)}" if missing else f"unknown system(s) {', '.join(unknown)}"
                raise InputError(f"invalid configuration at key 'human.domains.{domain}.outputs': {detail} (human.systems)")
    ranking = {**HUMAN_RANKING_DEFAULTS, **section.get("ranking", {})}
    if ranking["gamma"] == "at":
        needed = ["human", *config["metrics"]]
        missing = [score for score in needed if score not in ranking.get("gamma_at", {})]
        if missing:
            raise InputError(f"invalid configuration at key 'human.ranking.gamma_at': no epsilon for {', '.join(missing)}")
