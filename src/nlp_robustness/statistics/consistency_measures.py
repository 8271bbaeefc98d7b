"""The measures of the meta-evaluation of metrics on cross-domain consistency (issue 53): every score's between-domain
SD, gamma area, system x domain interaction SD and quality per system, with their paired document-bootstrap
replicates (:func:`consistency_replicates`); :func:`.metric_consistency.meta_evaluate` makes the tables of them.

**Input.** One study: a score name -> (systems, segments) array for people's score (``human``) and every metric
(NaN = no score); each segment's domain and document (documents nested in domains); the systems. The human
score's NaN mask defines which (system, segment) are used for *every* score: a system is measured on its own
rated segments (sparse DA) or on all (fully crossed MQM). A metric NaN where the human score is not is an error.

**One set of resamples.** Documents are drawn with replacement within their domain (the engine's design,
:func:`.resampling.cluster_design` over the universe of (domain, document) pairs of every segment, keys and
order as :func:`.pools.pool_universe` makes them; domains sorted unless ``domain_order`` is given, which must be
the study's domain order for the replicates to equal the engine's). A study without documents (WMT'21 MQM: the
caller passes every segment as its own document, so every document is a single segment) gets the engine's design
for a study without documents instead: the segments themselves, in input order, drawn within their domain
(``clusters=None``). The chunks of draws (:func:`.resampling.map_chunks`, seeded by ``seed`` and ``labels``) are
shared by every score and system, so people and every metric are resampled alike and all replicates are paired;
results do not depend on ``threads``.

**As the engine decides** (:func:`.pool_uncertainty.pool_replicates`, per score and system on its rated segments):
where the system's segments lie in documents of several segments (fewer documents in the universe than rated
segments), the replicates are the nested ones from per-document sums; otherwise (no documents, or a sparse
system rated on fewer segments than there are documents) the one-way decomposition, on the gathered scores
where the system was rated on every segment of a study without documents (:func:`.replicate_statistics.block_statistics`),
else on the segment weights (:func:`.replicate_statistics.weighted_statistics`, ``weighted_between_domains``).
The point values follow :func:`.variance_components.variance_components` with the documents (nested only where
there are documents of several segments, so the one-way ANOVA estimator for a study without documents). Tested
equal to the engine in each case: documents (fully crossed and sparse), no documents fully crossed
(``pool_replicates`` with ``cluster_design(codes)``, as :mod:`.studies.human` calls it for MQM) and sparse (singleton
clusters over the study's segments).

**Measures** (per score and system; point value and B replicates):

* ``between_sd``: the between-domain SD, nested with documents as clusters where the study has documents (point:
  :func:`.variance_components.variance_components`, replicates: :func:`.variance_components.nested_components` on
  the per-document sums), the one-way method-of-moments SD without (above); exactly as
  :func:`.pool_uncertainty.pool_replicates` computes them (tested equal).
  How much a system's quality moves across domains in absolute terms, *including* the difficulty every system
  shares (a domain hard for everyone raises every system's between SD).
* ``gamma_area``: the mean over the score's epsilon grid of the engine's gamma curve (point:
  :func:`.robustness_metrics.gamma_curve`, replicates: :func:`.pool_uncertainty.document_statistics` with documents,
  the engine's one-way statistics without; tested equal).
  Threshold-free share of segments far from the system's mean: it mixes the within-domain spread in, so it is a
  segment-level consistency, not a domain-level one.
* ``interaction_sd``: the system x domain interaction. With M[s, d] the system's mean in domain d (per replicate:
  its segments weighted by the replicate's document counts), the double-centred residual
  r[s, d] = M[s, d] - mean_s' M[s', d] - (mean_d M[s, d] - mean_s',d M) removes the difficulty of domain d that
  every system shares and the system's own level; interaction_sd[s] = sqrt(sum_d r[s, d]^2 / (D - 1)). How much a
  system moves across domains *relative to the other systems* -- what "this system is less consistent than that
  one" means when the domains differ in difficulty for all. Like the SD of the domain means it contains the
  domain means' sampling noise (documents are few in some domains), which lifts small values; no document
  correction is made, so compare it between systems of one score, not to 0.
* ``quality``: the system's mean score over its segments (MQM: the mean segment MQM), oriented by the score's
  ``higher_is_better`` for the agreement (higher = better); the consistency table keeps the raw mean.

Lower = more consistent for the first three. A measure on a metric's own scale (BLEU points, COMET units) is
compared across metrics only through ranks (Kendall tau with people's values of the same measure), never by value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.percentile_intervals import ClusterCounts, cluster_counts
from nlp_robustness.statistics.pool_uncertainty import document_statistics
from nlp_robustness.statistics.pools import pool_universe
from nlp_robustness.statistics.replicate_statistics import (
    block_statistics, domain_indicator, weighted_between_domains, weighted_moments, weighted_statistics)
from nlp_robustness.statistics.resampling import ResamplingDesign, cluster_design, gathers, map_chunks
from nlp_robustness.statistics.robustness_metrics import gamma_curve
from nlp_robustness.statistics.variance_components import document_sums, nested_components, variance_components

__all__ = ["MEASURES", "ConsistencyReplicates", "consistency_replicates", "interaction_sd"]

#: The measures, in table order: three consistency measures (lower = more consistent) and quality.
MEASURES = ("between_sd", "gamma_area", "interaction_sd", "quality")


@dataclass(frozen=True)
class ConsistencyReplicates:
    """Every score's measures: ``estimates[score][measure]`` (S,), ``replicates[score][measure]`` (B, S), the systems'
    domain means ``domain_means[score]`` (S, D) and their replicates ``domain_replicates[score]`` (B, S, D), on the
    design whose cluster counts are ``clusters``."""

    systems: tuple[str, ...]
    domains: tuple[str, ...]
    estimates: dict[str, dict[str, NDArray[np.float64]]]
    replicates: dict[str, dict[str, NDArray[np.float64]]]
    domain_means: dict[str, NDArray[np.float64]]
    domain_replicates: dict[str, NDArray[np.float64]]
    clusters: ClusterCounts



def interaction_sd(domain_means: NDArray[np.float64]) -> NDArray[np.float64]:
    """The system x domain interaction SD of every system from the domain means (..., S, D) (module docstring)."""
    means = np.asarray(domain_means, dtype=np.float64)
    residual = (means - means.mean(axis=-2, keepdims=True) - means.mean(axis=-1, keepdims=True)
                + means.mean(axis=(-2, -1), keepdims=True))
    return np.sqrt(np.sum(residual**2, axis=-1) / (means.shape[-1] - 1))


def _checked(scores: Mapping[str, ArrayLike], human: str, domains: ArrayLike, documents: ArrayLike, systems: Sequence[str],
             epsilons: Mapping[str, ArrayLike] | None, measures: Sequence[str]) -> tuple[dict[str, NDArray[np.float64]], NDArray[np.bool_]]:
    """The score arrays and the human mask, or InputError naming the score, system or domain at fault."""
    if human not in scores:
        raise InputError(f"the human score {human!r} is not among the scores ({', '.join(scores)})")
    unknown = [name for name in measures if name not in MEASURES]
    if unknown:
        raise InputError(f"unknown measure {unknown[0]!r}; measures are {', '.join(MEASURES)}")
    if len(systems) < 3 or len(set(systems)) != len(systems):
        raise InputError(f"need at least 3 distinct systems for a ranking agreement, got {list(systems)}")
    arrays = {name: np.asarray(values, dtype=np.float64) for name, values in scores.items()}
    n_segments = np.asarray(domains).size
    if np.asarray(documents).size != n_segments:
        raise InputError(f"{n_segments} domain labels but {np.asarray(documents).size} document labels")
    mask = ~np.isnan(arrays[human])
    for name, values in arrays.items():
        if values.shape != (len(systems), n_segments):
            raise InputError(f"score {name!r}: shape {values.shape}, expected ({len(systems)} systems, {n_segments} segments)")
        bad = mask & ~np.isfinite(values)
        if bad.any():
            system = systems[int(np.flatnonzero(bad.any(axis=1))[0])]
            raise InputError(f"score {name!r}, system {system!r}: {int(bad.sum())} segment(s) without a finite score where "
                             f"the human score {human!r} has one")
        if "gamma_area" in measures and (epsilons is None or name not in epsilons):
            raise InputError(f"score {name!r}: no epsilon grid for the gamma-area")
    return arrays, mask


def consistency_replicates(scores: Mapping[str, ArrayLike], human: str, domains: ArrayLike, documents: ArrayLike,
                           systems: Sequence[str], epsilons: Mapping[str, ArrayLike] | None, resamples: int, seed: int,
                           labels: Sequence[str], measures: Sequence[str] = MEASURES, threads: int = 1,
                           domain_order: Sequence[str] | None = None) -> ConsistencyReplicates:
    """Point values and document-bootstrap replicates of every score's ``measures`` (module docstring).

    Raises:
        InputError: shapes differ, a metric has no score where the human score has one, fewer than 3 systems, a
            domain with fewer than 2 documents, a system without a rated segment in some domain, an unknown measure.
    """
    arrays, mask = _checked(scores, human, domains, documents, systems, epsilons, measures)
    domain_labels, document_labels = np.asarray(domains).astype(str), np.asarray(documents).astype(str)
    order = list(domain_order) if domain_order is not None else sorted(set(domain_labels.tolist()))
    position = {domain: code for code, domain in enumerate(order)}
    if set(position) != set(domain_labels.tolist()):
        raise InputError(f"domain order {order} does not name the segments' domains {sorted(set(domain_labels.tolist()))}")
    codes = np.array([position[label] for label in domain_labels.tolist()], dtype=np.int64)
    n_domains = len(order)
    universe = pool_universe(pd.DataFrame({"domain": domain_labels, "document": document_labels}), order)
    per_domain = np.bincount(universe[1], minlength=n_domains)
    if n_domains < 2 or per_domain.min() < 2:
        raise InputError(f"domain {order[int(np.argmin(per_domain))]!r} has {int(per_domain.min())} document(s); the document "
                         "bootstrap and the between-domain SD need at least 2 domains of at least 2 documents")
    keys = np.char.add(np.char.add(domain_labels, "\x1f"), document_labels).astype(object)
    if universe[0].size == codes.size:
        # no documents (every one a single segment): the engine's design for a study without documents
        # (document_clusters gives None), the segments in input order, drawn within their domain
        design = cluster_design(codes)
    else:
        design = cluster_design(codes, keys, False, universe)
    n_clusters = design.n_clusters
    cluster_domain = np.zeros((n_clusters, n_domains))
    cluster_domain[np.arange(n_clusters), design.stratum_of_cluster] = 1.0
    gamma, between = "gamma_area" in measures, "between_sd" in measures
    inputs = {}
    estimates: dict[str, dict[str, NDArray[np.float64]]] = {}
    domain_means: dict[str, NDArray[np.float64]] = {}
    for name, values in arrays.items():
        estimates[name] = {measure: np.empty(len(systems)) for measure in measures}
        domain_means[name] = np.empty((len(systems), n_domains))
        grid = np.asarray(epsilons[name], dtype=np.float64) if gamma else None
        for row, system in enumerate(systems):
            rated = mask[row]
            own, own_codes, cluster_of = values[row, rated], codes[rated], design.cluster_of_unit[rated]
            counts = np.bincount(own_codes, minlength=n_domains)
            if counts.min() < 1:
                raise InputError(f"system {system!r} has no rated segment in domain {order[int(np.argmin(counts))]!r}")
            inputs[name, row] = _row_replicates(own, own_codes, cluster_of, design, n_domains, grid, between)
            domain_means[name][row] = np.bincount(own_codes, weights=own, minlength=n_domains) / counts
            if between:
                estimates[name]["between_sd"][row] = variance_components(
                    own, own_codes, f"score {name!r}, system {system!r}", keys[rated]).between_sd
            if gamma:
                estimates[name]["gamma_area"][row] = float(gamma_curve(own, grid).mean())
            if "quality" in measures:
                estimates[name]["quality"][row] = float(own.mean())
        if "interaction_sd" in measures:
            estimates[name]["interaction_sd"] = interaction_sd(domain_means[name])

    # the draws of map_chunks' cluster counts, as the drawn cluster ids themselves (a design whose units are the
    # clusters, gathered): the counts follow from them, and so do the gathered scores of a row whose units are the clusters
    clusters_as_units = ResamplingDesign(np.arange(n_clusters, dtype=np.int64), design.stratum_of_cluster)

    def chunk(drawn_clusters: list[NDArray[np.float64]]) -> dict[str, dict[str, NDArray[np.float64]]]:
        rows = drawn_clusters[0].shape[0]
        picked = [block.astype(np.intp) for block in drawn_clusters]
        offsets = (np.arange(rows, dtype=np.int64) * n_clusters)[:, None]
        counts = np.bincount(np.concatenate([(offsets + ids).reshape(-1) for ids in picked]),
                             minlength=rows * n_clusters).astype(np.float64).reshape(rows, n_clusters)
        result = {}
        for name in arrays:
            drawn = {measure: np.empty((rows, len(systems))) for measure in measures}
            drawn["means"] = np.empty((rows, len(systems), n_domains))
            for row in range(len(systems)):
                statistics = inputs[name, row](counts, picked, cluster_domain)
                drawn["means"][:, row] = statistics["domain_means"]
                for measure in ("between_sd", "gamma_area", "quality"):
                    if measure in measures:
                        drawn[measure][:, row] = statistics[measure]
            if "interaction_sd" in measures:
                drawn["interaction_sd"] = interaction_sd(drawn["means"])
            result[name] = drawn
        return result

    chunks = map_chunks(chunk, clusters_as_units, resamples, seed, labels, threads,
                        values=np.arange(n_clusters, dtype=np.float64))
    replicates = {name: {measure: np.concatenate([part[name][measure] for part in chunks]) for measure in measures}
                  for name in arrays}
    domain_replicates = {name: np.concatenate([part[name]["means"] for part in chunks]) for name in arrays}
    return ConsistencyReplicates(tuple(systems), tuple(order), estimates, replicates, domain_means, domain_replicates,
                                 cluster_counts(np.bincount(design.stratum_of_cluster)))


def _row_replicates(own: NDArray[np.float64], own_codes: NDArray[np.int64], cluster_of: NDArray[np.int64],
                    design: ResamplingDesign, n_domains: int, grid: NDArray[np.float64] | None, between: bool):
    """A function (cluster counts (rows, C), drawn cluster ids per stratum, (C, D) cluster-domain indicator) -> one
    row's replicates ``between_sd, gamma_area, quality`` (the mean) and ``domain_means`` (rows, D), computed as
    :func:`.pool_uncertainty.pool_replicates` computes them for this row's units (scores ``own``, domain codes
    ``own_codes``, clusters ``cluster_of`` in ``design``), which it decides as the engine does:

    * documents of several segments (fewer clusters than the row's units): the per-document sums, the nested
      decomposition (:func:`.variance_components.nested_components`) and :func:`.pool_uncertainty.document_statistics`;
    * otherwise (every document a single segment, or none) the one-way decomposition: on the gathered scores
      (:func:`.replicate_statistics.block_statistics`) where the row's units are the design's clusters in order
      (:func:`.resampling.gathers`: a fully crossed study without documents), else on the unit weights
      (:func:`.replicate_statistics.weighted_statistics`, :func:`.replicate_statistics.weighted_between_domains`:
      a row rated on some of the segments).

    The case of documents but no more of them than domains (the engine's documents without nesting) cannot occur:
    every domain has 2 documents or more (:func:`consistency_replicates`).
    """
    n_clusters = design.n_clusters
    shift = float(own.mean())
    sizes, sums, squares = document_sums(own, cluster_of, n_clusters)
    row_design = ResamplingDesign(cluster_of, design.stratum_of_cluster)
    documents = n_clusters < row_design.n_units  # the engine's test (its clusters are nested in the domains)

    def means_of_domains(counts: NDArray[np.float64], cluster_domain: NDArray[np.float64]) -> NDArray[np.float64]:
        # as nested_components forms its domain means (NaN for a domain none of the row's units was drawn in)
        with np.errstate(divide="ignore", invalid="ignore"):
            return ((counts * sums) @ cluster_domain) / ((counts * sizes) @ cluster_domain) + shift

    if documents and n_domains < n_clusters:
        document_domain = np.zeros(n_clusters, dtype=np.int64)  # as the engine forms it (documents without units: 0)
        document_domain[cluster_of] = own_codes
        of_documents = document_statistics(own, cluster_of, n_clusters, grid) if grid is not None else None

        def nested(counts: NDArray[np.float64], picked: list[NDArray[np.intp]], cluster_domain: NDArray[np.float64]) -> dict:
            statistics = {"domain_means": means_of_domains(counts, cluster_domain)}
            if between:
                components = nested_components(counts, sizes, sums, squares, document_domain, n_domains)
                statistics["between_sd"] = np.sqrt(components["between_variance"])
            if of_documents is not None:
                found = of_documents(counts)
                statistics |= {"gamma_area": found["gamma_area"], "quality": found["mean"]}
            else:  # the mean as document_statistics computes it
                statistics["quality"] = (counts @ sums) / (counts @ sizes) + shift
            return statistics

        return nested
    if gathers(row_design):
        centred = own - shift

        def gathered(counts: NDArray[np.float64], picked: list[NDArray[np.intp]], cluster_domain: NDArray[np.float64]) -> dict:
            # the row's units are the clusters in order: the drawn ids index its scores, as resample_blocks gathers them
            found = block_statistics([centred[ids] for ids in picked], shift, grid, between)
            return {"domain_means": means_of_domains(counts, cluster_domain), "quality": found["mean"],
                    **({"gamma_area": found["gamma_area"]} if grid is not None else {}),
                    **({"between_sd": found["between_sd"]} if between else {})}

        return gathered
    indicator = domain_indicator(own_codes, n_domains)
    units_of_clusters = np.zeros((n_clusters, n_domains))
    np.add.at(units_of_clusters, (cluster_of, own_codes), 1.0)

    def weighted(counts: NDArray[np.float64], picked: list[NDArray[np.intp]], cluster_domain: NDArray[np.float64]) -> dict:
        weights = counts[:, cluster_of]  # memory order as the engine's (BLAS sums in an order that depends on it)
        found = weighted_statistics(own, weights, grid) if grid is not None else weighted_moments(own, weights)
        statistics = {"domain_means": means_of_domains(counts, cluster_domain), "quality": found["mean"]}
        if grid is not None:
            statistics["gamma_area"] = found["gamma_area"]
        if between:
            statistics["between_sd"] = weighted_between_domains(own, own_codes, n_domains, weights, indicator=indicator,
                                                                counts=counts @ units_of_clusters)["between_sd"]
        return statistics

    return weighted
