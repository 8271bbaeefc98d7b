"""Which config a run directory's results belong to, and a run that would mix another config's into them refused.

Two configs may name one run directory (``config.yaml`` and ``tests/config/small.yaml`` both use ``.``). Their
jobs write the same paths, so the second config's run would replace the first one's results where they differ and
leave the rest: a directory of two configs' results, which nothing tells apart. So a run directory has an
**owner**: the config of its last run that ran jobs, recorded in :data:`OWNER_RECORD` (its config files, and the
config as the workflow resolved it, with its digest).

**What the digest covers.** The config as the workflow runs it (:func:`nlp_robustness.planning.prepare_config`:
validated, every schema default filled in, made canonical, its relative paths rebased onto the run directory),
serialised in its own order (the order of systems and test sets is the order of the tables' rows, so it counts),
less :data:`NOT_RESULTS`: the keys that say where results go or how a download is fetched, never what a result
holds. So the same config under another file name, with its keys reordered, a default written out, or moved with
its checkout, has the same digest; what a user would call another config has another.

**The rule** (:func:`claim_run_directory`, called by ``rules/common.smk`` when a run is about to start its jobs,
after Snakemake has planned them; a dry run, and a run with nothing to do, never get there). A run is refused,
before its first job, when all of these hold:

* the run directory has an owner whose digest differs from this run's;
* this run reads other config files than the owner's (the same files with another digest are the owner's config
  edited, on disk or with ``--config``: its jobs rerun to update the results, which is what an edit is for);
* one of this run's jobs would write a file that exists already (Snakemake's plan: jobs to run, their outputs on
  disk). A run that adds new files only, beside the owner's, replaces nothing and is let through.

``--touch`` counts as replacing: it would mark the owner's files as this config's results. Jobs a checkpoint
adds once it has run are not known yet and not counted. ``--no-hooks`` skips every ``onstart`` handler, this check
and its record included. A run directory without a record (made before the record existed, or only by runs with
``--no-hooks``) has no owner: its next run with jobs becomes the owner.

The config key :data:`ALLOW_KEY` (``--config allow_mixed_run_directory=True``) lets a refused run go on; it is
taken out of the config before anything else reads it (:func:`allowed`), so it changes no job's params and no
result. Every run that runs jobs records its config as the owner, an allowed one included.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlp_robustness.errors import InputError

__all__ = ["ALLOW_KEY", "NOT_RESULTS", "OWNER_RECORD", "RunOwner", "allowed", "claim_run_directory", "config_file_names",
           "mixing_refusal", "recorded_owner", "run_owner"]

#: Where a run directory keeps its owner (relative to it): config files, digest and resolved config, as JSON.
OWNER_RECORD = Path(".snakemake") / "nlp_robustness" / "run_owner.json"

#: The config key that lets a run replace another config's results in its run directory.
ALLOW_KEY = "allow_mixed_run_directory"

#: Key paths of the config left out of the digest: where the results go (``run_directory``, which ``--directory``
#: overrides anyway), the allowing key, and how downloads are fetched (a download is checked against its checksum,
#: so these change how long it takes, never its bytes).
NOT_RESULTS: tuple[tuple[str, ...], ...] = (
    ("run_directory",),
    (ALLOW_KEY,),
    ("download", "timeout_seconds"),
    ("download", "retries"),
    ("download", "retry_wait_seconds"),
)

#: How many of the replaced files the refusal names.
NAMED_FILES = 3


@dataclass(frozen=True)
class RunOwner:
    """A config as a run directory's owner: its files (relative to the run directory, so a moved checkout keeps
    them), the resolved config less :data:`NOT_RESULTS`, and that config's digest."""

    config_files: tuple[str, ...]
    config: dict[str, Any]
    digest: str


def allowed(config: MutableMapping[str, Any]) -> bool:
    """Take :data:`ALLOW_KEY` out of a validated ``config``: whether this run may replace another config's results.

    Removed, not only read, so that the key reaches no job's params and no hash of the config (the profile's).
    """
    return bool(config.pop(ALLOW_KEY, False))


def config_file_names(config_files: Iterable[str | Path], launch_directory: str | Path) -> tuple[str, ...]:
    """The config files a run reads (relative to ``launch_directory`` or absolute), relative to the current
    directory, the run directory: as :data:`OWNER_RECORD` holds them."""
    return tuple(os.path.relpath(os.path.join(launch_directory, path)) for path in config_files)


def _without(config: Mapping[str, Any], paths: Iterable[tuple[str, ...]]) -> dict[str, Any]:
    """A copy of ``config`` (through the dicts on ``paths``) without the keys at ``paths``."""
    copied = dict(config)
    for path in paths:
        container: Any = copied
        for key in path[:-1]:
            if not isinstance(container.get(key), Mapping):
                break
            container[key] = dict(container[key])
            container = container[key]
        else:
            container.pop(path[-1], None)
    return copied


def run_owner(config: Mapping[str, Any], config_files: Sequence[str]) -> RunOwner:
    """This run as an owner: ``config`` (resolved: :func:`nlp_robustness.planning.prepare_config`) read from
    ``config_files`` (:func:`config_file_names`).

    The digest is SHA-256 of the config's JSON in its own key order (not the profile's ``config_hash``, which sorts
    every key: the order of a map is the order of a table's rows).
    """
    kept = _without(config, NOT_RESULTS)
    text = json.dumps(kept, ensure_ascii=False, separators=(",", ":"), default=str)
    return RunOwner(tuple(config_files), json.loads(text), hashlib.sha256(text.encode("utf-8")).hexdigest())


def recorded_owner() -> RunOwner | None:
    """The owner :data:`OWNER_RECORD` of the current directory (the run directory) names; None without one (or with
    one this code cannot read, which the next run with jobs replaces)."""
    try:
        record = json.loads(OWNER_RECORD.read_text(encoding="utf-8"))
        return RunOwner(tuple(record["config_files"]), record["config"], record["digest"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _record(owner: RunOwner) -> None:
    OWNER_RECORD.parent.mkdir(parents=True, exist_ok=True)
    record = {"config_files": list(owner.config_files), "digest": owner.digest, "config": owner.config}
    OWNER_RECORD.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _differing_keys(one: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """The top-level keys whose values differ (or that one of the two lacks), in ``one``'s order then ``other``'s."""
    keys = list(one) + [key for key in other if key not in one]
    return [key for key in keys if one.get(key) != other.get(key)]


def _named(paths: Sequence[str], launch_directory: str | Path) -> str:
    """``paths`` (relative to the current directory) relative to ``launch_directory``, as the user typed them."""
    return ", ".join(os.path.relpath(os.path.abspath(path), launch_directory) for path in paths) or "none"


def _run_directory_name(launch_directory: str | Path) -> str:
    """The current directory (the run directory) relative to ``launch_directory``; its absolute path when it is that
    directory (``.`` would not say which: with ``--directory`` Snakemake starts there, not where it was launched)."""
    directory = os.path.relpath(os.getcwd(), launch_directory)
    return os.getcwd() if directory == "." else directory


def mixing_refusal(owner: RunOwner, recorded: RunOwner | None, replaced: Sequence[str], launch_directory: str | Path) -> str | None:
    """Why this run (``owner``) may not replace the files ``replaced`` (this run's outputs that exist already) in the
    current directory (the run directory), whose owner is ``recorded``; None when it may (the module's rule).
    Config files and the run directory are named relative to ``launch_directory``, as the user typed them."""
    if recorded is None or recorded.digest == owner.digest or recorded.config_files == owner.config_files or not replaced:
        return None
    differing = _differing_keys(owner.config, recorded.config)
    differs = f" (it differs in {', '.join(differing)})" if differing else ""
    examples = ", ".join(sorted(replaced)[:NAMED_FILES]) + (", ..." if len(replaced) > NAMED_FILES else "")
    return (
        f"run directory {_run_directory_name(launch_directory)} holds the results of config file "
        f"{_named(recorded.config_files, launch_directory)}; this run's config ({_named(owner.config_files, launch_directory)}) "
        f"is another one{differs} and its jobs would replace {len(replaced)} of those files ({examples}), mixing two "
        'configs\' results. Nothing was run. Give each config its own run_directory (docs/own-data.md, "Several configs '
        f'in one checkout"), or let this run replace them: --config {ALLOW_KEY}=True'
    )


def claim_run_directory(owner: RunOwner, replaced: Sequence[str], launch_directory: str | Path, allow: bool = False) -> str | None:
    """Make ``owner`` the current directory's (the run directory's) owner, as a run is about to start its jobs; raise
    :class:`InputError` instead (recording nothing) when :func:`mixing_refusal` refuses and ``allow`` is false.

    Returns, when ``allow`` let a refused run go on, one line for the log that says whose results it replaces; else None.
    """
    recorded = recorded_owner()
    refusal = mixing_refusal(owner, recorded, replaced, launch_directory)
    if refusal is not None and not allow:
        raise InputError(refusal)
    _record(owner)
    if refusal is None:
        return None
    assert recorded is not None
    return (f"run directory {_run_directory_name(launch_directory)}: this run replaces {len(replaced)} files of config file "
            f"{_named(recorded.config_files, launch_directory)}'s results ({ALLOW_KEY})")
