"""The workaround for Snakemake's multiplying scheduler timers (nlp_robustness.scheduler_fix), guarded by
Snakemake's version, and the scheduler plugin greedy-urgent (snakemake_scheduler_plugin_greedy_urgent)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import snakemake
from snakemake.scheduling.greedy import Scheduler as GreedyScheduler
from snakemake.scheduling.job_scheduler import JobScheduler
from snakemake_interface_scheduler_plugins.registry import SchedulerPluginRegistry

import nlp_robustness.scheduler_fix as scheduler_fix
from nlp_robustness.scheduler_fix import SNAKEMAKE_VERSIONS, coalesce_reevaluation_timers, is_patched
from snakemake_scheduler_plugin_greedy_urgent import Scheduler, SchedulerSettings, jobs_to_offer

REPOSITORY = Path(__file__).resolve().parents[2]

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


@pytest.fixture
def warnings_logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[logging.LogRecord]]:
    """The records logged through Snakemake's logger, this process not having warned yet."""
    monkeypatch.setattr(scheduler_fix, "_warned", False)
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    snakemake_logger = logging.getLogger("snakemake.logging")
    snakemake_logger.addHandler(handler)
    try:
        yield records
    finally:
        snakemake_logger.removeHandler(handler)


def test_the_installed_snakemake_is_the_patched_one() -> None:
    # requirements.txt pins it; after an upgrade, check the upstream behaviour (module docstring) and update
    # SNAKEMAKE_VERSIONS, or drop the patch if the new version fixed it.
    assert snakemake.__version__ in SNAKEMAKE_VERSIONS


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
    # Patching twice keeps one replacement.
    method = Scheduler._schedule_reevalutation
    assert coalesce_reevaluation_timers(Scheduler) and Scheduler._schedule_reevalutation is method


def test_the_checked_version_is_patched(monkeypatch: pytest.MonkeyPatch, warnings_logged) -> None:
    monkeypatch.setattr(snakemake, "__version__", "9.27.1")
    Scheduler = _scheduler_class(ORIGINAL)
    assert coalesce_reevaluation_timers(Scheduler) and is_patched(Scheduler)
    assert Scheduler._nlp_robustness_original is ORIGINAL
    assert warnings_logged == []


def test_another_version_runs_unpatched_with_one_warning(monkeypatch: pytest.MonkeyPatch, warnings_logged) -> None:
    monkeypatch.setattr(snakemake, "__version__", "9.28.0")
    Scheduler = _scheduler_class(ORIGINAL)
    # Twice: a Snakefile parsed twice in one run warns once.
    assert not coalesce_reevaluation_timers(Scheduler) and not coalesce_reevaluation_timers(Scheduler)
    assert not is_patched(Scheduler) and Scheduler._schedule_reevalutation is ORIGINAL
    assert [(record.levelno, record.getMessage()) for record in warnings_logged] == [(
        logging.WARNING,
        "nlp_robustness.scheduler_fix: Snakemake 9.28.0 is not 9.27.1, which its scheduler timer patch was checked "
        "for; running unpatched (scheduling may cost more CPU)",
    )]


def test_a_job_subprocess_does_not_warn(monkeypatch: pytest.MonkeyPatch, warnings_logged) -> None:
    # The Snakefile passes warn=workflow.is_main_process: a job's own Snakemake process stays quiet.
    monkeypatch.setattr(snakemake, "__version__", "9.28.0")
    assert not coalesce_reevaluation_timers(_scheduler_class(ORIGINAL), warn=False)
    assert warnings_logged == []


def test_a_scheduler_without_the_method_is_left_alone(warnings_logged) -> None:
    Other = type("Other", (), {})
    assert not coalesce_reevaluation_timers(Other) and not coalesce_reevaluation_timers(Other)
    assert not is_patched(Other) and not hasattr(Other, "_schedule_reevalutation")
    assert [record.getMessage() for record in warnings_logged] == [
        f"nlp_robustness.scheduler_fix: Snakemake {snakemake.__version__}'s JobScheduler has no "
        "_schedule_reevalutation; running unpatched"
    ]


def test_the_workflow_patches_snakemakes_scheduler() -> None:
    assert coalesce_reevaluation_timers() and is_patched()
    assert is_patched(JobScheduler)


class _Job:
    def __init__(self, name: str, priority: int = 0, cores: int = 1, **resources: int) -> None:
        self.name, self.priority = name, priority
        self.scheduler_resources = {"_cores": cores, "_nodes": 1, **resources}
        self.input = []  # what the greedy scheduler weighs by size, after the priority

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


def _select(scheduler, jobs, available) -> list:
    return list(scheduler.select_jobs(jobs, jobs, available, {}))


def test_the_plugin_holds_cores_where_greedy_fills_them() -> None:
    logger = logging.getLogger("test")
    plugin = Scheduler(None, SchedulerSettings(), logger)
    greedy = GreedyScheduler(None, SchedulerSettings(), logger)
    training, data, cheap = _Job("training", priority=10, cores=2), _Job("data", priority=10), [_Job(f"cheap{n}") for n in range(3)]
    # The first round (nothing runs): both start the most urgent job, then fill the rest by greedy's own rule.
    assert _select(plugin, [*cheap, data], CAPACITY) == _select(greedy, [*cheap, data], CAPACITY)
    assert data in _select(plugin, [*cheap, data], CAPACITY)
    one_core_free = {**CAPACITY, "_cores": 1}
    # One core free, a two-core urgent job ready: greedy starts a cheap job, the plugin keeps the core.
    assert _select(greedy, [*cheap, training], one_core_free) == [cheap[0]]
    assert _select(plugin, [*cheap, training], one_core_free) == []
    # Both free again: the urgent job starts.
    assert _select(plugin, [*cheap, training], CAPACITY) == [training]
    # Jobs of priority 0 only: as greedy.
    assert _select(plugin, cheap, one_core_free) == _select(greedy, cheap, one_core_free) == [cheap[0]]


def test_the_plugin_learns_the_runs_capacity_from_its_first_round() -> None:
    # The interface gives only what is free now; a job needing more than the run ever had is not waited for.
    plugin = Scheduler(None, SchedulerSettings(), logging.getLogger("test"))
    huge, cheap = _Job("huge", priority=10, cores=4), _Job("cheap")
    assert _select(plugin, [cheap], CAPACITY) == [cheap]
    assert _select(plugin, [huge, cheap], {**CAPACITY, "_cores": 1}) == [cheap]


def test_snakemake_finds_the_plugin_and_the_default_profile_selects_it() -> None:
    plugin = SchedulerPluginRegistry().get_plugin("greedy-urgent")
    assert plugin.scheduler is Scheduler and plugin.settings_cls is SchedulerSettings
    from snakemake.cli import get_argument_parser

    args = get_argument_parser(profiles=[str(REPOSITORY / "profiles" / "default")]).parse_args([])
    assert args.scheduler == "greedy-urgent"  # a choice Snakemake's command line accepts
    settings = plugin.get_settings(args)
    assert isinstance(settings, SchedulerSettings) and settings.greediness == 1.0
