"""Natural Robustness (paper 001) of MT systems and sentiment classifiers, and its consistency across perturbation types.

A *record* is one input: a segment of an MT test set (``wmt14/123``) or a product review
(``books/456``). The perturbation families named in ``natural_robustness.families`` (by default the
naive perturbations, :mod:`~nlp_robustness.perturbations.natural`, and the paraphrases,
:mod:`~nlp_robustness.perturbations.paraphrase`) perturb every sampled record once per function; each
function is a perturbation *type*. A *response* is what a system gives for an input: a translation, or a
classifier's label. A perturbation leaves the response unchanged when

* ``exact`` (MT): the two translations are equal after normalisation (NFKC, optionally case-folded and
  without punctuation, whitespace collapsed);
* ``chrf`` (MT): the sentence chrF of the new translation against the original one is at least the
  threshold (same_response.chrf_threshold);
* ``label`` (classifiers): the predicted label is the same.

The **score** is the share of perturbations that leave the response unchanged: **1.0 = robust**, on nested
record samples with binomial intervals (:mod:`nlp_robustness.studies.natural_robustness_scores` says how).

**Consistency across perturbation types** is measured by the one robustness engine: the types are the
domains, a unit is one perturbation of one record scored 100 (unchanged) or 0, and a domain's value is
its share unchanged in percent (aggregation ``domain``, as the sentiment study's accuracies). The units
are the kept (type, record) pairs, which depend on the perturbed inputs only, so every system and
criterion of a kind (MT, sentiment) is measured on the same blocks.

The records, the responses and the identity controls that keep like with like are
:mod:`nlp_robustness.studies.natural_robustness_responses`; the config section is
:mod:`nlp_robustness.studies.natural_robustness_config`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS
from nlp_robustness.statistics.pools import UNIT_COLUMNS
from nlp_robustness.statistics.study_design import StudyDesign, ids_across_domains
from nlp_robustness.studies.natural_robustness_responses import is_control, read_responses, record_id

__all__ = ["has_variance_components", "resampling_design", "unit_keys", "units"]


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a row's units: a record appears under every perturbation type, so records are
    drawn with all their perturbations (crossed)."""
    return ids_across_domains()


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    A type's share unchanged is the mean of its 0/100 units, so the units decompose by type.
    """
    return True


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """Unit keys ``domain, unit_id``: every kept (type, record) pair. ``files`` maps ``<type>/<part>`` to a
    perturbed test set (MT) or ``<type>`` to the perturbed reviews (sentiment)."""
    frames = []
    for name, path in files.items():
        table = read_table(path, list(DERIVED_COLUMNS), "perturbed test set")
        frames.append(pd.DataFrame({"domain": name.split("/", 1)[0], "unit_id": record_id(table["testset"], table["segment_id"])}))
    return pd.concat(frames, ignore_index=True)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """One row's units (``files``: family -> its responses table; ``score``: the criterion), scored 100 when
    the perturbation left the response unchanged and 0 otherwise."""
    frames = []
    for path in files.values():
        table = read_responses(path)
        table = table[~is_control(table["type"])]  # the identity control is no perturbation type
        frames.append(pd.DataFrame({
            "domain": table["type"], "unit_id": table["record"], "score": 100.0 * table[f"same_{score}"].astype(float),
        }))
    return pd.concat(frames, ignore_index=True)[list(UNIT_COLUMNS)]
