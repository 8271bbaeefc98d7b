"""One change to Snakemake's job scheduler that its interfaces cannot make: one re-evaluation timer at a time.

The upstream behaviour
    Snakemake 9.27.1, ``src/snakemake/scheduling/job_scheduler.py``: ``JobScheduler.schedule()`` ends every
    scheduling round of a run with a job rate limiter (``--max-jobs-per-timespan``, default ``100/1s``, so every
    run but a dry run or ``--touch``) with ``self._schedule_reevalutation(self.job_rate_limiter.timespan)``, and
    ``JobScheduler._schedule_reevalutation`` starts a new ``threading.Timer`` each time, which releases the
    scheduler's ``_open_jobs`` semaphore (wakes it) after the timespan. Nothing checks whether a timer is
    pending already. The call came in with snakemake/snakemake#3067 (v8.19.1, "fix issues with
    misinterpretation of max-jobs-per-timespan"); it is unchanged up to 9.27.1. Source:
    https://github.com/snakemake/snakemake/blob/v9.27.1/src/snakemake/scheduling/job_scheduler.py
    (search ``_schedule_reevalutation``; note the upstream spelling). A newer Snakemake has fixed it if that
    method no longer starts an unconditional timer per call, or if ``schedule()`` no longer calls it after
    every round.

Its cost here
    Each finished job also wakes the scheduler, and each wake-up runs a round that starts another timer, so the
    timers in flight grow by one per finished job for as long as jobs wait for cores. In the default run on 2
    cores (~600 jobs, ~150 of them ready while others run), the scheduler woke hundreds of times a second by the
    end: each round re-evaluates the params of every ready job and stats all their inputs. The Snakemake process
    itself used 410 s of CPU in a 24-minute run, about a seventh of the two cores, while the jobs waited for them
    (py-spy: the rounds and the timer threads' start-up were nearly all of it).

The change
    :func:`coalesce_reevaluation_timers` keeps at most one such timer pending: a round scheduled while one is
    pending adds nothing, since the pending one wakes the scheduler within the same timespan. The timer is a
    daemon thread, so Snakemake does not wait for it to fire before it exits. The job rate limit still holds:
    every round still asks the limiter for free slots. A scheduler plugin cannot do this: the plugin interface
    (snakemake-interface-scheduler-plugins) only chooses among the ready jobs (``select_jobs``); when the
    scheduler wakes is ``JobScheduler``'s own. The patch is applied only on the Snakemake versions in
    :data:`SNAKEMAKE_VERSIONS`, the ones it was written and checked for; on any other Snakemake runs unpatched,
    with one warning line.

The other change to scheduling, cores held for the most urgent job, is a scheduler plugin
(``snakemake_scheduler_plugin_greedy_urgent``, ``scheduler: greedy-urgent`` in profiles/default).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["SNAKEMAKE_VERSIONS", "coalesce_reevaluation_timers", "is_patched"]

#: The Snakemake versions whose ``JobScheduler._schedule_reevalutation`` the patch was written and checked for.
SNAKEMAKE_VERSIONS = ("9.27.1",)

#: Marks the replacement so that a second call (a Snakefile parsed twice) does not wrap it again.
_MARK = "_nlp_robustness_patched"

#: Whether this process has warned already (a Snakefile parsed twice warns once).
_warned = False


def _warn_once(message: str) -> None:
    """Log ``message`` through Snakemake's logger, once per process."""
    global _warned
    if not _warned:
        _warned = True
        logging.getLogger("snakemake.logging").warning(message)


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


def coalesce_reevaluation_timers(scheduler_class: type | None = None, *, warn: bool = True) -> bool:
    """Replace ``JobScheduler._schedule_reevalutation`` by :func:`_coalesced` (see the module docstring), once.

    Args:
        scheduler_class: The class to patch; Snakemake's ``JobScheduler`` by default.
        warn: Whether to log why nothing was patched (once per process). The Snakefile passes whether it runs
            in Snakemake's main process, so job subprocesses, which parse the Snakefile again, stay quiet.

    Returns:
        True if the method is replaced now or was before; False if the installed Snakemake is not one of
        :data:`SNAKEMAKE_VERSIONS` or the class has no such method, which leaves Snakemake as it is. Never raises.
    """
    import snakemake

    version = getattr(snakemake, "__version__", None)
    if version not in SNAKEMAKE_VERSIONS:
        if warn:
            _warn_once(f"nlp_robustness.scheduler_fix: Snakemake {version} is not {' or '.join(SNAKEMAKE_VERSIONS)}, which its "
                       "scheduler timer patch was checked for; running unpatched (scheduling may cost more CPU)")
        return False
    if scheduler_class is None:
        try:
            from snakemake.scheduling.job_scheduler import JobScheduler
        except ImportError:
            JobScheduler = None
        scheduler_class = JobScheduler
    current = getattr(scheduler_class, "_schedule_reevalutation", None)
    if current is None:
        if warn:
            _warn_once(f"nlp_robustness.scheduler_fix: Snakemake {version}'s JobScheduler has no _schedule_reevalutation; "
                       "running unpatched")
        return False
    if not getattr(current, _MARK, False):
        scheduler_class._nlp_robustness_original = current
        scheduler_class._schedule_reevalutation = _coalesced
    return True


def is_patched(scheduler_class: type | None = None) -> bool:
    """Whether ``scheduler_class`` (Snakemake's ``JobScheduler`` by default) uses :func:`_coalesced`."""
    if scheduler_class is None:
        from snakemake.scheduling.job_scheduler import JobScheduler

        scheduler_class = JobScheduler
    return getattr(getattr(scheduler_class, "_schedule_reevalutation", None), _MARK, False)
