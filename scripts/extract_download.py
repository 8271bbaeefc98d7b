"""Extract the members the manifest reads from one downloaded archive, safely and atomically."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.archives import extract_members  # noqa: E402

written = extract_members(snakemake.input[0], snakemake.params.archive_kind, snakemake.output[0], snakemake.params.members)
for path in written:
    logging.info("extracted %s", path)
logging.info("%d member(s) of %s extracted into %s", len(written), snakemake.input[0], snakemake.output[0])
