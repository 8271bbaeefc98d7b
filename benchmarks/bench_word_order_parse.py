"""Benchmark parsing a sample once for all 16 word-order functions against parsing it again for each function.

It takes the first --segments English sources of a test set of the offline mirror (default 200 of
WMT'14 newstest2014, read through the workflow's own readers) and times, with the workflow's code
(nlp_robustness.perturbations.parse and .word_order, default settings, one seeded generator):

* parse once -- load the spaCy model and parse the sample (parse_texts), then apply all 16 functions
  to the parsed segments;
* parse once, cached -- the same, plus writing the parse table once and reading it back before each
  function (what the workflow's per-function jobs do);
* parse per function -- for each of the 16 functions, load the model and parse the sample again, then
  apply that function (what a workflow without a parse cache would do).

Each total is printed as a ratio to the parse-once total; each is the best of --repeats runs. No time
is asserted; exit status 1 if the strategies' outcomes differ.

    .venv/bin/python benchmarks/bench_word_order_parse.py [--segments N] [--testset KEY] [--model NAME]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from timing import best_time
import spacy

from nlp_robustness.data.acquisition import plan_dataset, read_dataset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.perturbations.base import Perturbed
from nlp_robustness.perturbations.parse import ParsedSegment, read_parse_table, write_parse_table
from nlp_robustness.perturbations.spacy_parsing import parse_texts
from nlp_robustness.perturbations.word_order import FUNCTIONS, OPTIONS_SCHEMA, perturb, settings_with_defaults

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = OPTIONS_SCHEMA["properties"]["source_model"]["default"]
DEFAULT_BATCH = OPTIONS_SCHEMA["properties"]["batch_size"]["default"]



def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=200, help="sources parsed (default 200)")
    parser.add_argument("--testset", default="wmt14-newstest2014-enfr", help="manifest dataset (default wmt14-newstest2014-enfr)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"spaCy model (default {DEFAULT_MODEL})")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH, help=f"texts per spaCy batch (default {DEFAULT_BATCH})")
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data")),
                        help="offline data mirror (default ../shared/data beside the repository)")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per measurement, best kept (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random functions (default 0)")
    return parser.parse_args(argv)


def apply(function: str, segments: list[ParsedSegment], seed: int) -> int:
    """Perturb every segment with ``function``; the number perturbed (the rest are skipped)."""
    function_settings = settings_with_defaults(function)
    rng = np.random.default_rng(seed)
    return sum(isinstance(perturb(function, segment, function_settings, rng), Perturbed) for segment in segments)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    manifest = load_manifest(REPOSITORY / "resources" / "datasets.yaml", REPOSITORY / "schemas" / "datasets.schema.yaml")
    table = read_dataset(plan_dataset(manifest.datasets[arguments.testset], manifest, arguments.mirror, "unused"))
    table = table.head(arguments.segments)
    ids, texts = table["segment_id"].tolist(), table["source"].tolist()
    parse = lambda: parse_texts(ids, texts, arguments.model, arguments.batch_size)[0]  # noqa: E731
    repeats, seed = arguments.repeats, arguments.seed

    def parse_once() -> dict[str, int]:
        segments = parse()
        return {function: apply(function, segments, seed) for function in FUNCTIONS}

    def parse_once_cached(directory: Path) -> dict[str, int]:
        write_parse_table(parse(), directory / "parse.tsv")
        perturbed = {}
        for function in FUNCTIONS:
            cached = read_parse_table(directory / "parse.tsv")
            perturbed[function] = apply(function, [cached.get(i, ParsedSegment(i, ())) for i in ids], seed)
        return perturbed

    def parse_per_function() -> dict[str, int]:
        return {function: apply(function, parse(), seed) for function in FUNCTIONS}

    parse_once()  # warm-up: the first load of a spaCy model reads its files from disk
    once_seconds, once = best_time(parse_once, repeats)
    with tempfile.TemporaryDirectory() as directory:
        cached_seconds, cached = best_time(lambda: parse_once_cached(Path(directory)), repeats)
    per_function_seconds, per_function = best_time(parse_per_function, repeats)
    parse_seconds, segments = best_time(parse, repeats)
    if not once == cached == per_function:  # same parse, same seeds: the same outcomes
        print("error: the three strategies perturbed different numbers of segments", file=sys.stderr)
        return 1

    tokens = sum(len(segment.tokens) for segment in segments)
    print(f"sample: first {len(ids)} sources of {arguments.testset} ({tokens:,} tokens); model {arguments.model}, "
          f"batch {arguments.batch_size}; spaCy {spacy.__version__}, {os.cpu_count()} CPUs, best of {max(repeats, 1)}")
    print(f"one parse (load + parse): {parse_seconds:.2f} s; perturbed by the 16 functions: {sum(once.values()):,} "
          f"of {16 * len(ids):,}")
    print()
    print(f"{'strategy':<44}{'seconds':>10}{'ratio':>8}")
    for label, seconds in (("parse once, 16 functions", once_seconds),
                           ("parse once, cached TSV read per function", cached_seconds),
                           ("parse per function (16 parses)", per_function_seconds)):
        print(f"{label:<44}{seconds:>10.2f}{seconds / once_seconds:>8.2f}")
    print("(ratios: to parsing once)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
