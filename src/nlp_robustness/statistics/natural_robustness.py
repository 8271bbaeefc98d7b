"""Paper 001's Natural Robustness score: the share of benign perturbations that leave a response unchanged.

A *record* is one input (an MT test segment ``wmt14/123``, a product review ``books/456``). A seeded
sample of records (five by default in paper 001) is perturbed by several *types* of benign change
(punctuation removal, casing, typos, paraphrases, ...), at most one perturbation of each type per record
(a type may skip a record it cannot change), and the system's response to each perturbed input is
compared with its response to the unmodified input.

Choices (where the paper is ambiguous or silent):

* **Direction.** The page writes the score as *(perturbations causing different responses) / (all
  perturbations)* but says that 1.0 means robust. We follow the stated meaning: the score is the share
  of perturbations whose response is **unchanged**, so 1.0 = robust, 0.0 = every perturbation changes
  the response.
* **Same response.** Classifier labels are compared elsewhere (equal or not; the booleans come here).
  Text responses are compared either exactly after :func:`normalise_response` (NFKC, casefold, removal of
  punctuation, whitespace collapsed: the differences a reader would not call a different response), or
  by sentence chrF of the perturbed response against the original one (:func:`response_chrf`) at a
  threshold (:func:`same_chrf`).
* **Sample.** Records are ordered by a seeded hash rank (:func:`nlp_robustness.sampling.record_order`,
  the rank the families' segment samples are drawn by); the k-record sample is the first k records
  (:func:`nlp_robustness.sampling.sample_records`), so samples are nested and independent of the other
  records' presence.
* **Pooled score.** The pseudo-type ``"all"`` pools every perturbation of every type (a ratio of sums,
  so a type with more perturbations weighs more).
* **Interval: cluster bootstrap over records.** The perturbations of one record share its input, so
  their outcomes are correlated; the records are resampled with replacement and each drawn record brings
  all its perturbations (a record with none still counts as a drawn record). Resampling perturbations
  independently would understate the variance. Each replicate's score is a ratio of sums; the interval is
  the percentile interval (numpy's default linear quantiles) at ``(1 - confidence) / 2`` and
  ``(1 + confidence) / 2`` over the replicates with at least one perturbation.
* **Tiny samples.** The percentile bootstrap under-covers for few records: with five records that all
  agree every replicate gives the same score, and the interval has zero width. That is not certainty;
  such rows are flagged ``degenerate`` and the tables say so.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.sampling import check_sample_size, rng_for
from nlp_robustness.scoring.sentence_scores import check_pairs, sentence_scores

__all__ = [
    "NATURAL_ROBUSTNESS_SIGNATURE",
    "OUTCOME_COLUMNS",
    "POOLED_TYPE",
    "SCORE_COLUMNS",
    "WHOLE_SAMPLE",
    "natural_robustness_scores",
    "normalise_response",
    "response_chrf",
    "same_chrf",
    "same_exact",
]

#: The pseudo-type pooling every perturbation of every type.
POOLED_TYPE = "all"
#: The ``sample`` label of the sample holding every record of the order (size None).
WHOLE_SAMPLE = "all"
#: Columns of the outcomes table: one row per (record, type) perturbation that exists.
OUTCOME_COLUMNS: tuple[str, ...] = ("record", "type", "same")
#: Columns of :func:`natural_robustness_scores`, in order.
SCORE_COLUMNS: tuple[str, ...] = (
    "sample", "records", "type", "perturbations", "unchanged", "score", "ci_low", "ci_high", "degenerate",
)
#: How the scores are computed, to be stored next to them.
NATURAL_ROBUSTNESS_SIGNATURE = "natural-robustness|score:share-unchanged|bootstrap:cluster-records|interval:percentile"

_CHUNK_WEIGHTS = 4_000_000  # bootstrap weights drawn per chunk of replicates (memory bound, not a result)


def normalise_response(text: str, *, casefold: bool = True, punctuation: bool = True) -> str:
    """The form in which two text responses are compared exactly.

    Unicode NFKC (full-width letters, ligatures and compatibility forms become their plain forms); then,
    if ``casefold``, ``str.casefold`` followed by NFKC again (casefolding can leave non-NFKC text); then, if
    ``punctuation``, every punctuation character (Unicode categories P*: Pc Pd Ps Pe Pi Pf Po) is deleted
    -- symbols (S*: ``$ + = %``, emoji) are kept because they carry content; then runs of whitespace are
    collapsed to one space and the ends stripped. Punctuation is deleted, not replaced by a space, so
    ``don't`` and ``dont`` agree (``well-known`` and ``well known`` then do not).
    """
    if not isinstance(text, str):
        raise InputError(f"response: expected a string, got {type(text).__name__}")
    text = unicodedata.normalize("NFKC", text)
    if casefold:
        text = unicodedata.normalize("NFKC", text.casefold())
    if punctuation:
        text = "".join(character for character in text if not unicodedata.category(character).startswith("P"))
    return " ".join(text.split())


def same_exact(
    original: Sequence[str], perturbed: Sequence[str], *, casefold: bool = True, punctuation: bool = True
) -> NDArray[np.bool_]:
    """Whether each perturbed response equals its original response after :func:`normalise_response`.

    Raises InputError on a length mismatch or a non-string response.
    """
    check_pairs(original, perturbed, names=("original", "perturbed"))
    options = {"casefold": casefold, "punctuation": punctuation}
    return np.fromiter(
        (normalise_response(a, **options) == normalise_response(b, **options) for a, b in zip(original, perturbed)),
        dtype=bool,
        count=len(original),
    )


def response_chrf(original: Sequence[str], perturbed: Sequence[str]) -> NDArray[np.float64]:
    """Sentence chrF (sacrebleu ``CHRF()``, 0-100) of each perturbed response, the original response as reference.

    Two identical responses score 100, also when empty or blank (sacrebleu scores those 0).
    Raises InputError on a length mismatch or a non-string response.
    """
    check_pairs(original, perturbed, names=("original", "perturbed"))
    scores = sentence_scores(list(perturbed), list(original), "chrf")
    identical = np.fromiter((a == b for a, b in zip(original, perturbed)), dtype=bool, count=len(original))
    scores[identical] = 100.0
    return scores


def same_chrf(chrf_values: ArrayLike, threshold: float) -> NDArray[np.bool_]:
    """Whether each response counts as unchanged by chrF: ``chrf >= threshold`` (NaN: changed).

    Raises InputError for a threshold outside [0, 100].
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or not 0 <= threshold <= 100:
        raise InputError(f"chrf threshold must lie in [0, 100], got {threshold!r}")
    values = np.asarray(chrf_values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return values >= threshold


def _count_matrices(
    outcomes: pd.DataFrame, order: Sequence[str], types: Sequence[str]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per record of ``order`` (rows) and type of ``types`` then the pooled type (columns): the number of
    perturbations and of unchanged responses, as float64 (exact counts; BLAS-ready)."""
    missing = [column for column in OUTCOME_COLUMNS if column not in outcomes.columns]
    if missing:
        raise InputError(f"outcomes: missing column(s) {', '.join(missing)}")
    same = outcomes["same"]
    if not pd.api.types.is_bool_dtype(same) or same.isna().any():
        raise InputError(f"outcomes: column 'same' must be boolean without missing values, got {same.dtype}")
    if outcomes.duplicated(["record", "type"]).any():
        raise InputError("outcomes: more than one perturbation of one type for one record")
    rows = pd.Index(order).get_indexer(outcomes["record"])
    columns = pd.Index(types).get_indexer(outcomes["type"])
    for name, positions, known in (("record", rows, "the record order"), ("type", columns, "the types")):
        if (positions < 0).any():
            unknown = pd.unique(outcomes[name][positions < 0])[:5]
            raise InputError(f"outcomes: {name}(s) not in {known}: {', '.join(map(str, unknown))}")
    shape = (len(order), len(types) + 1)
    perturbations, unchanged = np.zeros(shape), np.zeros(shape)
    np.add.at(perturbations, (rows, columns), 1.0)
    np.add.at(unchanged, (rows, columns), same.to_numpy(dtype=bool).astype(np.float64))
    perturbations[:, -1] = perturbations[:, :-1].sum(axis=1)
    unchanged[:, -1] = unchanged[:, :-1].sum(axis=1)
    return perturbations, unchanged


def _replicate_sums(
    perturbations: NDArray[np.float64], unchanged: NDArray[np.float64], resamples: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cluster bootstrap: ``resamples`` draws of n records with replacement, as multinomial record weights
    (how often each record is drawn; rows of n uniform draws counted per record); returns the replicates'
    sums of perturbations and of unchanged responses per column, each (resamples, columns)."""
    n = perturbations.shape[0]
    if n == 0:
        return np.zeros((resamples, perturbations.shape[1])), np.zeros((resamples, perturbations.shape[1]))
    denominators, numerators = [], []
    chunk = max(1, _CHUNK_WEIGHTS // n)
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        draws = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        weights = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        denominators.append(weights @ perturbations)
        numerators.append(weights @ unchanged)
    return np.concatenate(denominators), np.concatenate(numerators)


def natural_robustness_scores(
    outcomes: pd.DataFrame,
    order: Sequence[str],
    sizes: Sequence[int | None],
    types: Sequence[str],
    *,
    resamples: int,
    confidence: float,
    seed: int,
    labels: Sequence[str],
) -> pd.DataFrame:
    """The Natural Robustness score -- the share of perturbations that leave the response UNCHANGED
    (1.0 = robust) -- per sample size and perturbation type, with a cluster-bootstrap percentile interval.

    Args:
        outcomes: One row per (record, type) perturbation that exists (:data:`OUTCOME_COLUMNS`):
            ``record``, ``type`` and ``same`` (bool: the response is unchanged). A record of ``order``
            may have no row (every type skipped it): it counts as a record with no perturbation.
        order: Every record id, in sampling order (:func:`nlp_robustness.sampling.record_order`).
        sizes: Sample sizes (the first k records of ``order``); None: every record.
        types: The perturbation types, in output order; ``"all"`` (:data:`POOLED_TYPE`) is added last.
        resamples: Bootstrap replicates (>= 1).
        confidence: Interval coverage in (0, 1), e.g. 0.95 for the 2.5 % and 97.5 % quantiles.
        seed: Config seed; each size's generator is ``rng_for(seed, "natural_robustness", *labels,
            sample)``, so a row does not depend on the other rows or on the order of jobs.
        labels: Name the row (e.g. system, criterion).

    Returns:
        :data:`SCORE_COLUMNS`, one row per size (given order) and type (``types`` order, then ``"all"``):
        ``records`` in the sample, ``perturbations``, ``unchanged``, ``score`` = unchanged / perturbations
        (NaN without perturbations), ``ci_low``/``ci_high`` (NaN when no replicate has a perturbation) and
        ``degenerate`` (every replicate gave the same score: a zero-width interval, not certainty).

    Raises:
        InputError: Bad arguments; an outcome whose record is not in ``order`` or whose type is not in
            ``types``; a duplicated (record, type); a non-boolean ``same``.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise InputError(f"resamples must be an integer >= 1, got {resamples!r}")
    if not (isinstance(confidence, (int, float)) and math.isfinite(confidence) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    for size in sizes:
        check_sample_size(size)
    sample_labels = [WHOLE_SAMPLE if size is None else str(int(size)) for size in sizes]
    if len(set(sample_labels)) < len(sample_labels):
        raise InputError(f"sizes: duplicated sample size in {list(sizes)!r}")
    if POOLED_TYPE in types or len(set(types)) < len(types):
        raise InputError(f"types: must be distinct and exclude the pooled type {POOLED_TYPE!r}, got {list(types)!r}")
    if len(set(order)) < len(order):
        raise InputError("order: duplicated record id")
    if isinstance(labels, str) or not all(isinstance(label, str) for label in labels):
        raise InputError(f"labels: expected a sequence of strings, got {labels!r}")

    perturbations, unchanged = _count_matrices(outcomes, order, types)
    quantiles = [(1 - confidence) / 2, (1 + confidence) / 2]
    rows = []
    for size, sample in zip(sizes, sample_labels):
        n = len(order) if size is None else min(int(size), len(order))
        rng = rng_for(seed, "natural_robustness", *labels, sample)
        denominators, numerators = _replicate_sums(perturbations[:n], unchanged[:n], int(resamples), rng)
        for column, type_name in enumerate([*types, POOLED_TYPE]):
            total, kept = perturbations[:n, column].sum(), unchanged[:n, column].sum()
            valid = denominators[:, column] > 0
            replicates = numerators[valid, column] / denominators[valid, column]
            low, high = np.quantile(replicates, quantiles) if replicates.size else (np.nan, np.nan)
            rows.append({
                "sample": sample, "records": n, "type": type_name,
                "perturbations": int(total), "unchanged": int(kept),
                "score": kept / total if total > 0 else np.nan,
                "ci_low": float(low), "ci_high": float(high),
                "degenerate": bool(replicates.size and replicates.min() == replicates.max()),
            })
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
