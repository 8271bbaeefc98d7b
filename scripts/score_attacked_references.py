"""Every judged output against the references of every condition at one level: sentence metrics and BERTScore at every layer."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio.text_files import read_table, write_table  # noqa: E402
from nlp_robustness.studies.metric_attack_scoring import HYPOTHESIS_COLUMNS, REFERENCE_COLUMNS, SCORE_KEY_COLUMNS, score_level  # noqa: E402

job = snakemake.params.job
references = {}
for condition, path in job["references"].items():
    references[condition] = read_table(path, REFERENCE_COLUMNS, "reference table")
    references[condition]["sid"] = references[condition]["sid"].astype(int)
hypotheses = pd.concat([read_table(path, HYPOTHESIS_COLUMNS, "judged outputs") for path in job["hypotheses"].values()], ignore_index=True)
hypotheses["sid"] = hypotheses["sid"].astype(int)
model, batch_size = None, 1
if job["bertscore"] is not None:
    import torch

    from nlp_robustness.scoring.bertscore import load_bertscore_model

    options = job["bertscore"]
    device = options["device"] if options["device"] != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    # The configured thread count, not the job's (which --cores may scale down): torch's sums depend on
    # how many threads share them, and the same config must give the same bytes with any --cores.
    model = load_bertscore_model(device=device, threads=options["threads"])
    logging.info("BERTScore on %s, %d threads", device, options["threads"])
    batch_size = options["batch_size"]
scores = score_level(references, hypotheses, job["sentence_metrics"], model, batch_size)
write_table(scores, snakemake.output[0], SCORE_KEY_COLUMNS)
logging.info("%s: %d scored pairs (%d conditions), columns %s", snakemake.wildcards.level, len(scores), len(references), ", ".join(scores.columns[4:]))
