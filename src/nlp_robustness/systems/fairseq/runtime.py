"""Running fairseq's command-line tools: device choice, a reproducible environment, options, errors.

Determinism
    fairseq seeds every random choice from ``--seed``; data loading runs in the main process
    (``--num-workers 0``) and the CPU thread count is fixed from the config (``cpu_threads``, not
    Snakemake's ``--cores``), because floating-point sums may be ordered differently with a
    different number of threads. MKL runs without dynamic threads.

    The CPU code paths are pinned (:data:`CPU_KERNELS`), because the libraries under torch pick their
    kernels by processor and the kernels round differently: PyTorch's vectorised kernels dispatch on the
    CPU's best instruction set (AVX-512 where the processor has it), MKL's ``AUTO`` branch picks a code path
    per processor (Intel and AMD processors with AVX-512 get different ones), oneDNN likewise. Same seed,
    other machine, other weights: the default ConvS2S trained to ``09221233…`` on one machine and to
    ``7095f5cf…`` on another (issue 54). Every fairseq process runs at the AVX2 level, which every supported
    x86-64 machine has: ``ATEN_CPU_CAPABILITY=avx2``, ``MKL_CBWR=AVX2,STRICT`` (MKL's conditional numerical
    reproducibility on one fixed branch: fixed cache sizes, deterministic reductions, static scheduling, and
    results independent of memory alignment), ``ONEDNN_MAX_CPU_ISA=AVX2``. They override the caller's
    environment (a machine's best would be the default otherwise). On this project's machine, forcing
    torch's level changes the tiny model's weights (AVX-512, AVX2 and no vectorisation give three digests),
    and with the pins set the level asked for from outside no longer counts
    (tests/e2e/test_fairseq.py); the cost in training time is measured by benchmarks/bench_cpu_kernels.py.
    ``training.json`` and every translation report record the pins and the level torch actually ran at
    (``cpu_kernels``); a machine without AVX2 runs at a lower level, and its log says its bits will differ.

    Results are reproducible for one device kind: CPU and GPU results differ in the last bits (cuDNN and
    cuBLAS kernels, not pinned here), so the device is recorded in every report.

    Each training records the sha256 of its weights (``weights_sha256`` in ``training.json``: the
    checkpoint's tensors by name, not the file, which holds paths), and so does every translation
    report (``model.weights_sha256``), so weights that drifted show up in the records; docs/reliability.md
    states the digests of the tests' tiny model and of the default model, and the tests and ``make run``
    compare them. Two trainings of the tests' tiny model under a busy loop once differed in the last bits
    (issue 39; before the kernels were pinned); ``python -m tests.tools.training_rounds DATA_BIN`` repeats
    that probe (rounds of two trainings beside busy loops).

Memory allocator
    On the CPU, torch frees and re-allocates the large tensors of every update (the logits over the
    vocabulary are tens of MB); glibc hands blocks that large back to the kernel at once, so each
    update faults its pages in anew (7 million page faults and a fifth of the CPU time in one epoch of
    the default model). gperftools' tcmalloc keeps them: training is about a fifth faster and beam search
    a little. The allocator decides where tensors lie, and that can reach the arithmetic: the default
    model's checkpoint is ``torch.equal`` and its translations identical either way, but the tests' tiny
    model once trained to other last bits under glibc's allocator than under tcmalloc (not seen again in
    issue 39's checks, where both gave the same weights). So the allocator is part
    of the environment, like the device: ``training.json`` records it, and every supported install has
    tcmalloc (same allocator, same bits; tests/e2e/test_fairseq.py). fairseq's
    processes get tcmalloc preloaded where it is installed (Debian's ``libtcmalloc-minimal4``, conda's
    ``gperftools``; ``make setup`` installs it), glibc's allocator otherwise, or with
    ``NLP_ROBUSTNESS_MALLOC=system`` (``=tcmalloc`` makes a missing tcmalloc an error). Only fairseq's own processes: some Apertium programs free
    pointers tcmalloc did not hand out and abort under it.
"""

from __future__ import annotations

import ctypes.util
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from nlp_robustness.errors import InputError

__all__ = [
    "CPU_KERNELS", "DEVICES", "FairseqError", "capability_warning", "check_device", "cpu_capability", "environment_record",
    "fairseq_environment", "option_arguments", "resolve_device", "run_fairseq", "run_fairseq_generate_many", "tcmalloc_library",
]

#: The environment variable that, set to ``system``, keeps glibc's allocator in fairseq's processes.
MALLOC_SWITCH = "NLP_ROBUSTNESS_MALLOC"
#: tcmalloc without its heap profiler (Debian ``libtcmalloc-minimal4``, conda-forge ``gperftools``).
TCMALLOC_NAME = "libtcmalloc_minimal.so.4"

#: The CPU code paths every fairseq process runs at (module docstring): AVX2, a level every supported machine has.
CPU_KERNELS: dict[str, str] = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}

#: Values of the config key ``device``.
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")


class FairseqError(RuntimeError):
    """A fairseq command failed or returned output that does not align with its input."""


def check_device(requested: str) -> None:
    """Raise InputError unless ``requested`` is a value of the config key ``device``."""
    if requested not in DEVICES:
        raise InputError(f"device must be one of {', '.join(DEVICES)}, not {requested!r}")


def resolve_device(requested: str) -> str:
    """``"cpu"`` or ``"cuda"`` for the config value ``auto`` / ``cpu`` / ``cuda``.

    Raises:
        InputError: ``cuda`` was asked for and no GPU is visible.
    """
    check_device(requested)
    if requested == "cpu":
        return "cpu"
    import torch

    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise InputError("config asks for device 'cuda' but torch sees no GPU on this machine")
    return "cuda" if available else "cpu"


def tcmalloc_library(prefix: str | os.PathLike[str] = sys.prefix) -> str | None:
    """Where tcmalloc is: in the environment's own ``lib`` (a conda env), else as the dynamic linker finds
    it (a system package); None when it is not installed."""
    beside = Path(prefix) / "lib" / TCMALLOC_NAME
    if beside.is_file():
        return str(beside)
    found = ctypes.util.find_library("tcmalloc_minimal")
    return found if found == TCMALLOC_NAME else None  # the soname the linker resolves, never another major version


def fairseq_environment(
    cpu_threads: int, base: Mapping[str, str] | None = None, tcmalloc: str | None = None, *, pin_cpu_kernels: bool = True
) -> dict[str, str]:
    """Environment for fairseq's commands: fixed threads and CPU code paths, unpickling of self-made checkpoints,
    tcmalloc preloaded (see the module docstring).

    fairseq 0.12 checkpoints hold argparse/omegaconf objects, which torch >= 2.6 refuses to unpickle
    by default (``weights_only``); ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` restores the old behaviour.
    Only checkpoints this workflow made or verified by checksum are loaded.

    Args:
        base: The environment to start from (default: this process's).
        tcmalloc: The library to preload (default: :func:`tcmalloc_library`); nothing is preloaded when none
            is found or ``NLP_ROBUSTNESS_MALLOC=system`` is set in ``base``.
        pin_cpu_kernels: False leaves the CPU code paths to ``base`` (where it sets none, to the machine: its best
            level, MKL in its reproducible mode on its ``AUTO`` branch, as before issue 54): for the benchmark and the
            tests that show what pinning changes; the workflow always pins.

    Raises:
        InputError: ``NLP_ROBUSTNESS_MALLOC`` is neither ``system`` nor ``tcmalloc``, or is ``tcmalloc`` and
            none is found.
    """
    environment = dict(os.environ if base is None else base)
    if environment.get(MALLOC_SWITCH, "") not in ("", "system", "tcmalloc"):
        raise InputError(f"{MALLOC_SWITCH} must be 'system' or 'tcmalloc', not {environment[MALLOC_SWITCH]!r}")
    library = None if environment.get(MALLOC_SWITCH) == "system" else tcmalloc or tcmalloc_library()
    if library is None and environment.get(MALLOC_SWITCH) == "tcmalloc":
        # asked for by name: glibc instead could change training's last bits without a word
        raise InputError(f"{MALLOC_SWITCH}=tcmalloc, but {TCMALLOC_NAME} is not installed "
                         "(make setup installs Debian's libtcmalloc-minimal4; a conda env, gperftools)")
    if library is not None and library not in environment.get("LD_PRELOAD", "").split():
        environment["LD_PRELOAD"] = " ".join(filter(None, [environment.get("LD_PRELOAD", ""), library]))
        # tcmalloc reports every allocation over 1 GB on stderr; fairseq's output is parsed and logged
        environment.setdefault("TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD", str(1 << 40))
    threads = str(cpu_threads)
    environment.update(
        TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1",
        OMP_NUM_THREADS=threads,
        MKL_NUM_THREADS=threads,
        # MKL may drop threads at run time, and a different thread count sums in a different order
        MKL_DYNAMIC="FALSE",
        OMP_DYNAMIC="FALSE",
        PYTHONHASHSEED="0",
    )
    if pin_cpu_kernels:
        environment.update(CPU_KERNELS)  # over the caller's: the same bits on every machine (module docstring)
    else:
        environment.setdefault("MKL_CBWR", "AUTO,STRICT")
    return environment


def cpu_capability(environment: Mapping[str, str]) -> str:
    """The level torch runs its CPU kernels at in ``environment`` (``AVX2``, ``AVX512``, ``DEFAULT``...), asked of
    a Python process started with it (torch reads ``ATEN_CPU_CAPABILITY`` once, at its start).

    Raises:
        FairseqError: torch could not be imported there.
    """
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        capture_output=True, text=True, env=dict(environment), check=False,
    )
    if probe.returncode != 0:
        raise FairseqError(f"could not ask torch for its CPU capability:\n{probe.stderr[-2000:]}")
    return probe.stdout.strip().splitlines()[-1]


def environment_record(environment: Mapping[str, str], capability: str) -> dict[str, Any]:
    """What of fairseq's environment can change its last bits, for ``training.json`` and translation reports:
    the allocator and the CPU code paths (the pins and ``capability``, the level torch ran at)."""
    pinned = {name: environment[name] for name in CPU_KERNELS if name in environment}
    return {
        "allocator": "tcmalloc" if "tcmalloc" in environment.get("LD_PRELOAD", "") else "glibc",
        "cpu_kernels": {**pinned, "torch_cpu_capability": capability},
    }


def capability_warning(capability: str, environment: Mapping[str, str]) -> str | None:
    """A line for the log when torch ran below the pinned level (a machine without AVX2): its bits differ from
    the docs' digests. None when it ran at the pinned level or nothing was pinned."""
    asked = environment.get("ATEN_CPU_CAPABILITY")
    if asked is None or capability.lower() == asked:
        return None
    return (f"warning: torch ran its CPU kernels at {capability}, not the pinned {asked.upper()} (this processor lacks it): "
            "weights and translations may differ in the last bits from other machines' (docs/reliability.md)")


def _fairseq_executable(name: str) -> str:
    """The fairseq command ``name`` beside the running interpreter (a venv), else on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise InputError(f"{name} not found: install fairseq (`make setup`; see docs/systems.md)")
    return found


def run_fairseq(command: str, arguments: Sequence[str], log: io.TextIOBase | None, environment: Mapping[str, str]) -> str:
    """Run a fairseq CLI command, streaming its output into ``log`` as it comes, and return that output.

    Raises:
        FairseqError: Non-zero exit; the message carries the last lines of fairseq's output.
    """
    return _run_logged(command, [_fairseq_executable(command), *map(str, arguments)], log, environment)


def run_fairseq_generate_many(
    runs: Sequence[Sequence[Any]],
    device: str,
    workdir: str | os.PathLike[str],
    log: io.TextIOBase | None,
    environment: Mapping[str, str],
) -> tuple[list[str], str, str]:
    """Run ``fairseq-generate`` once per argument list, all in one process
    (:mod:`~nlp_robustness.systems.fairseq.generate_many`: one start-up); each run's output, the device, and the
    level torch ran its CPU kernels at (:func:`cpu_capability`).

    Every run is the run ``fairseq-generate`` would do alone with those arguments (plus ``--cpu`` on the
    CPU); it writes its hypotheses into its own folder under ``workdir``.

    Args:
        device: The config value (``auto`` / ``cpu`` / ``cuda``), resolved in that process
            (:func:`resolve_device`).

    Raises:
        FairseqError: Non-zero exit (``cuda`` asked for and no GPU seen, too); the message carries the last
            lines of the output.
    """
    check_device(device)  # before a process starts
    folders = [Path(workdir) / f"run-{index}" for index in range(len(runs))]
    arguments = [[*map(str, run), "--results-path", str(folder)] for run, folder in zip(runs, folders)]
    runs_file = Path(workdir) / "runs.json"
    runs_file.write_text(json.dumps({"device": device, "runs": arguments}), encoding="utf-8")
    command = [sys.executable, "-m", "nlp_robustness.systems.fairseq.generate_many", str(runs_file)]
    if log is not None:
        log.write(f"fairseq-generate, {len(runs)} run(s) in one process:\n")
    _run_logged("fairseq-generate", command, log, environment)
    runtime = json.loads(runs_file.with_name("runtime.json").read_text(encoding="utf-8"))
    outputs = []
    for folder in folders:
        written = sorted(folder.glob("generate-*.txt"))
        if len(written) != 1:
            raise FairseqError(f"fairseq-generate wrote {len(written)} result files into {folder}, expected one")
        outputs.append(written[0].read_text(encoding="utf-8"))
    return outputs, runtime["device"], runtime["cpu_capability"]


def _run_logged(name: str, command: Sequence[str], log: io.TextIOBase | None, environment: Mapping[str, str]) -> str:
    """Run ``command``, streaming its output (but not every hypothesis) into ``log``; return the whole output."""
    if log is not None:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
    lines: list[str] = []
    with subprocess.Popen(
        list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8", env=dict(environment)
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if log is not None and not line.startswith(("S-", "T-", "H-", "D-", "P-")):
                log.write(line)  # progress and losses, live; not every hypothesis
                log.flush()
    if process.returncode != 0:
        tail = "".join(lines[-15:]).rstrip()
        raise FairseqError(f"{name} failed with exit status {process.returncode}:\n{tail}")
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
