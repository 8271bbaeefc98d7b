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


def benchmark_rule_testsets():
    """Rule -> the test sets each of its jobs reads, for the rules made once per perturbation family (their
    only wildcard is the system): a job's units are their summed segments (nlp_robustness.outputs.benchmarks)."""
    testsets = {}
    for kind in KINDS:  # translate_<kind>_<family>: the family's sets and identity sets (rules/translate.smk)
        if system_kind(kind).BATCHES_FAMILIES:
            base = system_kind(kind).RULE
            testsets |= {f"{base}_{family}": list(names) for family, names in FAMILY_TRANSLATION_JOBS.items()}
    testsets |= {f"score_sentences_{family}": list(names) for family, names in FAMILY_SCORE_JOBS.items()}
    testsets |= {f"perturbation_scores_{family}": derived_testsets(family, spec) for family, spec in FAMILIES.items()}
    defined = {workflow_rule.name for workflow_rule in workflow.rules}
    return {name: names for name, names in testsets.items() if name in defined}
