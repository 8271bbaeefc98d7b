"""Where a config's results go: its run directory, and the config's paths rebased onto it.

A config names its ``run_directory`` (relative to where snakemake is launched; default ``.``, the launch
directory itself): the directory that holds its ``results/``, ``logs/``, ``resources/downloads/`` and
Snakemake's own records (``.snakemake/``: metadata, locks, incomplete markers). The Snakefile switches to
it with Snakemake's ``workdir:`` directive right after the config is read, so two configs of one checkout
with different run directories never rerun or overwrite each other's jobs (docs/own-data.md, "Several configs in one
checkout"; two configs that share one are kept apart by :mod:`nlp_robustness.run_owner`). ``snakemake --directory
DIR`` takes precedence: Snakemake then ignores ``workdir:``, DIR is the run directory and ``run_directory`` is not
used.

A relative path the config gives (``mirror_dir``, a test set's files, a hypotheses file, a local Hugging
Face model) means a file of the launch directory, as the user wrote it. Once the run directory is the
working directory, :func:`rebase_paths` rewrites each one relative to the run directory, so it keeps naming
the same file. The rewritten path is relative (``os.path.relpath``), not absolute: a checkout moved with its
run directories keeps its params, so nothing reruns (tests/e2e/test_relocation.py). Absolute paths and
``~`` paths are kept as written. Paths relative to the workflow directory (``dataset_manifest``,
``download.checksum_lock``) are not touched.

Which keys are paths is written once, in the schema (schemas/config.schema.yaml), as an annotation of the
string's schema: ``x-path: working-directory`` (always a path), ``x-path: model`` (a Hugging Face model:
a hub id such as ``Helsinki-NLP/opus-mt-en-fr`` is kept, a local directory is rebased: one that exists, or
a string starting with ``/``, ``.`` or ``~``, or with two or more ``/``), or ``x-path: download-or-path`` (a
human study's file: a download of the dataset manifest, named by its key and kept, or else a path, rebased like a
test set's file). A human-study format's file keys need only that annotation in its schema branch to resolve
from the launch directory like every other path. :func:`path_keys` finds them by
walking the config with its schema, through ``$ref``, ``allOf``/``anyOf``/``oneOf`` and the ``then`` (or
``else``) of each ``if`` the entry meets -- so a system's ``files`` are found under its kind's branch only. An
error found in a file after the paths are rebased names the file as the config writes it (:func:`named_as_written`),
not as rebased.

A start that fails, or a dry run, leaves no run directory it created (:func:`remove_if_unused_at_exit`), and
Snakemake's own log of the run goes to the run directory's ``.snakemake/log/`` (:func:`move_log_files`).
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
from collections.abc import Collection, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import jsonschema

from nlp_robustness.errors import InputError
from nlp_robustness.config_schema import resolve_reference

__all__ = [
    "DEFAULT_RUN_DIRECTORY", "SNAKEMAKE_RECORDS", "move_log_files", "named_as_written", "path_keys", "rebase_path", "rebase_paths",
    "remove_if_unused_at_exit", "run_directory", "written_paths",
]

#: The run directory of a config without ``run_directory``: the launch directory.
DEFAULT_RUN_DIRECTORY = "."

#: The annotations of ``x-path``: a path relative to the working directory, a model that may be one, or a
#: download of the dataset manifest (its key) that may be one.
PATH = "working-directory"
MODEL = "model"
DOWNLOAD_OR_PATH = "download-or-path"

KeyPath = tuple[str | int, ...]

#: Snakemake's own records in a working directory (metadata, locks, incomplete markers, its log).
SNAKEMAKE_RECORDS = ".snakemake"


def run_directory(config: Mapping[str, Any]) -> str:
    """The run directory a config names (``run_directory``; ``.`` when absent).

    Read before the config is validated (the Snakefile switches to it first): a value that is not a
    non-empty string gives ``.`` here, and validation then names the key.
    """
    value = config.get("run_directory", DEFAULT_RUN_DIRECTORY)
    return value if isinstance(value, str) and value else DEFAULT_RUN_DIRECTORY


def _applicable(schema: Mapping[str, Any], value: Any, root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """``schema`` and every subschema that applies to ``value`` as a whole: its combinators' branches, and
    the ``then`` of each ``if`` that ``value`` meets (else its ``else``)."""
    schema = resolve_reference(schema, root)
    found = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key, []):
            found += _applicable(branch, value, root)
    if "if" in schema:
        met = jsonschema.Draft202012Validator(resolve_reference(schema["if"], root)).is_valid(value)
        branch = schema.get("then" if met else "else")
        if branch is not None:
            found += _applicable(branch, value, root)
    return found


def path_keys(config: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[KeyPath, str]:
    """Every string of ``config`` whose schema has an ``x-path`` annotation: its key path -> the annotation."""
    found: dict[KeyPath, str] = {}

    def walk(value: Any, subschema: Mapping[str, Any], where: KeyPath) -> None:
        branches = _applicable(subschema, value, schema)
        if isinstance(value, str):
            marks = [branch["x-path"] for branch in branches if "x-path" in branch]
            if marks:
                found[where] = marks[0]
        elif isinstance(value, Mapping):
            properties: dict[str, list[Any]] = {}  # every branch's schema of a key (any may annotate it)
            for branch in branches:
                for key, property_schema in branch.get("properties", {}).items():
                    properties.setdefault(key, []).append(property_schema)
            additional = [branch["additionalProperties"] for branch in branches if isinstance(branch.get("additionalProperties"), Mapping)]
            for key, item in value.items():
                if key in properties:
                    walk(item, {"allOf": properties[key]}, (*where, key))
                elif additional:  # every branch's schema of its values (a format's branch may annotate them)
                    walk(item, {"allOf": additional}, (*where, key))
        elif isinstance(value, list):
            items = next((branch["items"] for branch in branches if isinstance(branch.get("items"), Mapping)), None)
            if items is not None:
                for index, item in enumerate(value):
                    walk(item, items, (*where, index))

    walk(config, schema, ())
    return found


def _is_model_path(model: str, launch_directory: Path) -> bool:
    """Whether a Hugging Face ``model`` string is a local directory, judged from the launch directory (the
    schema's rule: it exists, or starts with /, ., ~, or has two or more /)."""
    return model.startswith(("/", ".", "~")) or model.count("/") >= 2 or (launch_directory / model).is_dir()


def rebase_path(path: str, launch_directory: str | Path, run_directory: str | Path) -> str:
    """``path`` (relative to ``launch_directory``) relative to ``run_directory``; absolute and ``~`` paths as
    they are. Both directories are absolute."""
    if os.path.isabs(path) or path.startswith("~"):
        return path
    return os.path.relpath(os.path.join(launch_directory, path), run_directory)


def _refuse_missing_input(where: KeyPath, path: str, launch_directory: Path, mark: str = PATH) -> None:
    """A test set's, hypotheses or human study's file that is missing, named as the user wrote it: rebased,
    Snakemake's missing-input message would show it relative to the run directory (``../../data/...``), a path the
    user never wrote."""
    relative = not (os.path.isabs(path) or path.startswith("~"))  # the others reach Snakemake as written
    input_file = where[0] == "testsets" or (where[0] == "systems" and where[2:3] == ("files",)) or mark == DOWNLOAD_OR_PATH
    if relative and input_file and not (launch_directory / path).exists():  # not a cache to make
        key = ".".join(str(part) for part in where)
        download = " and is no download of the dataset manifest" if mark == DOWNLOAD_OR_PATH else ""
        raise InputError(f"{key}: {path} does not exist (relative to {launch_directory}, where snakemake was launched){download}")


def rebase_paths(
    config: MutableMapping[str, Any], schema: Mapping[str, Any], launch_directory: str | Path, run_directory: str | Path | None = None,
    downloads: Collection[str] = (),
) -> dict[KeyPath, str]:
    """Rewrite in place every path of ``config`` (:func:`path_keys`) given relative to ``launch_directory`` so
    that it is relative to ``run_directory`` (default: the current directory, which ``workdir:`` made the run
    directory). Nothing changes when the two are the same directory. A ``download-or-path`` value that is one of
    ``downloads`` (the dataset manifest's keys) is no path and stays. Returns the rewritten keys -> their new paths.
    """
    launch = Path(launch_directory).resolve()
    run = Path.cwd().resolve() if run_directory is None else Path(run_directory).resolve()
    if launch == run:
        return {}
    rebased: dict[KeyPath, str] = {}
    for where, mark in path_keys(config, schema).items():
        *parents, last = where
        container: Any = config
        for key in parents:
            container = container[key]
        value = container[last]
        if mark == MODEL:
            if not _is_model_path(value, launch) or os.path.isabs(value) or value.startswith("~"):
                continue
            new = rebase_path(value, launch, run)
            new = new if new.startswith(".") else f"./{new}"  # still read as a directory, never as a hub id
        else:
            if mark == DOWNLOAD_OR_PATH and value in downloads:
                continue
            _refuse_missing_input(where, value, launch, mark)
            new = rebase_path(value, launch, run)
        if new != value:
            container[last] = rebased[where] = new
    return rebased


def written_paths(written: Mapping[str, Any], rebased: Mapping[KeyPath, str]) -> dict[str, str]:
    """Each rebased path (what :func:`rebase_paths` returned) -> the path as ``written``, the config before rebasing."""
    found: dict[str, str] = {}
    for where, new in rebased.items():
        value: Any = written
        for key in where:
            value = value[key]
        found[new] = value
    return found


def named_as_written(error: InputError, as_written: Mapping[str, str]) -> InputError:
    """``error`` with every rebased path it names (a key of ``as_written``, from :func:`written_paths`) as the config
    writes it: ``../../data/own.en has 2 segments`` reads ``data/own.en has 2 segments``, the file the user named."""
    if not as_written:
        return error
    # the longest first, each as a whole path (not the tail of a longer one)
    pattern = re.compile("|".join(rf"(?<![\w./~-]){re.escape(path)}" for path in sorted(as_written, key=len, reverse=True)))
    message = pattern.sub(lambda match: as_written[match.group(0)], str(error))
    return error if message == str(error) else InputError(message)


def remove_if_unused_at_exit(directory: str | Path) -> None:
    """If ``directory`` does not exist yet, remove it (and the parents made with it) when the process exits
    holding nothing but Snakemake's own records (:data:`SNAKEMAKE_RECORDS`): a start that failed before any job
    (a bad config, a missing input) or a dry run leaves no run directory behind. A directory that exists already,
    or that ends up holding anything else (a result, a job's log), is left alone.

    Call it before Snakemake's ``workdir:`` creates the directory, from the main process only (a job's process
    finds it there already).
    """
    directory = Path(directory).absolute()
    if directory.exists():
        return
    created = [directory, *[parent for parent in directory.parents if not parent.exists()]]  # innermost first

    def remove_unused() -> None:
        if not directory.is_dir() or any(entry.name != SNAKEMAKE_RECORDS for entry in directory.iterdir()):
            return
        shutil.rmtree(directory / SNAKEMAKE_RECORDS, ignore_errors=True)
        for made in created:
            try:
                made.rmdir()  # only an empty one
            except OSError:
                return

    atexit.register(remove_unused)


def move_log_files(logfile_handlers: MutableMapping[logging.Handler, str], launch_directory: str | Path) -> None:
    """Move Snakemake's log file from the launch directory's ``.snakemake/log/`` to the working directory's.

    Snakemake (9.x: ``LoggerManager.setup_logfile``) opens its log in ``.snakemake/log/`` of the directory it is
    launched in (or of ``--directory``) before it reads the Snakefile, so the run directory that the Snakefile's
    ``workdir:`` moves to would not hold the log of its own run. ``logfile_handlers`` is Snakemake's map of its
    file handlers to their paths (``workflow.logger_manager.logfile_handlers``); each log under
    ``launch_directory``'s ``.snakemake/log/`` is renamed into the current directory's, its handler pointed there
    (so the log keeps every line, and Snakemake's closing "Complete log(s)" names the new place). A launch
    directory's ``.snakemake/log/`` left empty (and ``.snakemake/`` holding nothing else) is removed. Nothing
    changes when the two directories are one.
    """
    old_directory = Path(launch_directory).absolute() / SNAKEMAKE_RECORDS / "log"
    new_directory = Path.cwd() / SNAKEMAKE_RECORDS / "log"
    if old_directory.resolve() == new_directory.resolve():
        return
    for handler, logfile in list(logfile_handlers.items()):
        if not isinstance(handler, logging.FileHandler) or Path(logfile).parent.resolve() != old_directory.resolve():
            continue
        new = new_directory / Path(logfile).name
        new_directory.mkdir(parents=True, exist_ok=True)
        handler.acquire()
        try:
            if handler.stream is not None:
                handler.stream.flush()
            try:
                os.rename(logfile, new)  # the open stream keeps writing to the renamed file
            except OSError:  # another file system: copy, and reopen the handler on the copy
                if handler.stream is not None:
                    handler.stream.close()
                    handler.stream = None
                shutil.move(logfile, new)
            handler.baseFilename = str(new)
            if handler.stream is None:
                handler.stream = handler._open()  # appends (FileHandler's mode "a")
        finally:
            handler.release()
        logfile_handlers[handler] = str(new)
    for empty in (old_directory, old_directory.parent):
        try:
            empty.rmdir()  # only an empty one: another run's logs and records stay
        except OSError:
            break
