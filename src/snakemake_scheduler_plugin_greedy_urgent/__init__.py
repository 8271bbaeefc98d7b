"""Snakemake scheduler plugin ``greedy-urgent``: Snakemake's greedy scheduler, with cores held for the most urgent job.

Selected in ``profiles/default/config.yaml`` (``scheduler: greedy-urgent``), which Snakemake also reads as the
workflow profile of every run of this repository's Snakefile; ``--scheduler greedy`` runs without it. Snakemake
finds the plugin by its module name (``snakemake_scheduler_plugin_<name>``, snakemake-interface-scheduler-plugins'
registry), here installed with the nlp-robustness package (``pip install -e .``; setuptools finds every package
under ``src/``).

Why: the greedy scheduler starts, whenever cores are free, the best ready jobs that fit into them. A job that
needs more cores than one (in-house training: two) fits only when every running job has ended at once, which
rarely happens while hundreds of one-core jobs are ready: in the default run on 2 cores, the training data
(``priority: 10``, ready after 40 s) waited until 239 s. Here a round that cannot start the most urgent ready job
(the highest ``priority`` above 0) starts nothing of lower priority, so the cores it needs free up as the running
jobs end (:func:`jobs_to_offer`); what the round may start is then chosen by Snakemake's own greedy scheduler,
with its settings (``--scheduler-greedy-urgent-greediness`` ...). Jobs of priority 0 (all but the training chain
in the default config) are scheduled as by ``greedy``.

Dry runs, ``--touch`` and ``--immediate-submit`` use Snakemake's greedy scheduler whatever the profile says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snakemake.scheduling.greedy import Scheduler as GreedyScheduler
from snakemake.scheduling.greedy import SchedulerSettings as GreedySchedulerSettings
from snakemake_interface_scheduler_plugins.base import SchedulerBase

from nlp_robustness.snakemake_messages import name_config_file_faults

__all__ = ["Scheduler", "SchedulerSettings", "jobs_to_offer"]

# Not scheduling: Snakemake imports every installed plugin while it builds its command line, before it reads the
# files given with --configfile, so this import is the one place early enough to make a syntax error in such a file
# name its line and column (nlp_robustness.snakemake_messages; the Snakefile checks config.yaml itself).
name_config_file_faults()


def jobs_to_offer(
    jobs: Iterable[Any], available: Mapping[str, int], capacity: Mapping[str, int],
) -> list[Any]:
    """The ready ``jobs`` a scheduling round may choose from (see the module docstring).

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


@dataclass
class SchedulerSettings(GreedySchedulerSettings):
    """The greedy scheduler's settings, as ``--scheduler-greedy-urgent-<setting>``."""


class Scheduler(SchedulerBase):
    """Snakemake's greedy scheduler over :func:`jobs_to_offer`'s jobs."""

    def __post_init__(self) -> None:
        settings = self.settings if isinstance(self.settings, GreedySchedulerSettings) else SchedulerSettings()
        self._greedy = GreedyScheduler(self.dag, settings, self.logger)
        # What the run has in all. The interface passes only what is free now; the first round (nothing runs
        # yet) is offered everything, so the most seen of each resource is the run's capacity.
        self._capacity: dict[str, int] = {}

    def dag_updated(self) -> None:
        self._greedy.dag_updated()

    def select_jobs(
        self,
        selectable_jobs: Sequence[Any],
        remaining_jobs: Sequence[Any],
        available_resources: Mapping[str, int | str],
        input_sizes: dict[Any, int],
    ) -> Sequence[Any] | None:
        free = {name: amount for name, amount in available_resources.items() if isinstance(amount, int)}
        for name, amount in free.items():
            self._capacity[name] = max(amount, self._capacity.get(name, amount))
        offered = jobs_to_offer(selectable_jobs, free, self._capacity)
        return self._greedy.select_jobs(offered, remaining_jobs, available_resources, input_sizes)
