"""Benchmark the Python start-up of every workflow script: what a job pays before it does any work.

Each ``script:`` job runs in a fresh interpreter that imports ``snakemake.script`` (Snakemake's preamble) and then the
script's top-level imports. For every script in ``scripts/`` this times exactly that -- a fresh interpreter executing
``import snakemake.script`` and the script's top-level ``import`` statements -- as the best wall-clock time of
--repeats interpreters, on the current tree and on a baseline revision (checked out into a temporary ``git worktree``,
run with its own ``src`` first on ``PYTHONPATH``, removed afterwards). It prints per script the old and new time, the
ratio, the heavy modules the new start-up still loads, and -- weighting each script by its jobs in the default run
(``snakemake -n`` of the current tree, rule -> script; --snakefile names another workflow file for that dry run, e.g.
one that includes the Snakefile with a narrower default target) -- the start-up summed over the run. The two trees
take turns, interpreter by interpreter, so a busy moment of the machine slows both alike. A module a job imports
later, inside the function that needs it (matplotlib in a figure job, scipy.special for an interval), is not counted:
the figure jobs still pay matplotlib when they draw.

    .venv/bin/python benchmarks/bench_startup.py [--baseline REV] [--repeats N] [--scripts a.py ...] [--snakefile F]
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
# Modules whose import costs a job a noticeable share of its start-up; reported when a script loads them.
HEAVY_MODULES = (
    "scipy.stats", "scipy.optimize", "matplotlib", "torch", "transformers", "spacy", "sentence_transformers",
    "sklearn", "pandas", "sacrebleu", "jsonschema", "fairseq", "seaborn",
)
# Run by the timed interpreter: the imports given as argv[1], then which heavy modules got loaded.
PROBE = (
    "import sys, json\nimport snakemake.script\nexec(compile(sys.argv[1], 'imports', 'exec'), {})\n"
    "print(json.dumps(sorted(m for m in " + repr(HEAVY_MODULES) + " if m in sys.modules)))\n"
)


def top_level_imports(script: Path) -> str:
    """The script's top-level ``import`` statements, as source: what its interpreter imports before any work."""
    tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
    statements = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(ast.unparse(node) for node in statements)


def run_imports(imports: str, source: Path) -> tuple[float, list[str]]:
    """Wall-clock seconds of one fresh interpreter importing ``imports`` with ``source`` first on the path, and the
    heavy modules it loaded."""
    environment = {**os.environ, "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.perf_counter()
    completed = subprocess.run([sys.executable, "-c", PROBE, imports], env=environment, cwd=REPOSITORY,
                               capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"importing with {source} first: {completed.stderr.strip().splitlines()[-1:]}")
    return elapsed, json.loads(completed.stdout.strip().splitlines()[-1])


def start_ups(trees: list[tuple[str, Path]], repeats: int) -> list[tuple[float, list[str]]]:
    """Best wall-clock seconds of ``repeats`` fresh interpreters for each (imports, source) of ``trees``, and the heavy
    modules loaded; the trees take turns, so a busy moment of the machine slows them alike."""
    best = [(math.inf, []) for _ in trees]
    for _ in range(max(repeats, 1)):
        for index, (imports, source) in enumerate(trees):
            elapsed, loaded = run_imports(imports, source)
            best[index] = (min(best[index][0], elapsed), loaded)
    return best


def jobs_per_script(snakefile: str) -> Counter[str]:
    """Jobs of the default run per script file name, from a dry run of ``snakefile`` in the current tree (empty if it
    fails)."""
    dry_run = subprocess.run(
        [str(Path(sys.executable).with_name("snakemake")), "-n", "--quiet", "rules", "--snakefile", snakefile],
        cwd=REPOSITORY,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY / "src")}, capture_output=True, text=True, check=False,
    )
    counts = {}
    for line in dry_run.stdout.splitlines():
        match = re.fullmatch(r"\s*(\w+)\s+(\d+)\s*", line)
        if match and match.group(1) != "total":
            counts[match.group(1)] = int(match.group(2))
    rule_scripts, named_rules, generated_scripts = {}, set(), set()
    for rules_file in [REPOSITORY / "Snakefile", *sorted((REPOSITORY / "rules").glob("*.smk"))]:
        if not rules_file.exists():
            continue
        rule = None
        for line in rules_file.read_text(encoding="utf-8").splitlines():
            if (header := re.match(r"\s*rule(\s+\w+)?\s*:", line)) is not None:
                rule = header.group(1).strip() if header.group(1) else ""
                named_rules.add(rule)
            elif rule is not None and (script := re.search(r"scripts/(\w+\.py)", line)) is not None:
                if rule:
                    rule_scripts[rule] = script.group(1)
                else:
                    generated_scripts.add(script.group(1))
    # Rules named in a loop (``rule:`` with a computed ``name:``, e.g. one per system kind) are the unnamed ones; they
    # are counted against their script when all of them run the same one.
    unnamed = next(iter(generated_scripts)) if len(generated_scripts) == 1 else None
    jobs: Counter[str] = Counter()
    for rule, count in counts.items():
        if rule in rule_scripts:
            jobs[rule_scripts[rule]] += count
        elif unnamed is not None and rule not in named_rules:
            jobs[unnamed] += count
    return jobs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="3fd14ca", help="revision to compare with (default %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh interpreters per script and tree")
    parser.add_argument("--scripts", nargs="*", help="script file names (default: every scripts/*.py)")
    parser.add_argument("--snakefile", default="Snakefile", help="workflow whose dry run gives the job counts")
    arguments = parser.parse_args()
    names = arguments.scripts or sorted(path.name for path in (REPOSITORY / "scripts").glob("*.py"))
    jobs = jobs_per_script(arguments.snakefile)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as temporary:
        baseline = Path(temporary) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(baseline), arguments.baseline],
                       cwd=REPOSITORY, check=True)
        try:
            for name in names:
                new_script, old_script = REPOSITORY / "scripts" / name, baseline / "scripts" / name
                trees = [(top_level_imports(new_script), REPOSITORY / "src")]
                if old_script.exists():
                    trees.append((top_level_imports(old_script), baseline / "src"))
                timings = start_ups(trees, arguments.repeats)
                (new_time, loaded), old_time = timings[0], timings[1][0] if len(timings) > 1 else math.nan
                rows.append((name, jobs.get(name, 0), old_time, new_time, loaded))
                print(f"  {name:34s} {old_time:6.2f} -> {new_time:6.2f} s", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=REPOSITORY, check=False)
    print(f"Start-up per script (best of {arguments.repeats} fresh interpreters; baseline {arguments.baseline}):")
    print(f"{'script':34s} {'jobs':>5s} {'old s':>6s} {'new s':>6s} {'ratio':>6s}  heavy modules still loaded")
    rows.sort(key=lambda row: 0.0 if math.isnan(row[2]) else -row[1] * row[2])  # most start-up in the run first
    for name, count, old_time, new_time, loaded in rows:
        print(f"{name:34s} {count:5d} {old_time:6.2f} {new_time:6.2f} {old_time / new_time:6.2f}  {' '.join(loaded)}")
    if not jobs:
        print(f"job counts unavailable (the dry run of {arguments.snakefile} failed): no sum over the run")
    else:
        compared = [(count, old_time, new_time) for _, count, old_time, new_time, _ in rows if not math.isnan(old_time)]
        old_total = sum(count * old_time for count, old_time, _ in compared)
        new_total = sum(count * new_time for count, _, new_time in compared)
        print(f"summed over the default run's {sum(count for count, _, _ in compared)} script jobs: "
              f"{old_total:.0f} s -> {new_total:.0f} s ({old_total / new_total:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
