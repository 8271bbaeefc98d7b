"""Running fairseq's command-line tools: device choice, a reproducible environment, options, errors.

Determinism
    fairseq seeds every random choice from ``--seed``; data loading runs in the main process
    (``--num-workers 0``) and the CPU thread count is fixed from the config (``cpu_threads``, not
    Snakemake's ``--cores``), because floating-point sums may be ordered differently with a
    different number of threads. MKL, which does torch's CPU matrix products, runs in its
    conditional numerical reproducibility mode (``MKL_CBWR=AUTO,STRICT``, no dynamic threads); its
    default path can depend on memory alignment, which made two same-seed trainings differ once.
    Results are reproducible for one device kind (CPU or a given GPU); CPU and GPU results differ in
    the last bits, so the device used is recorded in every report.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from nlp_robustness.errors import InputError

__all__ = ["DEVICES", "FairseqError", "fairseq_environment", "option_arguments", "resolve_device", "run_fairseq"]

#: Values of the config key ``device``.
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")


class FairseqError(RuntimeError):
    """A fairseq command failed or returned output that does not align with its input."""


def resolve_device(requested: str) -> str:
    """``"cpu"`` or ``"cuda"`` for the config value ``auto`` / ``cpu`` / ``cuda``.

    Raises:
        InputError: ``cuda`` was asked for and no GPU is visible.
    """
    if requested not in DEVICES:
        raise InputError(f"device must be one of {', '.join(DEVICES)}, not {requested!r}")
    if requested == "cpu":
        return "cpu"
    import torch

    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise InputError("config asks for device 'cuda' but torch sees no GPU on this machine")
    return "cuda" if available else "cpu"


def fairseq_environment(cpu_threads: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for fairseq's commands: fixed threads and MKL code path, unpickling of self-made checkpoints.

    fairseq 0.12 checkpoints hold argparse/omegaconf objects, which torch >= 2.6 refuses to unpickle
    by default (``weights_only``); ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` restores the old behaviour.
    Only checkpoints this workflow made or verified by checksum are loaded.
    """
    environment = dict(os.environ if base is None else base)
    threads = str(cpu_threads)
    environment.update(
        TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1",
        OMP_NUM_THREADS=threads,
        MKL_NUM_THREADS=threads,
        # torch's CPU matrix products run in MKL, whose default code path may depend on memory
        # alignment and may drop threads at run time: two trainings with one seed then differ in the
        # last bits (seen once in CI). Conditional numerical reproducibility fixes the path.
        MKL_CBWR="AUTO,STRICT",
        MKL_DYNAMIC="FALSE",
        OMP_DYNAMIC="FALSE",
        PYTHONHASHSEED="0",
    )
    return environment


def _fairseq_executable(name: str) -> str:
    """The fairseq command ``name`` beside the running interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise InputError(f"{name} not found: install fairseq (see README, `make setup`)")
    return found


def run_fairseq(command: str, arguments: Sequence[str], log: io.TextIOBase | None, environment: Mapping[str, str]) -> str:
    """Run a fairseq CLI command, streaming its output into ``log`` as it comes, and return that output.

    Raises:
        FairseqError: Non-zero exit; the message carries the last lines of fairseq's output.
    """
    full = [_fairseq_executable(command), *map(str, arguments)]
    if log is not None:
        log.write("$ " + " ".join(full) + "\n")
        log.flush()
    lines: list[str] = []
    with subprocess.Popen(
        full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8", env=dict(environment)
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if log is not None and not line.startswith(("S-", "T-", "H-", "D-", "P-")):
                log.write(line)  # progress and losses, live; not every hypothesis
                log.flush()
    if process.returncode != 0:
        tail = "".join(lines[-15:]).rstrip()
        raise FairseqError(f"{command} failed with exit status {process.returncode}:\n{tail}")
    return "".join(lines)


def option_arguments(options: Mapping[str, Any]) -> list[str]:
    """fairseq command-line arguments for ``{option: value}`` (``True``: a bare flag; ``False``/``None``: left out)."""
    arguments: list[str] = []
    for option, value in options.items():
        if value is None or value is False:
            continue
        arguments.append(f"--{option}")
        if value is not True:
            arguments.append(str(value))
    return arguments
