"""Parse one side (source or reference) of a family's sample with spaCy, once, into a token table."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.testsets import read_testset_table  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.perturbations.parse import write_parse_table  # noqa: E402
from nlp_robustness.perturbations.spacy_parsing import parse_texts  # noqa: E402

sample = read_testset_table(snakemake.input[0])
side = snakemake.wildcards.side
segments, provenance = parse_texts(
    sample["segment_id"].tolist(), sample[side].tolist(), snakemake.params.parser["model"], snakemake.params.parser["batch_size"]
)
write_parse_table(segments, snakemake.output.parse)
record = {"testset": snakemake.wildcards.base_testset, "side": side, "segments": len(segments),
          "tokens": sum(len(segment.tokens) for segment in segments), **provenance}
with atomic_write(snakemake.output.provenance) as handle:
    json.dump(record, handle, indent=2)
logging.info("%s", record)
