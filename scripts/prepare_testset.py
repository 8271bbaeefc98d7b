"""One test set into results/testsets/{testset}.tsv (a parsed manifest dataset, a configured pair of
files, a WMT XML file or plain files with a domain file; empty segments refused, source-equals-reference segments dropped on request, cut to max_segments)
and its provenance file: where it came from and what was counted, dropped and kept."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.data.document_ids import segments_as_units_note  # noqa: E402
from nlp_robustness.data.local_testsets import is_local_testset, read_local_testset  # noqa: E402
from nlp_robustness.data.testset_preparation import prepare_testset  # noqa: E402
from nlp_robustness.data.testsets import load_parallel_files, read_testset_table, sha256_of, write_testset_table  # noqa: E402
from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402

name = snakemake.wildcards.testset
spec = snakemake.params.spec  # the config entry, defaults filled in
if "dataset" in spec:
    table = read_testset_table(snakemake.input.dataset)
    files = None
    origin = {"dataset": spec["dataset"]}
elif is_local_testset(spec):  # a WMT XML file, or plain text with a domain file
    table, files, origin = read_local_testset(spec)
else:
    table = load_parallel_files(snakemake.input.source, snakemake.input.reference, spec["format"])
    files = (snakemake.input.source, snakemake.input.reference, spec["format"])
    origin = {
        "source": spec["source"],
        "reference": spec["reference"],
        "format": spec["format"],
        "source_sha256": sha256_of(snakemake.input.source),
        "reference_sha256": sha256_of(snakemake.input.reference),
    }
table, counts = prepare_testset(
    table,
    max_segments=snakemake.params.max_segments,
    allow_empty_segments=spec["allow_empty_segments"],
    drop_source_equals_reference=spec["drop_source_equals_reference"],
    files=files,
    select=spec.get("select"),
    where=f"test set {name} ({snakemake.input[0]})",
)
if counts["empty_segments"]:
    logging.warning("%s: %d segment(s) with an empty source or reference, kept and scored", name, counts["empty_segments"])
if counts["dropped_source_equals_reference"]:
    logging.info("%s: dropped %d segment(s) whose source equals the reference", name, counts["dropped_source_equals_reference"])
provenance = {
    "testset": name,
    "domain": spec["domain"],
    **origin,
    "options": {
        "allow_empty_segments": spec["allow_empty_segments"],
        "drop_source_equals_reference": spec["drop_source_equals_reference"],
        "max_segments": snakemake.params.max_segments,
        **({"select": dict(spec["select"])} if spec.get("select") else {}),  # absent when not set: other provenance files unchanged
    },
    **counts,
}
write_testset_table(table, snakemake.output.table)
with atomic_write(snakemake.output.provenance) as handle:
    json.dump(provenance, handle, indent=2, ensure_ascii=False)
    handle.write("\n")
logging.info("%s: %d segments, %d documents", name, counts["segments"], counts["documents"])
if not counts["document_ids"]:
    logging.warning("%s: %s", name, segments_as_units_note([name]))
