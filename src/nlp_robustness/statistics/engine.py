"""The robustness engine: Metrics I-III of any study, on every leave-one-out pool, by every method.

A *study* is a table of units with a domain label, a unit id and a score, and a *pool* the units of every
domain but the one left out (:mod:`.pools`). How a set of units becomes the *sample* that Metrics I-III are
computed on is the study's *aggregation*:

* ``unit``: every unit's score is one value of the sample (MT and human sentence scores);
* ``domain``: the mean unit score of every domain present is one value (sentiment: domain-level accuracy).

On each pool the engine computes the whole-pool statistics (paper Tables 1/2), and averages them over the
blocks of bagging (Algorithm 5, Tables 3/4) and design bagging (Algorithm 6, Tables 5/6). The blocks are
drawn once per study and re-applied by key (:mod:`.blocks`), so every row of a study (every system, every
metric) is measured on the same blocks. The intervals of the statistics come from :mod:`.pool_uncertainty`,
by a bootstrap that draws what the study's design says (:class:`.study_design.StudyDesign`: its units or finer
replicate units, their clusters, the universe of documents, what is crossed across domains).

With ``variance_components`` (studies whose sample values are means of unit scores by domain), the
whole-pool row of every pool also gets the decomposition of the pool's unit scores into between- and
within-domain variance (:mod:`.variance_components`, :data:`BETWEEN_COLUMNS`); it is NaN for the
bagging methods, for a pool of one domain, and for studies where it does not apply.

Pools too small for the statistics are errors, never a "perfect" score: a sample of fewer than two
values has variance 0 and gamma 0 whatever the system does, and blocks need at least two units each and
at least as many units in the pool as there are blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.bagging import (
    BAGGING_METHODS,
    BaggedStatistics,
    average_over_blocks,
)
from nlp_robustness.statistics.blocks import _blocks_by_pool, block_positions
from nlp_robustness.statistics.pool_uncertainty import (
    INTERVAL_STATISTICS,
    UncertaintyOptions,
    block_interval,
    pool_replicates,
    replicate_intervals,
)
from nlp_robustness.statistics.pools import WHOLE_POOL, _pool, _rows_by_domain, pool_domains, pool_label
from nlp_robustness.statistics.robustness_metrics import cov_from_moments, gamma_curve, summarize
from nlp_robustness.statistics.study_design import StudyDesign
from nlp_robustness.statistics.variance_components import variance_components as decompose

__all__ = [
    "AGGREGATIONS",
    "BETWEEN_COLUMNS",
    "BLOCK_SCORE_COLUMNS",
    "CLUSTER_COLUMNS",
    "GAMMA_COLUMNS",
    "INTERVAL_COLUMNS",
    "StudyEvaluation",
    "SUMMARY_COLUMNS",
    "evaluate_study",
    "read_summary",
    "whole_pool_between_domains",
]

#: How units become the sample of the metrics (see the module docstring).
AGGREGATIONS = ("unit", "domain")

#: The variance decomposition of a pool's unit scores by domain (appended to the summary, pool rows only).
BETWEEN_COLUMNS = ("between_variance", "between_sd", "within_sd", "between_share", "domain_mean_sd")
#: The interval of every statistic that has one (:mod:`.pool_uncertainty`): ``<statistic>_lo``, ``<statistic>_hi``.
INTERVAL_COLUMNS = tuple(f"{name}_{bound}" for name in INTERVAL_STATISTICS for bound in ("lo", "hi"))
#: The resampling clusters of a pool row (:class:`.percentile_intervals.ClusterCounts`; NaN for the bagging methods and
#: without ``uncertainty``): what the intervals are widened for and the paired tests' degrees of freedom.
CLUSTER_COLUMNS = ("smallest_stratum_clusters", "cluster_degrees_of_freedom")
SUMMARY_COLUMNS = ("left_out", "method", "domains", "units", "blocks", "block_size", "mean", "variance", "cov",
                   *BETWEEN_COLUMNS, "gamma_area", *INTERVAL_COLUMNS, *CLUSTER_COLUMNS)
GAMMA_COLUMNS = ("left_out", "method", "epsilon", "gamma", "sigma", "gamma_lo", "gamma_hi")
BLOCK_SCORE_COLUMNS = ("left_out", "method", "block", "domain", "units", "score")


def _domain_means(scores: NDArray[np.float64], codes: NDArray[np.int64], n_domains: int, members: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Mean score of every domain on the units at ``members`` (NaN where none) and the unit counts."""
    counts = np.bincount(codes[members], minlength=n_domains)
    sums = np.bincount(codes[members], weights=scores[members], minlength=n_domains)
    means = np.full(n_domains, np.nan)
    present = counts > 0
    means[present] = sums[present] / counts[present]
    return means, counts


def _between_domains(scores: NDArray[np.float64], codes: NDArray[np.int64], n_domains: int, where: str,
                     documents: NDArray | None = None) -> dict[str, float]:
    """The :data:`BETWEEN_COLUMNS` of one pool's unit scores (nested by ``documents`` when given: document noise is
    not spread between domains); NaN for a pool of one domain (no between part)."""
    if n_domains < 2:
        return dict.fromkeys(BETWEEN_COLUMNS, np.nan)
    components = decompose(scores, codes, where, documents)
    return {
        "between_variance": components.between_variance, "between_sd": components.between_sd,
        "within_sd": components.within_sd, "between_share": components.between_share,
        "domain_mean_sd": components.domain_mean_sd,
    }


@dataclass(frozen=True)
class StudyEvaluation:
    """What :func:`evaluate_study` returns for one row of a study (e.g. one system and metric).

    ``summary`` has :data:`SUMMARY_COLUMNS` (the shape the table writers read; :data:`BETWEEN_COLUMNS`
    NaN but in the pool method's rows of a study with variance components; the intervals NaN without
    ``uncertainty``; :data:`CLUSTER_COLUMNS`, the bootstrap's cluster counts that the paired comparisons of rows
    read, in the pool method's rows only), ``gamma`` has :data:`GAMMA_COLUMNS` (sigma: the pool's sample standard deviation the
    whole-pool curve is normalised by; NaN for the bagged curves; ``gamma_lo``/``gamma_hi`` the pointwise
    band), ``block_scores`` has :data:`BLOCK_SCORE_COLUMNS` with every domain score every block contributed
    (``domain`` aggregation only; empty otherwise), ``replicates`` the whole-pool bootstrap replicates of
    every pool by left-out label and statistic (empty without ``uncertainty``): what paired comparisons of
    rows read.
    """

    summary: pd.DataFrame
    gamma: pd.DataFrame
    block_scores: pd.DataFrame
    replicates: dict[str, dict[str, NDArray[np.float64]]]


def _bagged_intervals(bagged: BaggedStatistics, units: int, block_size: int, confidence: float) -> tuple[dict[str, float], tuple]:
    """The intervals of one method's bagged statistics (:func:`.pool_uncertainty.block_interval`) and its gamma band."""
    covs = np.array([cov_from_moments(mean, variance) for mean, variance in zip(bagged.block_means, bagged.block_variances)])
    per_block = {"mean": (bagged.block_means, bagged.mean), "variance": (bagged.block_variances, bagged.variance),
                 "cov": (covs, bagged.cov), "gamma_area": (bagged.block_gamma.mean(axis=1), bagged.gamma.mean())}
    columns = dict.fromkeys(INTERVAL_COLUMNS, np.nan)
    for name, (values, estimate) in per_block.items():
        low, high = block_interval(values, units, block_size, confidence, estimate)
        columns[f"{name}_lo"], columns[f"{name}_hi"] = float(low), float(high)
    return columns, block_interval(bagged.block_gamma, units, block_size, confidence)


def evaluate_study(
    units: pd.DataFrame,
    domains: Sequence[str],
    leave_out: Sequence[str],
    blocks: pd.DataFrame,
    epsilons: NDArray[np.float64],
    design: StudyDesign,
    aggregation: str = "unit",
    study: str = "study",
    variance_components: bool = False,
    uncertainty: UncertaintyOptions | None = None,
    seed_labels: Sequence[str] = (),
) -> StudyEvaluation:
    """Metrics I-III of one row of a study on every pool (``leave_out``: :func:`.pools.leave_out_labels`) and method.

    ``units`` has :data:`.pools.UNIT_COLUMNS`; ``blocks`` is the study's block table
    (:func:`.blocks.draw_study_blocks`).
    The bagged mean and variance are averaged over the blocks and COV is formed from those averages
    (:func:`.bagging.average_over_blocks`). ``variance_components``: whether the pool rows get the
    between/within-domain decomposition of the unit scores (a study whose domain values are means of its
    unit scores; see the module docstring).

    ``design``: what the bootstrap draws, the same for every row of the study (:class:`.study_design.StudyDesign`:
    the units or finer replicate units, their clusters, the universe of documents, what is crossed); where it
    draws documents (the ``document`` column of ``units``), the between-domain decomposition is the nested one.
    ``uncertainty``: the intervals (:mod:`.pool_uncertainty`): a bootstrap of the whole pool as ``design`` says,
    seeded by the study and the pool only (so every row of a study is resampled alike), and the blocks' jackknife
    for the bagged rows. ``seed_labels`` (with the left-out label) seed the replicates: the study's name, never
    the row's.

    Raises:
        InputError: A pool or block sample has fewer than two values, a block unit is not in the pool,
            ``aggregation`` is unknown, or a pool of several domains has no within-domain spread to
            decompose (``study`` names the study).
    """
    if aggregation not in AGGREGATIONS:
        raise InputError(f"{study}: aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    summary_rows, gamma_frames, block_frames, replicates = [], [], [], {}
    by_pool, no_blocks = _blocks_by_pool(blocks), blocks.iloc[:0]
    unit_rows = _rows_by_domain(units)
    finer = design.replicate_units
    finer_rows = _rows_by_domain(finer) if uncertainty is not None and finer is not None else {}
    for left_out in leave_out:
        pool, codes = _pool(units, unit_rows, domains, left_out, study)
        members = pool_domains(domains, left_out)
        scores = pool["score"].to_numpy(dtype=np.float64)

        def domain_means(positions: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
            return _domain_means(scores, codes, len(members), positions)

        def sample(positions: NDArray[np.int64]) -> NDArray[np.float64]:
            if aggregation == "unit":
                return scores[positions]
            means, counts = domain_means(positions)
            return means[counts > 0]

        where = f"{study}, {pool_label(left_out)}"
        whole = sample(np.arange(len(pool)))
        if whole.size < 2:
            raise InputError(f"{where}: the pool gives {whole.size} value(s); variance and gamma need at least 2")
        statistics = summarize(whole)
        whole_gamma = gamma_curve(whole, epsilons)
        clusters = design.clusters(pool) if finer is None else None  # of the pool's own units, once a pool
        documents = design.documents(clusters)
        between = _between_domains(scores, codes, len(members), where, documents) if variance_components else {}
        band = (np.full(epsilons.shape, np.nan), np.full(epsilons.shape, np.nan))
        intervals_of_pool = dict.fromkeys(INTERVAL_COLUMNS, np.nan)
        clusters_of_pool = dict.fromkeys(CLUSTER_COLUMNS, np.nan)
        if uncertainty is not None:
            labels, resample_domains = [*seed_labels, left_out], uncertainty.resample_domains
            if finer is not None:  # finer units whose domain means are the pool's domain values, drawn instead
                finer_pool, finer_codes = _pool(finer, finer_rows, domains, left_out, study)
                resampling = design.resampling(design.clusters(finer_pool), finer_codes, members, resample_domains)
                drawn, cluster_counts = pool_replicates(finer_pool["score"].to_numpy(dtype=np.float64), finer_codes,
                                                        len(members), resampling, "domain", epsilons, uncertainty, labels)
            else:
                resampling = design.resampling(clusters, codes, members, resample_domains)
                drawn, cluster_counts = pool_replicates(scores, codes, len(members), resampling, aggregation, epsilons,
                                                        uncertainty, labels, variance_components and len(members) > 1)
            replicates[left_out] = {name: values for name, values in drawn.items() if name != "gamma"}
            estimates = {"mean": statistics.mean, "variance": statistics.variance, "cov": statistics.cov,
                         "gamma_area": float(whole_gamma.mean()), **between}
            intervals_of_pool = replicate_intervals(drawn, estimates, uncertainty.confidence, cluster_counts,
                                                    reflect=aggregation == "domain" or finer is not None)
            clusters_of_pool = {"smallest_stratum_clusters": cluster_counts.smallest_stratum,
                                "cluster_degrees_of_freedom": cluster_counts.degrees_of_freedom}
            band = tuple(np.nanquantile(drawn["gamma"], [(1 - uncertainty.confidence) / 2, (1 + uncertainty.confidence) / 2], axis=0))
        summary_rows.append({
            "left_out": left_out, "method": "pool", "domains": len(members), "units": len(pool), "blocks": 1,
            "block_size": len(pool), "mean": statistics.mean, "variance": statistics.variance, "cov": statistics.cov,
            **between, "gamma_area": float(whole_gamma.mean()), **intervals_of_pool, **clusters_of_pool,
        })
        gamma_frames.append(pd.DataFrame({
            "left_out": left_out, "method": "pool", "epsilon": epsilons, "gamma": whole_gamma,
            "sigma": float(np.std(whole, ddof=1)), "gamma_lo": band[0], "gamma_hi": band[1],
        }))
        for method in BAGGING_METHODS:
            selected = by_pool.get((method, left_out), no_blocks)
            positions = block_positions(selected, pool, source=f"{where}, {method} blocks")
            if aggregation == "unit":
                samples = [scores[row] for row in positions]
            else:  # each block's domain means, computed once for the sample and for the audit table
                per_block = [domain_means(row) for row in positions]
                samples = [means[counts > 0] for means, counts in per_block]
            if min(len(values) for values in samples) < 2:
                raise InputError(f"{where}, {method}: a block gives fewer than 2 values; variance and gamma need at least 2")
            bagged: BaggedStatistics = average_over_blocks(samples, epsilons)
            bagged_intervals, bagged_band = (_bagged_intervals(bagged, len(pool), positions.shape[1], uncertainty.confidence)
                                             if uncertainty is not None else (dict.fromkeys(INTERVAL_COLUMNS, np.nan), band))
            summary_rows.append({
                "left_out": left_out, "method": method, "domains": len(members), "units": len(pool),
                "blocks": positions.shape[0], "block_size": positions.shape[1],
                "mean": bagged.mean, "variance": bagged.variance, "cov": bagged.cov,
                "gamma_area": float(bagged.gamma.mean()), **bagged_intervals,
            })
            gamma_frames.append(pd.DataFrame({
                "left_out": left_out, "method": method, "epsilon": epsilons, "gamma": bagged.gamma, "sigma": np.nan,
                "gamma_lo": bagged_band[0], "gamma_hi": bagged_band[1],
            }))
            if aggregation == "domain":
                for block, (means, counts) in enumerate(per_block, start=1):
                    present = np.flatnonzero(counts > 0)
                    block_frames.append(pd.DataFrame({
                        "left_out": left_out, "method": method, "block": block,
                        "domain": np.asarray(members, dtype=object)[present], "units": counts[present],
                        "score": means[present],
                    }))
    block_scores = (pd.concat(block_frames, ignore_index=True) if block_frames
                    else pd.DataFrame(columns=list(BLOCK_SCORE_COLUMNS)))
    floats = dict.fromkeys((*BETWEEN_COLUMNS, "gamma_area", *INTERVAL_COLUMNS, *CLUSTER_COLUMNS), np.float64)
    return StudyEvaluation(
        summary=pd.DataFrame(summary_rows, columns=list(SUMMARY_COLUMNS)).astype(floats),
        gamma=pd.concat(gamma_frames, ignore_index=True)[list(GAMMA_COLUMNS)],
        block_scores=block_scores[list(BLOCK_SCORE_COLUMNS)],
        replicates=replicates,
    )


def read_summary(path: str) -> pd.DataFrame:
    """Read a row's summary (written from :attr:`StudyEvaluation.summary`); a missing value is NaN.

    Raises:
        InputError: The columns are not :data:`SUMMARY_COLUMNS` (the path is named).
    """
    frame = pd.read_csv(path, sep="\t", dtype={"left_out": str, "method": str}, keep_default_na=False, na_values=[""])
    if tuple(frame.columns[1:]) != SUMMARY_COLUMNS:
        raise InputError(f"{path}: expected a row column, then {list(SUMMARY_COLUMNS)}; found {list(frame.columns)}")
    return frame


def whole_pool_between_domains(path: str) -> tuple[float, float]:
    """The whole-pool between-domain SD and its share of the variance (0 to 1) of one row's summary
    (``path``); NaN for a study without the decomposition.

    Raises:
        InputError: Not a summary, or it has no whole-pool row of the pool method.
    """
    summary = read_summary(path)
    selected = summary[(summary["left_out"] == WHOLE_POOL) & (summary["method"] == "pool")]
    if len(selected) != 1:
        raise InputError(f"{path}: expected one whole-pool row of method pool, found {len(selected)}")
    return float(selected["between_sd"].iloc[0]), float(selected["between_share"].iloc[0])
