"""Natural Robustness (paper 001): the score table of every MT system and classifier, by criterion and perturbation type.

The **score** is the share of perturbations that leave the response unchanged: **1.0 = robust**. (Paper
001's page writes the share of perturbations *causing different* responses while calling 1.0 robust;
we compute the share that matches its reading of the scale.) It is computed on nested record samples
(the first N records of a seeded order, by default five as the paper, and all sampled records) with
binomial intervals, on an effective number of perturbations for the pooled share
(:mod:`nlp_robustness.statistics.natural_robustness`).

The identity controls (:mod:`nlp_robustness.studies.natural_robustness_responses`) are scored alone, after the types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.sampling import record_order
from nlp_robustness.statistics.natural_robustness import natural_robustness_scores
from nlp_robustness.studies.natural_robustness_responses import CONTROL_PREFIX, IDENTITY, is_control

__all__ = ["CRITERIA", "KINDS", "MT_CRITERIA", "SCORE_COLUMNS", "natural_scores"]

#: How an MT system's responses are compared, and a classifier's.
MT_CRITERIA = ("exact", "chrf")
CRITERIA = (*MT_CRITERIA, "label")
#: What the rows of each kind of responder are called, and the criteria they are scored by.
KINDS = {"mt": ("MT system", MT_CRITERIA), "sentiment": ("classifier", ("label",))}
#: Columns of the score table: the row, then :func:`~nlp_robustness.statistics.natural_robustness.natural_robustness_scores`'s.
SCORE_COLUMNS = (
    "responder", "kind", "criterion", "family", "sample", "records", "type", "perturbations", "unchanged", "score",
    "ci_low", "ci_high", "interval", "design_effect",
)


def natural_scores(
    records: Mapping[str, pd.DataFrame], responses: Mapping[str, Mapping[str, pd.DataFrame]], types: Mapping[str, str],
    sizes: Sequence[int | None], bootstrap: Mapping[str, Any], seed: int, interval: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The score table (:data:`SCORE_COLUMNS`) of every row of every kind, under each of its criteria.

    Args:
        records: Kind (``mt``, ``sentiment``) -> its records (:data:`~nlp_robustness.sampling.RECORD_COLUMNS`); each kind's samples
            are the first N records of one seeded order (:func:`~nlp_robustness.sampling.record_order`, group ``natural_robustness``),
            so every row of a kind is scored on the same records.
        responses: Kind -> row (system, classifier) -> its responses table.
        types: Perturbation type -> family, in table order.
        sizes: Record sample sizes (None: every record).
        bootstrap: ``resamples`` and ``confidence`` (the level of every interval).
        seed: Seeds the record order and every row's bootstrap (with kind, row and criterion).
        interval: ``method`` (a binomial interval) and ``bootstrap_from_records`` (config
            ``natural_robustness.interval``); None: Wilson, never the bootstrap.
    """
    interval = {"method": "wilson", "bootstrap_from_records": None, **(interval or {})}
    frames = []
    for kind, rows in responses.items():
        order = record_order(records[kind], seed, "natural_robustness")
        for row, table in rows.items():
            control = is_control(table["type"])
            controls = list(dict.fromkeys(table.loc[control, "type"]))
            for criterion in KINDS[kind][1]:
                outcomes = pd.DataFrame({"record": table["record"], "type": table["type"], "same": table[f"same_{criterion}"].astype(bool)})
                options = dict(resamples=bootstrap["resamples"], confidence=bootstrap["confidence"], seed=seed,
                               method=interval["method"], bootstrap_from_records=interval["bootstrap_from_records"])
                scores = natural_robustness_scores(outcomes[~control], order, sizes, list(types), labels=[kind, row, criterion], **options)
                if controls:  # the identity control: scored alone (its pooled row would repeat it), after all
                    noise = natural_robustness_scores(outcomes[control], order, sizes, controls, labels=[kind, row, criterion, IDENTITY], **options)
                    scores = pd.concat([scores, noise[noise["type"] != "all"]], ignore_index=True)
                scores.insert(0, "family", scores["type"].map(lambda name: types.get(name, "control" if name.startswith(CONTROL_PREFIX) else "all")))
                scores.insert(0, "criterion", criterion)
                scores.insert(0, "kind", KINDS[kind][0])
                scores.insert(0, "responder", row)
                frames.append(scores)
    return pd.concat(frames, ignore_index=True)[list(SCORE_COLUMNS)]
