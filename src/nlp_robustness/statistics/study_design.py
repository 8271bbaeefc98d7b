"""How a study is resampled: one value, :class:`StudyDesign`, says what the bootstrap of a study draws.

The engine (:mod:`.engine`) measures every row of a study on its *units* (:data:`.pools.UNIT_COLUMNS`); the
intervals come from a bootstrap of each pool (:func:`.pool_uncertainty.pool_replicates`). What that bootstrap draws
is the study's *design*, four facts that each study module states once (its ``resampling_design``, see
:mod:`nlp_robustness.studies.registry`):

* **what a unit is**: the study's own units, or finer *replicate units* whose domain means are the domain values
  of the units (a condition's tau is the mean of its DARR judgements; with ``bagging_unit: domain`` a review
  domain's accuracy is the mean of its reviews), drawn in their place;
* **what cluster a unit belongs to**: itself, its document, its unit id or the replicate units' ``cluster``; a
  cluster is drawn whole;
* **which clusters exist** (the *universe*, with their domains): for rows measured on different units of the
  same documents (each system rated on its own segments), so every row draws the same documents;
* **what is crossed**: whether a cluster spans domains (a segment under every perturbation function: drawn over
  the whole study with its units in every domain) or is nested in one (drawn within its domain, the domains kept
  at their size; only then can the domains themselves be resampled, ``uncertainty.resample_domains``).

For one pool the design becomes the arrays a replicate is drawn by (:meth:`StudyDesign.resampling`: the
:class:`.resampling.ResamplingDesign` of :func:`.resampling.cluster_design`), from the pool's units
(:func:`.pools.document_clusters`) and the universe's documents of the pool's domains (:func:`.pools.pool_universe`).
One constructor per common case keeps a study module's design to one line: :func:`units_in_domains`,
:func:`documents_in_domains`, :func:`ids_across_domains`, :func:`replicate_units_by_cluster`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.statistics.pools import document_clusters, pool_universe
from nlp_robustness.statistics.resampling import ResamplingDesign, cluster_design

__all__ = [
    "CLUSTERS",
    "REPLICATE_UNIT_COLUMNS",
    "StudyDesign",
    "documents_in_domains",
    "ids_across_domains",
    "replicate_units_by_cluster",
    "units_in_domains",
]

#: What a unit's cluster can be (:attr:`StudyDesign.cluster`): None (the unit itself), or the column of the drawn
#: units that names it: ``document`` (nested in the domain), ``unit_id`` (shared across domains) or ``cluster``.
CLUSTERS = (None, "document", "unit_id", "cluster")

#: Columns of a design's replicate units.
REPLICATE_UNIT_COLUMNS = ("domain", "unit_id", "cluster", "score")


@dataclass(frozen=True, eq=False)  # eq=False: its tables are no values to compare field by field
class StudyDesign:
    """What the bootstrap of a study draws (module docstring); the same for every row of the study.

    ``cluster``: what a drawn unit's cluster is, the clusters being what is drawn with replacement: None, the unit
    itself (reviews); ``"document"``, the unit's ``document`` column, nested in its domain (WMT documents: a unit
    with no document, "", is its own cluster, and so is every unit when no document holds two); ``"unit_id"``, the
    unit id, which names the same item in every domain (a segment under every perturbation function); ``"cluster"``,
    the ``cluster`` column of the drawn units (the replicate units').

    ``crossed``: whether the clusters span domains, so they are drawn over the whole study and bring their units in
    every domain; otherwise they are nested in one domain and drawn within it. It depends on the study's options
    alone, so the plan can check ``uncertainty.resample_domains`` before any file exists.

    ``replicate_units`` (:data:`REPLICATE_UNIT_COLUMNS`): finer units whose domain means are the domain values of
    the study's units, drawn in their place (their intervals are reflected, as a domain-level sample's), or None.

    ``universe`` (columns ``domain, document``): every document the rows of the study are drawn from, for rows
    measured on different units of the same documents, so every row draws the same documents and the rows stay
    paired; an empty document drawn adds no unit. None: the documents of the pool's units.

    Raises:
        ValueError: an unknown ``cluster``, a ``crossed`` that contradicts it (unit ids are crossed, units and
            documents nested), a universe without document clusters, or replicate units without their clusters.
    """

    cluster: str | None = None
    crossed: bool = False
    replicate_units: pd.DataFrame | None = None
    universe: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        if self.cluster not in CLUSTERS:
            raise ValueError(f"cluster must be one of {CLUSTERS}, got {self.cluster!r}")
        if self.cluster == "unit_id" and not self.crossed:
            raise ValueError("unit ids shared across domains are crossed")
        if self.cluster in (None, "document") and self.crossed:
            raise ValueError(f"clusters by {self.cluster or 'unit'} are nested in their domain, not crossed")
        if self.universe is not None and self.cluster != "document":
            raise ValueError("a universe of documents needs document clusters")
        if self.replicate_units is not None and self.cluster != "cluster":
            raise ValueError("replicate units are drawn by their cluster column (cluster='cluster')")

    def drawn_units(self, units: pd.DataFrame) -> pd.DataFrame:
        """What is drawn of a row's ``units``: the replicate units where the design has them, else the units."""
        return units if self.replicate_units is None else self.replicate_units

    def clusters(self, drawn: pd.DataFrame) -> NDArray | None:
        """The cluster id of every drawn unit of a pool (``drawn``: the pool's units, or its replicate units), or None
        where every unit is its own cluster (by document: also where no document holds two units)."""
        if self.cluster is None:
            return None
        if self.cluster == "document":
            return document_clusters(drawn)
        return drawn[self.cluster].to_numpy()

    def documents(self, clusters: NDArray | None) -> NDArray | None:
        """A pool's :meth:`clusters` where they are documents nested in the domains (the between-domain decomposition
        is then the nested one), else None."""
        return clusters if self.cluster == "document" else None

    def resampling(self, clusters: NDArray | None, codes: NDArray[np.int64], domains: Sequence[str],
                   resample_domains: bool = False) -> ResamplingDesign:
        """The design of one pool's replicates (:func:`.resampling.cluster_design`: the cluster of every drawn unit,
        the stratum of every cluster) that :func:`.pool_uncertainty.pool_replicates` draws by: ``clusters`` the
        :meth:`clusters` of the pool's drawn units (:meth:`drawn_units`; computed once a pool by the caller, who
        reads them for the decomposition too), ``codes`` their domain codes (indices into the pool's ``domains``),
        ``resample_domains`` whether the domains are drawn too (two-stage). Document clusters are drawn from the
        universe's documents of the pool's domains, where the design has a universe.

        Raises:
            ValueError: As :func:`.resampling.cluster_design` (clusters span domains while the domains are to be
                resampled; a unit's document not in the universe).
        """
        universe = pool_universe(self.universe, domains) if clusters is not None else None
        return cluster_design(codes, clusters, resample_domains, universe)

    def resampled_keys(self, units: pd.DataFrame) -> pd.DataFrame:
        """The keys (``domain, unit_id``) that name what a row's bootstrap draws (its replicates' digest,
        :func:`.pool_uncertainty.units_digest`): the universe's documents, the replicate units or the units."""
        if self.universe is not None:
            return self.universe.rename(columns={"document": "unit_id"})
        return self.drawn_units(units)


def units_in_domains() -> StudyDesign:
    """Every unit its own cluster, drawn within its domain (a review belongs to one review domain)."""
    return StudyDesign()


def documents_in_domains(universe: pd.DataFrame | None = None) -> StudyDesign:
    """Whole documents drawn within their domain (the units' ``document`` column), from ``universe`` where given
    (columns ``domain, document``; :attr:`StudyDesign.universe`)."""
    return StudyDesign(cluster="document", universe=universe)


def ids_across_domains() -> StudyDesign:
    """A unit id names the same item in every domain: ids are drawn over the whole study, each with its units in
    every domain (a segment under every perturbation function, a record under every perturbation type)."""
    return StudyDesign(cluster="unit_id", crossed=True)


def replicate_units_by_cluster(replicate_units: pd.DataFrame | None, crossed: bool) -> StudyDesign:
    """Finer units drawn in place of the study's units, by their ``cluster`` column (:data:`REPLICATE_UNIT_COLUMNS`);
    ``crossed``: whether a cluster spans domains. ``replicate_units`` is None only where the plan asks for the
    design before any file exists (:mod:`nlp_robustness.studies.registry`)."""
    return StudyDesign(cluster="cluster", crossed=crossed, replicate_units=replicate_units)
