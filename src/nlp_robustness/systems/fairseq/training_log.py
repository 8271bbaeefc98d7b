"""What a ``fairseq-train`` run reports: epochs and losses parsed from its log, and the per-model summary table."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from nlp_robustness.systems.fairseq.runtime import FairseqError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["model_summary_table", "parse_training_log"]

_VALID_LINE = re.compile(r"\| valid \| epoch (\d+) \|.*?\| loss ([0-9.]+)")
_UPDATES = re.compile(r"\| train \| epoch (\d+) \|.*?\| num_updates (\d+)")


def parse_training_log(output: str) -> dict[str, Any]:
    """Epochs, updates and validation losses of one ``fairseq-train`` run (from its simple log)."""
    valid = [(int(epoch), float(loss)) for epoch, loss in _VALID_LINE.findall(output)]
    updates = [int(count) for _, count in _UPDATES.findall(output)]
    if not valid:
        raise FairseqError("fairseq-train finished without a single validation (no '| valid |' line in its log)")
    best_epoch, best_loss = min(valid, key=lambda item: (item[1], item[0]))
    return {
        "epochs": valid[-1][0],
        "updates": updates[-1] if updates else None,
        "valid_loss_by_epoch": [loss for _, loss in valid],
        "best_epoch": best_epoch,
        "best_valid_loss": best_loss,
    }


def model_summary_table(records: Sequence[Mapping[str, Any]]) -> "pd.DataFrame":
    """One row per in-house model from its ``dev_scores.json`` record (corpus, training, dev scores).

    No wall-clock time: two runs of one config write the same table (docs/reliability.md, "Timings"). The training's
    time stays in its record (``training.json``: ``seconds``) and in the benchmark files.
    """
    import pandas as pd

    rows = []
    for record in records:
        corpus, training = record["corpus"], record["training"]
        rows.append(
            {
                "system": record["system"],
                "arch": training["arch"],
                "parameters": training["model"]["parameters"],
                "training_pairs": corpus["training_pairs"],
                "development_pairs": corpus["development_pairs"],
                "bpe_merges": corpus["bpe_merges"],
                "epochs": training["epochs"],
                "best_epoch": training["best_epoch"],
                "best_valid_loss": training["best_valid_loss"],
                "device": training["device"],
                "dev_bleu": round(record["dev_bleu"], 2),
                "dev_chrf": round(record["dev_chrf"], 2),
            }
        )
    return pd.DataFrame(rows)
