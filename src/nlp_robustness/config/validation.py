"""The config on its own: its shape checked against the schema, the cross-references a schema cannot express,
and the defaults that depend on another key.

JSON Schema (schemas/config.schema.yaml) checks shape and types; :func:`validate_config` adds the
cross-references a schema cannot express (a left-out test set must exist, a hypotheses system must
give a file for every test set, ...). Every error names the offending config key.

Every default is written once, in the schema, and filled in by
:func:`nlp_robustness.planning.fill_schema_defaults`; :func:`fill_dependent_defaults` fills the two that
depend on another key.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import jsonschema

from nlp_robustness.config_schema import load_schema
from nlp_robustness.errors import InputError
from nlp_robustness.statistics.pools import WHOLE_POOL

__all__ = ["STUDIES_WITHOUT_TESTSETS", "fill_dependent_defaults", "validate_config"]


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


def fill_dependent_defaults(config: MutableMapping[str, Any]) -> None:
    """Fill in the defaults that depend on another key, which a schema ``default`` cannot state.

    ``sentiment.epsilon`` and ``human_studies.<study>.epsilon`` (the epsilon grids of those branches) default to
    ``robustness.epsilon``, the MT grid. Run after the schema's own defaults are filled
    (:func:`nlp_robustness.planning.fill_schema_defaults`); edits ``config`` in place.
    """
    if "sentiment" in config:
        config["sentiment"].setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))
    for spec in config.get("human_studies", {}).values():
        spec.setdefault("epsilon", copy.deepcopy(config["robustness"]["epsilon"]))
