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
* **Interval of one type: binomial on its perturbations, never below the level minus 0.02.** A record has
  at most one perturbation of a type and the records are a random sample, so a type's outcomes are
  independent Bernoulli draws of its share (a record's propensity only varies the draw's probability across
  records). The interval is ``interval.method``'s (Wilson score by default; Jeffreys -- equal-tailed
  Beta(x + 1/2, n - x + 1/2) quantiles -- or Clopper-Pearson), widened where needed to contain the
  Clopper-Pearson interval at ``confidence - FLOOR_MARGIN`` (:func:`.binomial_intervals.type_interval`), which
  covers at least its level at every share. Why: at a fixed share a binomial interval's coverage oscillates; Wilson's falls
  to 0.80-0.89 at some share for every n below 16 and to 0.84-0.94 up to 100 (0.86 for a share of 0.03 on
  five perturbations, 0.89-0.92 for 0.01 or 0.99 on 13-100), so on the default run's shares 13 of 80
  five-record cells, 9 at 25 records and 14 at 100 covered below 0.93 (tests/unit/
  test_natural_robustness_coverage.py, exactly). Widened, every cell covers 0.937 or more; from 16
  perturbations on the interval covers 0.954-0.969 on average over shares (Wilson 0.950) and is 1-7 %
  wider than Wilson. 0 of 93 stays [0, 0.040] (Clopper-Pearson 0.039, Jeffreys 0.027); 5 of 5 is [0.51, 1].
* **Fewer than 16 perturbations of a type: marked** (:data:`FEW_PERTURBATIONS`, :func:`few_perturbations`;
  every type of a five-record sample). There an interval holds 0.93 at every share only by being wider than
  its level: this one covers 0.97-1.00 on average over shares (8-22 % wider than Wilson), and on 4 or fewer
  no interval can cover 0.93 at every share and at most 0.97 on average. 16 is the count from which the
  widened interval covers at most 0.97 on average at every larger count (the same test).
* **Interval of the pooled share: the same interval on an effective number of perturbations.** The
  perturbations of one record share its input, so their outcomes are correlated. The pooled share is a
  ratio of sums over records; its variance is estimated cluster-robustly from the records' residuals
  (``n/(n-1) * sum_i (y_i - p m_i)^2 / M^2``: y_i unchanged and m_i perturbations of record i, M all
  perturbations, n records with one), and the design effect is its ratio to the binomial variance
  ``p(1-p)/M``, clipped to [1, M/n] (between independent perturbations and perfectly correlated ones; a
  record is at least one independent unit). The interval is the binomial one at the share on
  ``M / design effect`` perturbations (Kish's effective sample size, as Korn and Graubard 1998 do for
  survey proportions). A share of 0 or 1 has no residual; its design effect is 1.
* **Why not the percentile cluster bootstrap.** With few records it under-covers: drawing 5 of the
  default run's 100 records 2,000 times, its pooled interval covered the 100-record share in 76-85 % of
  draws per row (81 % overall), and five records that all agree give every replicate the same score, an
  interval of zero width. There the Wilson interval covers 93-97 % per pooled row (95 % overall) and 96 %
  per type (``benchmarks/natural_robustness_coverage.py``). On simulated records (tests/unit/
  test_natural_robustness_coverage.py: eight types with the default run's shares and perturbation rates,
  a record effect of SD 1 on the logit scale) the pooled interval covers 0.95-0.96 at 5, 25 and 100 records
  (every responder 0.935-0.978; 0.94-0.95 with a record SD of 2, 0.97 with none), the bootstrap 0.83 / 0.92
  / 0.94. The pooled interval is not widened: its effective n is at least its number of records, and
  Clopper-Pearson is not exact on an effective n. Jeffreys under-covers the pooled share of correlated
  perturbations near 0 or 1 (0.90 on the five-record draws); Clopper-Pearson covers 0.98-0.99 on five
  records, and Korn and Graubard's degrees-of-freedom correction of the effective size 0.99: both wider
  than needed.
  The bootstrap can still be chosen from a number of records on (``interval.bootstrap_from_records``;
  default never); a row whose bootstrap interval has zero width falls back to the binomial interval.
  The ``interval`` column names the method of each row and ``design_effect`` the design effect used.
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
from nlp_robustness.scoring.bulk_scores import check_pairs
from nlp_robustness.scoring.sentence_scores import sentence_scores
from nlp_robustness.statistics.binomial_intervals import (
    BINOMIAL_INTERVALS, FLOOR_MARGIN, binomial_interval, design_effect, type_interval)

__all__ = [
    "CLUSTER_BOOTSTRAP", "FEW_PERTURBATIONS", "NATURAL_ROBUSTNESS_SIGNATURE", "OUTCOME_COLUMNS", "POOLED_TYPE",
    "SCORE_COLUMNS", "WHOLE_SAMPLE", "few_perturbations", "natural_robustness_scores", "normalise_response",
    "response_chrf", "same_chrf", "same_exact",
]

#: The pseudo-type pooling every perturbation of every type.
POOLED_TYPE = "all"
#: The ``sample`` label of the sample holding every record of the order (size None).
WHOLE_SAMPLE = "all"
#: Columns of the outcomes table: one row per (record, type) perturbation that exists.
OUTCOME_COLUMNS: tuple[str, ...] = ("record", "type", "same")
#: Columns of :func:`natural_robustness_scores`, in order.
SCORE_COLUMNS: tuple[str, ...] = (
    "sample", "records", "type", "perturbations", "unchanged", "score", "ci_low", "ci_high", "interval",
    "design_effect",
)
#: The ``interval`` of a row whose interval is the percentile cluster bootstrap over records.
CLUSTER_BOOTSTRAP = "cluster-bootstrap"
#: A type with fewer perturbations (and at least one) is marked: its interval is wider than its level.
FEW_PERTURBATIONS = 16
#: How the scores are computed, to be stored next to them.
NATURAL_ROBUSTNESS_SIGNATURE = ("natural-robustness|score:share-unchanged|interval:binomial-on-effective-n"
                                f"|type-floor:clopper-pearson-at-level-{FLOOR_MARGIN:g}|few:{FEW_PERTURBATIONS}"
                                "|bootstrap:cluster-records")

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


def few_perturbations(table: pd.DataFrame) -> pd.Series:
    """Which rows of a score table (:data:`SCORE_COLUMNS`) are marked: a type (not the pooled one) with a
    binomial interval on at least one and fewer than :data:`FEW_PERTURBATIONS` perturbations."""
    counts = pd.to_numeric(table["perturbations"])
    return ((table["type"] != POOLED_TYPE) & table["interval"].isin(BINOMIAL_INTERVALS)
            & (counts > 0) & (counts < FEW_PERTURBATIONS)).rename("few_perturbations")



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
    method: str = "wilson",
    bootstrap_from_records: int | None = None,
) -> pd.DataFrame:
    """The Natural Robustness score -- the share of perturbations that leave the response UNCHANGED
    (1.0 = robust) -- per sample size and perturbation type, with an interval (module docstring).

    Args:
        outcomes: One row per (record, type) perturbation that exists (:data:`OUTCOME_COLUMNS`):
            ``record``, ``type`` and ``same`` (bool: the response is unchanged). A record of ``order``
            may have no row (every type skipped it): it counts as a record with no perturbation.
        order: Every record id, in sampling order (:func:`nlp_robustness.sampling.record_order`).
        sizes: Sample sizes (the first k records of ``order``); None: every record.
        types: The perturbation types, in output order; ``"all"`` (:data:`POOLED_TYPE`) is added last.
        resamples: Bootstrap replicates (>= 1), used from ``bootstrap_from_records`` records on.
        confidence: Interval coverage in (0, 1), e.g. 0.95.
        seed: Config seed; each size's bootstrap generator is ``rng_for(seed, "natural_robustness",
            *labels, sample)``, so a row does not depend on the other rows or on the order of jobs.
        labels: Name the row (e.g. system, criterion).
        method: The binomial interval (:data:`.binomial_intervals.BINOMIAL_INTERVALS`): on a type's perturbations
            (:func:`.binomial_intervals.type_interval`: held at least at ``confidence - FLOOR_MARGIN``), and for
            the pooled type on its perturbations over the :func:`.binomial_intervals.design_effect`.
        bootstrap_from_records: Samples of at least this many records get the percentile cluster
            bootstrap instead (a zero-width one falls back to ``method``); None: never.

    Returns:
        :data:`SCORE_COLUMNS`, one row per size (given order) and type (``types`` order, then ``"all"``):
        ``records`` in the sample, ``perturbations``, ``unchanged``, ``score`` = unchanged / perturbations,
        ``ci_low``/``ci_high``, ``interval`` (the method of the row: ``method`` or
        :data:`CLUSTER_BOOTSTRAP`) and ``design_effect`` (1 for a type, estimated for ``all``; NaN for a
        bootstrap interval). Score, interval and design effect are NaN without perturbations.

    Raises:
        InputError: Bad arguments; an outcome whose record is not in ``order`` or whose type is not in
            ``types``; a duplicated (record, type); a non-boolean ``same``.
    """
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise InputError(f"resamples must be an integer >= 1, got {resamples!r}")
    if not (isinstance(confidence, (int, float)) and math.isfinite(confidence) and 0 < confidence < 1):
        raise InputError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    if method not in BINOMIAL_INTERVALS:
        raise InputError(f"interval method must be one of {', '.join(BINOMIAL_INTERVALS)}, got {method!r}")
    if bootstrap_from_records is not None:
        check_sample_size(bootstrap_from_records)
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
        totals, kept = perturbations[:n].sum(axis=0), unchanged[:n].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            shares = kept / totals
        effects = np.ones(len(types) + 1)
        effects[-1] = design_effect(perturbations[:n, -1], unchanged[:n, -1])
        lows, highs = type_interval(shares, totals, confidence, method)
        lows[-1:], highs[-1:] = binomial_interval(shares[-1:], totals[-1:] / effects[-1:], confidence, method)
        methods = [method] * len(effects)
        if bootstrap_from_records is not None and n >= bootstrap_from_records:
            rng = rng_for(seed, "natural_robustness", *labels, sample)
            denominators, numerators = _replicate_sums(perturbations[:n], unchanged[:n], int(resamples), rng)
            for column in range(len(effects)):
                valid = denominators[:, column] > 0
                replicates = numerators[valid, column] / denominators[valid, column]
                if replicates.size and replicates.min() < replicates.max():  # else: zero width, keep the binomial one
                    lows[column], highs[column] = np.quantile(replicates, quantiles)
                    methods[column], effects[column] = CLUSTER_BOOTSTRAP, np.nan
        for column, type_name in enumerate([*types, POOLED_TYPE]):
            present = totals[column] > 0
            rows.append({
                "sample": sample, "records": n, "type": type_name,
                "perturbations": int(totals[column]), "unchanged": int(kept[column]),
                "score": float(shares[column]) if present else np.nan,
                "ci_low": float(lows[column]), "ci_high": float(highs[column]),
                "interval": methods[column] if present else "",
                "design_effect": float(effects[column]) if present else np.nan,
            })
    return pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
