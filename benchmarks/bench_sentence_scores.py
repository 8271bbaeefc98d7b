"""Benchmark exact sentence BLEU and chrF at scale: the bulk path against sacrebleu's per-sentence loop.

Real pairs from the offline mirror's WMT'22 General de-fr and fr-de files: every submitted system's output
against the reference, both directions (25,946 pairs, of which the distinct ones are used).

1. **Speed-up on one core**: the first --pairs distinct pairs scored by sacrebleu's loop (one
   ``BLEU(effective_order=True)`` / ``CHRF()`` object reused for every sentence, what ``sentence_scores``
   did before) and by :func:`~nlp_robustness.scoring.bulk_scores.sentence_bleu_many` /
   :func:`~nlp_robustness.scoring.bulk_scores.sentence_chrf_many` (``processes=1``); the scores are checked
   equal (``==``) and the ratio of the times printed (target: at least --ratio-target for each metric).
2. **Scale**: --scale distinct realistic pairs -- every hypothesis of every system paired with the reference
   of the segment ``offset`` places further on in its direction (cyclically), offsets 0, 1, 2, ... until
   enough distinct pairs -- scored with BLEU and chrF, ``processes=2``; the wall time of both together is held
   against --target seconds.

Timings are the best of --repeats runs (the loop: one run). Exit status 1 if a target is missed.

    .venv/bin/python benchmarks/bench_sentence_scores.py [--pairs N] [--scale N] [--target S] [--mirror DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from timing import best_time

from nlp_robustness.data.wmt_xml import read_wmt_xml
from nlp_robustness.scoring.bulk_scores import sentence_bleu_many, sentence_chrf_many

REPOSITORY = Path(__file__).resolve().parent.parent
DATASET = "wmt22-general-defr-frde"
DIRECTIONS = ("de-fr", "fr-de")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mirror = Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data"))
    parser.add_argument("--mirror", type=Path, default=mirror,
                        help="offline data mirror (default ../shared/data beside the repository)")
    parser.add_argument("--pairs", type=int, default=20_000, help="distinct pairs of the speed-up comparison")
    parser.add_argument("--scale", type=int, default=1_000_000, help="distinct pairs of the scale run (default 1M)")
    parser.add_argument("--processes", type=int, default=2, help="worker processes of the scale run (default 2)")
    parser.add_argument("--target", type=float, default=60.0, help="seconds allowed for BLEU + chrF at scale")
    parser.add_argument("--ratio-target", type=float, default=5.0, help="least speed-up over the loop, one core")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of the bulk path, best kept (default 3)")
    return parser.parse_args(argv)


def documents_by_direction(mirror: Path) -> dict[str, list[tuple[tuple[str, ...], list[tuple[str, ...]]]]]:
    """Per direction, per document: the reference and every system's hypotheses (all aligned)."""
    found: dict[str, list[tuple[tuple[str, ...], list[tuple[str, ...]]]]] = {}
    for direction in DIRECTIONS:
        parsed = read_wmt_xml(mirror / DATASET / "xml" / f"wmttest2022.{direction}.all.xml")
        found[direction] = [(document.reference, list(document.hypotheses.values())) for document in parsed.documents]
    return found


def offset_pairs(documents: dict, offset: int) -> list[tuple[str, str]]:
    """Every hypothesis with the reference ``offset`` segments further on in its direction (cyclically)."""
    pairs: list[tuple[str, str]] = []
    for direction_documents in documents.values():
        references = [segment for reference, _ in direction_documents for segment in reference]
        start = 0
        for reference, systems in direction_documents:
            for hypotheses in systems:
                for position, hypothesis in enumerate(hypotheses):
                    pairs.append((hypothesis, references[(start + position + offset) % len(references)]))
            start += len(reference)
    return pairs


def distinct_pairs(documents: dict, wanted: int) -> tuple[list[str], list[str], int]:
    """The first ``wanted`` distinct pairs over offsets 0, 1, ...; also the number of offsets used."""
    seen: dict[tuple[str, str], None] = {}
    offset = 0
    while len(seen) < wanted:
        seen.update(dict.fromkeys(offset_pairs(documents, offset)))
        offset += 1
    chosen = list(seen)[:wanted]
    return [hypothesis for hypothesis, _ in chosen], [reference for _, reference in chosen], offset


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes), user + system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def loop(metric, hypotheses: list[str], references: list[str]) -> np.ndarray:
    return np.array([metric.sentence_score(h, [r]).score for h, r in zip(hypotheses, references)], dtype=np.float64)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    documents = documents_by_direction(arguments.mirror)
    hypotheses, references = zip(*dict.fromkeys(offset_pairs(documents, 0)))  # the real pairs, distinct
    hypotheses, references = list(hypotheses)[: arguments.pairs], list(references)[: arguments.pairs]
    print(f"sacrebleu {sacrebleu.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs; "
          f"WMT'22 de-fr + fr-de, all systems vs the reference: {len(hypotheses):,} distinct pairs")
    print()
    ratios: dict[str, float] = {}
    print(f"{'metric':<8}{'sacrebleu loop s':>18}{'bulk s':>10}{'speed-up':>10}  equal")
    for name, metric, bulk in (
        ("BLEU", lambda: BLEU(effective_order=True), sentence_bleu_many),
        ("chrF", CHRF, sentence_chrf_many),
    ):
        loop_seconds, expected = best_time(lambda: loop(metric(), hypotheses, references), 1)
        bulk_seconds, scores = best_time(lambda: bulk(hypotheses, references), arguments.repeats)
        equal = bool(np.array_equal(scores, expected))
        ratios[name] = loop_seconds / bulk_seconds if equal else 0.0
        print(f"{name:<8}{loop_seconds:>18.2f}{bulk_seconds:>10.2f}{ratios[name]:>9.1f}x  {equal}")

    start = time.perf_counter()
    hypotheses, references, offsets = distinct_pairs(documents, arguments.scale)
    built = time.perf_counter() - start
    print()
    print(f"scale: {len(hypotheses):,} distinct pairs (offsets 0..{offsets - 1}, built in {built:.1f} s), "
          f"processes={arguments.processes}")
    timings = {}
    for name, bulk in (("BLEU", sentence_bleu_many), ("chrF", sentence_chrf_many)):
        cpu_before = cpu_seconds()
        start = time.perf_counter()
        scores = bulk(hypotheses, references, processes=arguments.processes)
        timings[name] = time.perf_counter() - start
        print(f"  {name}: {timings[name]:.1f} s wall, {cpu_seconds() - cpu_before:.1f} s CPU over all processes "
              f"(mean score {scores.mean():.2f})")
    total = sum(timings.values())
    print(f"  load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    passed_scale = total <= arguments.target
    passed_ratio = all(ratio >= arguments.ratio_target for ratio in ratios.values())
    print()
    print(f"speed-up on one core: BLEU {ratios['BLEU']:.1f}x, chrF {ratios['chrF']:.1f}x "
          f"(target {arguments.ratio_target:g}x): {'PASS' if passed_ratio else 'FAIL'}")
    print(f"BLEU + chrF of {len(hypotheses):,} pairs on {arguments.processes} processes: {total:.1f} s "
          f"(target {arguments.target:g} s): {'PASS' if passed_scale else 'FAIL'}")
    return 0 if passed_scale and passed_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
