"""Train an in-house fairseq ConvS2S; keep the checkpoint with the lowest dev loss."""

import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.fairseq.checkpoints import check_checkpoint  # noqa: E402
from nlp_robustness.systems.fairseq.runtime import resolve_device  # noqa: E402
from nlp_robustness.systems.fairseq.training import TrainingOptions, train_model  # noqa: E402
from nlp_robustness.fileio import atomic_write  # noqa: E402

training = snakemake.params.training
source_language, target_language = snakemake.params.languages
options = TrainingOptions(
    arch=training["arch"],
    train_args=training["train_args"] or {},
    source_language=source_language,
    target_language=target_language,
    seed=training["seed"],
    max_epoch=training["max_epoch"],
    patience=training["patience"],
)
device = resolve_device(snakemake.params.device)
checkpoint = Path(snakemake.output.checkpoint)
save_dir = Path(tempfile.mkdtemp(prefix=".checkpoints.", dir=checkpoint.parent))
try:
    with open(snakemake.log[0], "a", encoding="utf-8") as log:
        record = train_model(
            snakemake.input.data_bin, save_dir, options, device=device, cpu_threads=snakemake.params.cpu_threads, log=log
        )
    record["model"] = check_checkpoint(save_dir / "checkpoint_best.pt")
    os.replace(save_dir / "checkpoint_best.pt", checkpoint)
finally:
    shutil.rmtree(save_dir, ignore_errors=True)
record = {"system": snakemake.wildcards.system, "arch": training["arch"], **record}
logging.info("trained %s: %s", snakemake.wildcards.system, record)
with atomic_write(snakemake.output.report) as handle:
    json.dump(record, handle, indent=2)
