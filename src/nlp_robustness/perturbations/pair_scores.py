"""The metrics of paper 004 (Equations 2-5) for one system and one perturbation function, per segment.

With kappa a sentence similarity (sentence BLEU, chrF, normalised Levenshtein; 0-100) and Phi the system:

* beta  = kappa(reference, Phi(source))                      translation quality (the unperturbed test set's score)
* beta1 = kappa(reference, Phi(perturbed source))            robustness (the perturbed test set's score)
* beta2 = kappa(perturbed reference, Phi(perturbed source))  faithfulness
* alpha = kappa(source tokens, perturbed source)             how far the function moved the source

beta and beta1 are read from the score tables the scoring rule wrote for the test set and for the
perturbed test set; beta2 and alpha are computed here with the same metric code. alpha compares the
perturbed source with the *tokens* it permutes joined by spaces (``source_tokens``), so a perturbation
that leaves the order alone would score 100 whatever the tokeniser does.

beta1 and beta2 are scored like for like: beta1 against the gold reference as the test set writes it,
beta2 against the perturbed reference written with the gold's spacing (the perturbed test set's
``perturbed_reference``, :mod:`~nlp_robustness.perturbations.token_spacing`), so an unchanged order
gives the gold byte for byte and beta2 = beta1 under every metric, and with the same BLEU tokeniser
(``tokenize``: the one the scoring rule used for the perturbed test set). A family that leaves the
reference alone (character attacks, natural noise) has the gold as its perturbed reference: beta2 =
beta1 there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.scoring.sentence_scores import sentence_scores

__all__ = ["PAIR_SCORES", "pair_score_columns", "pair_scores", "read_pair_scores"]

#: The four metrics of a perturbed segment, in table order.
PAIR_SCORES: tuple[str, ...] = ("beta", "beta1", "beta2", "alpha")


def pair_score_columns(metrics: Sequence[str]) -> list[str]:
    """Columns of a pair-score table: keys, source length, then ``<score>_<metric>`` for every metric."""
    return ["testset", "segment_id", "source_length"] + [f"{score}_{metric}" for metric in metrics for score in PAIR_SCORES]


def pair_scores(
    derived: pd.DataFrame,
    derived_scores: pd.DataFrame,
    perturbed_translations: Sequence[str],
    testset_scores: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    where: str = "perturbed test set",
    tokenize: str | None = None,
) -> pd.DataFrame:
    """beta, beta1, beta2 and alpha of every kept segment of one perturbed test set, for one system.

    Args:
        derived: The perturbed test set (:data:`~nlp_robustness.perturbations.derive.DERIVED_COLUMNS`).
        derived_scores: The scoring rule's table for the perturbed test set, row-aligned with ``derived``.
        perturbed_translations: The system's translations of the perturbed sources, row-aligned.
        testset_scores: Test set -> the scoring rule's table of the system on the unperturbed test set.
        metrics: The similarity functions kappa (columns of the score tables).
        where: Names the perturbed test set in error messages.
        tokenize: sacrebleu's BLEU tokeniser of beta2: the one beta1 was scored with (None: 13a).

    Raises:
        InputError: Tables that do not align, or a segment missing from its test set's scores.
    """
    if len(derived_scores) != len(derived) or len(perturbed_translations) != len(derived):
        raise InputError(
            f"{where}: {len(derived)} segments, {len(derived_scores)} scores, {len(perturbed_translations)} translations"
        )
    if not (derived_scores["segment_id"].astype(str).to_numpy() == derived["segment_id"].astype(str).to_numpy()).all():
        raise InputError(f"{where}: its score table lists other segments than the test set")
    table = pd.DataFrame({
        "testset": derived["testset"].to_numpy(),
        "segment_id": derived["segment_id"].astype(str).to_numpy(),
        "source_length": [len(tokens.split(" ")) if tokens else 0 for tokens in derived["source_tokens"]],
    })
    original = {}
    for testset, scores in testset_scores.items():
        original[testset] = scores.assign(segment_id=scores["segment_id"].astype(str)).set_index("segment_id")
    for metric in metrics:
        beta = np.empty(len(derived))
        for position, (testset, segment_id) in enumerate(zip(table["testset"], table["segment_id"])):
            try:
                beta[position] = original[testset].at[segment_id, metric]
            except KeyError:
                raise InputError(f"{where}: segment {segment_id} of {testset} has no {metric} score on the test set") from None
        table[f"beta_{metric}"] = beta
        table[f"beta1_{metric}"] = derived_scores[metric].to_numpy(dtype=np.float64)
        table[f"beta2_{metric}"] = sentence_scores(
            list(perturbed_translations), derived["perturbed_reference"].tolist(), metric, tokenize
        )
        table[f"alpha_{metric}"] = sentence_scores(derived["source"].tolist(), derived["source_tokens"].tolist(), metric)
    return table[pair_score_columns(metrics)]


def read_pair_scores(path: str) -> pd.DataFrame:
    """A pair-score table (rule ``perturbation_scores``): keys as strings, scores as floats."""
    table = read_table(path, ["testset", "segment_id", "source_length"], "pair-score table")
    for column in table.columns[3:]:
        table[column] = table[column].astype(float)
    table["source_length"] = table["source_length"].astype(int)
    return table
