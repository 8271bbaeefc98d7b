"""Train the tests' tiny ConvS2S twice per round, ROUNDS rounds, with busy loops beside it; compare the weights.

The probe of issue 39 (same config, same weights, under load). Two trainings of a round use one data-bin, one seed,
two threads and the allocator the workflow preloads; a round passes when every tensor and the recorded
``weights_sha256`` are equal, and every round is compared with the first too. Busy loops (``--busy``) load the cores
as a busy CI machine does; they are stopped when the rounds end.

    .venv/bin/python -m tests.tools.training_rounds DATA_BIN --rounds 20 --busy 1

DATA_BIN is an in-house model's ``data-bin`` (the e2e fixture ``inhouse_run`` of tests/e2e/test_fairseq.py makes one:
``results/models/<system>/data-bin`` of its run). Prints one line per round and a summary; exits 1 if a round failed.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
from pathlib import Path


def _busy() -> None:
    while True:
        pass


def main(arguments: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_bin", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--busy", type=int, default=1, help="busy loops beside the trainings")
    parser.add_argument("--threads", type=int, default=2)
    options = parser.parse_args(arguments)

    import torch

    from nlp_robustness.systems.fairseq.training import TrainingOptions, train_model
    from tests.e2e.test_fairseq import TINY_TRAINING

    training = TrainingOptions(arch="fconv", train_args={**TINY_TRAINING["train_args"]}, seed=1, max_epoch=1, patience=1)
    loops = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(options.busy)]
    for loop in loops:
        loop.start()
    passed, seconds, first_digest = 0, [], None
    scratch = Path(tempfile.mkdtemp(prefix="training-rounds-"))
    try:
        for round_number in range(options.rounds):
            states, digests = [], []
            for run in ("first", "second"):
                shutil.rmtree(scratch / run, ignore_errors=True)
                record = train_model(options.data_bin, scratch / run, training, device="cpu", cpu_threads=options.threads)
                seconds.append(record["seconds"])
                digests.append(record["weights_sha256"])
                states.append(torch.load(scratch / run / "checkpoint_best.pt", map_location="cpu", weights_only=False)["model"])
            differing = [name for name in states[0] if not torch.equal(states[0][name], states[1][name])]
            largest = max(((states[0][name] - states[1][name]).abs().max().item() for name in differing), default=0.0)
            first_digest = first_digest or digests[0]
            ok = not differing and digests[0] == digests[1] == first_digest
            passed += ok
            print(f"round {round_number + 1}: {'pass' if ok else 'FAIL'}, {len(differing)} of {len(states[0])} tensors differ "
                  f"(largest {largest:.1e}), digests {digests[0][:12]} {digests[1][:12]}, "
                  f"{seconds[-2]:.1f} s and {seconds[-1]:.1f} s", flush=True)
    finally:
        for loop in loops:
            loop.terminate()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{passed} of {options.rounds} rounds passed under {options.busy} busy loop(s); a training took "
          f"{sum(seconds) / len(seconds):.1f} s on average ({min(seconds):.1f} to {max(seconds):.1f} s)")
    return 0 if passed == options.rounds else 1


if __name__ == "__main__":
    sys.exit(main())
