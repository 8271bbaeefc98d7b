"""Intervals of the engine's numbers: bootstrap replicates of a pool, and intervals of the bagged estimates.

**Whole pool** (:func:`pool_replicates`): the pool's units are resampled as the study's design says
(:class:`.study_design.StudyDesign`: stratified within domains, or by ids shared across domains; drawn as
:mod:`.resampling` describes) and every replicate gets Metrics I-III, the
gamma-area and, where the study has it, the between-domain decomposition. A study whose sample is one value
per domain (``domain`` aggregation: accuracies of review domains, shares of perturbation types) recomputes
the domain values from the resampled units in every replicate. A study whose units are themselves
aggregates (the metric study's one tau per attack condition) has finer *replicate units* in its design instead:
judgements whose domain means are the condition values, resampled by segment.

**Documents.** Where units belong to documents (WMT test sets), the design's clusters are the documents,
nested in the domains: whole documents are drawn with replacement within each domain, since the segments of a
document are correlated and resampling them one by one would treat them as independent (intervals too narrow
by the square root of the design effect, about 1.4 on WMT22). The between-domain decomposition of every
replicate is then the nested one (:func:`.variance_components.nested_components`), so document noise is not
counted as spread between domains, in the estimate or its replicates.

**Bagging and design bagging** (:func:`block_interval`): no second resampling. A block is a subsample of b of
the pool's n units without replacement, so the M block estimates are a delete-d jackknife with d = n - b
(Shao and Wu 1989): Var(theta_n) ~ b / (d M) * sum_m (theta_m - mean)^2. The bagged estimate is the block
average; for smooth statistics it has the same first-order variance as theta_n plus the Monte-Carlo part of
averaging M blocks, s^2 / M (s^2 the variance of the block estimates). The interval is the block average
+/- t_{M-1} times the square root of their sum. It costs nothing beyond the blocks the paper's algorithms
already draw, and it is the same for Algorithm 5's random blocks and Algorithm 6's balanced ones (for which
the jackknife is better still: every unit is left out equally often). Its coverage on simulated data is
tested beside the bootstrap's.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write
from nlp_robustness.statistics.percentile_intervals import ClusterCounts, cluster_counts, interval
from nlp_robustness.statistics.quantiles import student_t_quantile
from nlp_robustness.statistics.replicate_statistics import (
    block_statistics,
    domain_indicator,
    weighted_between_domains,
    weighted_statistics,
)
from nlp_robustness.statistics.resampling import ResamplingDesign, gathers, map_chunks
from nlp_robustness.statistics.variance_components import document_sums, nested_components

__all__ = ["INTERVAL_STATISTICS", "UncertaintyOptions", "block_interval", "document_statistics", "pool_replicates", "read_replicates",
           "replicate_intervals", "units_digest", "write_replicates"]

#: The statistics of a pool that get an interval (summary columns ``<name>_lo``, ``<name>_hi``).
INTERVAL_STATISTICS = ("mean", "variance", "cov", "gamma_area", "between_variance", "between_sd", "between_share")


@dataclass(frozen=True)
class UncertaintyOptions:
    """The ``uncertainty`` settings of a run: confidence level, bootstrap resamples, seed, whether domains are
    resampled too (two-stage) and how many threads draw the replicates (results do not depend on it)."""

    confidence: float = 0.95
    resamples: int = 1000
    seed: int = 0
    resample_domains: bool = False
    threads: int = 1


def pool_replicates(
    scores: NDArray[np.float64],
    codes: NDArray[np.int64],
    n_domains: int,
    resampling: ResamplingDesign,
    aggregation: str,
    epsilons: NDArray[np.float64],
    options: UncertaintyOptions,
    labels: Sequence[str],
    variance_components: bool = False,
) -> tuple[dict[str, NDArray[np.float64]], ClusterCounts]:
    """Bootstrap replicates of one pool's statistics: ``mean, variance, cov, gamma_area`` (B,), ``gamma`` (B, G)
    and, with ``variance_components``, the between-domain columns (B,).

    ``scores``/``codes``: the drawn units' scores and domain codes (0..n_domains-1); ``resampling``: what a replicate
    draws of them, the study's design made concrete for the pool (:meth:`.study_design.StudyDesign.resampling`, or
    :func:`.resampling.cluster_design`): units nested in domains (stratified), ids shared across domains, or
    documents, drawn from a universe of documents so rows rated on different units of the same documents draw the
    same documents, and whether the domains are drawn too (two-stage; ``options.resample_domains`` is not read
    here); ``aggregation``: ``unit`` (the unit scores are the sample) or ``domain`` (the domain means are);
    ``labels`` seed the replicates with ``options.seed`` (the same labels for every row of a study make their
    replicates paired). Clusters nested in the domains and fewer than the units (documents) make the
    decomposition the nested one (module docstring).
    Also returns the design's cluster counts (:func:`.percentile_intervals.cluster_counts`: the clusters drawn in the
    smallest stratum, the n of :func:`.percentile_intervals.expansion`, and the degrees of freedom of the paired tests).
    """
    # units each their own cluster have as many clusters as units: never documents
    documents = (resampling.n_clusters < resampling.n_units
                 and bool(np.all(resampling.stratum_of_cluster[resampling.cluster_of_unit] == codes)))
    between = between_applies(variance_components, n_domains)
    nested_documents = documents and between and n_domains < resampling.n_clusters
    counts_of_clusters = cluster_counts(np.bincount(resampling.stratum_of_cluster), resampling.resample_strata)
    if aggregation == "unit" and gathers(resampling):
        # units nested in domains: gather the drawn scores stratum by stratum (the same resamples as the
        # weights, no dense weight matrix)
        shift = float(scores.mean())

        def gathered(blocks: list[NDArray[np.float64]]) -> dict[str, NDArray[np.float64]]:
            return block_statistics(blocks, shift, epsilons, between)

        chunks = map_chunks(gathered, resampling, options.resamples, options.seed, labels, options.threads, values=scores - shift)
        return {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}, counts_of_clusters
    indicator = domain_indicator(codes, n_domains) if aggregation == "domain" or variance_components else None
    unit_cluster = resampling.cluster_of_unit
    if indicator is not None:
        # units of every cluster in every domain: a replicate's cluster counts times it are its units per domain,
        # weights @ indicator without the (B, n) product (whole numbers, so exactly the same in any order)
        cluster_domains = np.zeros((resampling.n_clusters, n_domains))
        np.add.at(cluster_domains, (unit_cluster, codes), 1.0)

    if nested_documents:
        document_domain = np.zeros(resampling.n_clusters, dtype=np.int64)
        document_domain[unit_cluster] = codes
        sums_of_documents = document_sums(scores, unit_cluster, resampling.n_clusters)

    if documents and aggregation == "unit":
        # whole documents: the moments from per-document sums and gamma from cumulative weights (no (B, n) product)
        of_documents = document_statistics(scores, unit_cluster, resampling.n_clusters, epsilons)

    def replicate(counts: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        if documents and aggregation == "unit":
            statistics = of_documents(counts)
            if between and nested_documents:
                statistics |= _nested_columns(nested_components(counts, *sums_of_documents, document_domain, n_domains))
            elif between:
                statistics |= weighted_between_domains(scores, codes, n_domains, counts[:, unit_cluster], indicator=indicator,
                                                       counts=counts @ cluster_domains)
            return statistics
        # the unit weights exactly as map_chunks resampling them, memory order included (this fancy index gives a
        # column-major array, and BLAS sums the products below in an order that depends on it)
        weights = counts[:, unit_cluster]
        per_domain = counts @ cluster_domains if indicator is not None else None
        if aggregation == "unit":
            statistics = weighted_statistics(scores, weights, epsilons)
        else:  # every replicate's domain means; a domain no unit was drawn for is absent from that replicate
            # the weights are needed no more unless for the decomposition: their products may overwrite them
            products = weights * scores if between else np.multiply(weights, scores, out=weights)
            with np.errstate(divide="ignore", invalid="ignore"):
                means = np.where(per_domain > 0, (products @ indicator) / per_domain, 0.0)
            statistics = weighted_statistics(means, (per_domain > 0).astype(np.float64), epsilons)
        if between and nested_documents:
            statistics |= _nested_columns(nested_components(counts, *sums_of_documents, document_domain, n_domains))
        elif between:
            statistics |= weighted_between_domains(scores, codes, n_domains, weights, indicator=indicator, counts=per_domain)
        return statistics

    chunks = map_chunks(replicate, resampling, options.resamples, options.seed, labels, options.threads, cluster_counts=True)
    return {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}, counts_of_clusters


def _nested_columns(nested: Mapping[str, NDArray[np.float64]]) -> dict[str, NDArray[np.float64]]:
    """The between-domain columns of the replicates from :func:`.variance_components.nested_components`."""
    total = nested["between_variance"] + nested["within_variance"]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = nested["between_variance"] / total
    return {"between_variance": nested["between_variance"], "between_sd": np.sqrt(nested["between_variance"]),
            "within_sd": np.sqrt(nested["within_variance"]), "between_share": share,
            "domain_mean_sd": np.nanstd(nested["domain_means"], axis=1, ddof=1)}


def document_statistics(scores: NDArray[np.float64], unit_document: NDArray[np.int64], n_documents: int,
                        epsilons: NDArray[np.float64]):
    """A function: the cluster counts of a chunk of replicates ``(rows, n_documents)`` -> the statistics of
    :func:`.replicate_statistics.weighted_statistics` (``mean, variance, cov, gamma, gamma_area``) of the units
    weighted by their document's count, computed without the (rows, n) weight products: the moments from every document's
    unit count, sum and sum of squares (a (rows, G) @ (G,) product each), and the counts within +/- epsilon of a
    replicate's mean from the cumulative weights of the units in score order, read at the two ends of every
    epsilon's window (one cumulative sum per replicate, then a search per epsilon). Strictly inside the window,
    as :mod:`.robustness_metrics` counts |t - mu| < epsilon."""
    shift = float(scores.mean())
    centred = scores - shift
    sizes, sums, squares = document_sums(scores, unit_document, n_documents)  # centred on the same mean
    order = np.argsort(centred, kind="stable")
    sorted_scores = centred[order]
    document_in_order = unit_document[order]
    grid = np.asarray(epsilons, dtype=np.float64)

    def statistics(counts: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        rows = counts.shape[0]
        totals = counts @ sizes
        means = (counts @ sums) / totals
        variances = np.maximum((counts @ squares) / totals - means**2, 0.0)
        cumulative = np.zeros((rows, sorted_scores.size + 1))
        np.cumsum(counts[:, document_in_order], axis=1, out=cumulative[:, 1:])
        low = np.searchsorted(sorted_scores, (means[:, None] - grid[None, :]).reshape(-1), side="right").reshape(rows, -1)
        high = np.searchsorted(sorted_scores, (means[:, None] + grid[None, :]).reshape(-1), side="left").reshape(rows, -1)
        within = np.take_along_axis(cumulative, high, axis=1) - np.take_along_axis(cumulative, np.minimum(low, high), axis=1)
        sample_variances = variances * totals / np.maximum(totals - 1, 1e-300)
        with np.errstate(divide="ignore", invalid="ignore"):
            gamma = (1 - within / totals[:, None]) * grid[None, :] ** 2 / sample_variances[:, None]
            cov = np.sqrt(variances) / (means + shift)
        gamma[sample_variances <= 0] = 0.0
        return {"mean": means + shift, "variance": variances, "cov": cov, "gamma": gamma, "gamma_area": gamma.mean(axis=1)}

    return statistics


def between_applies(variance_components: bool, n_domains: int) -> bool:
    """Whether a pool gets the between-domain decomposition: the study has it and the pool has two domains or more."""
    return variance_components and n_domains > 1


#: Statistics that cannot be negative (their interval is clipped at 0; COV too where the mean is positive).
NON_NEGATIVE = ("variance", "gamma_area", "between_variance", "between_sd", "between_share")


def replicate_intervals(replicates: dict[str, NDArray[np.float64]], estimates: Mapping[str, float], confidence: float,
                        clusters: ClusterCounts, reflect: bool) -> dict[str, float]:
    """``<statistic>_lo`` and ``<statistic>_hi`` of every :data:`INTERVAL_STATISTICS` (NaN where no replicates or no
    estimate): percentile intervals expanded for the clusters of the smallest stratum, reflected for a domain-level
    sample (:func:`.percentile_intervals.interval`)."""
    columns: dict[str, float] = {}
    for name in INTERVAL_STATISTICS:
        values = replicates.get(name)
        estimate = float(estimates.get(name, math.nan))
        if values is None or not math.isfinite(estimate):
            low = high = math.nan
        else:
            low, high = interval(values, confidence, estimate=estimate, clusters=clusters.smallest_stratum, reflect=reflect,
                                 non_negative=name in NON_NEGATIVE or (name == "cov" and estimate >= 0))
        columns[f"{name}_lo"], columns[f"{name}_hi"] = low, high
    return columns


def block_interval(block_values: NDArray[np.float64], units: int, block_size: int, confidence: float,
                   estimate: NDArray[np.float64] | float | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The interval of a bagged estimate from its blocks (``block_values``, one row per block) as a delete-d
    jackknife plus the Monte-Carlo variance of the block average (module docstring), centred on ``estimate``
    (default: the block average; the bagged COV is formed from the averaged moments instead).

    NaN where the blocks are the whole pool (d = 0) or there is a single block.
    """
    values = np.asarray(block_values, dtype=np.float64)
    n_blocks = values.shape[0]
    left_out = units - block_size
    average = values.mean(axis=0)
    centre = average if estimate is None else np.asarray(estimate, dtype=np.float64)
    if n_blocks < 2 or left_out <= 0:
        nan = np.full(np.shape(centre), np.nan)
        return nan, nan
    squares = ((values - average) ** 2).sum(axis=0)
    variance = squares * (block_size / (left_out * n_blocks) + 1 / (n_blocks * (n_blocks - 1)))
    half_width = student_t_quantile((1 + confidence) / 2, n_blocks - 1) * np.sqrt(variance)
    return centre - half_width, centre + half_width


def units_digest(units: pd.DataFrame) -> str:
    """SHA-256 of a row's resampled unit keys (domain, unit id, in order): two rows' replicates are paired
    exactly when their digests (and the seed and study) agree."""
    keys = units["domain"].astype(str) + "\t" + units["unit_id"].astype(str)
    return hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()


def write_replicates(path: str, replicates: Mapping[str, Mapping[str, NDArray[np.float64]]], units: pd.DataFrame) -> None:
    """Write the whole-pool replicates of every pool (``<left_out>|<statistic>`` arrays) and the units' digest
    (``units_digest``) as one compressed NumPy archive, atomically."""
    arrays = {f"{left_out}|{name}": values for left_out, statistics in replicates.items() for name, values in statistics.items()}
    with atomic_write(path, "wb", encoding=None) as handle:
        np.savez_compressed(handle, units_digest=np.array(units_digest(units)), **arrays)


def read_replicates(path: str) -> tuple[dict[str, dict[str, NDArray[np.float64]]], str]:
    """The replicates written by :func:`write_replicates` (left-out label -> statistic -> array) and the digest.

    Raises:
        InputError: Not such an archive (the path is named).
    """
    try:
        with np.load(path, allow_pickle=False) as archive:
            digest = str(archive["units_digest"])
            replicates: dict[str, dict[str, NDArray[np.float64]]] = {}
            for key in archive.files:
                if key != "units_digest":
                    left_out, name = key.split("|", 1)
                    replicates.setdefault(left_out, {})[name] = archive[key]
    except (OSError, KeyError, ValueError) as error:
        raise InputError(f"{path}: not a replicates archive ({error})") from error
    return replicates, digest
