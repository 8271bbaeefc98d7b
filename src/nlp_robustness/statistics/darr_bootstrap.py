"""How sure a DARR tau is: a bootstrap over segments, and paired tests of the tau difference of two metrics.

A DARR judgement compares two outputs of one *segment* (SID), and the judgements of a segment share its
reference, its source and its systems' outputs, so their agreements are correlated: the segment is what
is resampled, bringing every judgement it has, in every attack condition and for every metric variant.
Segments are drawn with replacement *within each language pair* (stratified: every replicate keeps each
pair's number of segments, which is what a table of given pairs claims), through the shared weights of
:func:`nlp_robustness.statistics.resampling.resample_weights` (one seeded stream per chunk).

Tau = (Concordant - Discordant) / (Concordant + Discordant) with ties Discordant
(:mod:`nlp_robustness.statistics.darr`), i.e. the mean of +1 / -1 agreements; with a segment's sum of
agreements ``s_i`` and its number of judgements ``n_i`` a replicate's tau is the ratio of weighted sums
``(w @ s) / (w @ n)``, so all resamples of every (condition, variant) come from two matrix products. The
tables' pooled tau is the unweighted mean of the pairs' taus (as the paper averages pairs), and so is
every replicate's. Because every (pair, condition, variant) is computed on the same resamples, two
variants' replicates are paired, and :func:`tau_differences` tests their difference with
:func:`~nlp_robustness.statistics.paired_tests.difference` (Wald test with the bootstrap SE), Holm-adjusted
within a *family*: the comparisons of one condition (or condition set), every pair and the average. The
interval ``lo, hi`` of a difference is Holm-adjusted (:func:`.holm_intervals.holm_family`: it excludes 0
exactly when ``p_holm`` < 1 - confidence, so it never contradicts the verdict printed beside it); the
difference's own interval at the table's confidence is kept as ``lo_unadjusted, hi_unadjusted``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.holm_intervals import holm_family
from nlp_robustness.statistics.paired_tests import difference
from nlp_robustness.statistics.percentile_intervals import interval
from nlp_robustness.statistics.resampling import cluster_design, resample_weights

__all__ = [
    "AVERAGE",
    "DIFFERENCE_COLUMNS",
    "INTERVAL_COLUMNS",
    "TauBootstrap",
    "segment_totals",
    "tau_bootstrap",
    "tau_differences",
    "tau_intervals",
    "tau_replicates",
]

#: The pair label of the mean over pairs (as the tau table's).
AVERAGE = "average"
INTERVAL_COLUMNS: tuple[str, ...] = ("condition", "pair", "metric", "tau", "tau_lo", "tau_hi", "judgements", "segments")
#: ``lo, hi``: the Holm-adjusted interval (excludes 0 exactly when ``p_holm`` < 1 - confidence) at the level
#: ``level_adjusted``; ``lo_unadjusted, hi_unadjusted``: the difference's own interval at the table's confidence.
DIFFERENCE_COLUMNS: tuple[str, ...] = (
    "family", "pair", "metric_a", "metric_b", "tau_a", "tau_b", "difference", "lo", "hi", "standard_error", "p", "p_holm",
    "level_adjusted", "lo_unadjusted", "hi_unadjusted",
)


def segment_totals(agreement: NDArray[np.float64], segment_codes: NDArray[np.int64], n_segments: int
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per segment, the sum of the agreements of every column ``(n_segments, k)`` and the judgement count ``(n_segments,)``.

    ``agreement`` is ``(n_judgements, k)`` of +1 / -1; ``segment_codes`` gives each judgement's segment (0 .. S-1)."""
    sums = np.zeros((n_segments, agreement.shape[1]))
    np.add.at(sums, segment_codes, agreement)
    return sums, np.bincount(segment_codes, minlength=n_segments).astype(np.float64)


def tau_replicates(sums: NDArray[np.float64], counts: NDArray[np.float64], stratum_of_segment: NDArray[np.int64],
                   n_resamples: int, seed: int, *labels: str) -> NDArray[np.float64]:
    """Bootstrap replicates of tau ``(n_resamples, n_strata, k)``: segments drawn with replacement within
    each stratum (a pair), each replicate's tau per stratum and column the ratio of weighted sums.

    The resamples depend only on (seed, labels, strata sizes): the same call for other columns gives paired
    replicates. A stratum always keeps its size, so a replicate's denominator is never 0.
    """
    strata = np.asarray(stratum_of_segment, dtype=np.int64)
    n_strata = int(strata.max()) + 1
    design = cluster_design(strata)
    members = [np.flatnonzero(strata == stratum) for stratum in range(n_strata)]
    replicates = []
    for weights in resample_weights(design, n_resamples, seed, *labels):  # (rows, segments), segments in the given order
        numerators = np.stack([weights[:, member] @ sums[member] for member in members], axis=1)
        denominators = np.stack([weights[:, member] @ counts[member] for member in members], axis=1)
        replicates.append(numerators / denominators[:, :, None])
    return np.concatenate(replicates, axis=0)


@dataclass(frozen=True)
class TauBootstrap:
    """Tau of every (pair, condition, variant) and its bootstrap replicates; the last pair is :data:`AVERAGE`.

    ``estimate`` ``(P + 1, C, V)``, ``replicates`` ``(B, P + 1, C, V)``, ``judgements`` and ``segments``
    per pair ``(P,)``."""

    pairs: list[str]
    conditions: list[str]
    variants: list[str]
    estimate: NDArray[np.float64]
    replicates: NDArray[np.float64]
    judgements: NDArray[np.int64]
    segments: NDArray[np.int64]

    @property
    def scopes(self) -> list[str]:
        """The pairs then :data:`AVERAGE` (the first axis of ``estimate``)."""
        return [*self.pairs, AVERAGE]


def _judgement_cube(agreement: pd.DataFrame, variants: Sequence[str]) -> tuple[pd.DataFrame, list[str], NDArray[np.float64]]:
    """The judgements (pair, line, sid; first-seen order), the conditions and the agreements ``(J, C, V)``."""
    missing = [column for column in ("condition", "pair", "line", "sid", *variants) if column not in agreement.columns]
    if missing:
        raise InputError(f"agreement table lacks column(s) {', '.join(missing)}")
    keys = pd.MultiIndex.from_arrays([agreement["pair"].astype(str), agreement["line"].astype("int64")])
    judgement_codes, judgement_index = pd.factorize(keys)
    condition_codes, condition_names = pd.factorize(agreement["condition"].astype(str))
    cube = np.full((len(judgement_index), len(condition_names), len(variants)), np.nan)
    values = agreement[list(variants)].to_numpy(dtype=np.float64)
    if not np.isin(values, (-1.0, 1.0)).all():
        raise InputError("agreement table: every agreement must be +1 or -1")
    if pd.Series(judgement_codes * len(condition_names) + condition_codes).duplicated().any():
        row = int(np.argmax(pd.Series(judgement_codes * len(condition_names) + condition_codes).duplicated().to_numpy()))
        raise InputError(f"agreement table: judgement {agreement['pair'].iloc[row]} line {agreement['line'].iloc[row]} "
                         f"appears twice under condition {agreement['condition'].iloc[row]}")
    cube[judgement_codes, condition_codes] = values
    if np.isnan(cube).any():
        judgement, condition, _ = np.argwhere(np.isnan(cube))[0]
        pair, line = judgement_index[judgement]
        raise InputError(f"agreement table: judgement {pair} line {line} is missing under condition {condition_names[condition]}")
    first_rows = pd.Series(np.arange(len(agreement))).groupby(judgement_codes).first().to_numpy()
    judgements = pd.DataFrame({
        "pair": agreement["pair"].astype(str).to_numpy()[first_rows],
        "line": agreement["line"].astype("int64").to_numpy()[first_rows],
        "sid": agreement["sid"].astype("int64").to_numpy()[first_rows],
    })
    sids = agreement.groupby([judgement_codes])["sid"].nunique()
    if (sids > 1).any():
        pair, line = judgement_index[int(sids.index[np.argmax(sids.to_numpy() > 1)])]
        raise InputError(f"agreement table: judgement {pair} line {line} has two SIDs")
    return judgements, list(condition_names), cube


def tau_bootstrap(agreement: pd.DataFrame, variants: Sequence[str], n_resamples: int, seed: int) -> TauBootstrap:
    """Tau and its segment-bootstrap replicates for every pair, condition and variant of an agreement table.

    ``agreement`` has one row per (condition, judgement): ``condition, pair, line, sid`` and a +1 / -1 column
    per variant (:func:`nlp_robustness.studies.metric_attack_scoring.tau_tables`); conditions and pairs keep their
    order of appearance. Resamples are seeded by (``seed``, "metric_robustness", "tau").

    Raises:
        InputError: a column is missing, an agreement is not +/-1, a judgement lacks a condition or has two SIDs.
    """
    judgements, condition_names, cube = _judgement_cube(agreement, variants)
    segment_keys = pd.MultiIndex.from_arrays([judgements["pair"], judgements["sid"]])
    segment_codes, segment_index = pd.factorize(segment_keys)
    pair_codes, pair_names = pd.factorize(segment_index.get_level_values(0))
    n_conditions, n_variants = cube.shape[1], cube.shape[2]
    sums, counts = segment_totals(cube.reshape(len(judgements), -1), segment_codes, len(segment_index))
    replicates = tau_replicates(sums, counts, pair_codes, n_resamples, seed, "metric_robustness", "tau")
    indicator = np.zeros((len(segment_index), len(pair_names)))
    indicator[np.arange(len(segment_index)), pair_codes] = 1.0
    estimate = (indicator.T @ sums) / (indicator.T @ counts)[:, None]
    shape = (len(pair_names), n_conditions, n_variants)
    estimate = estimate.reshape(shape)
    replicates = replicates.reshape((replicates.shape[0], *shape))
    return TauBootstrap(
        pairs=list(pair_names), conditions=condition_names, variants=list(variants),
        estimate=np.concatenate([estimate, estimate.mean(axis=0, keepdims=True)]),
        replicates=np.concatenate([replicates, replicates.mean(axis=1, keepdims=True)], axis=1),
        judgements=(indicator.T @ counts).astype(np.int64), segments=indicator.sum(axis=0).astype(np.int64),
    )


def tau_intervals(result: TauBootstrap, confidence: float) -> pd.DataFrame:
    """:data:`INTERVAL_COLUMNS`: tau and its percentile interval per condition, pair (then the average) and
    metric; ``judgements`` and ``segments`` of the pair (the sums over pairs for the average)."""
    rows = []
    for c, condition in enumerate(result.conditions):
        for scope_index, scope in enumerate(result.scopes):
            in_scope = slice(None) if scope == AVERAGE else scope_index
            for v, variant in enumerate(result.variants):
                low, high = interval(result.replicates[:, scope_index, c, v], confidence)
                rows.append({
                    "condition": condition, "pair": scope, "metric": variant, "tau": float(result.estimate[scope_index, c, v]),
                    "tau_lo": low, "tau_hi": high, "judgements": int(np.sum(result.judgements[in_scope])),
                    "segments": int(np.sum(result.segments[in_scope])),
                })
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))


def tau_differences(result: TauBootstrap, comparisons: Sequence[tuple[str, str]], families: Mapping[str, Sequence[str]],
                    confidence: float) -> pd.DataFrame:
    """:data:`DIFFERENCE_COLUMNS`: the paired test of tau(metric_a) - tau(metric_b) on the same judgements,
    for every family (a label -> the conditions whose taus are averaged: one condition, an attack's levels,
    every attacked condition), every pair and the average, every comparison; ``p_holm`` adjusts the p-values
    of one family (its pairs x comparisons) by Holm's method, and ``lo, hi`` is the Holm-adjusted interval
    (module docstring).

    Raises:
        InputError: a comparison names a variant or a family a condition the bootstrap does not have.
    """
    for first, second in comparisons:
        for variant in (first, second):
            if variant not in result.variants:
                raise InputError(f"comparison {first} - {second}: no metric variant {variant!r} (known: {', '.join(result.variants)})")
    rows = []
    for family, members in families.items():
        unknown = [condition for condition in members if condition not in result.conditions]
        if unknown or not members:
            raise InputError(f"family {family!r}: unknown or no condition(s) {', '.join(unknown)}")
        columns = [result.conditions.index(condition) for condition in members]
        estimate = result.estimate[:, columns].mean(axis=1)
        replicates = result.replicates[:, :, columns].mean(axis=2)
        family_rows, tests = [], []
        for scope_index, scope in enumerate(result.scopes):
            for first, second in comparisons:
                a, b = result.variants.index(first), result.variants.index(second)
                tested = difference(estimate[scope_index, a], estimate[scope_index, b],
                                    replicates[:, scope_index, a], replicates[:, scope_index, b], confidence)
                family_rows.append({
                    "family": family, "pair": scope, "metric_a": first, "metric_b": second,
                    "tau_a": float(estimate[scope_index, a]), "tau_b": float(estimate[scope_index, b]),
                    "difference": tested.estimate, "standard_error": tested.standard_error, "p": tested.p_value,
                    "lo_unadjusted": tested.low, "hi_unadjusted": tested.high,
                })
                tests.append(tested)
        adjusted = holm_family(tests, 1 - confidence)
        for index, row in enumerate(family_rows):
            row.update({"p_holm": float(adjusted.p_holm[index]), "level_adjusted": float(adjusted.level_adjusted[index]),
                        "lo": float(adjusted.low[index]), "hi": float(adjusted.high[index])})
        rows.extend(family_rows)
    return pd.DataFrame(rows, columns=list(DIFFERENCE_COLUMNS))
