"""The workaround for Snakemake's multiplying scheduler timers (nlp_robustness.scheduler_fix)."""

from __future__ import annotations

import threading
import time

from snakemake.scheduling.job_scheduler import JobScheduler

from nlp_robustness.scheduler_fix import coalesce_reevaluation_timers, is_patched

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
