"""Benchmark a family's translation job: several small test sets through one fairseq start-up against one
``fairseq-generate`` process per set, both in one run, with the demo ConvS2S that `make run` trains.

A perturbation family's job translates its perturbed test sets (16 word-order sets of about 90 segments in
the default run) each in its own ``fairseq-generate`` run. `nlp_robustness.systems.fairseq.translate.
translate_segment_lists` runs them all in one process (``one_process=True``, what the workflow does) or
starts the ``fairseq-generate`` command once per set (``one_process=False``, what it did before): the
translations must be identical, and the ratio of the two wall times is printed.

    .venv/bin/python benchmarks/bench_family_translation.py [--sets 16] [--segments 25] [--model-dir DIR] [--testset TSV]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from bench_fairseq_throughput import inhouse_bundle
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.systems.fairseq.generate import GenerationOptions
from nlp_robustness.systems.fairseq.translate import translate_segment_lists

REPOSITORY = Path(__file__).resolve().parent.parent


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, default=REPOSITORY / "results/models/convs2s-tatoeba",
                        help="an in-house model directory written by the workflow")
    parser.add_argument("--testset", type=Path, default=REPOSITORY / "results/testsets/wmt14.tsv",
                        help="a test-set table written by the workflow (its segments are cut into the sets)")
    parser.add_argument("--sets", type=int, default=16, help="test sets in the job (default 16, the word-order family)")
    parser.add_argument("--segments", type=int, default=25, help="segments per set (default 25)")
    parser.add_argument("--cpu-threads", type=int, default=2, help="torch threads (default 2, as config.yaml)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    options = GenerationOptions(**config["systems"]["convs2s-tatoeba"].get("generation", {}))
    bundle = inhouse_bundle(arguments.model_dir)
    table = read_table(arguments.testset, ["source", "reference"], "test set")
    size = arguments.segments
    lists = [(table["source"].tolist()[index * size:(index + 1) * size], table["reference"].tolist()[index * size:(index + 1) * size])
             for index in range(arguments.sets)]
    timings, outputs = {}, {}
    for one_process in (False, True):
        with tempfile.TemporaryDirectory() as workdir:
            start = time.perf_counter()
            results = translate_segment_lists(lists, bundle, options, workdir, device="cpu", cpu_threads=arguments.cpu_threads,
                                              one_process=one_process)
            timings[one_process] = time.perf_counter() - start
        outputs[one_process] = [translations for translations, _ in results]
    identical = outputs[True] == outputs[False]
    print(f"{arguments.sets} sets of {size} segments of {arguments.testset.name}, {arguments.cpu_threads} CPU threads")
    print(f"{'path':<44} {'seconds':>8} {'ratio':>7}")
    print(f"{'one fairseq-generate process per set (old)':<44} {timings[False]:>8.1f} {1.0:>7.2f}")
    print(f"{'every set in one process (new)':<44} {timings[True]:>8.1f} {timings[False] / timings[True]:>7.2f}")
    print(f"translations identical: {identical}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
