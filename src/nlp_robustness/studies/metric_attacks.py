"""The metric-robustness study (paper 002) as one more engine study: attack conditions as domains, a metric's
DARR agreement as its units.

The conditions and metric variants (the study's domains and rows) are those of
:mod:`nlp_robustness.studies.metric_attack_conditions`; the branch's steps, which write the agreement table
read here, are in :mod:`nlp_robustness.studies.metric_attack_scoring`.

**Units for the engine.** WMT19's DARR tau is (Concordant - Discordant) / (Concordant + Discordant) over
a pair's relative-ranking judgements (a metric tie is Discordant): the mean of +1 / -1 agreements, one
per DARR judgement (:mod:`nlp_robustness.statistics.darr`). A condition is a domain, and its sample
value is its tau over the judgements of every configured pair pooled (weighted by their numbers of
judgements; the per-pair taus are in the tau table). Metrics I-III across conditions then say how
consistent a metric's agreement with humans stays under attack. ``bagging_unit`` says what blocks are
drawn over:

* ``condition`` (default): one unit per condition, scored by its tau (engine aggregation ``unit``);
  blocks of conditions, as the sentiment study's ``bagging_unit: domain``.
* ``judgement``: one unit per judgement and condition, scored +1 / -1 (aggregation ``domain``: a
  condition's mean is its tau); blocks of judgements. Exact, but the block file holds about
  2 x (conditions + 1) x blocks x 0.6 x judgements x conditions rows: tens of millions at the default
  sample, so it is for paper-scale runs with few conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.statistics.pools import UNIT_COLUMNS
from nlp_robustness.statistics.study_design import StudyDesign, replicate_units_by_cluster

__all__ = [
    "AGREEMENT_KEY_COLUMNS",
    "BOOTSTRAP_UNIT_COLUMNS",
    "aggregation_of",
    "bootstrap_units",
    "has_variance_components",
    "resampling_design",
    "unit_keys",
    "units",
]

#: Key columns of the agreement table (one row per condition and DARR judgement); a column per variant follows.
AGREEMENT_KEY_COLUMNS: tuple[str, ...] = ("condition", "pair", "line", "sid", "unit_id")
#: Columns of :func:`bootstrap_units`: a unit, its resampling cluster (the segment) and its score.
BOOTSTRAP_UNIT_COLUMNS: tuple[str, ...] = ("domain", "unit_id", "cluster", "score")


def _read_agreement(path: str, segments: bool = False) -> pd.DataFrame:
    """The agreement table; its ``sid`` column is required only where the segments are (``segments``)."""
    keys = [column for column in AGREEMENT_KEY_COLUMNS if segments or column != "sid"]
    return read_table(path, keys, "agreement table")


def aggregation_of(bagging_unit: str) -> str:
    """The engine aggregation of a ``bagging_unit``: ``condition`` -> ``unit``, ``judgement`` -> ``domain``."""
    aggregations = {"condition": "unit", "judgement": "domain"}
    if bagging_unit not in aggregations:
        raise InputError(f"unknown bagging unit {bagging_unit!r} (known: {', '.join(aggregations)})")
    return aggregations[bagging_unit]


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    With ``bagging_unit: judgement`` a condition's tau is the mean of its +1 / -1 judgements, which
    decompose by condition; with ``condition`` each condition is one unit (its tau) and there is no
    within-condition part.
    """
    return options["bagging_unit"] == "judgement"


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """Unit keys ``domain, unit_id`` of the agreement table (``files["agreement"]``), by ``options["bagging_unit"]``."""
    table = _read_agreement(files["agreement"])
    if options["bagging_unit"] == "condition":
        conditions_found = list(dict.fromkeys(table["condition"]))
        return _in_domain_order(pd.DataFrame({"domain": conditions_found, "unit_id": conditions_found}), domains)
    return _in_domain_order(pd.DataFrame({"domain": table["condition"], "unit_id": table["unit_id"]}), domains)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The units of one metric variant (``row``): its tau per condition, or its +1 / -1 agreement with every
    judgement under every condition (``options["bagging_unit"]``)."""
    table = _read_agreement(files["agreement"])
    if row not in table.columns:
        raise InputError(f"{files['agreement']}: no column for metric {row!r}")
    frame = pd.DataFrame({"domain": table["condition"], "unit_id": table["unit_id"], "score": table[row].astype(float)})
    if options["bagging_unit"] == "condition":
        tau = frame.groupby("domain", sort=False)["score"].mean()
        frame = pd.DataFrame({"domain": tau.index, "unit_id": tau.index, "score": tau.to_numpy()})
    return _in_domain_order(frame, domains)[list(UNIT_COLUMNS)]


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a metric variant's units: the judgements of :func:`bootstrap_units` in their place,
    in both bagging units (a condition's tau is the mean of its judgements' +1 / -1 either way), by segment; a
    segment's judgements appear under every condition, so segments are drawn across conditions (crossed).
    ``files`` None (the plan, before any file exists): the judgements are not read."""
    return replicate_units_by_cluster(None if files is None else bootstrap_units(files, domains, row, score, options),
                                      crossed=True)


def bootstrap_units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The resampling units of one metric variant (``row``) for the uncertainty layer, whatever ``bagging_unit``:
    :data:`BOOTSTRAP_UNIT_COLUMNS`, one row per judgement and condition, scored +1 / -1 (engine aggregation
    ``domain``), so a condition's mean score is exactly its tau as :func:`units` gives it with
    ``bagging_unit: condition`` (judgements of every pair pooled); ``cluster`` is the segment
    (``<pair>/<SID>``), which brings all its judgements, in every condition, into a resample.

    Raises:
        InputError: as :func:`units`, or an agreement table without the ``sid`` column (one written before it
            had one: rerun ``metric_tau``).
    """
    table = _read_agreement(files["agreement"], segments=True)
    if row not in table.columns:
        raise InputError(f"{files['agreement']}: no column for metric {row!r}")
    frame = pd.DataFrame({
        "domain": table["condition"], "unit_id": table["unit_id"],
        "cluster": table["pair"].astype(str) + "/" + table["sid"].astype(str), "score": table[row].astype(float),
    })
    return _in_domain_order(frame, domains)[list(BOOTSTRAP_UNIT_COLUMNS)]


def _in_domain_order(frame: pd.DataFrame, domains: Sequence[str]) -> pd.DataFrame:
    present = set(frame["domain"])  # once: a set per domain was most of a metric row's start
    missing = [domain for domain in domains if domain not in present]
    if missing:
        raise InputError(f"agreement table has no judgements for condition(s) {', '.join(missing)}")
    order = {domain: index for index, domain in enumerate(domains)}
    frame = frame[frame["domain"].isin(order)]
    return frame.iloc[np.argsort(frame["domain"].map(order).to_numpy(), kind="stable")].reset_index(drop=True)
