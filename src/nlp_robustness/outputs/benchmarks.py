"""Where the workflow's time goes: Snakemake's per-job benchmark files collected into tables by rule and branch.

Every rule writes a ``benchmark:`` file, ``logs/benchmarks/<rule>/<wildcard values joined by '/'>.tsv``
(``logs/benchmarks/<rule>.tsv`` for a rule without wildcards), in Snakemake's format: a header and one row
per measured repeat, with the wall time ``s``, ``h:m:s``, the peak memory ``max_rss`` (``max_vms``,
``max_uss``, ``max_pss``; MB), ``io_in``/``io_out`` (MB), ``mean_load`` (CPU %) and ``cpu_time`` (s); a job
too short for a memory sample has ``NA`` there. Snakemake's extended format (``--benchmark-extended``) adds
columns, which are read past.

The collection reads every benchmark file under the folder, also those of jobs that ran in an earlier
invocation and were not rerun: each is still the valid measurement of the job that made the current
output. A file of a rule the workflow no longer has (renamed, removed) is skipped and listed; a rule of the
workflow that no branch claims is an error (:func:`branch_of`), so that a new rule is mapped when it is
added.

A job's *units* are the segments of the test-set tables (``results/testsets/<name>.tsv``) it works on, the
size its cost scales with: the per-unit rates of :mod:`nlp_robustness.outputs.cost_estimate` are fitted on
them, and its plan of another config counts them the same way (:func:`job_units`):

* a job whose wildcards name a test set (``testset``, ``base_testset``; ``family``, ``function`` and
  ``part`` name the perturbed test set ``perturb_testset`` writes): that test set's segments;
* a job of a rule made once per perturbation family (``translate_<kind>_<family>``,
  ``score_sentences_<family>``, ``perturbation_scores_<family>``; its only wildcard is ``system``): the sum of
  the segments of every test set it reads. A benchmark file knows only its rule and wildcards, so the
  collection is given these rules' test sets (``rule_testsets``, built by the workflow from its own tables:
  rules/inputs/benchmarks.smk);
* any other job: 1 (its cost is per job).

A per-family rule's jobs all read the same sets in one run (one job per system), so their units do not vary
and no per-unit rate can be fitted on them alone: their *rate group* (:func:`rate_group`) is their base rule
(``score_sentences_word_order`` -> ``score_sentences``), whose jobs, per test set and per family, are fitted
together (one start-up, then the same work per segment).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.configuration import DERIVED_PREFIX, derived_testset

__all__ = [
    "BENCHMARK_COLUMNS", "BRANCHES", "JOB_COLUMNS", "MEASURED_OUTPUTS", "RULE_BRANCHES", "SUMMARY_FILES",
    "CollectedJobs", "benchmark_wildcards", "branch_of", "branch_summary", "collect_jobs", "is_measured_output", "job_units",
    "named_testset", "rate_group", "read_benchmark", "rule_summary", "testset_segments",
]

#: The columns of Snakemake's benchmark file (``snakemake.benchmark.BenchmarkRecord.get_header()``).
BENCHMARK_COLUMNS = ("s", "h:m:s", "max_rss", "max_vms", "max_uss", "max_pss", "io_in", "io_out", "mean_load", "cpu_time")

#: The files the collection writes into the benchmark folder itself (not benchmark files of a job).
SUMMARY_FILES = frozenset({"summary.tsv", "jobs.tsv", "branches.tsv"})

#: Results that are measurements, different on every run: whoever compares two runs' results byte for byte
#: leaves these out (they are not results of the analysis).
MEASURED_OUTPUTS = ("results/benchmarks", "results/tables/benchmarks", "results/figures/benchmarks")


def is_measured_output(path: str) -> bool:
    """Whether ``path`` (relative to the working directory, '/' separated) is a measurement of
    :data:`MEASURED_OUTPUTS`: the summary of the jobs' benchmark files (those are under logs/)."""
    return any(path == folder or path.startswith(f"{folder}/") for folder in MEASURED_OUTPUTS)

DATA = "data"
TRANSLATION = "translation"
SCORING = "scoring"
ROBUSTNESS = "robustness (paper 000)"
PERTURBATIONS = "perturbations (word order, paper 004; other families)"  # the rules every family shares
METRIC_ROBUSTNESS = "metric robustness (paper 002)"
NATURAL = "natural robustness (paper 001)"
SENTIMENT = "sentiment"
HUMAN = "human"
PROFILE = "profile and report"

#: The branches, in the order the tables list them (the workflow's data flow).
BRANCHES = (DATA, TRANSLATION, SCORING, ROBUSTNESS, PERTURBATIONS, METRIC_ROBUSTNESS, NATURAL, SENTIMENT, HUMAN, PROFILE)

#: Rule -> its branch. Translation rules are made per system kind and family (``translate_<kind>``,
#: ``translate_<kind>_<family>``, ``import_hypotheses``): :data:`TRANSLATION_RULE_PREFIXES` claims them.
RULE_BRANCHES: dict[str, str] = {
    **dict.fromkeys(("fetch_download", "extract_download", "prepare_dataset", "dataset_summary", "prepare_testset"), DATA),
    **dict.fromkeys(("fairseq_training_data", "fairseq_train", "fairseq_dev_scores", "fairseq_model_summary"), TRANSLATION),
    "score_sentences": SCORING,
    "metric_file_scores": SCORING,
    **dict.fromkeys(("study_blocks", "robustness_statistics", "robustness_tables", "robustness_comparisons", "gamma_curves",
                     "testset_means", "corpus_scores"), ROBUSTNESS),
    **dict.fromkeys(("perturbation_sample", "parse_perturbation_sample", "perturb_testset",
                     "perturbation_tables", "perturbation_similarity", "perturbation_figures", "perturbation_attack_rates"),
                    PERTURBATIONS),
    **dict.fromkeys(("metric_darr_sample", "attack_references", "score_attacked_references", "metric_tau",
                     "metric_tau_uncertainty", "metric_reference_tables", "metric_figures"), METRIC_ROBUSTNESS),
    **dict.fromkeys(("natural_identity_testset", "natural_review_records", "perturb_reviews", "natural_responses_mt",
                     "natural_responses_sentiment", "natural_responses_sentiment_model", "natural_robustness_scores",
                     "natural_robustness_tables", "natural_robustness_figure"), NATURAL),
    **dict.fromkeys(("sentiment_train", "sentiment_evaluate", "sentiment_evaluate_model", "sentiment_accuracy_table"), SENTIMENT),
    **dict.fromkeys(("human_mqm_segments", "human_da_segments", "human_mtme_segments", "human_domain_means", "human_rankings",
                     "metric_consistency"), HUMAN),
    **dict.fromkeys(("robustness_profile", "robustness_profile_figure", "robustness_profile_overview",
                     "robustness_profile_report", "benchmark_summary"), PROFILE),
}

#: Rules made once per perturbation family (``<base>_<family>``) -> their branch.
FAMILY_RULE_BRANCHES = {"score_sentences": SCORING, "perturbation_scores": PERTURBATIONS}

#: Name prefixes of the translation rules made in a loop (rules/translate.smk).
TRANSLATION_RULE_PREFIXES = ("translate_", "import_hypotheses")

#: Wildcards that name a test set, whose segments are a job's units.
TESTSET_WILDCARDS = ("testset", "base_testset")
#: Wildcards that name a perturbed test set (``perturb_testset``: the one it writes).
PERTURBED_WILDCARDS = ("family", "function", "part")

#: The columns of the jobs table, one row per benchmark file.
JOB_COLUMNS = ("rule", "branch", "job", "wildcards", "units", "rate_group", "wall_s", "cpu_s", "max_rss_mb", "mean_load",
               "io_in_mb", "io_out_mb")


def branch_of(rule: str) -> str:
    """The branch a rule belongs to (:data:`RULE_BRANCHES`, or translation by its name's prefix).

    Raises:
        InputError: No branch claims the rule (map a new rule in :data:`RULE_BRANCHES`).
    """
    if rule in RULE_BRANCHES:
        return RULE_BRANCHES[rule]
    if rule.startswith(TRANSLATION_RULE_PREFIXES):
        return TRANSLATION
    for base, branch in FAMILY_RULE_BRANCHES.items():  # a family's sets or functions in one job
        if rule.startswith(f"{base}_"):
            return branch
    raise InputError(f"rule {rule!r} belongs to no branch: add it to RULE_BRANCHES in {__name__}")


def read_benchmark(path: str | Path) -> pd.DataFrame:
    """One benchmark file's rows (one per repeat), its ten standard columns, ``NA`` as NaN.

    Raises:
        InputError: The file is empty or its header is not Snakemake's.
    """
    table = pd.read_csv(path, sep="\t", na_values=["NA", "-"], keep_default_na=False)
    if tuple(table.columns[: len(BENCHMARK_COLUMNS)]) != BENCHMARK_COLUMNS:
        raise InputError(f"{path}: not a Snakemake benchmark file (header {list(table.columns)}, "
                         f"expected {list(BENCHMARK_COLUMNS)} first)")
    if table.empty:
        raise InputError(f"{path}: a benchmark file without a measurement")
    return table.loc[:, list(BENCHMARK_COLUMNS)]


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A regex of a benchmark path pattern (relative to the benchmark folder), one named group per wildcard."""
    parts = re.split(r"\{([A-Za-z_]\w*)(?:,[^}]*)?\}", pattern)
    regex = ""
    for position, part in enumerate(parts):
        regex += re.escape(part) if position % 2 == 0 else f"(?P<{part}>.+?)"
    return re.compile(regex + r"\Z")


def benchmark_wildcards(relative_path: str, pattern: str) -> dict[str, str] | None:
    """The wildcard values of a benchmark file (its path relative to the benchmark folder, '/' separated)
    under its rule's ``pattern`` (the same relative form), or None when the path does not match it."""
    match = _pattern_regex(pattern).match(relative_path)
    return match.groupdict() if match else None


def testset_segments(testset_directory: str | Path) -> dict[str, int]:
    """Test set name -> its segments: the data lines of every ``<name>.tsv`` under the folder (one segment
    per line after the header, as the workflow writes test sets)."""
    directory = Path(testset_directory)
    segments = {}
    for path in sorted(directory.rglob("*.tsv")):
        with path.open("rb") as handle:
            lines = sum(1 for _ in handle)
        segments[path.relative_to(directory).with_suffix("").as_posix()] = max(lines - 1, 0)
    return segments


def job_units(wildcards: Mapping[str, str], segments: Mapping[str, int], testsets: Sequence[str] | None = None) -> int:
    """A job's units (module docstring): the summed segments of ``testsets`` when its rule reads a fixed list
    of test sets (a per-family rule), else the segments of the test set its wildcards name; 1 for a job that
    names none (or whose test sets the mapping does not know)."""
    if testsets is not None:
        known = [int(segments[name]) for name in testsets if name in segments]
        return sum(known) if known else 1
    testset = named_testset(wildcards)
    return int(segments[testset]) if testset is not None and testset in segments else 1


def named_testset(wildcards: Mapping[str, str]) -> str | None:
    """The test set a job's wildcards name: its ``testset`` or ``base_testset``, or the perturbed test set
    ``perturbed/<family>/<function>/<part>`` of its ``family``, ``function`` and ``part``; None if none."""
    for name in TESTSET_WILDCARDS:
        if name in wildcards:
            return wildcards[name]
    if all(name in wildcards for name in PERTURBED_WILDCARDS):
        return derived_testset(*(wildcards[name] for name in PERTURBED_WILDCARDS))
    return None


def rate_group(rule: str, testsets: Sequence[str] = ()) -> str:
    """The rules a rule's per-unit rate is fitted with: a per-family rule ``<base>_<family>`` reading that
    family's perturbed test sets (``perturbed/<family>/...``) -> ``<base>``; any other rule -> itself."""
    for testset in testsets:
        parts = testset.split("/")
        if len(parts) > 1 and parts[0] == DERIVED_PREFIX and rule.endswith(f"_{parts[1]}"):
            return rule.removesuffix(f"_{parts[1]}")
    return rule


@dataclass
class CollectedJobs:
    """The jobs table (:data:`JOB_COLUMNS`) and the benchmark files skipped (of rules the workflow lacks)."""

    jobs: pd.DataFrame
    skipped: list[str] = field(default_factory=list)


def _number(value: float) -> float:
    return float("nan") if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def collect_jobs(directory: str | Path, patterns: Mapping[str, str], segments: Mapping[str, int],
                 rule_testsets: Mapping[str, Sequence[str]] | None = None) -> CollectedJobs:
    """One row per benchmark file under ``directory``: its rule, branch, job (the path below the rule),
    wildcards, units and measurements (the mean over its repeats; memory the maximum), sorted by path.

    ``patterns`` maps every rule of the workflow to its benchmark path relative to ``directory`` (as
    ``rule.benchmark`` gives it, the folder prefix removed); ``segments`` are the test sets' sizes;
    ``rule_testsets`` maps each rule made once per family to the test sets its jobs read (their units).

    Raises:
        InputError: A rule of ``patterns`` belongs to no branch, or a benchmark file is malformed.
    """
    for rule in patterns:
        branch_of(rule)  # every rule of the workflow is mapped, measured or not
    directory = Path(directory)
    by_length = sorted(patterns.items(), key=lambda item: -len(item[1]))  # a literal path before a pattern
    rows, skipped = [], []
    for path in sorted(directory.rglob("*.tsv")):
        relative = path.relative_to(directory).as_posix()
        if relative in SUMMARY_FILES:
            continue
        found = next(((rule, wildcards) for rule, pattern in by_length
                      if (wildcards := benchmark_wildcards(relative, pattern)) is not None), None)
        if found is None:
            skipped.append(relative)
            continue
        rule, wildcards = found
        table = read_benchmark(path)
        rows.append({
            "rule": rule, "branch": branch_of(rule), "job": relative.removesuffix(".tsv"),
            "wildcards": ";".join(f"{name}={value}" for name, value in wildcards.items()),
            "units": job_units(wildcards, segments, (rule_testsets or {}).get(rule)),
            "rate_group": rate_group(rule, (rule_testsets or {}).get(rule, ())), "wall_s": _number(table["s"].mean()),
            "cpu_s": _number(table["cpu_time"].mean()), "max_rss_mb": _number(table["max_rss"].max()),
            "mean_load": _number(table["mean_load"].mean()), "io_in_mb": _number(table["io_in"].mean()),
            "io_out_mb": _number(table["io_out"].mean()),
        })
    return CollectedJobs(pd.DataFrame(rows, columns=list(JOB_COLUMNS)), skipped)


def _branch_order(frame: pd.DataFrame) -> pd.Series:
    return frame["branch"].map({branch: position for position, branch in enumerate(BRANCHES)})


def rule_summary(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per rule: branch, jobs, wall seconds (sum, mean, max), CPU seconds (sum), max RSS (MB) and
    units (sum), the most expensive rule (summed wall time) first."""
    grouped = jobs.groupby("rule", sort=True)
    summary = pd.DataFrame({
        "branch": grouped["branch"].first(), "jobs": grouped.size(),
        "wall_s_sum": grouped["wall_s"].sum(), "wall_s_mean": grouped["wall_s"].mean(), "wall_s_max": grouped["wall_s"].max(),
        "cpu_s_sum": grouped["cpu_s"].sum(min_count=1), "max_rss_mb": grouped["max_rss_mb"].max(),
        "units_sum": grouped["units"].sum(),
    }).reset_index()
    return summary.sort_values(["wall_s_sum", "rule"], ascending=[False, True], kind="stable").reset_index(drop=True)


def branch_summary(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per branch that ran (:data:`BRANCHES` order): rules, jobs, wall and CPU seconds (sums), the
    share of all wall time, max RSS (MB)."""
    grouped = jobs.groupby("branch", sort=False)
    summary = pd.DataFrame({
        "rules": grouped["rule"].nunique(), "jobs": grouped.size(), "wall_s_sum": grouped["wall_s"].sum(),
        "cpu_s_sum": grouped["cpu_s"].sum(min_count=1), "max_rss_mb": grouped["max_rss_mb"].max(),
    }).reset_index()
    total = summary["wall_s_sum"].sum()
    summary.insert(4, "wall_share", summary["wall_s_sum"] / total if total > 0 else float("nan"))
    return summary.sort_values("branch", key=lambda column: _branch_order(summary), kind="stable").reset_index(drop=True)
