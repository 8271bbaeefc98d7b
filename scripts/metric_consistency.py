"""The meta-evaluation of metrics on cross-domain consistency of one human study: which metric's consistency ranking
of the systems agrees with people's (nlp_robustness.statistics.metric_consistency)."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.metric_consistency import write_meta_evaluation  # noqa: E402

write_meta_evaluation(
    segment_files=dict(zip(snakemake.params.domains, snakemake.input.segments)),
    scores=snakemake.params.scores,
    rows=snakemake.params.rows,
    epsilons=snakemake.params.epsilons,
    higher_is_better=snakemake.params.higher_is_better,
    names=snakemake.params.names,
    measures=snakemake.params.measures,
    uncertainty=snakemake.params.uncertainty,
    labels=snakemake.params.labels,
    study=snakemake.wildcards.human_study,
    human_label=snakemake.params.human_label,
    outputs=dict(snakemake.output.items()),
    threads=snakemake.threads,
)
