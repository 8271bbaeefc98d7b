"""A parsed WMT XML file (:mod:`nlp_robustness.data.wmt_xml`) as a test-set table, and the table of a manifest
dataset's file checked against what the manifest declares.

:func:`wmt_xml_table` gives the columns of :data:`~nlp_robustness.data.testsets.TABLE_COLUMNS`, then ``domain``
and one ``hypothesis:<system>`` per system. ``segment_id`` is the 1-based position of the segment in the whole
file, so a test set made of one domain's rows keeps ids that are unique across the file (with gaps).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pandas as pd

from nlp_robustness.data.testsets import TABLE_COLUMNS
from nlp_robustness.data.wmt_xml import WmtXmlFile, read_wmt_xml
from nlp_robustness.errors import InputError

__all__ = ["DOMAIN_COLUMN", "HYPOTHESIS_PREFIX", "hypothesis_column", "read_declared_wmt_xml", "wmt_xml_table"]

PathLike = str | os.PathLike[str]

#: Prefix of the column of a system's hypotheses in a table (``hypothesis:Online-B``).
HYPOTHESIS_PREFIX = "hypothesis:"

#: The column of each segment's document domain.
DOMAIN_COLUMN = "domain"


def hypothesis_column(system: str) -> str:
    """The table column of ``system``'s hypotheses."""
    return f"{HYPOTHESIS_PREFIX}{system}"


def wmt_xml_table(parsed: WmtXmlFile, systems: Sequence[str] | None = None) -> pd.DataFrame:
    """The file as a table: :data:`TABLE_COLUMNS`, ``domain``, then ``hypothesis:<system>`` per system.

    Args:
        parsed: From :func:`~nlp_robustness.data.wmt_xml.read_wmt_xml`.
        systems: The systems whose columns to write, in this order (``None``: every system, in file order).

    Raises:
        InputError: A system of ``systems`` that the file lacks.
    """
    systems = list(parsed.systems if systems is None else systems)
    columns: dict[str, list[str]] = {name: [] for name in (*TABLE_COLUMNS, DOMAIN_COLUMN)}
    hypotheses = {system: parsed.hypotheses_of(system) for system in systems}
    for document in parsed.documents:
        columns["doc_id"] += [document.doc_id] * len(document.source)
        columns["source"] += document.source
        columns["reference"] += document.reference
        columns[DOMAIN_COLUMN] += [document.domain] * len(document.source)
    columns["segment_id"] = [str(position) for position in range(1, len(columns["source"]) + 1)]
    table = pd.DataFrame(columns, dtype=str)
    for system, texts in hypotheses.items():
        table[hypothesis_column(system)] = pd.Series(texts, dtype=str)
    return table


def read_declared_wmt_xml(path: PathLike, declared: Mapping[str, object], dataset: str) -> pd.DataFrame:
    """The table of a manifest dataset's WMT XML file, checked against what the manifest declares.

    Args:
        path: The file.
        declared: ``reference_translator``, ``domains`` and ``systems`` of the dataset's manifest entry.
        dataset: Its manifest key, for errors.

    Returns:
        :func:`wmt_xml_table` with the declared systems' columns in the declared order.

    Raises:
        InputError: The file's malformed (:func:`~nlp_robustness.data.wmt_xml.read_wmt_xml`), or its domains or systems differ from the
            declared ones (names the dataset, the file and both lists).
    """
    parsed = read_wmt_xml(path, str(declared["reference_translator"]))
    for what, found in (("domains", parsed.domains), ("systems", parsed.systems)):
        listed = list(declared.get(what) or [])  # type: ignore[call-overload]
        if sorted(found) != sorted(listed):
            missing = [name for name in listed if name not in found]
            extra = [name for name in found if name not in listed]
            raise InputError(
                f"dataset {dataset}: {path} holds the {what} {', '.join(found) or '(none)'}, but the manifest declares "
                f"{', '.join(listed) or '(none)'}"
                + (f"; not in the file: {', '.join(missing)}" if missing else "")
                + (f"; not declared: {', '.join(extra)}" if extra else "")
            )
    return wmt_xml_table(parsed, list(declared.get("systems") or []))  # type: ignore[call-overload]
