"""Download one file of the manifest (or copy it from the mirror), verified and written atomically."""

import logging
import sys
from pathlib import Path

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.download import Checksum, RetryPolicy, fetch  # noqa: E402

source = snakemake.params.source
checksum = Checksum(**source["checksum"]) if source["checksum"] is not None else None
policy = RetryPolicy(
    timeout_seconds=snakemake.params.timeout_seconds,
    retries=snakemake.params.retries,
    retry_wait_seconds=snakemake.params.retry_wait_seconds,
)
if source["mirror_file"] is None and source["mirror_looked_for"] is not None:
    logging.info("the mirror has no %s; downloading from the canonical URL", source["mirror_looked_for"])
logging.info("fetching %s from %s", snakemake.wildcards.download, source["mirror_file"] or source["url"])
result = fetch(
    source["url"],
    snakemake.output[0],
    checksum,
    policy=policy,
    mirror_file=source["mirror_file"],
    # relative to the workflow directory (this script's parent), kept so in params: see rules/common.smk
    lock_file=Path(snakemake.scriptdir).parent / snakemake.params.checksum_lock,
    lock_key=snakemake.wildcards.download,
)
logging.info(
    "%s: %d bytes in %d attempt(s), %s %s verified (%s); sha256 %s",
    result.path, result.size, result.attempts, result.checksum.algorithm, result.checksum.hexdigest,
    result.checksum.source, result.sha256,
)
