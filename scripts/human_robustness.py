"""Metrics I-III of one score (human, BLEU or chrF) for every system over the human-judgement domains."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402
from nlp_robustness.studies.human import domain_blocks, system_robustness  # noqa: E402
from nlp_robustness.statistics.robustness_metrics import epsilon_grid  # noqa: E402

score = snakemake.wildcards.human_score
domains, systems = snakemake.params.domains, snakemake.params.systems
segments = {
    domain: pd.read_csv(path, sep="\t", usecols=["system", "segment_id", score], dtype={"system": str, "segment_id": str},
                        keep_default_na=False)
    for domain, path in zip(domains, snakemake.input)
}
first = systems[0]
segment_ids = {domain: frame.loc[frame["system"] == first, "segment_id"].tolist() for domain, frame in segments.items()}
blocks = domain_blocks(segment_ids, domains, snakemake.params.leave_out, seed=snakemake.params.seed,
                       n_blocks=snakemake.params.blocks, fraction=snakemake.params.fraction)
epsilon = snakemake.params.epsilon
epsilons = epsilon_grid(epsilon["start"], epsilon["stop"], epsilon["step"])
for system, summary_path, gamma_path in zip(systems, snakemake.output.summaries, snakemake.output.gamma):
    summary, gamma = system_robustness(segments, system, score, domains, snakemake.params.leave_out, blocks, epsilons)
    summary.insert(0, "system", system)
    gamma.insert(0, "system", system)
    with atomic_write(summary_path) as handle:
        summary.to_csv(handle, sep="\t", index=False, float_format="%.6f", lineterminator="\n")
    with atomic_write(gamma_path) as handle:
        gamma.to_csv(handle, sep="\t", index=False, float_format="%.6f", lineterminator="\n")
    logging.info("%s\n%s", system, summary.to_string(index=False))
