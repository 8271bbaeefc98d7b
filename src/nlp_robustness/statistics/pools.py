"""The pools of a study: its units by domain, the whole pool and each domain left out in turn, and their names.

A *study* is a table of units, one row each (:data:`UNIT_COLUMNS`), with a domain label, a unit id and a score: MT
segments scored by sentence BLEU (domains = test sets), reviews scored 0 or 100 for a wrong or right prediction
(domains = product domains), rated segments scored by humans, and later perturbed segments (domains = perturbation
functions).

A *pool* is the units of every domain but the one left out (:data:`WHOLE_POOL`: none left out), in the
study's domain order, units in their own order within a domain (:func:`pool_units`). Every pool is measured by
every method (:data:`METHODS`): the whole pool, then the bagging methods on the study's blocks (:mod:`.blocks`),
by the engine (:mod:`.engine`). How a pool is named for a reader, in a caption and in a CSV header:
:func:`pool_label`, :func:`column_groups`, :func:`csv_group`. The documents of a pool's units (WMT documents) are
the clusters its bootstrap resamples where the study's design draws documents (:func:`document_clusters`, read by
:class:`.study_design.StudyDesign`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.bagging import BAGGING_METHODS

__all__ = [
    "METHODS",
    "UNIT_COLUMNS",
    "WHOLE_POOL",
    "column_groups",
    "csv_group",
    "document_clusters",
    "leave_out_labels",
    "pool_domains",
    "pool_label",
    "pool_universe",
    "pool_units",
    "units_from_tables",
]

#: Left-out label of the whole pool (nothing left out), as written in every summary and block file.
WHOLE_POOL = "none"

#: Every method: the whole pool first, then the sampling methods of Algorithms 5 and 6.
METHODS = ("pool", *BAGGING_METHODS)

UNIT_COLUMNS = ("domain", "unit_id", "score")


def leave_out_labels(left_out: Sequence[str]) -> list[str]:
    """The pools of a study: the whole pool first, then each domain left out in turn."""
    return [WHOLE_POOL, *left_out]


def pool_label(left_out: str) -> str:
    """How a pool is named for a reader: ``whole pool`` or ``without <domain>`` (the pool of every other domain)."""
    return "whole pool" if left_out == WHOLE_POOL else f"without {left_out}"


def column_groups(pools: Sequence[str], domain: str) -> str:
    """What a study table's column groups are, for its caption: ``pools`` are its pools (:func:`leave_out_labels`,
    or only the domains left out), ``domain`` what its domains are called (``test set``, ``function``).

    A caption says which domains are left out, so that a study that leaves out none (one test set, or
    ``leave_out: []``) is not described as leaving each out in turn.
    """
    left_out = [pool for pool in pools if pool != WHOLE_POOL]
    if not left_out:
        return f"the whole pool only (no {domain} is left out)"
    return f"the whole pool, then each {domain} left out in turn: {', '.join(left_out)}"


def csv_group(left_out: str) -> str:
    """How a pool prefixes the column headers of a robustness table's CSV: ``whole_pool`` or ``without_`` and the
    left-out domain (``whole_pool_COV``, ``without_wmt14_Mean``: the values of the pool *without* wmt14, not of
    wmt14); the profile reads those columns back by this name."""
    return "whole_pool" if left_out == WHOLE_POOL else f"without_{left_out}"


def pool_domains(domains: Sequence[str], left_out: str) -> list[str]:
    """The domains of the pool that leaves out ``left_out`` (study order)."""
    return [domain for domain in domains if domain != left_out]


def units_from_tables(tables: Mapping[str, pd.DataFrame], id_column: str, score_column: str | None = None,
                      document_column: str | None = None) -> pd.DataFrame:
    """One unit table from per-domain tables (domain -> table; mapping order is domain order).

    ``id_column`` holds the unit ids; ``score_column`` the scores (None: keys only, no ``score`` column);
    ``document_column`` the units' documents (a ``document`` column; "" where a table lacks it).
    """
    frames = []
    for domain, table in tables.items():
        frame = pd.DataFrame({"domain": domain, "unit_id": table[id_column].astype(str).to_numpy()})
        if score_column is not None:
            frame["score"] = table[score_column].to_numpy(dtype=np.float64)
        if document_column is not None:
            frame["document"] = (table[document_column].fillna("").astype(str).to_numpy() if document_column in table
                                 else "")
        frames.append(frame)
    columns = list(UNIT_COLUMNS if score_column is not None else UNIT_COLUMNS[:2])
    columns += ["document"] if document_column is not None else []
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def pool_units(units: pd.DataFrame, domains: Sequence[str], left_out: str, study: str = "study") -> pd.DataFrame:
    """The units of the pool that leaves out ``left_out``: domain order of ``domains``, unit order kept.

    Raises:
        InputError: A domain of the pool has no unit, or no domain remains (``study`` names the study).
    """
    return _pool(units, _rows_by_domain(units), domains, left_out, study)[0]


def _rows_by_domain(units: pd.DataFrame) -> dict[Any, NDArray[np.intp]]:
    """The row positions of every domain of ``units``, ascending: grouped once for all the pools of a study
    instead of comparing the domain column with every domain of every pool."""
    return units.groupby("domain", sort=False).indices


def _pool(units: pd.DataFrame, rows_by_domain: Mapping[Any, NDArray[np.intp]], domains: Sequence[str], left_out: str,
          study: str) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """:func:`pool_units` from the table's :func:`_rows_by_domain`, and the pool's domain codes (as :func:`_codes`
    gives them: the index of a unit's domain among the pool's)."""
    members = pool_domains(domains, left_out)
    if not members:
        raise InputError(f"{study}: leaving out {left_out} leaves no domain in the pool")
    parts = []
    for domain in members:
        rows = rows_by_domain.get(domain)
        if rows is None or rows.size == 0:
            raise InputError(f"{study}: domain {domain} has no units")
        parts.append(rows)
    pool = units.take(np.concatenate(parts)).reset_index(drop=True)
    if len(set(members)) < len(members):  # a domain named twice: its units take the code of the last mention
        return pool, _codes(pool, members)
    return pool, np.repeat(np.arange(len(members), dtype=np.int64), [rows.size for rows in parts])


def _codes(frame: pd.DataFrame, members: Sequence[str]) -> NDArray[np.int64]:
    return frame["domain"].map({domain: index for index, domain in enumerate(members)}).to_numpy(dtype=np.int64)


def document_clusters(pool: pd.DataFrame) -> NDArray[np.object_] | None:
    """The document of every unit of a pool as a cluster id nested in its domain (``domain`` + ``document``; a unit
    with no document is its own cluster), or None when the units have no ``document`` column or every document
    is a single unit (the units are then resampled one by one, as before)."""
    if "document" not in pool.columns:
        return None
    documents = pool["document"].astype(str)
    if (documents == "").all():
        return None
    own = documents == ""
    keys = pool["domain"].astype(str) + "\x1f" + documents.where(~own, "\x1e" + pool["unit_id"].astype(str))
    if keys.nunique() == len(keys):
        return None
    return keys.to_numpy(dtype=object)


def pool_universe(documents: pd.DataFrame | None, members: Sequence[str]) -> tuple[NDArray[np.object_], NDArray[np.int64]] | None:
    """The documents of a pool's domains as cluster keys of :func:`document_clusters` with their domain codes
    (None without a universe)."""
    if documents is None:
        return None
    keys, strata = [], []
    for code, domain in enumerate(members):
        names = sorted(set(documents.loc[documents["domain"] == domain, "document"].astype(str)))
        keys += [f"{domain}\x1f{name}" for name in names]
        strata += [code] * len(names)
    return np.asarray(keys, dtype=object), np.asarray(strata, dtype=np.int64)
