"""Tables of the word-order perturbation study (paper 004): per-function means, flip examples, function similarity.

For a perturbation function Psi, a system Phi and a similarity kappa (BLEU, chrF or Levenshtein, 0-100),
each kept segment has beta = kappa(gold target, Phi(source)), beta1 = kappa(gold target, Phi(perturbed
source)) (robustness), beta2 = kappa(perturbed target, Phi(perturbed source)) (faithfulness) and alpha =
kappa(tokenized source, perturbed source) (how far Psi moved the source).

* :func:`means_table` -- one row per (system, function): how many sampled segments the function could
  perturb, the mean of each score over those with its segment-clustered bootstrap interval
  (:mod:`nlp_robustness.statistics.perturbation_intervals`), beta2 - beta1 (negative: more robust than
  faithful, the paper's Figure 1 quantity) with the paired test of beta2 = beta1 (``p``, and ``p_holm``
  over the functions of the system; beside it the Holm-adjusted interval of beta2 - beta1, which excludes 0
  exactly when ``p_holm`` < 1 - confidence, then its unadjusted interval, named so), and the "flips" where the perturbed source translated better than
  the original by more than the flip margin (beta1 > beta + margin; the paper reports flips in its
  Table 3 and discussion). :func:`over_functions_table` gives the same means per system over all functions.
* :data:`DEFAULT_FLIP_MARGIN` -- why a flip needs a gain of a whole score point (measured below).
* :func:`flip_examples` -- the paper's Table 3 analog: the largest flips of each (system, function).
* :func:`function_similarity` -- the paper's Figure 10 analog: mean kappa(Psi_i(s), Psi_j(s)).

How the tables are printed and written (CSV, Markdown, LaTeX):
:mod:`nlp_robustness.outputs.perturbation_table_writer`.

**The flip margin.** Sentence BLEU below 5 points is almost all smoothing: on the default run's word-order
sample (300 segments x 3 systems: 25 per test set of wmt14, wmt15, iwslt17, bio18), every one of the 109
translations scoring below 5 BLEU has no 4-gram match and 106 no 3-gram match, so their score is sacrebleu's
exponential smoothing of empty precisions. There, a *trivial* edit of the translation -- dropping its last
token -- moves sentence BLEU by a median of 0.28 points, 1.07 at the 90th and 1.43 at the 95th
percentile (dropping the first token: 0.12, 0.38, 0.50; swapping two middle tokens: 0.00, 0.09, 1.15).
The ConvS2S's flips (beta1 > beta) on that run had a median gain of 0.71 BLEU, and 332 of its 454 flips lay
between two scores below 5: most were within what a one-token difference does. :data:`DEFAULT_FLIP_MARGIN`
= 1.0 point (``perturbations.flip_margin``) is the 90th percentile of that one-token noise; it keeps 180
of the ConvS2S's 454 BLEU flips (84 of the 332 low ones) and 54 / 74 of the Apertium pivots' 158 / 156.
chrF and the Levenshtein similarity move at least as much under one-token edits (median 0.5-2.8 points at
scores 5-20), so the one margin is a floor for them too, not a noise-free threshold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.perturbation_intervals import INTERVAL_STATISTICS, UNADJUSTED_BOUNDS, FamilyIntervals

__all__ = [
    "DEFAULT_FLIP_MARGIN",
    "FLIP_COLUMNS",
    "MEANS_COLUMNS",
    "OVER_FUNCTIONS_COLUMNS",
    "PERTURBED_COLUMNS",
    "SCORE_FRAME_COLUMNS",
    "SCORE_NAMES",
    "STATUS_COLUMNS",
    "TEXT_COLUMNS",
    "flip_examples",
    "function_similarity",
    "is_flip",
    "means_table",
    "order_by_category",
    "over_functions_table",
]

#: The scores of a kept segment (module docstring).
SCORE_NAMES = ("beta", "beta1", "beta2", "alpha")
#: Columns the input tables need: a family's pair scores, the status of its sampled segments, the texts of the flip
#: examples, the perturbed sources.
SCORE_FRAME_COLUMNS = ("system", "function", "testset", "segment_id", "source_length", "metric", *SCORE_NAMES)
STATUS_COLUMNS = ("function", "testset", "segment_id", "kept", "reason")
TEXT_COLUMNS = ("system", "function", "testset", "segment_id", "source", "perturbed_source", "reference",
                "translation", "perturbed_translation")
PERTURBED_COLUMNS = ("function", "testset", "segment_id", "text")

#: The statistics with an interval, each followed by its ``_lo`` and ``_hi`` columns (printed "value [lo, hi]"); for
#: beta2 - beta1 that is the Holm-adjusted interval of its test, followed by its unadjusted one (:data:`UNADJUSTED_BOUNDS`).
_WITH_BOUNDS = (*(column for stat in INTERVAL_STATISTICS for column in (stat, f"{stat}_lo", f"{stat}_hi")), *UNADJUSTED_BOUNDS)
MEANS_COLUMNS = ("system", "function", "category", "sampled", "kept", "kept_fraction", *_WITH_BOUNDS, "p", "p_holm",
                 "flips", "flip_fraction", "flip_margin")
OVER_FUNCTIONS_COLUMNS = ("system", "functions", *_WITH_BOUNDS, "p", "p_holm")
FLIP_COLUMNS = ("system", "function", "testset", "segment_id", "source", "perturbed_source", "beta", "beta1",
                "translation", "perturbed_translation", "reference")


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise InputError(f"{what} lacks column(s) {', '.join(missing)}")


def _require_unique(frame: pd.DataFrame, keys: Sequence[str], what: str) -> None:
    duplicated = frame.duplicated(list(keys), keep=False)
    if duplicated.any():
        first = frame.loc[duplicated, list(keys)].iloc[0]
        raise InputError(f"{what} has more than one row for " + ", ".join(f"{key}={first[key]}" for key in keys))


def order_by_category(functions: Sequence[str], categories: Mapping[str, str]) -> list[str]:
    """``functions`` grouped by category: categories in order of first appearance, functions keep their order."""
    missing = [function for function in functions if function not in categories]
    if missing:
        raise InputError(f"no category for function(s) {', '.join(missing)}")
    category_order = list(dict.fromkeys(categories[function] for function in functions))
    return sorted(functions, key=lambda function: category_order.index(categories[function]))  # stable


#: How much beta1 must exceed beta for a flip, in score points (config ``perturbations.flip_margin``): the
#: 90th percentile of how much a one-token edit moves sentence BLEU below 5 points (module docstring).
DEFAULT_FLIP_MARGIN = 1.0


def is_flip(beta: pd.Series, beta1: pd.Series, margin: float = DEFAULT_FLIP_MARGIN) -> pd.Series:
    """Whether the perturbed source translated better by more than ``margin`` points: beta1 > beta + margin.

    Raises:
        ValueError: A negative or non-finite ``margin``.
    """
    if not (np.isfinite(margin) and margin >= 0):
        raise ValueError(f"the flip margin must be a finite number of points >= 0, got {margin!r}")
    return beta1 > beta + margin


def means_table(
    scores: pd.DataFrame,
    status: pd.DataFrame,
    functions: Sequence[str],
    categories: Mapping[str, str],
    systems: Sequence[str],
    metric: str,
    intervals: FamilyIntervals,
    flip_margin: float = DEFAULT_FLIP_MARGIN,
) -> pd.DataFrame:
    """One row per (system, function), systems outer, both in the given orders (:data:`MEANS_COLUMNS`).

    ``sampled``/``kept`` count the rows of ``status`` (all test sets pooled; system-independent), and
    ``kept_fraction`` is their ratio. ``beta``, ``beta1``, ``beta2``, ``alpha`` are means over the rows of
    ``scores`` for ``metric`` (the kept segments that were scored), ``beta2_minus_beta1`` is the mean of
    beta2 - beta1; their ``_lo``/``_hi`` bounds and the test of beta2 = beta1 (``p``, ``p_holm``) come from
    ``intervals`` (:func:`~nlp_robustness.statistics.perturbation_intervals.family_intervals` of the same
    scores and metric). ``flips`` counts segments with beta1 > beta + ``flip_margin``, ``flip_fraction``
    divides it by the number of scored segments, and ``flip_margin`` repeats the margin. A (system,
    function) without scored segments gets NaN means, 0 flips and a NaN flip fraction.

    Raises:
        InputError: A missing column, a function without category, a duplicated segment, a
            ``kept`` column that is not boolean, or ``intervals`` without a row of the table.
    """
    _require_columns(scores, SCORE_FRAME_COLUMNS, "scores")
    _require_columns(status, STATUS_COLUMNS, "status")
    if not pd.api.types.is_bool_dtype(status["kept"]):
        raise InputError(f"status: column kept must be boolean, got {status['kept'].dtype}")
    _require_unique(status, ("function", "testset", "segment_id"), "status")
    selected = scores[scores["metric"] == metric]
    _require_unique(selected, ("system", "function", "testset", "segment_id"), f"scores ({metric})")
    order_by_category(functions, categories)  # every function has a category

    sampled = status.groupby("function").size()
    kept = status.groupby("function")["kept"].sum()
    scored = selected.assign(flip=is_flip(selected["beta"], selected["beta1"], flip_margin),
                             beta2_minus_beta1=selected["beta2"] - selected["beta1"])
    groups = scored.groupby(["system", "function"])
    means = groups[[*SCORE_NAMES, "beta2_minus_beta1"]].mean()
    bounds = intervals.by_function.set_index(["system", "function"])
    counts = groups.size()
    flips = groups["flip"].sum()

    rows = []
    for system in systems:
        for function in functions:
            n_sampled = int(sampled.get(function, 0))
            n_kept = int(kept.get(function, 0))
            key = (system, function)
            n_scored = int(counts.get(key, 0))
            n_flips = int(flips.get(key, 0))
            row = {"system": system, "function": function, "category": categories[function],
                   "sampled": n_sampled, "kept": n_kept,
                   "kept_fraction": n_kept / n_sampled if n_sampled else np.nan}
            if key not in bounds.index:
                raise InputError(f"the intervals lack system {system}, function {function}")
            for column in INTERVAL_STATISTICS:
                row[column] = float(means.at[key, column]) if n_scored else np.nan
                row[f"{column}_lo"], row[f"{column}_hi"] = bounds.at[key, f"{column}_lo"], bounds.at[key, f"{column}_hi"]
            row |= {column: bounds.at[key, column] for column in UNADJUSTED_BOUNDS}
            row["p"], row["p_holm"] = bounds.at[key, "p"], bounds.at[key, "p_holm"]
            row["flips"] = n_flips
            row["flip_fraction"] = n_flips / n_scored if n_scored else np.nan
            row["flip_margin"] = float(flip_margin)
            rows.append(row)
    table = pd.DataFrame(rows, columns=list(MEANS_COLUMNS))
    return table.astype({"sampled": "int64", "kept": "int64", "flips": "int64"})


def over_functions_table(intervals: FamilyIntervals) -> pd.DataFrame:
    """Per system over all functions (each function weighing the same): the means with their intervals and
    the test of beta2 = beta1 (``p_holm`` over the systems); :data:`OVER_FUNCTIONS_COLUMNS`."""
    return intervals.over_functions[list(OVER_FUNCTIONS_COLUMNS)].reset_index(drop=True)


def flip_examples(
    scores: pd.DataFrame,
    texts: pd.DataFrame,
    metric: str,
    per_function: int = 3,
    *,
    systems: Sequence[str] | None = None,
    functions: Sequence[str] | None = None,
    flip_margin: float = DEFAULT_FLIP_MARGIN,
) -> pd.DataFrame:
    """The paper's Table 3 analog: segments whose perturbed source translated better (beta1 > beta + ``flip_margin``).

    For each (system, function), the ``per_function`` segments with the largest beta1 - beta for
    ``metric``; equal gains are ordered by test set, then segment id (as strings), so the choice is
    deterministic. Groups follow ``systems`` and ``functions`` (those not listed are left out) or, when
    not given, sorted names. Texts come from ``texts`` matched on (system, function, testset, segment_id).

    Raises:
        InputError: A missing column, or a selected segment without its texts.
    """
    _require_columns(scores, SCORE_FRAME_COLUMNS, "scores")
    _require_columns(texts, TEXT_COLUMNS, "texts")
    if per_function < 0:
        raise ValueError(f"per_function must be >= 0, got {per_function}")
    keys = ["system", "function", "testset", "segment_id"]
    flips = scores[(scores["metric"] == metric) & is_flip(scores["beta"], scores["beta1"], flip_margin)][keys + ["beta", "beta1"]].copy()
    flips["segment_id"] = flips["segment_id"].astype(str)
    system_order = list(systems) if systems is not None else sorted(flips["system"].unique())
    function_order = list(functions) if functions is not None else sorted(flips["function"].unique())
    flips = flips[flips["system"].isin(system_order) & flips["function"].isin(function_order)]
    flips["_system"] = flips["system"].map(system_order.index)
    flips["_function"] = flips["function"].map(function_order.index)
    flips["_gain"] = flips["beta1"] - flips["beta"]
    flips = flips.sort_values(["_system", "_function", "_gain", "testset", "segment_id"],
                              ascending=[True, True, False, True, True], kind="mergesort")
    selected = flips.groupby(["_system", "_function"], sort=False).head(per_function)

    text_table = texts[list(TEXT_COLUMNS)].copy()
    text_table["segment_id"] = text_table["segment_id"].astype(str)
    _require_unique(text_table, keys, "texts")
    merged = selected.merge(text_table, on=keys, how="left", validate="one_to_one", indicator=True)
    lacking = merged[merged["_merge"] != "both"]
    if not lacking.empty:
        first = lacking.iloc[0]
        raise InputError("texts lack the segment " + ", ".join(f"{key}={first[key]}" for key in keys))
    return merged[list(FLIP_COLUMNS)].reset_index(drop=True)



def function_similarity(
    perturbed: pd.DataFrame,
    functions: Sequence[str],
    score_pairs: Callable[[list[str], list[str]], np.ndarray],
) -> pd.DataFrame:
    """The paper's Figure 10 analog: mean kappa(Psi_i(s), Psi_j(s)) over segments kept by both functions.

    Row i, column j holds the mean of ``score_pairs(hypotheses=Psi_i texts, references=Psi_j texts)``
    over the (testset, segment_id) both functions perturbed; it is symmetric only where kappa is
    (Levenshtein is, BLEU and chrF are not). The diagonal is 100 (kappa of a text with itself) when the
    function kept any segment. NaN where two functions share no segment. Index ``hypothesis`` and
    columns ``reference`` are ``functions`` in order.

    Raises:
        InputError: A missing column, or a (function, testset, segment_id) given twice.
    """
    _require_columns(perturbed, PERTURBED_COLUMNS, "perturbed")
    frame = perturbed[list(PERTURBED_COLUMNS)].copy()
    frame["segment_id"] = frame["segment_id"].astype(str)
    _require_unique(frame, ("function", "testset", "segment_id"), "perturbed")
    texts = {function: frame[frame["function"] == function].set_index(["testset", "segment_id"])["text"]
             for function in functions}
    matrix = pd.DataFrame(np.nan, index=pd.Index(list(functions), name="hypothesis"),
                          columns=pd.Index(list(functions), name="reference"))
    for row in functions:
        for column in functions:
            if row == column:
                if not texts[row].empty:
                    matrix.at[row, column] = 100.0
                continue
            common = texts[row].index.intersection(texts[column].index).sort_values()
            if common.empty:
                continue
            values = np.asarray(score_pairs(list(texts[row].loc[common]), list(texts[column].loc[common])), dtype=float)
            matrix.at[row, column] = float(values.mean())
    return matrix
