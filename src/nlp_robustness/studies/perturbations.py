"""Consistency across perturbations (what paper 004 does not measure): perturbation functions as domains.

Each function of a family is a domain; its units are the segments it kept (test set and segment id),
each scored by beta1 = kappa(reference, translation of the perturbed source) of one system (engine
aggregation ``unit``). Metrics I-III on the whole pool, by bagging and design bagging and with each
function left out in turn then say how evenly a system's robustness is spread over the functions. Which
segments a function keeps depends on the parse only, so every system and metric is measured on the same
blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.perturbations.pair_scores import read_pair_scores
from nlp_robustness.statistics.pools import UNIT_COLUMNS
from nlp_robustness.statistics.study_design import StudyDesign, ids_across_domains

__all__ = ["has_variance_components", "resampling_design", "unit_id", "unit_keys", "units"]


def unit_id(testset: pd.Series, segment_id: pd.Series) -> pd.Series:
    """The key of a segment across test sets: ``<test set>/<segment id>``."""
    return testset.astype(str) + "/" + segment_id.astype(str)


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a system's units: a segment appears under every perturbation function (its unit
    id names it in each), so segments are drawn with all their perturbed versions, which keeps the correlation
    across functions (crossed)."""
    return ids_across_domains()


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    Pair scores (beta1) decompose by perturbation function.
    """
    return True


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """Unit keys ``domain, unit_id``: the kept segments of every perturbed test set. ``files`` maps
    ``<function>/<part>`` to the perturbed test set (a function's parts in test-set order)."""
    frames = []
    for name, path in files.items():
        function = name.split("/", 1)[0]
        table = read_table(path, ["segment_id", "testset"], "perturbed test set")
        frames.append(pd.DataFrame({"domain": function, "unit_id": unit_id(table["testset"], table["segment_id"])}))
    return pd.concat(frames, ignore_index=True)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """One system's units (``row``: the system; ``files`` maps function -> its pair-score table) scored by
    beta1 under the metric ``score``."""
    frames = []
    for function, path in files.items():
        table = read_pair_scores(path)
        frames.append(pd.DataFrame({
            "domain": function, "unit_id": unit_id(table["testset"], table["segment_id"]), "score": table[f"beta1_{score}"],
        }))
    return pd.concat(frames, ignore_index=True)[list(UNIT_COLUMNS)]
