"""The workaround for Snakemake's multiplying scheduler timers (nlp_robustness.scheduler_fix)."""

from __future__ import annotations

import threading
import time

from snakemake.scheduling.job_scheduler import JobScheduler

from nlp_robustness.scheduler_fix import _holding, coalesce_reevaluation_timers, hold_cores_for_urgent_jobs, is_patched, jobs_to_offer

#: The method as Snakemake 9.27 defines it (kept by the patch, if a test parsed the Snakefile already).
ORIGINAL = JobScheduler.__dict__.get("_nlp_robustness_original", JobScheduler.__dict__["_schedule_reevalutation"])


def _scheduler_class(method) -> type:
    """A stand-in with what the method touches: the scheduler's wake-up semaphore."""

    class Scheduler:
        def __init__(self) -> None:
            self._open_jobs = threading.Semaphore(0)

    Scheduler._schedule_reevalutation = method
    return Scheduler


def _wake_ups(scheduler, wait: float) -> int:
    """How many times the scheduler is woken within ``wait`` seconds."""
    deadline, count = time.monotonic() + wait, 0
    while scheduler._open_jobs.acquire(timeout=max(deadline - time.monotonic(), 0.001)):
        count += 1
    return count


def test_snakemakes_method_starts_one_timer_per_call() -> None:
    # The behaviour the workaround exists for: every scheduling round adds a timer, and each wakes it again.
    scheduler = _scheduler_class(ORIGINAL)()
    for _ in range(20):
        scheduler._schedule_reevalutation(0.05)
    assert _wake_ups(scheduler, 0.5) == 20


def test_coalesced_timers_wake_the_scheduler_once_per_timespan() -> None:
    Scheduler = _scheduler_class(ORIGINAL)
    assert coalesce_reevaluation_timers(Scheduler) and is_patched(Scheduler)
    scheduler = Scheduler()
    for _ in range(20):
        scheduler._schedule_reevalutation(0.05)
    assert scheduler._nlp_robustness_timer.daemon  # Snakemake does not wait for it when it exits
    assert _wake_ups(scheduler, 0.5) == 1
    scheduler._schedule_reevalutation(0.05)  # once it has fired, the next round arms a new one
    assert _wake_ups(scheduler, 0.5) == 1
    # Patching twice keeps one replacement; a class without the method is left alone.
    method = Scheduler._schedule_reevalutation
    assert coalesce_reevaluation_timers(Scheduler) and Scheduler._schedule_reevalutation is method
    assert not coalesce_reevaluation_timers(type("Other", (), {})) and not is_patched(type("Other", (), {}))


def test_the_workflow_patches_snakemakes_scheduler() -> None:
    assert coalesce_reevaluation_timers() and is_patched()
    assert is_patched(JobScheduler)


class _Job:
    def __init__(self, name: str, priority: int = 0, cores: int = 1, **resources: int) -> None:
        self.name, self.priority = name, priority
        self.scheduler_resources = {"_cores": cores, "_nodes": 1, **resources}

    def __repr__(self) -> str:
        return self.name


CAPACITY = {"_cores": 2, "_nodes": 1 << 62, "_job_count": 1 << 62}


def test_a_round_that_cannot_start_the_urgent_job_starts_nothing_less_urgent() -> None:
    training, cheap = _Job("training", priority=10, cores=2), [_Job(f"cheap{n}") for n in range(3)]
    one_core_free = {**CAPACITY, "_cores": 1}
    assert jobs_to_offer([*cheap, training], one_core_free, CAPACITY) == [training]
    # Both cores free: everything is offered (the selector then picks by priority as before).
    assert jobs_to_offer([*cheap, training], CAPACITY, CAPACITY) == [*cheap, training]
    # Without an urgent job (every job of priority 0), or with one that fits, nothing changes.
    assert jobs_to_offer(cheap, one_core_free, CAPACITY) == cheap
    urgent_one_core = _Job("data", priority=10)
    assert jobs_to_offer([*cheap, urgent_one_core], one_core_free, CAPACITY) == [*cheap, urgent_one_core]


def test_a_job_that_can_never_fit_is_not_waited_for() -> None:
    # More memory than the run has: Snakemake reports it; holding the cores for it would stall the run.
    huge, cheap = _Job("huge", priority=10, mem_mb=10_000), _Job("cheap")
    assert jobs_to_offer([huge, cheap], {**CAPACITY, "_cores": 1, "mem_mb": 1000}, {**CAPACITY, "mem_mb": 1000}) == [huge, cheap]


def test_the_workflow_holds_cores_through_snakemakes_selector() -> None:
    selected = []

    class Scheduler:
        def __init__(self) -> None:
            self._lock = threading.Lock()
            self.resources = {**CAPACITY, "_cores": 1}
            self.global_resources = CAPACITY

        def job_selector(self, jobs):
            selected.append(list(jobs))
            return set()

    assert hold_cores_for_urgent_jobs(Scheduler)
    method = Scheduler.job_selector
    assert hold_cores_for_urgent_jobs(Scheduler) and Scheduler.job_selector is method  # wrapped once
    training, cheap = _Job("training", priority=10, cores=2), _Job("cheap")
    Scheduler().job_selector({training, cheap})
    assert selected == [[training]]
    assert hold_cores_for_urgent_jobs() and JobScheduler.job_selector is _holding
