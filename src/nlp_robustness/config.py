"""Validate the workflow configuration and answer questions about it.

JSON Schema (schemas/config.schema.yaml) checks shape and types; :func:`validate_config` adds the
cross-references a schema cannot express (a left-out test set must exist, a hypotheses system must
give a file for every test set, ...). Every error names the offending config key.

Every default is written once, in the schema, and filled in by ``snakemake.utils.validate(config,
schema, set_default=True)`` (rules/common.smk); :func:`fill_dependent_defaults` fills the two that
depend on another key. The functions below that take a config expect it filled.
"""

from __future__ import annotations

import copy
import os
import json
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, Iterable

import jsonschema
import yaml

from nlp_robustness.config_schema import load_schema
from nlp_robustness.errors import InputError
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.studies.sentiment import sentiment_classifiers
from nlp_robustness.systems.hf_classifier import is_local_model, looks_like_path


#: What to say when a config entry matches none of the alternatives of a ``oneOf``.
_ONE_OF_DETAILS = {
    "testsets": "give either 'dataset', or all of 'source', 'reference' and 'format' (plain, wmt-sgml or iwslt-xml), "
                "or 'file' with format: wmt-xml",
    "systems": "a fairseq system gives either 'pretrained' (a manifest model) or 'training' (an in-house model)",
    "systems.hypotheses": "a hypotheses system gives either 'files' (a file per test set) or 'submission' (a system of its test sets' dataset)",
    "training.dev": "give either 'datasets' (manifest datasets) or 'holdout' (segments held out of the training data)",
}


def _key_path(path: Any) -> str:
    return ".".join(str(part) for part in path) or "<top level>"


def _testset_route_problem(spec: Mapping[str, Any]) -> str | None:
    """What a test set's entry mixes up of the three routes (dataset; source/reference/format; file with
    format wmt-xml), in words, or None when it is none of the cases named here."""
    file_format = spec.get("format")
    files = [key for key in ("source", "reference", "file", "format", "domain_file", "translator") if key in spec]
    if "dataset" in spec and files:
        return f"a manifest dataset's test set names no file or format ({', '.join(files)}): give 'dataset' or files, not both"
    if file_format == "wmt-xml" and ("source" in spec or "reference" in spec):
        return "format wmt-xml reads one file holding source, references and systems: give 'file', not 'source'/'reference'"
    if "file" in spec and file_format != "wmt-xml":
        return "'file' is a WMT XML file, read with format: wmt-xml (a pair of files gives 'source' and 'reference')"
    if file_format == "wmt-xml" and "file" not in spec:
        return "format wmt-xml reads 'file' (the WMT XML file)"
    if "translator" in spec and file_format != "wmt-xml":
        return "'translator' picks the reference of a WMT XML file (format: wmt-xml)"
    if "domain_file" in spec and file_format != "plain":
        return f"'domain_file' goes with format: plain (a domain per line of 'source'), not {file_format or 'no format'}"
    missing = [key for key in ("source", "reference", "format") if key not in spec]
    if ("source" in spec or "reference" in spec) and missing:
        return f"a pair of files gives all of 'source', 'reference' and 'format' (missing: {', '.join(missing)})"
    return None


def _schema_branch(path: Any) -> str:
    parts = [str(part) for part in path]
    if parts[-2:] == ["training", "dev"] or parts[-1:] == ["dev"]:
        return "training.dev"
    return parts[0] if parts else ""


def validate_config(config: Mapping[str, Any], schema_path: str | Path) -> None:
    """Raise :class:`InputError` naming the key of the first problem found in ``config``."""
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda error: list(error.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        detail = error.message
        if error.validator == "oneOf":
            branch = _schema_branch(error.absolute_path)
            if branch == "systems" and isinstance(error.instance, Mapping) and error.instance.get("kind") == "hypotheses":
                branch = "systems.hypotheses"
            detail = _ONE_OF_DETAILS.get(branch, detail)
        path = list(error.absolute_path)
        if path[:1] == ["testsets"] and len(path) >= 2:  # a route mixed up: say which, not what a branch's keyword found
            entry = next((found for found in errors if found.validator == "oneOf" and list(found.absolute_path) == path[:2]), None)
            if entry is not None and isinstance(entry.instance, Mapping):
                error, detail = entry, _testset_route_problem(entry.instance) or _ONE_OF_DETAILS["testsets"]
        raise InputError(f"invalid configuration at key '{_key_path(error.absolute_path)}': {detail}")

    _check_something_to_measure(config)
    testsets = list(config.get("testsets", {}))
    if WHOLE_POOL in testsets:
        raise InputError(f"invalid configuration at key 'testsets.{WHOLE_POOL}': the name is reserved")
    # the grids a config writes (a default grid, filled in later, is valid)
    grids = [("robustness.epsilon", config["robustness"]["epsilon"])] if "epsilon" in config.get("robustness", {}) else []
    if "epsilon" in config.get("sentiment", {}):
        grids.append(("sentiment.epsilon", config["sentiment"]["epsilon"]))
    for study, spec in config.get("human_studies", {}).items():
        if "epsilon" in spec:
            grids.append((f"human_studies.{study}.epsilon", spec["epsilon"]))
    for key, epsilon in grids:
        if epsilon["stop"] < epsilon["start"]:
            raise InputError(f"invalid configuration at key '{key}.stop': must be >= start")
    for system, spec in config.get("systems", {}).items():
        if spec["kind"] == "hypotheses" and "files" in spec:  # a submission is checked by hypotheses.check_submissions
            # the test sets of its studies are checked with them (nlp_robustness.studies.mt_studies), perturbed
            # test sets (perturbed/<family>/<function>/<part>) with their family
            unknown = [name for name in spec["files"] if name not in testsets and not name.startswith("perturbed/")]
            if unknown:
                raise InputError(
                    f"invalid configuration at key 'systems.{system}.files': unknown test set(s) {', '.join(unknown)}"
                )


#: The studies that need no test set or MT system (a config of these alone translates nothing).
STUDIES_WITHOUT_TESTSETS = ("human_studies", "sentiment", "metric_robustness")


def _check_something_to_measure(config: Mapping[str, Any]) -> None:
    """A config measures something: test sets (an MT study, with systems; checked by
    :func:`~nlp_robustness.studies.mt_studies.complete_mt_studies`) or a study that needs none; systems need test sets."""
    if config.get("testsets"):
        return
    if config.get("systems"):
        raise InputError("invalid configuration at key 'testsets': missing: the config's systems translate test sets (give "
                         f"testsets, or leave systems out: a config of {', '.join(STUDIES_WITHOUT_TESTSETS)} alone needs neither)")
    if not any(config.get(key) for key in STUDIES_WITHOUT_TESTSETS):
        raise InputError(
            "invalid configuration at key 'testsets': missing, and the config has no study that needs none: give testsets "
            f"and systems (an MT study), or one of {', '.join(STUDIES_WITHOUT_TESTSETS)} (README, \"Bring your own data\")"
        )


def training_datasets(config: Mapping[str, Any]) -> list[str]:
    """Manifest datasets that in-house fairseq systems train and stop early on (config order)."""
    names: list[str] = []
    for spec in config["systems"].values():
        training = spec.get("training") if spec["kind"] == "fairseq" else None
        if training is not None:
            names += training["datasets"]
            names += training["dev"].get("datasets", [])
    return list(dict.fromkeys(names))


def fill_dependent_defaults(config: MutableMapping[str, Any]) -> None:
    """Fill in the defaults that depend on another key, which a schema ``default`` cannot state.

    ``sentiment.epsilon`` and ``human_studies.<study>.epsilon`` (the epsilon grids of those branches) default to
    ``robustness.epsilon``, the MT grid. Run after the schema's own defaults are filled
    (``snakemake.utils.validate(config, schema, set_default=True)``); edits ``config`` in place.
    """
    if "sentiment" in config:
        config["sentiment"].setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))
    for spec in config.get("human_studies", {}).values():
        spec.setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))


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


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else repr(key)


def _first_duplicate(node: yaml.Node, loader: yaml.SafeLoader, path: list[str], visited: set[int]):
    """(key path, line of the first occurrence, line of the second) of the first key a mapping repeats, or None."""
    if id(node) in visited:  # an alias repeats a node: it was checked where it was defined
        return None
    visited.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = loader.construct_object(key_node)  # "1" and 1 differ, as in the config dict
                line = key_node.start_mark.line + 1
                if key in seen:
                    return ".".join([*path, _key_text(key)]), seen[key], line
                seen[key] = line
                child_path = [*path, _key_text(key)]
            else:
                child_path = [*path, "<key>"]
            found = _first_duplicate(value_node, loader, child_path, visited)
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            parent = path[:-1] + [f"{path[-1]}[{index}]"] if path else [f"[{index}]"]
            found = _first_duplicate(item, loader, parent, visited)
            if found is not None:
                return found
    return None


def check_config_syntax(path: str | Path) -> None:
    """Refuse a config file that is neither YAML nor JSON, naming the file, line and column of the fault.

    Snakemake's own loader says only "Config file is not valid JSON or YAML" (it drops the parser's position);
    the Snakefile calls this on its default config file before Snakemake reads it. A missing file is left to
    Snakemake, which names it.

    Raises:
        InputError: ``<file>: line L, column C: <what the YAML parser found>`` (a tab in the indentation is
            named as such), or the file is not UTF-8.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read config file {path}: {error}") from None
    try:
        json.loads(text)
        return
    except ValueError:
        pass
    try:
        yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        lines = text.splitlines()
        line = lines[mark.line] if mark is not None and mark.line < len(lines) else ""
        indentation = line[: len(line) - len(line.lstrip())]
        hint = " (a tab in the indentation: YAML indents with spaces only)" if "\t" in indentation else ""
        context = error.context
        opened = error.context_mark
        if context and opened is not None and mark is not None and (opened.line, opened.column) != (mark.line, mark.column):
            # where the unclosed bracket, quote or block began: the parser notices only where it ran out
            context += f" begun at line {opened.line + 1}, column {opened.column + 1},"
        what = " ".join(part for part in (context, error.problem) if part)
        raise InputError(f"{path}: {where}not valid YAML: {what}{hint}") from None
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML: {' '.join(str(error).split())}") from None


def check_duplicate_keys(paths: Iterable[str | Path]) -> None:
    """Refuse a config file that writes a key twice in one mapping (a system or test set given twice, say).

    Snakemake reads config files with a plain YAML (or JSON) loader, which keeps the last of two equal
    keys without a word; this re-reads each file and stops at the first repeated key. Keys are compared
    as the loader reads them (``1`` and ``"1"`` differ; ``wmt14`` and ``"wmt14"`` do not); a merge key
    (``<<``) may repeat what it merges. A file YAML cannot parse (JSON-only syntax) is checked as JSON.

    Raises:
        InputError: Naming the file, the line of the second occurrence, the key path (e.g.
            ``testsets.wmt14``) and the line of the first; or the file cannot be read.
    """
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"cannot read config file {path}: {error}") from None
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            found = None if root is None else _first_duplicate(root, loader, [], set())
        except yaml.YAMLError:
            _check_duplicate_json_keys(path, text)
            continue
        finally:
            loader.dispose()
        if found is not None:
            key_path, first, second = found
            raise InputError(
                f"{path}: line {second}: key '{key_path}' is written twice (first on line {first}); "
                "Snakemake would keep only the last, silently: remove or rename one of them"
            )


def _check_duplicate_json_keys(path: str | Path, text: str) -> None:
    def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        repeated = next((key for index, key in enumerate(keys) if key in keys[:index]), None)
        if repeated is not None:
            raise InputError(
                f"{path}: key '{repeated}' is written twice in one object; Snakemake would keep only the last, silently"
            )
        return dict(pairs)

    try:
        json.loads(text, object_pairs_hook=refuse_duplicates)
    except ValueError:
        return  # neither YAML nor JSON to us: Snakemake, which read it, reports what is wrong with it
