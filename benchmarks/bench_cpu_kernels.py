"""Benchmark what pinning the CPU code paths costs in training time: the default ConvS2S pinned against the machine's best.

Issue 54 pins torch's, MKL's and oneDNN's CPU kernels to the AVX2 level (``CPU_KERNELS`` in
nlp_robustness.systems.fairseq.runtime) so that a training gives the same weights on any x86-64 machine. On a
processor with AVX-512 that can cost speed. This script trains the default model's architecture (config.yaml's
``convs2s-tatoeba``: its ``train_args``, seed and thread count) for ``--epochs`` epochs on the data-bin that
`make run` prepared, alternately pinned and left to the machine (its best level; MKL in its reproducible mode on
its ``AUTO`` branch, as before issue 54), ``--repeats`` times each, through the workflow's own
``train_model``; it prints every training's seconds and weights digest, and the ratio of the medians
(pinned / machine's best: above 1 is the cost of pinning).

    .venv/bin/python benchmarks/bench_cpu_kernels.py [--epochs N] [--repeats N] [--model-dir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

from nlp_robustness.systems.fairseq.runtime import CPU_KERNELS
from nlp_robustness.systems.fairseq.training import TrainingOptions, train_model

REPOSITORY = Path(__file__).resolve().parent.parent


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, default=REPOSITORY / "results/models/convs2s-tatoeba",
                        help="an in-house model directory written by the workflow (its data-bin is trained on)")
    parser.add_argument("--system", default="convs2s-tatoeba", help="system of config.yaml whose training settings are used")
    parser.add_argument("--epochs", type=int, default=1, help="epochs per training (default 1)")
    parser.add_argument("--repeats", type=int, default=2, help="trainings per setting, alternating (default 2)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    data_bin = arguments.model_dir / "data-bin"
    if not data_bin.is_dir():
        print(f"{data_bin} not found: `make run` trains the default model and writes it", file=sys.stderr)
        return 2
    spec = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))["systems"][arguments.system]
    training = spec["training"]
    options = TrainingOptions(arch=training["arch"], train_args=training["train_args"], seed=training["seed"],
                              max_epoch=arguments.epochs, patience=arguments.epochs)
    pins = ", ".join(f"{name}={value}" for name, value in CPU_KERNELS.items())
    print(f"{arguments.system}: {arguments.epochs} epoch(s) on {data_bin}, {spec['cpu_threads']} threads; pinned: {pins}")
    seconds: dict[bool, list[float]] = {True: [], False: []}
    scratch = Path(tempfile.mkdtemp(prefix="bench-cpu-kernels-"))
    try:
        for repeat in range(arguments.repeats):
            for pinned in (True, False):  # alternating, so that a slower spell of the machine hits both
                save_dir = scratch / f"{'pinned' if pinned else 'best'}-{repeat}"
                record = train_model(data_bin, save_dir, options, device="cpu", cpu_threads=spec["cpu_threads"],
                                     pin_cpu_kernels=pinned)
                seconds[pinned].append(record["seconds"])
                level = record["cpu_kernels"]["torch_cpu_capability"]
                print(f"  {'pinned' if pinned else 'machine'} ({level}): {record['seconds']:.1f} s, "
                      f"weights {record['weights_sha256'][:16]}", flush=True)
                shutil.rmtree(save_dir)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    pinned, best = statistics.median(seconds[True]), statistics.median(seconds[False])
    print(f"median training time: pinned {pinned:.1f} s, machine's best {best:.1f} s; ratio pinned / best = {pinned / best:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
