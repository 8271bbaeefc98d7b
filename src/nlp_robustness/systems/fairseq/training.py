"""Training an in-house fairseq model: its settings, the ``fairseq-train`` command line, and the run."""

from __future__ import annotations

import ast
import io
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.checkpoints import check_checkpoint
from nlp_robustness.systems.fairseq.runtime import (
    FairseqError, capability_warning, cpu_capability, environment_record, fairseq_environment, option_arguments, run_fairseq,
)
from nlp_robustness.systems.fairseq.training_log import parse_training_log

__all__ = [
    "CODE_OPTIONS", "RESERVED_TRAIN_OPTIONS", "TrainingOptions", "reserved_train_options", "train_args_problem", "train_command",
    "train_model",
]

#: fairseq-train options the workflow sets itself; giving them in ``train_args`` is a config error.
RESERVED_TRAIN_OPTIONS: frozenset[str] = frozenset(
    {
        "arch", "save-dir", "seed", "max-epoch", "patience", "cpu", "source-lang", "target-lang",
        "num-workers", "no-epoch-checkpoints", "no-last-checkpoints", "no-save-optimizer-state", "log-format", "tensorboard-logdir",
        "wandb-project", "distributed-world-size", "max-source-positions", "max-target-positions",
    }
)


#: fairseq-train options that run code the config chooses, and how (docs/reliability.md, "Running a config you did
#: not write"): refused in ``train_args`` unless ``training.allow_code_in_train_args`` is true.
CODE_OPTIONS: Mapping[str, str] = {
    "user-dir": "fairseq imports the folder it names as a Python module",
    # the workflow lets torch unpickle whole objects for fairseq's own checkpoints (runtime.fairseq_environment)
    "restore-file": "fairseq loads the checkpoint it names by unpickling it, which runs any code the file holds",
    "finetune-from-model": "fairseq loads the checkpoint it names by unpickling it, which runs any code the file holds",
}


@dataclass(frozen=True)
class TrainingOptions:
    """``fairseq-train`` settings of an in-house model (config key ``training``; ``allow_code``:
    ``allow_code_in_train_args``)."""

    arch: str
    train_args: Mapping[str, Any]
    source_language: str = "en"
    target_language: str = "fr"
    seed: int = 1
    max_epoch: int = 10
    patience: int = 3
    max_positions: int = 1024
    allow_code: bool = False


def reserved_train_options(train_args: Iterable[str]) -> list[str]:
    """The options of ``train_args`` that the workflow sets itself (:data:`RESERVED_TRAIN_OPTIONS`), sorted."""
    return sorted(RESERVED_TRAIN_OPTIONS.intersection(train_args))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _calls_something(text: str) -> bool:
    """Whether Python reads ``text`` as an expression that calls something (``__import__('os').system(...)``).

    fairseq evaluates some options' strings with ``eval`` (fconv's ``encoder-layers``, ``decoder-layers`` and
    ``decoder-attention``, Adam's ``adam-betas``, ...). Their values are lists, tuples, numbers and booleans joined
    by ``*`` and ``+`` (``"[(192, 3)] * 3"``): without a call an expression can only compute such values. Text Python
    cannot parse (a path, a word list) fails in ``eval`` before anything runs.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Call) for node in ast.walk(tree))


def train_args_problem(train_args: Mapping[str, Any], *, allow_code: bool = False) -> tuple[str, str, bool] | None:
    """The first option of ``train_args`` (in sorted order) that is refused, why, and whether it is code that
    ``allow_code`` would let through; None when none is refused.

    Refused always: a value that fairseq-train would read as an option of its own (one that starts with ``-`` and is
    not a number, such as ``--user-dir=...``). Refused unless ``allow_code``: an option of :data:`CODE_OPTIONS`
    (``user_dir`` too, fairseq's name for it) and a value that calls something (:func:`_calls_something`).
    """
    for option, value in sorted(train_args.items()):
        if isinstance(value, str) and value.startswith("-") and not _is_number(value):  # argparse: an option
            why = f"the value {value!r} would reach fairseq-train as an option of its own, not as the value of --{option}"
            return option, why, False
        if allow_code:
            continue
        code = CODE_OPTIONS.get(option.replace("_", "-"))
        if code is not None:
            return option, f"--{option.replace('_', '-')}: {code}", True
        if isinstance(value, str) and _calls_something(value):
            return option, f"the value {value!r} calls something, and fairseq evaluates some options' values as Python", True
    return None


def train_command(data_dir: str | os.PathLike[str], save_dir: str | os.PathLike[str], options: TrainingOptions, device: str) -> list[str]:
    """Arguments of ``fairseq-train``: the config's ``train_args`` plus what the workflow fixes.

    Early stopping: fairseq validates after every epoch and stops when the validation loss has not
    improved for ``patience`` epochs (or after ``max_epoch``); ``checkpoint_best.pt`` is the epoch with
    the lowest validation loss.

    Raises:
        InputError: ``train_args`` sets an option the workflow controls, or one :func:`train_args_problem` refuses
            (names it).
    """
    reserved = reserved_train_options(options.train_args)
    if reserved:
        raise InputError(f"training.train_args must not set {', '.join(reserved)} (the workflow sets them from other keys)")
    problem = train_args_problem(options.train_args, allow_code=options.allow_code)
    if problem is not None:
        option, why, code = problem
        allowing = "; training.allow_code_in_train_args: true lets it run" if code else ""
        raise InputError(f"training.train_args.{option}: {why}{allowing}")
    arguments = [
        str(data_dir),
        "--arch", options.arch,
        "--source-lang", options.source_language,
        "--target-lang", options.target_language,
        "--save-dir", str(save_dir),
        "--seed", str(options.seed),
        "--max-epoch", str(options.max_epoch),
        "--patience", str(options.patience),
        "--max-source-positions", str(options.max_positions),
        "--max-target-positions", str(options.max_positions),
        "--num-workers", "0",
        "--no-epoch-checkpoints",
        "--no-last-checkpoints",
        "--no-save-optimizer-state",  # translation needs the weights only (a third of the size)
        "--log-format", "simple",
        "--log-interval", "100",
        *option_arguments(options.train_args),
    ]
    if device == "cpu":
        arguments.append("--cpu")
    return arguments


def train_model(
    data_dir: str | os.PathLike[str],
    save_dir: str | os.PathLike[str],
    options: TrainingOptions,
    *,
    device: str,
    cpu_threads: int,
    log: io.TextIOBase | None = None,
    pin_cpu_kernels: bool = True,
) -> dict[str, Any]:
    """Train with ``fairseq-train``; returns :func:`parse_training_log`'s record plus the wall time, the device,
    the allocator and CPU code paths (``cpu_kernels``, on the CPU), ``model`` (:func:`check_checkpoint` of the best
    checkpoint) and its ``weights_sha256``.

    The best checkpoint is ``save_dir/checkpoint_best.pt``. ``pin_cpu_kernels=False`` leaves the CPU code paths
    to the machine (:func:`~nlp_robustness.systems.fairseq.runtime.fairseq_environment`): the benchmark and tests
    only.
    """
    started = time.perf_counter()
    environment = fairseq_environment(cpu_threads, pin_cpu_kernels=pin_cpu_kernels)
    capability = cpu_capability(environment)  # before the training: a level below the pins is logged at once
    warning = capability_warning(capability, environment) if device == "cpu" else None
    if warning and log is not None:
        log.write(warning + "\n")
    output = run_fairseq("fairseq-train", train_command(data_dir, save_dir, options, device), log, environment)
    record = parse_training_log(output)
    record["seconds"] = time.perf_counter() - started
    record["device"] = device
    record["cpu_threads"] = cpu_threads
    # like the device, the allocator and the CPU code paths can change the last bits of the weights (runtime module docstring)
    record.update(environment_record(environment, capability))
    if not (Path(save_dir) / "checkpoint_best.pt").is_file():
        raise FairseqError(f"fairseq-train wrote no checkpoint_best.pt into {save_dir}")
    record["model"] = check_checkpoint(Path(save_dir) / "checkpoint_best.pt")  # one load checks and hashes it
    record["weights_sha256"] = record["model"]["weights_sha256"]
    return record
