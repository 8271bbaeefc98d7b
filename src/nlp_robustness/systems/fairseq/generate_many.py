"""Several ``fairseq-generate`` runs in one process: torch and fairseq start once.

Importing torch and fairseq takes about 5 s on a CPU, longer than translating a 100-segment test set, so
a job that translates several test sets runs them through this module instead of one ``fairseq-generate``
per set. Each run is the run ``fairseq-generate`` would do alone, byte for byte: the same arguments go
through the same code (``fairseq_cli.generate``: its parser, then ``main``), which loads the model and
reseeds numpy and torch from ``--seed`` at the start of every run, and every run has its own data
directory, so its batches are the ones it would have alone. Each run writes its hypotheses into its own
``--results-path`` folder (``generate-test.txt``); fairseq's progress lines go to standard error.

Run as ``python -m nlp_robustness.systems.fairseq.generate_many RUNS.json`` in fairseq's environment
(:func:`~nlp_robustness.systems.fairseq.runtime.fairseq_environment`), where ``RUNS.json`` holds the
requested ``device`` (``auto``, ``cpu`` or ``cuda``) and ``runs``, a list of argument lists, each ending in
``--results-path <folder>`` (:func:`~nlp_robustness.systems.fairseq.runtime.run_fairseq_generate_many` writes
it and reads the results). The device is resolved here, where torch is imported anyway (the job's own process
need not import it), and written with the level torch runs its CPU kernels at to ``runtime.json`` beside
``RUNS.json``.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path


def generate_runs(runs: list[list[str]], device: str = "cpu") -> None:
    """Run ``fairseq-generate`` once per argument list, in order, in this process (``--cpu`` added on the CPU)."""
    from fairseq import options
    from fairseq_cli.generate import main

    # fairseq_cli.generate binds logging to its first run's results file (logging.basicConfig); bound here
    # first, every run logs to standard error and its results file holds its own output only.
    logging.basicConfig(
        format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        level=logging.INFO,
        stream=sys.stderr,
    )
    for arguments in runs:
        parser = options.get_generation_parser()
        # as fairseq_cli.generate.cli_main does, so that the arguments parse alike
        parser.add_argument("--arch", "-a", metavar="ARCH", default="wav2vec2")
        main(options.parse_args_and_arch(parser, input_args=[*arguments, *(["--cpu"] if device == "cpu" else [])]))


def _main(runs_file: Path) -> None:
    from nlp_robustness.systems.fairseq.runtime import resolve_device

    spec = json.loads(runs_file.read_text(encoding="utf-8"))
    device = resolve_device(spec["device"])
    import torch

    runtime = {"device": device, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    runs_file.with_name("runtime.json").write_text(json.dumps(runtime), encoding="utf-8")
    generate_runs(spec["runs"], device)


if __name__ == "__main__":
    _main(Path(sys.argv[1]))
