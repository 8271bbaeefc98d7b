"""Benchmark the throughput of the five character attacks (and visual with VIPER neighbours and Unicode confusables).

It takes the first --segments references of a WMT'19 to-English test set of the offline mirror (default
1000 of lt-en), loads the Zeroe resources once, and times, with the workflow's code
(nlp_robustness.perturbations.character_attacks, default settings, one seeded generator per segment):

* loading -- the first use of each resource in a fresh context (en.key, the VIPER embeddings, the CMU
  dictionary, confusable_homoglyphs) together with the first pass over the sample, which also computes
  the neighbours of every character met;
* attacking -- a pass over the sample at level --level (default 0.3) with the resources loaded.

Each attack's warm pass is printed as segments and characters per second and as a ratio to the fastest
attack, beside the achieved rate (changed / eligible units: words, or letters for visual; changed
characters / characters).
Timings are the best of --repeats runs; no time is asserted.

    .venv/bin/python benchmarks/bench_character_attacks.py [--segments N] [--level P] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from timing import best_time

from nlp_robustness.perturbations._attack_resources import AttackResources, load_context
from nlp_robustness.perturbations.character_attacks import (
    RESOURCES,
    attack_rate,
    attack_text,
    unit_rate as measure_units,
)

REPOSITORY = Path(__file__).resolve().parent.parent
#: (label, attack, settings) timed, in the paper's order.
CASES = [("intrude", "intrude", {}), ("disemvowel", "disemvowel", {}), ("keyboard", "keyboard", {}),
         ("phonetic", "phonetic", {}), ("visual (descriptions)", "visual", {}),
         ("visual (viper)", "visual", {"source": "viper"}),
         ("visual (confusables)", "visual", {"source": "confusables"})]


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=1000, help="references attacked (default 1000)")
    parser.add_argument("--pair", default="lten", help="WMT'19 to-English pair of the references (default lten)")
    parser.add_argument("--level", type=float, default=0.3, help="perturbation level p (default 0.3)")
    mirror = Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data"))
    parser.add_argument("--mirror", type=Path, default=mirror,
                        help="offline data mirror (default ../shared/data beside the repository)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per attack, best kept (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generators (default 0)")
    return parser.parse_args(argv)


def attack_all(attack: str, settings: dict, texts: list[str], level: float, seed: int,
               context: AttackResources) -> list[str]:
    return [attack_text(attack, text, level, settings, np.random.default_rng([seed, number]), context)
            for number, text in enumerate(texts)]


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    references = arguments.mirror / "wmt19-newstest2019-to-en" / "references" / f"newstest2019-{arguments.pair}-ref.en"
    texts = [line for line in references.read_text(encoding="utf-8").split("\n") if line][:arguments.segments]
    paths = {name: arguments.mirror / "zeroe-attack-resources" / file for name, file in RESOURCES.items()}
    characters = sum(len(text) - text.count(" ") for text in texts)
    level, seed, repeats = arguments.level, arguments.seed, arguments.repeats

    rows = []
    for label, attack, settings in CASES:
        start = time.perf_counter()
        context = load_context(paths)  # a fresh context: resources read on first use
        attack_all(attack, settings, texts, level, seed, context)
        cold = time.perf_counter() - start
        def run() -> list[str]:
            return attack_all(attack, settings, texts, level, seed, context)  # noqa: B023

        seconds, attacked = best_time(run, repeats)
        units = [measure_units(attack, text, result, context, settings) for text, result in zip(texts, attacked)]
        rates = [attack_rate(text, result) for text, result in zip(texts, attacked)]
        char_rate = sum(rate.characters_changed for rate in rates) / sum(rate.characters for rate in rates)
        rows.append((label, cold, seconds, sum(u.units_changed for u in units) / sum(u.units for u in units), char_rate))

    fastest = min(row[2] for row in rows)
    print(f"sample: first {len(texts)} references of newstest2019-{arguments.pair} ({characters:,} non-space characters); "
          f"p = {level:g}; {os.cpu_count()} CPUs; best of {max(repeats, 1)}")
    print()
    print(f"{'attack':<22}{'first pass s':>13}{'pass s':>9}{'segments/s':>12}{'chars/s':>12}{'ratio':>7}"
          f"{'unit rate':>11}{'char rate':>11}")
    for label, cold, seconds, unit_rate, char_rate in rows:
        print(f"{label:<22}{cold:>13.2f}{seconds:>9.3f}{len(texts) / seconds:>12,.0f}{characters / seconds:>12,.0f}"
              f"{seconds / fastest:>7.1f}{unit_rate:>11.3f}{char_rate:>11.3f}")
    print("(first pass: fresh resources, loading included; ratio: pass time to the fastest attack's; unit rate:\n"
          " changed / the attack's units (tokens; phonetic: words; visual: letters): p, rounded up per sentence, for tokens; char rate: Levenshtein changes / characters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
