"""Gather a family's per-segment files into the long tables its tables and figures are drawn from.

The paths come from the workflow (by system, function and part); every reader returns plain frames
whose columns :mod:`nlp_robustness.outputs.perturbation_tables` and
:mod:`nlp_robustness.outputs.perturbation_figures` document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from nlp_robustness.data.testset_formats import read_plain_lines
from nlp_robustness.data.testsets import read_testset_table
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, STATUS_COLUMNS
from nlp_robustness.perturbations.pair_scores import PAIR_SCORES, read_pair_scores

__all__ = ["read_derived", "read_family_scores", "read_flip_texts", "read_perturbed_sources", "read_status"]

_KEYS = ["testset", "segment_id"]


def read_family_scores(pair_scores: Mapping[str, Mapping[str, str]], metrics: Sequence[str]) -> pd.DataFrame:
    """Long table system, function, testset, segment_id, source_length, metric, beta, beta1, beta2, alpha
    from the pair-score tables (system -> function -> path)."""
    frames = []
    for system, by_function in pair_scores.items():
        for function, path in by_function.items():
            table = read_pair_scores(path)
            for metric in metrics:
                frame = table[[*_KEYS, "source_length"]].copy()
                for score in PAIR_SCORES:
                    frame[score] = table[f"{score}_{metric}"]
                frame.insert(0, "function", function)
                frame.insert(0, "system", system)
                frame.insert(5, "metric", metric)
                frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def read_status(status: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Every sampled segment's status under every function: function, testset, segment_id, kept (bool), reason."""
    frames = []
    for function, paths in status.items():
        for path in paths:
            table = read_table(path, STATUS_COLUMNS, "perturbation status table")
            table["kept"] = table["kept"].map({"True": True, "False": False})
            frames.append(table.assign(function=function)[["function", *STATUS_COLUMNS]])
    return pd.concat(frames, ignore_index=True)


def read_derived(paths: Sequence[str]) -> pd.DataFrame:
    """The parts of one function's perturbed test set, concatenated."""
    return pd.concat([read_table(path, DERIVED_COLUMNS, "perturbed test set") for path in paths], ignore_index=True)


def read_perturbed_sources(derived: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """function, testset, segment_id, text (the perturbed source) of every kept segment."""
    frames = []
    for function, paths in derived.items():
        table = read_derived(paths)
        frames.append(pd.DataFrame({"function": function, "testset": table["testset"], "segment_id": table["segment_id"], "text": table["source"]}))
    return pd.concat(frames, ignore_index=True)


def read_flip_texts(
    derived: Mapping[str, Sequence[str]],
    translations: Mapping[str, Mapping[str, Sequence[str]]],
    testsets: Mapping[str, str],
    testset_translations: Mapping[str, Mapping[str, str]],
) -> pd.DataFrame:
    """system, function, testset, segment_id, source, perturbed_source, reference, translation,
    perturbed_translation of every kept segment (what a flip example shows)."""
    segment_ids = {testset: read_testset_table(path)["segment_id"].tolist() for testset, path in testsets.items()}
    original = {}
    for system, by_testset in testset_translations.items():
        for testset, path in by_testset.items():
            original.update({(system, testset, segment_id): text for segment_id, text in zip(segment_ids[testset], read_plain_lines(path))})
    frames = []
    for function, paths in derived.items():
        table = read_derived(paths)
        for system, by_function in translations.items():
            perturbed = [line for path in by_function[function] for line in read_plain_lines(path)]
            frames.append(pd.DataFrame({
                "system": system, "function": function, "testset": table["testset"], "segment_id": table["segment_id"],
                "source": table["original_source"], "perturbed_source": table["source"], "reference": table["reference"],
                "translation": [original[(system, testset, segment_id)] for testset, segment_id in zip(table["testset"], table["segment_id"])],
                "perturbed_translation": perturbed,
            }))
    return pd.concat(frames, ignore_index=True)
