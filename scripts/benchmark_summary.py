"""Collect every job's benchmark file into the jobs, rule and branch tables and the time-by-rule figure."""

import logging
import sys

sys.stderr = open(snakemake.log[0], "w", encoding="utf-8")
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(message)s")

from nlp_robustness.outputs.benchmark_figures import time_by_rule_figure  # noqa: E402
from nlp_robustness.outputs.benchmarks import (  # noqa: E402
    branch_summary, collect_jobs, rule_summary, testset_segments,
)
from nlp_robustness.outputs.figures import figure_outputs, save_figure  # noqa: E402
from nlp_robustness.outputs.table_writer import csv_text, markdown_table, write_html_table, write_text  # noqa: E402

collected = collect_jobs(snakemake.params.directory, snakemake.params.patterns,
                         testset_segments(snakemake.params.testsets), snakemake.params.rule_testsets)
for path in collected.skipped:
    logging.warning("skipped %s: no rule of the workflow writes it (a renamed or removed rule?)", path)
jobs = collected.jobs
rules = rule_summary(jobs)
branches = branch_summary(jobs)
write_text(csv_text(jobs, sep="\t"), snakemake.output.jobs)
write_text(csv_text(rules, sep="\t"), snakemake.output.summary)
write_text(csv_text(branches, sep="\t"), snakemake.output.branches)
for table, csv_path, markdown_path, html_path, title in (
    (rules, snakemake.output.csv, snakemake.output.markdown, snakemake.output.html,
     "Time and memory per rule (wall and CPU seconds, max RSS in MB)"),
    (branches, snakemake.output.branch_csv, snakemake.output.branch_markdown, snakemake.output.branch_html,
     "Time and memory per branch (wall and CPU seconds, max RSS in MB)"),
):
    write_text(csv_text(table), csv_path)
    write_text(markdown_table(table, decimals=1, column_decimals={"wall_share": 3}), markdown_path)
    write_html_table(table, html_path, title, decimals=1, column_decimals={"wall_share": 3})
save_figure(time_by_rule_figure(rules), figure_outputs(snakemake.output.png, snakemake.output.pdf))
logging.info("%d jobs of %d rules, %.0f wall seconds in all\n%s", len(jobs), len(rules), jobs["wall_s"].sum(),
             rules.round(1).to_string(index=False))
