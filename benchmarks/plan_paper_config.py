"""Plan what a config costs (default: the paper config) from the per-rule rates of a measured run.

It fits each rule's ``seconds = start-up + segments x rate`` on a measured run's jobs
(``results/benchmarks/jobs.tsv``, written by the workflow's benchmark_summary rule), lists the target
config's jobs from Snakemake's own plan (``snakemake --dry-run --forceall`` of it, or a saved copy of that
output with ``--dry-run-output``), and simulates their schedule on 2 cores, on one 16-core node and through
the SLURM profile on N nodes (see nlp_robustness.outputs.cost_estimate for the model and its parameters,
nlp_robustness.outputs.planned_jobs for the jobs read from the dry run).
It prints Markdown for docs/performance.md: the makespan per scenario, then the cost per rule.

    .venv/bin/python benchmarks/plan_paper_config.py results/benchmarks/jobs.tsv \\
        [--configfile config/paper.yaml] [--nodes 4] [--latency 45] [--segments sizes.tsv]

Test set sizes: those of the measured run, then ``--segments`` (a TSV with the columns testset and segments,
e.g. the published sizes of test sets the mirror lacks); any other test set counts ``--default-segments``
(default: the median known size), and the output names those test sets. A perturbed test set counts the
sample of its base test sets the config's ``perturbations.families.<family>.sample_size`` draws (null: the
whole test sets). A job's units are those the measured run counted: a per-family job's (one per system for
all the sets of a family) the summed segments of every test set it reads.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from nlp_robustness.outputs.cost_estimate import Scenario, duration_text, estimate_cost
from nlp_robustness.outputs.planned_jobs import parse_dry_run
from nlp_robustness.outputs.table_writer import markdown_table

REPOSITORY = Path(__file__).resolve().parents[1]


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jobs", type=Path, help="results/benchmarks/jobs.tsv of a measured run")
    parser.add_argument("--configfile", type=Path, default=REPOSITORY / "config" / "paper.yaml")
    parser.add_argument("--dry-run-output", type=Path, help="a saved `snakemake -n --forceall` output (skips the dry run)")
    parser.add_argument("--nodes", type=int, default=4, help="SLURM nodes (default 4)")
    parser.add_argument("--cores-per-node", type=int, default=16)
    parser.add_argument("--latency", type=float, default=45.0,
                        help="seconds from a job's inputs being made to its start on a node (submit, queue, start-up)")
    parser.add_argument("--local-latency", type=float, default=0.0,
                        help="seconds Snakemake itself spends per job on one machine (calibrate on a measured run)")
    parser.add_argument("--segments", type=Path, help="TSV testset<TAB>segments: sizes of test sets the run lacked")
    parser.add_argument("--default-segments", type=int, help="size of a test set of unknown size (default: median)")
    parser.add_argument("--rules", type=int, default=15, help="rules listed in the per-rule table (most expensive)")
    return parser.parse_args(argv)


def dry_run_text(arguments: argparse.Namespace) -> str:
    """Snakemake's plan of every job of the config (forced, so the state of results/ does not matter)."""
    if arguments.dry_run_output:
        return arguments.dry_run_output.read_text(encoding="utf-8")
    command = [sys.executable, "-m", "snakemake", "--dry-run", "--forceall", "--cores", str(arguments.cores_per_node),
               "--configfile", str(arguments.configfile)]
    result = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"the dry run failed ({' '.join(command)}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result.stdout


def family_sample_sizes(configfile: Path) -> dict[str, int | None]:
    """The config's ``perturbations.families.<family>.sample_size`` per family (absent: null, the schema's
    default, whole test sets): the size of its perturbed test sets in the plan."""
    config = yaml.safe_load(configfile.read_text(encoding="utf-8")) or {}
    families = (config.get("perturbations") or {}).get("families") or {}
    return {family: (spec or {}).get("sample_size") for family, spec in families.items()}


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    measured = pd.read_csv(arguments.jobs, sep="\t", keep_default_na=False, na_values=[""])
    segments = None
    if arguments.segments:
        sizes = pd.read_csv(arguments.segments, sep="\t", dtype={"testset": str})
        segments = dict(zip(sizes["testset"], sizes["segments"].astype(int), strict=True))
    profile = yaml.safe_load((REPOSITORY / "profiles" / "slurm" / "config.yaml").read_text(encoding="utf-8"))
    scenarios = [
        Scenario("2 cores (one machine)", 1, 2, arguments.local_latency),
        Scenario(f"one {arguments.cores_per_node}-core node", 1, arguments.cores_per_node, arguments.local_latency),
        Scenario(f"SLURM: {arguments.nodes} nodes x {arguments.cores_per_node} cores, {arguments.latency:g} s per job "
                 f"to start, at most {profile['jobs']} jobs", arguments.nodes, arguments.cores_per_node,
                 arguments.latency, int(profile["jobs"])),
    ]
    planned = parse_dry_run(dry_run_text(arguments))
    estimate = estimate_cost(measured, planned, scenarios, segments=segments, default_segments=arguments.default_segments,
                             sample_sizes=family_sample_sizes(arguments.configfile))
    job_seconds = estimate.rules["job_seconds"].sum()
    makespans = pd.DataFrame({"where": list(estimate.makespans),
                              "estimated time (h:mm:ss)": [duration_text(value) for value in estimate.makespans.values()]})
    print(f"Config {arguments.configfile.name}: {len(planned)} jobs, {duration_text(job_seconds)} of job time "
          f"(rates from {len(measured)} measured jobs of {arguments.jobs})\n")
    print(markdown_table(makespans))
    rules = estimate.rules.head(arguments.rules).rename(columns={"job_seconds": "job seconds", "start_up_s": "start-up s",
                                                                 "seconds_per_unit": "s per segment", "measured_jobs": "measured jobs"})
    print(markdown_table(rules, column_decimals={"job seconds": 0, "start-up s": 2, "s per segment": 5}))
    if estimate.unmeasured_rules:
        print(f"Rules the measured run did not have, at its median job time ({estimate.fallback_seconds:.1f} s): "
              f"{', '.join(estimate.unmeasured_rules)}.")
    if estimate.base_sized_testsets:
        print(f"{len(estimate.base_sized_testsets)} perturbed test sets count their sample of their base test sets "
              "(the config's sample_size per family; null: the whole test sets), an upper bound.")
    if estimate.unknown_testsets:
        print(f"Test sets of unknown size, with their perturbed sets (counted as {estimate.default_segments} segments; "
              "give their sizes with --segments): "
              f"{', '.join(estimate.unknown_testsets)}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
