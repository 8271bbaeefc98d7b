# Lookup tables and input functions of the benchmark summary (rules/benchmarks.smk); included by rules/common.smk.

BENCHMARK_DIRECTORY = "logs/benchmarks"  # one file per job, beside its log: measurements, not results
BENCHMARK_OUTPUTS = [
    *(f"results/benchmarks/{name}.tsv" for name in ("jobs", "summary", "branches")),
    *(f"results/tables/benchmarks/{table}.{extension}" for table in ("rules", "branches") for extension in ("csv", "md", "html")),
    *(f"results/figures/benchmarks/time_by_rule.{extension}" for extension in ("png", "pdf")),
]


def benchmark_outputs():
    """The benchmark summary's tables and figure (built last: its input is every other final output)."""
    return list(BENCHMARK_OUTPUTS)


def non_benchmark_outputs():
    """Every final output but the benchmark summary's own: what must be built before it collects."""
    return [path for path in final_outputs() if path not in BENCHMARK_OUTPUTS]


def benchmark_patterns():
    """Rule -> its benchmark path pattern below logs/benchmarks/, for every rule that has one."""
    prefix = f"{BENCHMARK_DIRECTORY}/"
    return {rule.name: str(rule.benchmark).removeprefix(prefix) for rule in workflow.rules if rule.benchmark}
