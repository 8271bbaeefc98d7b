"""Benchmark the paraphrase family's Apertium round trips: every text as in a run of its own, one ``apertium``
run per text and stage (the old path, the definition) against ``translate_each_alone`` (the workflow's path:
the tagger and the format filters per text, the rest of each mode once over all texts in null-flush mode).

The round trips must be identical text for text; the ratio of the two wall times is printed, measured in one
run. The texts are newstest2014 sources from the mirror (and, with ``--reviews``, Amazon reviews).

    .venv/bin/python benchmarks/bench_round_trips.py [--texts 40] [--modes en-gl,gl-en] [--start 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from nlp_robustness.systems.apertium import translate_with_apertium
from nlp_robustness.systems.apertium_round_trips import translate_each_alone

REPOSITORY = Path(__file__).resolve().parent.parent
MIRROR = Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data"))


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=40, help="newstest2014 sources to round-trip (default 40)")
    parser.add_argument("--start", type=int, default=0, help="first line of newstest2014.en (0-based, default 0)")
    parser.add_argument("--modes", default="en-gl,gl-en", help="the chain, comma-separated (default en-gl,gl-en)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    path = MIRROR / "opus-mt-testsets-enfr" / "testsets" / "en-fr" / "newstest2014.en"
    if not path.is_file():
        print(f"newstest2014.en not found at {path} (set NLP_ROBUSTNESS_MIRROR)", file=sys.stderr)
        return 2
    texts = path.read_text(encoding="utf-8").splitlines()[arguments.start:arguments.start + arguments.texts]
    modes = arguments.modes.split(",")
    start = time.perf_counter()
    alone = [translate_with_apertium([text], modes)[0][0] for text in texts]
    old_seconds = time.perf_counter() - start
    start = time.perf_counter()
    each, report = translate_each_alone(texts, modes)
    new_seconds = time.perf_counter() - start
    batch, _ = translate_with_apertium(texts, modes)
    print(f"{len(texts)} newstest2014 sources through {'|'.join(modes)}")
    print(f"  one run per text and stage: {old_seconds:7.2f} s")
    print(f"  translate_each_alone:       {new_seconds:7.2f} s   ({report.processes} processes)")
    print(f"  ratio (old / new):          {old_seconds / new_seconds:7.1f}")
    print(f"  identical to runs of their own: {each == alone}"
          f" (a plain batch differs on {sum(a != b for a, b in zip(alone, batch))} of {len(texts)})")
    return 0 if each == alone else 1


if __name__ == "__main__":
    sys.exit(main())
