"""One condition (an attack at one level, or none) on every pair's sampled references, with achieved rates and unknown tokens."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.perturbations import character_attacks  # noqa: E402
from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer  # noqa: E402
from nlp_robustness.studies.metric_attack_scoring import (  # noqa: E402
    REFERENCE_COLUMNS,
    SEGMENT_COLUMNS,
    attack_references,
)

job = snakemake.params.job
segments = pd.concat([read_table(path, SEGMENT_COLUMNS, "segment table") for path in job["segments"].values()], ignore_index=True)
segments["sid"] = segments["sid"].astype(int)
context = character_attacks.load_context(job["resources"]) if job["resources"] else None
table = attack_references(segments, job["condition"], job["settings"], job["seed"], context, load_wordpiece_tokenizer())
write_table(table, snakemake.output[0], REFERENCE_COLUMNS)
logging.info(
    "%s: %d references; words changed %.3f, characters changed %.3f, unknown tokens per segment %.2f",
    job["condition"], len(table), table["words_changed"].sum() / max(table["words"].sum(), 1),
    table["characters_changed"].sum() / max(table["characters"].sum(), 1), table["unknown_tokens"].mean(),
)
