"""The report's opening page: the workflow's introduction, the profile overview and its generated reading."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.profile import report_description  # noqa: E402

with open(snakemake.input.profile, encoding="utf-8") as handle:
    document = json.load(handle)
with atomic_write(snakemake.output[0]) as handle:
    handle.write(report_description(snakemake.params.introduction, snakemake.input.overview, document["reading"], document["config_hash"]))
