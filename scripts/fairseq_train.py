"""Train an in-house fairseq ConvS2S; keep the checkpoint with the lowest dev loss."""

import json
import logging
import os
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.systems.fairseq.runtime import resolve_device  # noqa: E402
from nlp_robustness.systems.fairseq.training import TrainingOptions, train_model  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write, job_scratch_directory  # noqa: E402

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
    allow_code=training.get("allow_code_in_train_args", False),
)
device = resolve_device(snakemake.params.device)
checkpoint = Path(snakemake.output.checkpoint)
# fairseq writes its checkpoints into a folder beside the final one (a rename, not a copy, puts the best in place);
# its name is the job's, so a training killed in the middle leaves nothing that its next start does not remove
with job_scratch_directory(checkpoint, ".checkpoints.", parent=checkpoint.parent) as save_dir:
    with open(snakemake.log[0], "a", encoding="utf-8") as log:
        record = train_model(
            snakemake.input.data_bin, save_dir, options, device=device, cpu_threads=snakemake.params.cpu_threads, log=log
        )
    os.replace(save_dir / "checkpoint_best.pt", checkpoint)
record = {"system": snakemake.wildcards.system, "arch": training["arch"], **record}
logging.info("trained %s: %s", snakemake.wildcards.system, record)
with atomic_write(snakemake.output.report) as handle:
    json.dump(record, handle, indent=2)
