"""What a config costs before it runs: per-rule rates fitted on a measured run, times the jobs a dry run plans,
scheduled on 2 cores, on one node, or on N nodes through the SLURM profile.

1. **Rates.** Per rule (per rate group: a per-family rule is fitted with its base rule, whose
   jobs' sizes vary), ``seconds = start_up_s + units x seconds_per_unit`` fitted by least squares on the
   jobs of a measured run (``results/benchmarks/jobs.tsv`` of the benchmark summary; a job's *units* are the
   segments of the test sets it works on: those its wildcards name, or every one a per-family job reads; 1
   for a job that names none, see :mod:`nlp_robustness.outputs.benchmarks`). Both terms are kept
   non-negative: jobs of one size give the mean as start-up and no per-unit rate; a negative slope (noise)
   falls back to the mean; a negative start-up to a line through the origin.
2. **Jobs** (:mod:`nlp_robustness.outputs.planned_jobs`). The jobs of the target config are read from
   Snakemake's own plan, ``snakemake --dry-run --forceall --cores 16 --configfile <config>``
   (:func:`~nlp_robustness.outputs.planned_jobs.parse_dry_run`): each job's rule, wildcards, threads (as
   declared up to ``--cores``), inputs and outputs; a job depends on the jobs making its inputs. Units are
   counted as for the measured jobs (:func:`~nlp_robustness.outputs.planned_jobs.planned_job_units`): a
   per-family job's are the summed segments of the test-set tables among its inputs, another job's those of
   the test set its wildcards name. Sizes (:class:`~nlp_robustness.outputs.planned_jobs.PlannedSizes`): those
   of the measured run, sizes given by hand, for a perturbed test
   set its sample of its base test sets under the target config's ``sample_size`` (its base test sets read
   from the plan: the samples its ``perturb_testset`` job reads), and for test sets of unknown size a stated
   default.
3. **Schedule.** :func:`simulate_makespan` runs list scheduling over that DAG: whenever cores free up, the
   ready jobs start in order of their longest path to the end (critical path first), each on the first node
   with enough free cores (threads above a node's cores are cut to it, as Snakemake does). Through SLURM a
   job becomes ready ``latency_s`` after its last input is made: the submission, the queue wait and the
   Snakemake start-up of the job on its node, a documented parameter (a lightly loaded cluster: 30-60 s),
   during which it holds no cores; ``max_jobs`` is the profile's ``jobs:`` limit on jobs at once.

A rule the measured run did not have gets the median of the measured jobs' seconds, and is listed as such
(:class:`CostEstimate`), so that a reader sees which part of an estimate is a guess.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.benchmarks import named_testset
from nlp_robustness.outputs.planned_jobs import (
    BASE, PlannedJob, PlannedSizes, job_dependencies, perturbed_parts, planned_job_units, planned_rate_group)

__all__ = ["CostEstimate", "RuleCost", "Scenario", "duration_text", "estimate_cost", "fit_rule_cost", "fit_rule_costs",
           "segments_from_jobs", "simulate_makespan"]


@dataclass(frozen=True)
class RuleCost:
    """A rule's fitted cost: seconds a job takes = ``start_up_s + units x seconds_per_unit``."""

    start_up_s: float
    seconds_per_unit: float
    jobs: int

    def seconds(self, units: float) -> float:
        """The fitted seconds of a job of ``units`` units."""
        return self.start_up_s + units * self.seconds_per_unit


def fit_rule_cost(units: Sequence[float], seconds: Sequence[float]) -> RuleCost:
    """Least-squares ``seconds = start_up + units x rate`` with both terms >= 0 (see the module docstring).

    Raises:
        InputError: No job, or a job with negative or missing seconds or units.
    """
    x, y = np.asarray(units, dtype=float), np.asarray(seconds, dtype=float)
    if len(x) == 0 or len(x) != len(y) or not (np.isfinite(x).all() and np.isfinite(y).all()) or (x < 0).any() or (y < 0).any():
        raise InputError(f"cannot fit a rule's cost on units {list(x)} and seconds {list(y)}")
    mean = float(y.mean())
    if np.ptp(x) == 0:
        return RuleCost(mean, 0.0, len(x))
    slope, intercept = np.polyfit(x, y, 1)
    if slope <= 0:
        return RuleCost(mean, 0.0, len(x))
    if intercept < 0:
        return RuleCost(0.0, float((x * y).sum() / (x * x).sum()), len(x))
    return RuleCost(float(intercept), float(slope), len(x))


def fit_rule_costs(jobs: pd.DataFrame) -> dict[str, RuleCost]:
    """Rate group -> its fitted cost, from a jobs table with the columns ``rule``, ``units`` and ``wall_s``:
    the jobs of every rule of a ``rate_group`` (a per-family rule's: its base rule's) are fitted together;
    a table without that column is fitted per rule."""
    missing = {"rule", "units", "wall_s"} - set(jobs.columns)
    if missing:
        raise InputError(f"the jobs table lacks the columns {sorted(missing)} (results/benchmarks/jobs.tsv)")
    key = "rate_group" if "rate_group" in jobs.columns else "rule"
    return {str(rule): fit_rule_cost(group["units"], group["wall_s"]) for rule, group in jobs.groupby(key, sort=True)}



def simulate_makespan(durations: Mapping[int, float], threads: Mapping[int, int], dependencies: Mapping[int, set[int]],
                      *, nodes: int = 1, cores_per_node: int = 2, latency_s: float = 0.0, max_jobs: int | None = None) -> float:
    """Seconds from the first job's start to the last job's end under list scheduling (module docstring).

    Raises:
        InputError: No node or core, a dependency on an unknown job, or a cycle.
    """
    if nodes < 1 or cores_per_node < 1:
        raise InputError(f"need at least one node and core, got {nodes} nodes of {cores_per_node} cores")
    unknown = {parent for parents in dependencies.values() for parent in parents} - set(durations)
    if unknown:
        raise InputError(f"dependencies on unknown jobs {sorted(unknown)[:5]}")
    children: dict[int, list[int]] = {job: [] for job in durations}
    for job, parents in dependencies.items():
        for parent in parents:
            children[parent].append(job)
    remaining = {job: len(dependencies.get(job, ())) for job in durations}
    # critical path: a job's duration plus the longest path below it (reverse topological order)
    order, stack = [], [job for job, count in remaining.items() if count == 0]
    counts = dict(remaining)
    while stack:
        job = stack.pop()
        order.append(job)
        for child in children[job]:
            counts[child] -= 1
            if counts[child] == 0:
                stack.append(child)
    if len(order) != len(durations):
        raise InputError("the job graph has a cycle")
    below: dict[int, float] = {}
    for job in reversed(order):
        below[job] = durations[job] + latency_s + max((below[child] for child in children[job]), default=0.0)
    width = {job: min(max(int(threads.get(job, 1)), 1), cores_per_node) for job in durations}
    free = [cores_per_node] * nodes
    waiting = [(latency_s, job) for job, count in remaining.items() if count == 0]  # (time it is ready, job)
    heapq.heapify(waiting)
    ready: list[tuple[float, int]] = []  # (-longest path to the end, job)
    running: list[tuple[float, int, int]] = []  # (end, job, node)
    now, finished, limit = 0.0, 0, max_jobs or math.inf
    while finished < len(durations):
        while waiting and waiting[0][0] <= now:
            job = heapq.heappop(waiting)[1]
            heapq.heappush(ready, (-below[job], job))
        skipped = []
        while ready and len(running) < limit:
            item = heapq.heappop(ready)
            job = item[1]
            node = next((index for index, cores in enumerate(free) if cores >= width[job]), None)
            if node is None:  # no node has its cores free now: a smaller job may start instead
                skipped.append(item)
                continue
            free[node] -= width[job]
            heapq.heappush(running, (now + durations[job], job, node))
        for item in skipped:
            heapq.heappush(ready, item)
        now = min(([running[0][0]] if running else []) + ([waiting[0][0]] if waiting else []))
        while running and running[0][0] <= now:
            _, job, node = heapq.heappop(running)
            free[node] += width[job]
            finished += 1
            for child in children[job]:
                remaining[child] -= 1
                if remaining[child] == 0:
                    heapq.heappush(waiting, (now + latency_s, child))
    return now


@dataclass(frozen=True)
class Scenario:
    """Where a config runs: ``nodes`` x ``cores_per_node``, each job ready ``latency_s`` after its inputs (SLURM),
    at most ``max_jobs`` at once."""

    label: str
    nodes: int
    cores_per_node: int
    latency_s: float = 0.0
    max_jobs: int | None = None


@dataclass
class CostEstimate:
    """A config's planned cost: per rule (planned jobs, units, fitted cost, estimated seconds), the makespan
    of every scenario, and what was guessed (rules never measured, test sets of unknown size, perturbed test
    sets sized as their base test set)."""

    rules: pd.DataFrame
    makespans: dict[str, float]
    unmeasured_rules: list[str]
    unknown_testsets: list[str]
    base_sized_testsets: list[str]
    fallback_seconds: float
    default_segments: int


def segments_from_jobs(jobs: pd.DataFrame) -> dict[str, int]:
    """Test set -> segments, as the measured jobs' units record them (a job naming a test set has its size)."""
    segments: dict[str, int] = {}
    for wildcards, units in zip(jobs["wildcards"].fillna(""), jobs["units"], strict=True):
        values = dict(item.split("=", 1) for item in str(wildcards).split(";") if "=" in item)
        if (testset := named_testset(values)) is not None:
            segments[testset] = int(units)
    return segments


def estimate_cost(measured: pd.DataFrame, planned: Sequence[PlannedJob], scenarios: Sequence[Scenario], *,
                  segments: Mapping[str, int] | None = None, default_segments: int | None = None,
                  sample_sizes: Mapping[str, int | None] | None = None) -> CostEstimate:
    """The cost of the ``planned`` jobs (a dry run of the target config) at the rates of the ``measured``
    jobs (``results/benchmarks/jobs.tsv``), on every scenario.

    ``segments`` (test set -> size) adds to and overrides the sizes the measured jobs record;
    ``default_segments`` stands in for a test set of unknown size (default: the median known size);
    ``sample_sizes`` is the target config's ``perturbations.families.<family>.sample_size`` per family
    (None: whole test sets), which sizes its perturbed test sets
    (:class:`~nlp_robustness.outputs.planned_jobs.PlannedSizes`).
    The job ``all`` costs nothing; a rule never measured costs the median measured job (listed).
    """
    costs = fit_rule_costs(measured)
    sizes = segments_from_jobs(measured) | dict(segments or {})
    default = int(default_segments if default_segments is not None else np.median(list(sizes.values())) if sizes else 1)
    known = PlannedSizes(sizes, default, dict(segments or {}), perturbed_parts(planned), dict(sample_sizes or {}))
    fallback = float(measured["wall_s"].median())
    durations, threads, rows, unmeasured, unknown, base_sized = {}, {}, [], set(), set(), set()
    for job in planned:
        units, sized = planned_job_units(job, known)
        for testset, source, unknown_testsets in sized:
            unknown.update(unknown_testsets)
            if source == BASE:
                base_sized.add(testset)
        group = planned_rate_group(job)
        if job.rule == "all":
            seconds = 0.0
        elif group in costs:
            seconds = costs[group].seconds(units)
        else:
            unmeasured.add(job.rule)
            seconds = fallback
        durations[job.jobid], threads[job.jobid] = seconds, job.threads
        rows.append({"rule": job.rule, "rate_group": group, "units": units, "seconds": seconds, "threads": job.threads})
    dependencies = job_dependencies(planned)
    makespans = {scenario.label: simulate_makespan(durations, threads, dependencies, nodes=scenario.nodes,
                                                   cores_per_node=scenario.cores_per_node, latency_s=scenario.latency_s,
                                                   max_jobs=scenario.max_jobs) for scenario in scenarios}
    table = pd.DataFrame(rows, columns=["rule", "rate_group", "units", "seconds", "threads"])
    grouped = table.groupby("rule", sort=True)
    summary = pd.DataFrame({"jobs": grouped.size(), "units": grouped["units"].sum(), "job_seconds": grouped["seconds"].sum()})
    groups = grouped["rate_group"].first()
    summary["start_up_s"] = [costs[group].start_up_s if group in costs else math.nan for group in groups]
    summary["seconds_per_unit"] = [costs[group].seconds_per_unit if group in costs else math.nan for group in groups]
    summary["measured_jobs"] = [costs[group].jobs if group in costs else 0 for group in groups]
    summary = summary.reset_index().sort_values(["job_seconds", "rule"], ascending=[False, True], kind="stable")
    return CostEstimate(summary.reset_index(drop=True), makespans, sorted(unmeasured - {"all"}), sorted(unknown), sorted(base_sized), fallback,
                        default)


def duration_text(seconds: float) -> str:
    """Seconds as ``h:mm:ss``."""
    whole = int(round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
