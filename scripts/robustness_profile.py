"""One robustness profile per system: the branches' published numbers read side by side, ranked, compared (Kendall tau) and read out."""

import json
import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402
from nlp_robustness.outputs.table_writer import write_html_table  # noqa: E402
from nlp_robustness.outputs.comparisons import to_csv_text  # noqa: E402
from nlp_robustness.outputs.profile import profile_display, profile_markdown  # noqa: E402
from nlp_robustness.outputs.profile_reading import read_out  # noqa: E402
from nlp_robustness.studies.profile import build_profile, kendall_square, profile_document, wide_table  # noqa: E402
from nlp_robustness.studies.profile_verdicts import computed_table  # noqa: E402

plan = snakemake.params.plan
labels = {group["name"]: group["label"] for group in plan["groups"]}
uncertainty = snakemake.params.uncertainty
profile, kendall, axes, axes_kendall, verdicts = build_profile(plan, snakemake.params.permutations, snakemake.params.seed, uncertainty)
paragraphs, claims = read_out(axes, axes_kendall, profile, {group["name"]: group for group in plan["groups"]},
                              uncertainty["confidence"], verdicts)
document = profile_document(plan, profile, kendall, axes, axes_kendall, paragraphs, snakemake.params.config_hash, claims)

texts = {
    snakemake.output.profile: profile.to_csv(sep="\t", index=False, lineterminator="\n"),
    snakemake.output.kendall: kendall.to_csv(sep="\t", index=False, lineterminator="\n"),
    snakemake.output.axes: axes.to_csv(sep="\t", index=False, lineterminator="\n"),
    snakemake.output.axes_kendall: axes_kendall.to_csv(sep="\t", index=False, lineterminator="\n"),
    snakemake.output.comparisons: to_csv_text(computed_table(verdicts)),
    snakemake.output.json: json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n",
}
tables = {}
# outputs in group order (expand: group, then extension)
for index, (group, label) in enumerate(labels.items()):
    wide = wide_table(profile, group)
    display = profile_display(profile, group)
    square = kendall_square(kendall, profile, group)
    texts[snakemake.output.tables[2 * index]] = wide.to_csv(index=False, lineterminator="\n")
    texts[snakemake.output.tables[2 * index + 1]] = profile_markdown(display, label)
    texts[snakemake.output.kendall_tables[index]] = square.to_csv(index=False, lineterminator="\n")
    tables[snakemake.output.html[index]] = (display, f"Robustness profile: {label} (value [interval] (#rank, rank interval; significance letters); rank 1 = best)")
    tables[snakemake.output.kendall_html[index]] = (square, f"Kendall tau between the profile's column rankings: {label}")
for path, text in texts.items():
    with atomic_write(path) as handle:
        handle.write(text)
for path, (frame, title) in tables.items():
    write_html_table(frame, path, title)
logging.info("\n%s", "\n\n".join(paragraphs))
