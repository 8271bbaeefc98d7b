"""Benchmark translation throughput (sentences/s) of the demo ConvS2S on the CPU, and on a GPU if one is seen.

It translates the first --segments segments of a test-set table with the in-house model that
`make run` trains (results/models/convs2s-tatoeba), through the workflow's own code path
(nlp_robustness.systems.fairseq.translate.translate_segments: Moses + BPE, fairseq-preprocess, batched
fairseq-generate, detokenization), with the beam search settings of config.yaml. Two
throughputs are printed per device:

* end to end -- segments / wall time of the whole call (what a translate_fairseq job costs; it
  includes starting fairseq twice and loading the model);
* generation -- what fairseq-generate reports for beam search alone ("Translated N sentences ... in S s").

The baseline is the CPU run; the GPU run (when torch sees a GPU) is printed as a ratio to it, and the
Apertium en-es-fr chain (when installed) is timed on the same segments for reference. Each device is
timed --repeats times and the best run is kept.

    .venv/bin/python benchmarks/bench_fairseq_throughput.py [--segments N] [--model-dir DIR] [--testset TSV]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

from nlp_robustness.systems.fairseq.checkpoints import ModelBundle
from nlp_robustness.systems.fairseq.generate import GenerationOptions
from nlp_robustness.systems.fairseq.translate import translate_segments
from nlp_robustness.fileio.text_files import read_table

REPOSITORY = Path(__file__).resolve().parent.parent
_GENERATION_SPEED = re.compile(r"Translated ([\d,]+) sentences \(([\d,]+) tokens\) in ([\d.]+)s")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, default=REPOSITORY / "results/models/convs2s-tatoeba",
                        help="an in-house model directory written by the workflow")
    parser.add_argument("--testset", type=Path, default=REPOSITORY / "results/testsets/wmt14.tsv",
                        help="a test-set table written by the workflow")
    parser.add_argument("--segments", type=int, default=1000, help="segments translated (default 1000)")
    parser.add_argument("--system", default="convs2s-tatoeba", help="system of config.yaml whose generation settings are used")
    parser.add_argument("--cpu-threads", type=int, default=2, help="torch threads of the CPU run (default 2)")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per device, best kept (default 2)")
    parser.add_argument("--no-cpu", action="store_true", help="time the GPU only (still the baseline when given alone)")
    return parser.parse_args(argv)


def inhouse_bundle(model_dir: Path) -> ModelBundle:
    """The files of an in-house model directory the workflow wrote."""
    return ModelBundle(
        checkpoint=str(model_dir / "checkpoint_best.pt"),
        source_dictionary=str(model_dir / "data-bin/dict.en.txt"),
        target_dictionary=str(model_dir / "data-bin/dict.fr.txt"),
        bpe_codes=str(model_dir / "bpecodes"),
    )


def time_device(bundle: ModelBundle, options: GenerationOptions, sources: list[str], references: list[str],
                device: str, cpu_threads: int, repeats: int) -> tuple[float, float]:
    """Best (end-to-end, generation-only) sentences/s of ``repeats`` runs on ``device``."""
    best_total, best_generation = 0.0, 0.0
    for _ in range(max(repeats, 1)):
        with tempfile.TemporaryDirectory() as workdir, open(Path(workdir) / "log", "w+", encoding="utf-8") as log:
            start = time.perf_counter()
            translations, report = translate_segments(
                sources, references, bundle, options, Path(workdir) / "scratch", device=device, cpu_threads=cpu_threads, log=log
            )
            elapsed = time.perf_counter() - start
            log.seek(0)
            match = _GENERATION_SPEED.search(log.read())
        assert len(translations) == len(sources) and report.translated == len(sources) - report.empty_sources
        best_total = max(best_total, len(sources) / elapsed)
        if match is not None:
            best_generation = max(best_generation, int(match.group(1).replace(",", "")) / float(match.group(3)))
    return best_total, best_generation


def time_apertium(sources: list[str]) -> float | None:
    if shutil.which("apertium") is None:
        return None
    from nlp_robustness.systems.apertium import translate_with_apertium

    start = time.perf_counter()
    translate_with_apertium(sources, ["eng-spa", "es-fr"])
    return len(sources) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    import torch

    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    options = GenerationOptions(**config["systems"][arguments.system].get("generation", {}))
    model_dir = arguments.model_dir
    bundle = inhouse_bundle(model_dir)
    description = bundle.check()
    table = read_table(arguments.testset, ["source", "reference"], "test set")[: arguments.segments]
    sources, references = table["source"].tolist(), table["reference"].tolist()
    print(f"model: {model_dir} ({description['arch']}, {description['parameters']:,} parameters)")
    print(f"segments: {len(sources)} of {arguments.testset}; beam {options.beam}, batch {options.batch_size}, "
          f"max length {options.max_len_a} x source + {options.max_len_b}")

    results: dict[str, tuple[float, float]] = {}
    if not arguments.no_cpu:
        results["cpu"] = time_device(bundle, options, sources, references, "cpu", arguments.cpu_threads, arguments.repeats)
    if torch.cuda.is_available():
        results["cuda"] = time_device(bundle, options, sources, references, "cuda", arguments.cpu_threads, arguments.repeats)
        gpu_name = torch.cuda.get_device_name(0)
    else:
        gpu_name = None
        print("GPU: torch sees none; the GPU run is skipped")
    baseline_device = "cpu" if "cpu" in results else "cuda"
    baseline_total, baseline_generation = results[baseline_device]
    print(f"{'device':<34} {'end to end (sent/s)':>20} {'ratio':>7} {'generation (sent/s)':>20} {'ratio':>7}")
    for device, (total, generation) in results.items():
        label = f"cpu ({arguments.cpu_threads} threads)" if device == "cpu" else f"cuda ({gpu_name})"
        print(f"{label:<34} {total:>20.1f} {total / baseline_total:>7.2f} {generation:>20.1f} "
              f"{(generation / baseline_generation if baseline_generation else float('nan')):>7.2f}")
    apertium = time_apertium(sources)
    if apertium is not None:
        print(f"{'apertium eng-spa | es-fr':<34} {apertium:>20.1f} {apertium / baseline_total:>7.2f}")
    print(f"(ratios: to the {baseline_device} run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
