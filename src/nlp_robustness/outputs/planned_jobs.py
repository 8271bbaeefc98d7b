"""The jobs a config plans and the size of each, read from Snakemake's own dry run, for the cost estimate of
:mod:`nlp_robustness.outputs.cost_estimate` (step 2 of its model).

:func:`parse_dry_run` reads each job of ``snakemake --dry-run --forceall`` (its rule, wildcards, threads, inputs
and outputs) and :func:`job_dependencies` links a job to the jobs making its inputs. A job's *units* are counted
as the measured jobs' are (:func:`planned_job_units`, as :func:`nlp_robustness.outputs.benchmarks.job_units`
counts them): a per-family job's are the summed segments of the test-set tables among its inputs, another job's
those of the test set its wildcards name. The test sets are sized by :class:`PlannedSizes`: measured, given by
hand, a perturbed test set by its sample of its base test sets (:func:`perturbed_parts`), or a stated default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.benchmarks import named_testset, rate_group
from nlp_robustness.perturbations.configuration import DERIVED_PREFIX

__all__ = ["BASE", "DEFAULT", "KNOWN", "PlannedJob", "PlannedSizes", "is_family_job", "job_dependencies", "parse_dry_run",
           "perturbed_parts", "planned_job_units", "planned_rate_group", "planned_units", "testset_tables"]


@dataclass(frozen=True)
class PlannedJob:
    """One job of a dry run: its id, rule, wildcards, threads, inputs and outputs."""

    jobid: int
    rule: str
    wildcards: dict[str, str] = field(default_factory=dict)
    threads: int = 1
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


_RULE_LINE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
_FIELD_LINE = re.compile(r"^    (\w+): (.*)$")


def _split_list(value: str) -> tuple[str, ...]:
    return tuple(item for item in value.split(", ") if item)


def parse_dry_run(text: str) -> list[PlannedJob]:
    """The jobs a ``snakemake --dry-run`` (not ``--quiet``) prints, in its order.

    Raises:
        InputError: A job block has no ``jobid``, or the text lists no job at all.
    """
    jobs, rule, fields = [], None, {}

    def finish() -> None:
        if rule is None:
            return
        if "jobid" not in fields:
            raise InputError(f"dry run: the job of rule {rule!r} has no jobid line")
        wildcards = dict(item.split("=", 1) for item in _split_list(fields.get("wildcards", "")) if "=" in item)
        jobs.append(PlannedJob(int(fields["jobid"]), rule, wildcards, int(fields.get("threads", 1)),
                               _split_list(fields.get("input", "")), _split_list(fields.get("output", ""))))

    for line in text.splitlines():
        if match := _RULE_LINE.match(line):
            finish()
            rule, fields = match.group(1), {}
        elif rule is not None and (match := _FIELD_LINE.match(line)):
            fields[match.group(1)] = match.group(2)
        elif rule is not None and not line.startswith("    "):
            finish()
            rule, fields = None, {}
    finish()
    if not jobs:
        raise InputError("dry run: no job listed (run snakemake --dry-run --forceall without --quiet)")
    return jobs


def job_dependencies(jobs: Sequence[PlannedJob]) -> dict[int, set[int]]:
    """Job id -> the ids of the jobs that make its inputs (an input no job makes is a source file)."""
    maker = {output: job.jobid for job in jobs for output in job.outputs}
    return {job.jobid: {maker[path] for path in job.inputs if path in maker and maker[path] != job.jobid} for job in jobs}


#: How a planned job's size was found: its test set's size given or measured, its base test sets', the default.
KNOWN, BASE, DEFAULT = "known", "base", "default"

_TESTSET_TABLE = re.compile(r"results/testsets/(.+)\.tsv\Z")
_SAMPLE_TABLE = re.compile(r"results/perturbations/[^/]+/samples/(.+)\.tsv\Z")


def testset_tables(paths: Sequence[str]) -> list[str]:
    """The test sets whose tables (``results/testsets/<name>.tsv``) are among ``paths``, in their order."""
    return [match.group(1) for path in paths if (match := _TESTSET_TABLE.match(path))]


def _is_perturbed(testset: str) -> bool:
    return testset.startswith(f"{DERIVED_PREFIX}/")


def perturbed_parts(planned: Sequence[PlannedJob]) -> dict[str, list[str]]:
    """Perturbed test set -> the base test sets it is drawn from: the samples read by the job that writes it
    (``perturb_testset``: one base test set per part, every one of the family's for a ``pooled`` part)."""
    bases: dict[str, list[str]] = {}
    for job in planned:
        for testset in testset_tables(job.outputs):
            if _is_perturbed(testset):
                bases[testset] = [match.group(1) for path in job.inputs if (match := _SAMPLE_TABLE.match(path))]
    return bases


@dataclass(frozen=True)
class PlannedSizes:
    """What a plan knows of test set sizes: ``segments`` (measured, then given), the sizes ``given`` by hand
    (they override any other), ``default_segments`` for a test set of unknown size, each perturbed set's base
    test sets (:func:`perturbed_parts`) and the target config's ``sample_size`` per family (None: whole test
    sets; a family absent: the config is not known, a measured size stands)."""

    segments: Mapping[str, int]
    default_segments: int
    given: Mapping[str, int] = field(default_factory=dict)
    parts: Mapping[str, Sequence[str]] = field(default_factory=dict)
    sample_sizes: Mapping[str, int | None] = field(default_factory=dict)

    def size(self, testset: str) -> tuple[int, str, list[str]]:
        """A test set's segments, how they were found (:data:`KNOWN`, :data:`BASE`, :data:`DEFAULT`) and the
        test sets of unknown size they stand for.

        A perturbed test set (``perturbed/<family>/<function>/<part>``) of a family whose ``sample_size`` the
        target config gives, or of unknown size, counts its sample of every base test set: the whole base test
        set (``sample_size: null``), else at most ``sample_size`` of it; a ``pooled`` part sums them over
        the family's test sets. It is an upper bound: a function skips the segments it cannot perturb."""
        if testset in self.given:
            return int(self.given[testset]), KNOWN, []
        family = testset.split("/")[1] if _is_perturbed(testset) else None
        if family is not None and (family in self.sample_sizes or testset not in self.segments):
            sample = self.sample_sizes.get(family)
            total, unknown = 0, []
            for base in self.parts.get(testset) or [testset.rsplit("/", 1)[-1]]:
                if base in self.given or base in self.segments:
                    whole = int(self.given.get(base, self.segments.get(base, 0)))
                else:
                    whole = self.default_segments
                    unknown.append(base)
                total += whole if sample is None else min(whole, int(sample))
            return total, DEFAULT if unknown else BASE, unknown
        if testset in self.segments:
            return int(self.segments[testset]), KNOWN, []
        return self.default_segments, DEFAULT, [testset]


def is_family_job(job: PlannedJob) -> bool:
    """Whether a planned job is one of a rule made once per perturbation family (``<rule>_<family>``, no test
    set in its wildcards, reading that family's perturbed test sets): its units are every test set it reads."""
    if named_testset(job.wildcards) is not None:
        return False
    return rate_group(job.rule, testset_tables(job.inputs)) != job.rule


def planned_rate_group(job: PlannedJob) -> str:
    """The rate group (:func:`nlp_robustness.outputs.benchmarks.rate_group`) whose fitted cost a planned job has."""
    return rate_group(job.rule, testset_tables(job.inputs)) if is_family_job(job) else job.rule


def planned_job_units(job: PlannedJob, sizes: PlannedSizes) -> tuple[int, list[tuple[str, str, list[str]]]]:
    """A planned job's units, counted as :func:`nlp_robustness.outputs.benchmarks.job_units` counts a measured
    job's: the summed segments of every test-set table a per-family job reads (:func:`is_family_job`), else
    those of the test set its wildcards name, else 1; and every test set sized, with
    :meth:`PlannedSizes.size`'s source and unknown test sets."""
    if is_family_job(job):
        testsets = testset_tables(job.inputs)
    else:
        testsets = [testset] if (testset := named_testset(job.wildcards)) is not None else []
    if not testsets:
        return 1, []
    sized = [(testset, *sizes.size(testset)) for testset in testsets]
    return sum(units for _, units, _, _ in sized), [(testset, source, unknown) for testset, _, source, unknown in sized]


def planned_units(wildcards: Mapping[str, str], segments: Mapping[str, int], default_segments: int) -> tuple[int, str]:
    """The units of a planned job named by its wildcards (not a per-family job) and how its size was found:
    :data:`KNOWN`; :data:`BASE` for a perturbed test set (``perturbed/<family>/<function>/<base>``) of unknown
    size, sized as its whole base test set; :data:`DEFAULT` where ``default_segments`` stands in."""
    units, sized = planned_job_units(PlannedJob(-1, "", dict(wildcards)), PlannedSizes(segments, default_segments))
    return units, sized[0][1] if sized else KNOWN
