"""Two changes to Snakemake's local scheduler: one re-evaluation timer at a time, and cores held for an urgent job.

Timers

Snakemake 9.27 limits job submissions with ``--max-jobs-per-timespan`` (default ``100/1s``). After every
scheduling round that leaves ready jobs waiting for cores, ``JobScheduler._schedule_reevalutation`` starts a
new timer that wakes the scheduler once more after the timespan. Each finished job also wakes it, and each
wake-up runs a round that starts another timer, so the timers in flight grow by one per finished job for as
long as jobs wait. In the default run on 2 cores (~600 jobs, ~150 of them ready while others run), the
scheduler woke hundreds of times a second by the end: each round re-evaluates the params of every ready job
and stats all their inputs. The Snakemake process itself used 410 s of CPU in a 24-minute run, about a
seventh of the two cores, while the jobs waited for them (py-spy: the rounds and the timer threads' start-up
were nearly all of it).

:func:`coalesce_reevaluation_timers` keeps at most one such timer pending: a round scheduled while one is
pending adds nothing, since the pending one wakes the scheduler within the same timespan. The timer is a
daemon thread, so Snakemake does not wait for it to fire before it exits. The job rate limit still holds:
every round still asks the limiter for free slots.

Held cores
    The greedy scheduler starts, whenever cores are free, the best ready jobs that fit into them. A job that
    needs more cores than one (in-house training: two) fits only when every running job has ended at once,
    which rarely happens while hundreds of one-core jobs are ready: in the default run on 2 cores, the
    training data (``priority: 10``, ready after 40 s) waited until 239 s. :func:`hold_cores_for_urgent_jobs`
    makes a round that cannot start the most urgent ready job (the highest ``priority`` above 0) start nothing
    of lower priority, so the cores it needs free up as the running jobs end. Jobs of priority 0 (all but the
    training chain in the default config) are scheduled as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["coalesce_reevaluation_timers", "hold_cores_for_urgent_jobs", "is_patched", "jobs_to_offer"]

#: Marks a replacement so that a second call (a Snakefile parsed twice) does not wrap it again.
_MARK = "_nlp_robustness_patched"


def _coalesced(self: Any, delay: float) -> None:
    """Wake the scheduler after ``delay`` seconds unless a wake-up is pending already."""
    lock = self.__dict__.setdefault("_nlp_robustness_timer_lock", threading.Lock())
    with lock:
        pending = self.__dict__.get("_nlp_robustness_timer")
        if pending is not None and pending.is_alive():
            return
        timer = threading.Timer(delay, self._open_jobs.release)
        timer.daemon = True
        self._nlp_robustness_timer = timer
        timer.start()


setattr(_coalesced, _MARK, True)


def _replace(scheduler_class: type | None, method: str, replacement: Any, original: str) -> bool:
    """Put ``replacement`` in place of ``scheduler_class.method`` (Snakemake's ``JobScheduler`` by default),
    keeping the replaced method as ``scheduler_class.original``; once only (a Snakefile parsed twice).

    Returns:
        True if the method was replaced now or before; False if the class has no such method (another
        Snakemake version), which leaves Snakemake as it is.
    """
    if scheduler_class is None:
        from snakemake.scheduling.job_scheduler import JobScheduler

        scheduler_class = JobScheduler
    current = getattr(scheduler_class, method, None)
    if current is None:
        return False
    if not getattr(current, _MARK, False):
        setattr(scheduler_class, original, current)
        setattr(scheduler_class, method, replacement)
    return True


def coalesce_reevaluation_timers(scheduler_class: type | None = None) -> bool:
    """Replace ``JobScheduler._schedule_reevalutation`` by :func:`_coalesced` (module docstring; see :func:`_replace`)."""
    return _replace(scheduler_class, "_schedule_reevalutation", _coalesced, "_nlp_robustness_original")


def is_patched(scheduler_class: type | None = None) -> bool:
    """Whether ``scheduler_class`` (Snakemake's ``JobScheduler`` by default) uses :func:`_coalesced`."""
    if scheduler_class is None:
        from snakemake.scheduling.job_scheduler import JobScheduler

        scheduler_class = JobScheduler
    return getattr(getattr(scheduler_class, "_schedule_reevalutation", None), _MARK, False)


def jobs_to_offer(
    jobs: Iterable[Any], available: Mapping[str, int], capacity: Mapping[str, int],
) -> list[Any]:
    """The ready ``jobs`` a scheduling round may choose from (see "Held cores" in the module docstring).

    Args:
        jobs: Ready jobs, with ``priority`` and ``scheduler_resources``.
        available: What is free now (``_cores``, ``_nodes``, ``mem_mb`` ...).
        capacity: What the run has in all; a job that needs more than this is never waited for.
    """
    jobs = list(jobs)
    urgent = max((job.priority for job in jobs), default=0)
    if urgent <= 0:
        return jobs

    def fits(job: Any, free: Mapping[str, int]) -> bool:
        needs = job.scheduler_resources
        return all(needs.get(name, 0) <= amount for name, amount in free.items() if not name == "_job_count")

    waiting = [job for job in jobs if job.priority == urgent]
    if any(fits(job, available) for job in waiting) or not any(fits(job, capacity) for job in waiting):
        return jobs
    return waiting


def _holding(self: Any, jobs: Any) -> Any:
    """``JobScheduler.job_selector`` over :func:`jobs_to_offer`'s jobs only."""
    with self._lock:
        offered = jobs_to_offer(jobs, self.resources, self.global_resources)
    return type(self)._nlp_robustness_original_selector(self, offered)


setattr(_holding, _MARK, True)


def hold_cores_for_urgent_jobs(scheduler_class: type | None = None) -> bool:
    """Replace ``JobScheduler.job_selector`` by :func:`_holding` (module docstring, "Held cores"; see :func:`_replace`)."""
    return _replace(scheduler_class, "job_selector", _holding, "_nlp_robustness_original_selector")
