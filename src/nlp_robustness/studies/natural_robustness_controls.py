"""Natural Robustness (paper 001): identity test sets, the chrF criterion's sensitivity and the circular pairs.

**Identity test sets.** :func:`identity_testset` writes a family part's sampled records unperturbed in the
layout of its perturbed test sets; :func:`identity_testsets` names them (``perturbed/<family>/identity/<part>``).
Every system translates them through the same rules as the perturbed sets, so each perturbation is compared
with an original translated among the same neighbours (why: :mod:`nlp_robustness.studies.natural_robustness`).

**Thresholds.** The ``chrf`` criterion counts a response as unchanged when the sentence chrF of the new
translation against the original one is at least a threshold (``same_response.chrf_threshold``, 80 by
default). :func:`threshold_scores` scores every MT system and perturbation type at each threshold of
``natural_robustness.chrf_thresholds`` on the same records and with the same intervals as the scores
(:func:`~nlp_robustness.studies.natural_robustness.natural_scores`), from the chrF the responses tables hold.

**Circular pairs.** A round-trip paraphrase (a family function with a ``modes`` setting: the Apertium modes
of its round trip) that shares a mode with an Apertium system (config ``systems.<name>.modes``, kind
``apertium``) is made by the engine under test: the system's score on that type is circular
(:func:`circular_pairs`); the tables mark it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.perturbations.configuration import derived_testset, parts
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.statistics.natural_robustness import same_chrf
from nlp_robustness.studies.natural_robustness import IDENTITY, SCORE_COLUMNS, natural_scores

__all__ = ["THRESHOLD_COLUMNS", "circular_pairs", "identity_testset", "identity_testsets", "threshold_scores"]

#: Columns of the threshold table: the chrF threshold, then the score table's.
THRESHOLD_COLUMNS = ("threshold", *SCORE_COLUMNS)


def identity_testsets(section: Mapping[str, Any] | None, families: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Family -> the names of its identity test sets, one per part (none without a ``natural_robustness`` section)."""
    if not section:
        return {}
    return {family: [derived_testset(family, IDENTITY, part) for part in parts(families[family])] for family in section["families"]}


def identity_testset(samples: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The identity test set of one part (:data:`~nlp_robustness.perturbations.derive.DERIVED_COLUMNS`):
    every sampled segment unperturbed, in the order a perturbed test set of the part lists its kept
    segments (test set, then sample order), so each original is translated among the same neighbours as
    its perturbed versions (``samples``: test set -> its sample table)."""
    frames = [
        pd.DataFrame({
            "segment_id": table["segment_id"].astype(str).to_numpy(), "doc_id": table["doc_id"].astype(str).to_numpy(),
            "source": table["source"].to_numpy(), "reference": table["reference"].to_numpy(), "testset": testset,
            "original_source": table["source"].to_numpy(), "source_tokens": table["source"].to_numpy(),
            "perturbed_reference": table["reference"].to_numpy(),
        })
        for testset, table in samples.items()
    ]
    return pd.concat(frames, ignore_index=True)[list(DERIVED_COLUMNS)]


def circular_pairs(
    types: Mapping[str, str], families: Mapping[str, Mapping[str, Any]], systems: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[str]]:
    """Perturbation type -> the Apertium systems that share a mode with its round trip (types without any left out).

    Args:
        types: Type (function) -> its family.
        families: ``perturbations.families`` (each with ``functions``: function -> settings).
        systems: ``systems`` of the config (``kind``, and ``modes`` for Apertium).
    """
    circular: dict[str, list[str]] = {}
    for perturbation_type, family in types.items():
        # a family that runs Apertium says which modes a function uses (paraphrase.round_trip_modes); others run none
        modes_of = getattr(family_module(family), "round_trip_modes", None)
        settings = families[family]["functions"].get(perturbation_type) or {}
        modes = set(modes_of(perturbation_type, settings)) if modes_of else set()
        shared = [name for name, spec in systems.items()
                  if spec.get("kind") == "apertium" and modes & set(spec.get("modes") or ())]
        if shared:
            circular[perturbation_type] = shared
    return circular


def threshold_scores(
    records: Mapping[str, pd.DataFrame], responses: Mapping[str, pd.DataFrame], types: Mapping[str, str],
    thresholds: Sequence[float], sizes: Sequence[int | None], bootstrap: Mapping[str, Any], seed: int,
    interval: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The chrF criterion's score at every threshold (:data:`THRESHOLD_COLUMNS`), MT systems only.

    Args:
        records: ``{"mt": records}`` as for :func:`~nlp_robustness.studies.natural_robustness.natural_scores`.
        responses: MT system -> its responses table (with ``chrf``); identity-control rows are scored too,
            so each threshold has its noise floor.
        thresholds: chrF thresholds (0-100).
    """
    frames = []
    for threshold in thresholds:
        rows = {}
        for system, table in responses.items():
            rows[system] = table.assign(same_chrf=same_chrf(pd.to_numeric(table["chrf"]).to_numpy(), threshold))
        scores = natural_scores(records, {"mt": rows}, types, sizes, bootstrap, seed, interval)
        scores = scores[scores["criterion"] == "chrf"]
        scores.insert(0, "threshold", float(threshold))
        frames.append(scores)
    return pd.concat(frames, ignore_index=True)[list(THRESHOLD_COLUMNS)]


