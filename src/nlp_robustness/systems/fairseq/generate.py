"""``fairseq-generate``: its beam search settings, its command line, and its output put back in input order.

Alignment
    ``fairseq-generate`` sorts sentences by length and prints them out of order, and its batch
    iterator silently drops sentences unless ``--required-batch-size-multiple 1`` is passed, or when
    an input is longer than the model's maximum positions (``--skip-invalid-size-inputs-valid-test``).
    :func:`parse_generate_output` therefore puts hypotheses back in input order by id and raises
    :class:`~nlp_robustness.systems.fairseq.runtime.FairseqError` if any id is missing or repeated, so
    a translation file always has exactly one line per test segment.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from nlp_robustness.systems.fairseq.checkpoints import ModelBundle
from nlp_robustness.systems.fairseq.runtime import FairseqError

__all__ = ["GenerationOptions", "generate_command", "parse_generate_output"]

_HYPOTHESIS = re.compile(r"^H-(\d+)\t[^\t]*\t(.*)$")


@dataclass(frozen=True)
class GenerationOptions:
    """Beam search settings of ``fairseq-generate`` (config key ``generation``)."""

    beam: int = 5
    batch_size: int = 128
    lenpen: float = 1.0
    max_len_a: float = 0.0
    max_len_b: int = 200
    max_tokens_per_side: int = 1000


def generate_command(data_dir: str | os.PathLike[str], bundle: ModelBundle, options: GenerationOptions, device: str | None) -> list[Any]:
    """Arguments of ``fairseq-generate`` for the ``test`` split written as raw text in ``data_dir`` (best hypothesis
    only); ``--cpu`` for ``device="cpu"`` (None: left to whoever resolves the device, see generate_many)."""
    arguments: list[Any] = [
        data_dir,
        "--dataset-impl", "raw",  # the split as text (binarize.write_raw_split): no fairseq-preprocess run
        "--path", bundle.checkpoint,
        "--source-lang", bundle.source_language,
        "--target-lang", bundle.target_language,
        "--gen-subset", "test",
        "--beam", options.beam,
        "--nbest", 1,
        "--batch-size", options.batch_size,
        "--required-batch-size-multiple", 1,  # otherwise fairseq drops sentences silently
        "--lenpen", options.lenpen,
        "--max-len-a", options.max_len_a,
        "--max-len-b", options.max_len_b,
        "--num-workers", 0,
        "--seed", 1,
        "--log-format", "simple",
    ]
    if device == "cpu":
        arguments.append("--cpu")
    return arguments


def parse_generate_output(output: str, expected: int) -> list[str]:
    """Hypotheses (BPE units, best of n-best) of ``fairseq-generate`` in input order.

    Raises:
        FairseqError: Some input id has no hypothesis, or has more than one (the message lists them).
    """
    hypotheses: dict[int, str] = {}
    repeated: list[int] = []
    for line in output.splitlines():
        match = _HYPOTHESIS.match(line)
        if match is None:
            continue
        index = int(match.group(1))
        if index in hypotheses:
            repeated.append(index)
        hypotheses[index] = match.group(2)
    missing = [index for index in range(expected) if index not in hypotheses]
    extra = sorted(index for index in hypotheses if not 0 <= index < expected)
    if missing or repeated or extra:
        def few(indices: list[int]) -> str:
            return ", ".join(map(str, indices[:10])) + (" ..." if len(indices) > 10 else "")

        problems = []
        if missing:
            problems.append(f"no hypothesis for {len(missing)} of {expected} input(s) (ids {few(missing)})")
        if repeated:
            problems.append(f"several hypotheses for ids {few(repeated)}")
        if extra:
            problems.append(f"hypotheses for unknown ids {few(extra)}")
        raise FairseqError("fairseq-generate output does not align with its input: " + "; ".join(problems))
    return [hypotheses[index] for index in range(expected)]
