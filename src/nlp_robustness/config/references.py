"""What the config names outside itself, checked: manifest datasets (test sets, training data, reviews) and
models, sentiment models, human studies' downloads and files. The functions take a config already schema-valid
and filled (:mod:`nlp_robustness.config.validation`); every error names the offending config key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Iterable

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.studies.sentiment import sentiment_classifiers
from nlp_robustness.systems.hf_classifier import is_local_model, looks_like_path

__all__ = [
    "acquired_datasets", "training_datasets", "validate_dataset_references", "validate_human_studies",
    "validate_sentiment_models", "validate_sentiment_references", "validate_system_references",
]


def training_datasets(config: Mapping[str, Any]) -> list[str]:
    """Manifest datasets that in-house fairseq systems train and stop early on (config order)."""
    names: list[str] = []
    for spec in config["systems"].values():
        training = spec.get("training") if spec["kind"] == "fairseq" else None
        if training is not None:
            names += training["datasets"]
            names += training["dev"].get("datasets", [])
    return list(dict.fromkeys(names))



def acquired_datasets(config: Mapping[str, Any]) -> list[str]:
    """Manifest datasets the config uses: the test sets' (config order), the training data, the sentiment
    branch's reviews, then ``extra_datasets``."""
    names = [spec["dataset"] for spec in config["testsets"].values() if "dataset" in spec]
    names += training_datasets(config)
    if "sentiment" in config:
        names += [config["sentiment"]["training"]["dataset"], config["sentiment"]["test"]["dataset"]]
    names += list(config["extra_datasets"])
    return list(dict.fromkeys(names))


def validate_system_references(
    config: Mapping[str, Any], dataset_kinds: Mapping[str, str], model_keys: Iterable[str], manifest: str
) -> None:
    """Check what fairseq systems name: pretrained models and training data of the manifest.

    Raises:
        InputError: Naming the config key, e.g. ``systems.convs2s.training.dev.datasets[0]``,
            ``systems.convs2s.training.train_args.save-dir`` (an option the workflow sets itself) or
            ``systems.convs2s.training.train_args.user-dir`` (code, without ``allow_code_in_train_args``).
    """
    from nlp_robustness.systems.fairseq.training import reserved_train_options, train_args_problem

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
        reserved = reserved_train_options(training["train_args"])
        if reserved:
            raise InputError(
                f"invalid configuration at key 'systems.{name}.training.train_args.{reserved[0]}': the workflow sets "
                f"--{reserved[0]} itself (from training.arch, seed, max_epoch, patience, device)"
            )
        problem = train_args_problem(training["train_args"], allow_code=training.get("allow_code_in_train_args", False))
        if problem is not None:
            option, why, code = problem
            allowing = "" if not code else (
                f"; to run it, set systems.{name}.training.allow_code_in_train_args: true, only for code you have read "
                "(docs/reliability.md, \"Running a config you did not write\")")
            raise InputError(f"invalid configuration at key 'systems.{name}.training.train_args.{option}': {why}{allowing}")


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
    for index, dataset in enumerate(config["extra_datasets"]):
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
    if WHOLE_POOL in test_domains:
        raise InputError(f"invalid configuration at key 'sentiment.test.domains': the name '{WHOLE_POOL}' is reserved")
    validate_sentiment_models(config)


def validate_sentiment_models(config: Mapping[str, Any]) -> None:
    """Check ``sentiment.models``: no name of a training domain, a local directory that exists, and (with
    Natural Robustness, whose perturbed reviews are made of ``sentiment.classifier.fields``) the same fields.

    Raises:
        InputError: Naming ``sentiment.models.<name>`` or one of its keys.
    """
    sentiment_classifiers(config)  # a model named like a training domain
    section = config["sentiment"]
    for name, spec in (section.get("models") or {}).items():
        if looks_like_path(spec["model"]) and not is_local_model(spec["model"]):
            raise InputError(f"invalid configuration at key 'sentiment.models.{name}.model': no model directory {spec['model']}")
        fields = list(spec.get("fields", []))
        classifier_fields = list(section.get("classifier", {}).get("fields", fields))
        if config.get("natural_robustness") and fields != classifier_fields:
            raise InputError(
                f"invalid configuration at key 'sentiment.models.{name}.fields': {fields} differ from "
                f"sentiment.classifier.fields {classifier_fields}, of which natural_robustness makes the perturbed "
                "reviews every classifier answers"
            )


def validate_human_studies(config: Mapping[str, Any], downloads: Iterable[str], manifest: str) -> None:
    """Check the human studies: their files (downloads of the manifest or existing files), outputs for every
    system, gamma_at complete. What needs the files' contents is checked where they are read
    (:func:`nlp_robustness.studies.human_da.check_da_study`).

    Raises:
        InputError: Naming the config key, e.g. ``human_studies.wmt21-mqm.domains.news.outputs`` or
            ``human_studies.wmt22-de-en.ranking.gamma_at``.
    """
    from nlp_robustness.studies.study_settings import metric_file_values

    known = set(downloads)

    def check_file(key: str, value: str) -> None:
        if value not in known and not os.path.isfile(value):
            raise InputError(f"invalid configuration at key '{key}': '{value}' is neither a download of {manifest} "
                             f"nor an existing file (relative to {os.getcwd()})")

    for study, spec in config.get("human_studies", {}).items():
        where = f"human_studies.{study}"
        systems = list(spec["systems"])
        if spec["format"] == "mqm":
            for domain, files in spec["domains"].items():
                if domain == WHOLE_POOL:
                    raise InputError(f"invalid configuration at key '{where}.domains.{domain}': the name is reserved")
                references = [(key, files[key]) for key in ("scores", "source", "reference", "errors") if key in files]
                references += [(f"outputs.{system}", download) for system, download in files.get("outputs", {}).items()]
                for key, download in references:
                    check_file(f"{where}.domains.{domain}.{key}", download)
                if "outputs" in files:
                    missing = [system for system in systems if system not in files["outputs"]]
                    unknown = [system for system in files["outputs"] if system not in systems]
                    if missing or unknown:
                        detail = f"no output for {', '.join(missing)}" if missing else f"unknown system(s) {', '.join(unknown)}"
                        raise InputError(f"invalid configuration at key '{where}.domains.{domain}.outputs': {detail} ({where}.systems)")
        else:
            if WHOLE_POOL in spec["domains"]:
                raise InputError(f"invalid configuration at key '{where}.domains': the name {WHOLE_POOL!r} is reserved")
            for key in ("scores", "system_scores", "domain_file", "documents", "source", "reference"):
                if key in spec:
                    check_file(f"{where}.{key}", spec[key])
            for group in ("systems", "rated_references"):
                for system, value in spec[group].items():
                    check_file(f"{where}.{group}.{system}", value)
            both = set(spec["systems"]) & set(spec["rated_references"])
            if both:
                raise InputError(f"invalid configuration at key '{where}.rated_references': {', '.join(sorted(both))} "
                                 f"is also in {where}.systems")
        unknown = [row for row in spec.get("score_names", {}) if row not in systems]
        if unknown:
            raise InputError(f"invalid configuration at key '{where}.score_names': {unknown[0]} is not in {where}.systems")
        for name, metric in spec["metric_files"].items():
            if name in config["metrics"]:
                raise InputError(f"invalid configuration at key '{where}.metric_files.{name}': the name is one of metrics, "
                                 "which the workflow scores itself")
            if "domains" in metric and spec["format"] != "mqm":
                raise InputError(f"invalid configuration at key '{where}.metric_files.{name}.domains': only an mqm study's "
                                 "domains are separate test sets; give one file (or files) for the whole study")
        for key, value, _domain in metric_file_values(spec):
            check_file(f"{where}.{key}", value)
        ranking = spec["ranking"]
        if ranking["gamma"] == "at":
            needed = ["human", *config["metrics"], *spec["metric_files"]]
            missing = [score for score in needed if score not in ranking.get("gamma_at", {})]
            if missing:
                raise InputError(f"invalid configuration at key '{where}.ranking.gamma_at': no epsilon for {', '.join(missing)}")
