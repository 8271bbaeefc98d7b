"""The entries of the study plan (:mod:`nlp_robustness.studies.plan`): a study, a block set, a statistics job, a table
and a gamma figure, each a frozen record of what its rule reads and writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nlp_robustness.statistics.pools import column_groups

__all__ = ["BlockSet", "GammaFigure", "RowStatistics", "Study", "StudyTable"]


@dataclass(frozen=True)
class Study:
    """One study: its registry module, domains in order, pools, aggregation and bagging design.

    ``namespace`` are the labels its blocks are seeded with besides (seed, method, left-out domain); the MT
    domain study has none, so its blocks are the ones it had before the engine served several studies.
    """

    name: str
    module: str
    domains: list[str]
    leave_out: list[str]
    aggregation: str
    namespace: list[str]
    options: dict[str, Any]
    bagging: dict[str, Any]


@dataclass(frozen=True)
class BlockSet:
    """Blocks drawn once over a study's unit keys (``results/blocks/<name>.tsv``), shared by its rows."""

    name: str
    study: str
    unit_files: dict[str, str]


@dataclass(frozen=True)
class RowStatistics:
    """Metrics I-III of one row under one score: ``results/<stem>.{summary,gamma,blocks}.tsv``."""

    stem: str
    study: str
    row: str
    score: str
    unit_files: dict[str, str]
    block_set: str
    epsilon: dict[str, float]
    row_label: str

    def path(self, kind: str) -> str:
        """The row's ``summary``, ``gamma`` or ``blocks`` table."""
        return f"results/{self.stem}.{kind}.tsv"


@dataclass(frozen=True)
class StudyTable:
    """The paper-shaped tables (Tables 1-6 layout) of a group of rows: ``results/tables/<directory>/robustness_<method>.*``.

    ``caption`` names a Jinja caption file under ``report/``, rendered with :meth:`caption_context` and the method.
    """

    directory: str
    rows: dict[str, str]  # row name in the table -> statistics stem
    row_label: str
    leave_out: list[str]
    branch: str
    scores: str
    pool: str
    note: str
    latex_label: str
    decimals: int
    caption: str
    caption_variables: dict[str, str]
    section: str
    subcategory: str
    #: row -> family: rows are compared within their family (empty: one family; :mod:`.statistics.comparisons`)
    families: dict[str, str] = field(default_factory=dict)
    #: False for a score whose mean is near or below 0 (:func:`~nlp_robustness.studies.study_settings.human_cov_meaningful`): its tables print no COV
    cov_meaningful: bool = True
    #: False for a score whose lower values are better (a metric read from files): its comparisons say so of the mean
    higher_is_better: bool = True

    def caption_context(self) -> dict[str, str]:
        """The caption's variables: ``caption_variables`` and ``column_groups``, the pools as the study has them
        (the whole pool only, or the whole pool and the domains it leaves out, named)."""
        return {**self.caption_variables, "column_groups": column_groups(self.leave_out, self.pool)}


@dataclass(frozen=True)
class GammaFigure:
    """The gamma-epsilon curves of a group of rows on the whole pool: ``results/figures/<directory>/gamma_curves.{png,pdf}``."""

    directory: str
    rows: dict[str, str]  # row name -> statistics stem
    metric: str
    scores: str | None
    caption: str
    caption_variables: dict[str, str]
    section: str
    subcategory: str

    def caption_context(self) -> dict[str, str]:
        """The caption's variables (``caption_variables``)."""
        return dict(self.caption_variables)
