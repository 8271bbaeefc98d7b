"""Benchmark BERTScore F1 at all MiniLM layers in one pass against one bert_score.score call per layer.

The sample is real WMT'19 lt-en data from the offline mirror: the outputs of two systems (default
online-A and online-B, 1,000 segments each) against the reference, 2,000 pairs. It times, on CPU (and
on cuda when torch sees a GPU):

* one pass -- nlp_robustness.scoring.bertscore.bertscore_f1: every unique sentence embedded once,
  F1 at hidden states 0..6 and on the mean of layers 1..6;
* bert_cos_score_idf -- bert-score's own single pass (``bert_cos_score_idf(all_layers=True)`` on the
  plain model: states 0..6, no mean), for comparison with this module's loop around the same functions;
* per layer -- ``bert_score.score(..., num_layers=k)`` for k = 0..6 (7 calls; each loads the model and
  runs k layers; the mean is not available this way).

A second table shows the effect of repeated sentences: the first --dedup-segments hypotheses of one
system scored against 4 versions of their references (as given, lowercased, last word dropped, first
two words swapped) against 4 different systems' hypotheses scored against the same 4 versions. Same
number of pairs, fewer unique sentences: the time follows the unique sentences.

Throughput is printed in pairs/s and unique sentences/s; ratios are to the one-pass time, measured in
the same run. Each time is the best of --repeats runs, after one warm-up call. No time is asserted;
exit status 1 if the one-pass F1 differs from bert_score.score's by more than 1e-5.

    .venv/bin/python benchmarks/bench_bertscore.py [--threads N] [--repeats N] [--skip-per-layer]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch
from timing import best_time

from nlp_robustness.scoring.bertscore import LAYER_COLUMNS, bertscore_f1, load_bertscore_model

REPOSITORY = Path(__file__).resolve().parent.parent
TESTSET = "wmt19-newstest2019-to-en"
SYSTEMS = ("online-A.0", "online-B.0", "online-G.0", "online-X.0")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data")),
                        help="offline data mirror (default ../shared/data beside the repository)")
    parser.add_argument("--systems", type=int, default=2, help="lt-en systems scored against the reference, 1,000 pairs each (default 2)")
    parser.add_argument("--dedup-segments", type=int, default=500, help="segments in the repeated-sentence comparison (default 500)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per forward pass (default 64, bert_score's)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per measurement, best kept (default 1)")
    parser.add_argument("--skip-per-layer", action="store_true", help="leave out the slow one-call-per-layer measurement")
    return parser.parse_args(argv)


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def versions(references: list[str]) -> list[list[str]]:
    """4 versions of the references: as given, lowercased, last word dropped, first two words swapped."""
    def swap(text: str) -> str:
        words = text.split()
        return " ".join(words[1:2] + words[:1] + words[2:])
    return [references, [r.lower() for r in references], [" ".join(r.split()[:-1]) for r in references], [swap(r) for r in references]]


def unique_sentences(hypotheses: list[str], references: list[str]) -> int:
    return len({text.strip() for text in hypotheses + references if text.strip()})


def bert_cos_score_idf_pass(hypotheses: list[str], references: list[str], model_dir: str, device: str, batch_size: int) -> np.ndarray:
    """bert-score's own single pass over all hidden states (no mean state); F1 (states, pairs), 0-1."""
    from bert_score.utils import bert_cos_score_idf, get_model

    encoder = get_model(model_dir, 6, all_layers=True).to(device)
    tokenizer = load_bertscore_model(device).tokenizer
    idf = defaultdict(lambda: 1.0, {tokenizer.sep_token_id: 0.0, tokenizer.cls_token_id: 0.0})
    scores = bert_cos_score_idf(encoder, references, hypotheses, tokenizer, idf, batch_size=batch_size, device=device, all_layers=True)
    return scores[..., 2].numpy()


def per_layer(hypotheses: list[str], references: list[str], model_dir: str, device: str, batch_size: int) -> np.ndarray:
    """One bert_score.score call per hidden state 0..6; F1 (states, pairs), 0-1."""
    import bert_score

    return np.stack([bert_score.score(hypotheses, references, model_type=model_dir, num_layers=layer, device=device,
                                      batch_size=batch_size)[2].numpy() for layer in range(len(LAYER_COLUMNS))])


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    if arguments.threads is not None:
        torch.set_num_threads(arguments.threads)
    data = arguments.mirror / TESTSET
    reference = read_lines(data / "references" / "newstest2019-lten-ref.en")
    outputs = {system: read_lines(data / "system-outputs" / "lt-en" / f"newstest2019.{system}.lt-en") for system in SYSTEMS}
    hypotheses = [line for system in SYSTEMS[: arguments.systems] for line in outputs[system]]
    references = reference * arguments.systems
    n, batch, repeats = len(hypotheses), arguments.batch_size, arguments.repeats
    unique = unique_sentences(hypotheses, references)
    devices = ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    print(f"sample: {n:,} lt-en pairs of {TESTSET} ({arguments.systems} systems x 1,000), {unique:,} unique sentences; "
          f"batch {batch}; torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs, best of {max(repeats, 1)}")
    status = 0
    for device in devices:
        model = load_bertscore_model(device)
        bertscore_f1(hypotheses[:64], references[:64], model, batch_size=batch)  # warm-up
        rows = []
        one_seconds, one = best_time(lambda: bertscore_f1(hypotheses, references, model, batch_size=batch), repeats)
        rows.append(("one pass, states 0-6 + mean (bertscore_f1)", one_seconds))
        package_seconds, package = best_time(lambda: bert_cos_score_idf_pass(hypotheses, references, model.path, device, batch), repeats)
        rows.append(("bert_cos_score_idf, states 0-6 (no mean)", package_seconds))
        if not arguments.skip_per_layer:
            layer_seconds, layers = best_time(lambda: per_layer(hypotheses, references, model.path, device, batch), repeats)
            rows.append(("bert_score.score per layer, 7 calls (no mean)", layer_seconds))
            difference = np.abs(one[list(LAYER_COLUMNS)].to_numpy().T / 100 - layers).max()
            print(f"\n[{device}] largest |one pass - bert_score.score| F1 difference: {difference:.2e} (0-1 scale)")
            status |= int(difference > 1e-5)
        difference = np.abs(one[list(LAYER_COLUMNS)].to_numpy().T / 100 - package).max()
        print(f"[{device}] largest |one pass - bert_cos_score_idf| F1 difference: {difference:.2e}")
        print(f"{'strategy':<48}{'seconds':>9}{'pairs/s':>9}{'unique/s':>10}{'ratio':>7}")
        for label, seconds in rows:
            print(f"{label:<48}{seconds:>9.2f}{n / seconds:>9.1f}{unique / seconds:>10.1f}{seconds / one_seconds:>7.2f}")
        print("(ratios: to the one pass)")

        segments = arguments.dedup_segments
        reference_versions = [line for version in versions(reference[:segments]) for line in version]
        cases = {
            "same hypotheses x 4 reference versions": [line for _ in range(4) for line in outputs[SYSTEMS[0]][:segments]],
            "4 systems' hypotheses x 4 reference versions": [line for system in SYSTEMS for line in outputs[system][:segments]],
        }
        print(f"\n[{device}] repeated sentences: {4 * segments:,} pairs each")
        print(f"{'case':<48}{'unique':>8}{'seconds':>9}{'pairs/s':>9}{'unique/s':>10}{'ratio':>7}")
        base = None
        for label, case in cases.items():
            seconds, _ = best_time(lambda: bertscore_f1(case, reference_versions, model, batch_size=batch), repeats)
            base = base or seconds
            count = unique_sentences(case, reference_versions)
            print(f"{label:<48}{count:>8,}{seconds:>9.2f}{4 * segments / seconds:>9.1f}{count / seconds:>10.1f}{seconds / base:>7.2f}")
        print("(ratios: to the first case)")
    if status:
        print("error: the one-pass F1 differs from bert_score.score's by more than 1e-5", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
