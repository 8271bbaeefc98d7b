"""Test sets made of some rows of a manifest dataset: ``testsets.<name>.select: {<column>: <value>}``.

A dataset whose documents carry a field that the manifest declares (the ``domains`` of a ``wmt-xml``
dataset: WMT'22 General MT mixes conversation, ecommerce, news and social documents in one file) can be
split into one test set per value, e.g. ``{dataset: wmt22-general-defr, select: {domain: news}}``.
:func:`select_rows` keeps the rows whose columns hold the selected values, with their segment ids (the
positions in the whole dataset, so ids stay unique across the split test sets); it runs before the other
test-set options (drop, ``max_segments``). :func:`check_testset_selections` checks every ``select`` against
the manifest's declarations when the workflow is planned, without reading the dataset. A user's own file
with domains (a WMT XML file, or plain text with a domain file) is split the same way; its ``select`` is checked
against the file itself (:mod:`nlp_robustness.data.local_testsets`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from nlp_robustness.data.manifest_entries import Dataset, Manifest
from nlp_robustness.errors import InputError

#: Column a test set can select on -> the manifest attribute that declares its values (plural, for messages).
SELECTABLE_COLUMNS: dict[str, str] = {"domain": "domains"}


def declared_values(dataset: Dataset) -> dict[str, tuple[str, ...]]:
    """The selectable columns of ``dataset`` and the values its manifest entry declares for each
    (empty: it declares none; only parallel datasets, whose tables have such columns)."""
    if dataset.kind != "parallel":
        return {}
    values = {column: tuple(getattr(dataset, attribute)) for column, attribute in SELECTABLE_COLUMNS.items()}
    return {column: found for column, found in values.items() if found}


def check_testset_selections(testsets: Mapping[str, Mapping[str, Any]], manifest: Manifest) -> None:
    """Check every test set's ``select`` against what its dataset declares, when the workflow is planned.

    A test set of a dataset the manifest lacks is left to the check that reports that; one of a user's file with
    domains (``file``, ``domain_file``) to :func:`nlp_robustness.data.local_testsets.check_local_testsets`.

    Raises:
        InputError: One line naming ``testsets.<name>.select[.<column>]``: ``select`` on a pair of files without
            a domain file, an unknown column, a column the dataset declares no values of, or a value it does not declare.
    """
    for name, spec in testsets.items():
        select = spec.get("select")
        if not select:
            continue
        key = f"testsets.{name}.select"
        if "file" in spec or "domain_file" in spec:
            continue
        if "dataset" not in spec:
            raise InputError(
                f"{key}: applies only to a test set with domains: a manifest dataset (testsets.{name}.dataset), a WMT XML "
                f"file (testsets.{name}.file, format: wmt-xml) or plain files with a domain file (testsets.{name}.domain_file)"
            )
        dataset = manifest.datasets.get(spec["dataset"])
        if dataset is None:
            continue
        declared = declared_values(dataset)
        for column, value in select.items():
            if column not in SELECTABLE_COLUMNS:
                raise InputError(f"{key}.{column}: unknown column {column!r} (a test set selects on: {', '.join(SELECTABLE_COLUMNS)})")
            plural = SELECTABLE_COLUMNS[column]
            if column not in declared:
                raise InputError(
                    f"{key}.{column}: dataset {dataset.key} declares no {plural} (resources/datasets.yaml), so its rows "
                    f"cannot be selected by {column}"
                )
            if value not in declared[column]:
                raise InputError(
                    f"{key}.{column}: {value!r} is not a {column} of dataset {dataset.key} (its {plural}: {', '.join(declared[column])})"
                )


def select_rows(table: pd.DataFrame, select: Mapping[str, str], where: str) -> pd.DataFrame:
    """The rows of ``table`` whose columns hold the values of ``select`` (all of them), ``segment_id`` kept,
    rows renumbered from 0.

    Args:
        where: The table's origin (a file, a dataset), for errors.

    Raises:
        InputError: A column the table lacks, or no row left (names ``where`` and the selection).
    """
    keep = pd.Series(True, index=table.index)
    for column, value in select.items():
        if column not in table.columns:
            raise InputError(f"{where}: no column {column!r} to select on (columns: {', '.join(table.columns)})")
        keep &= table[column] == value
    if not keep.any():
        wanted = ", ".join(f"{column} = {value!r}" for column, value in select.items())
        raise InputError(f"{where}: no segment has {wanted}")
    return table.loc[keep].reset_index(drop=True)
