"""Google's MQM human judgements (Freitag et al. 2021) of WMT'21: readers of the published segment scores and
of the per-error files (the only place where TED sources, references and outputs are published).

The TED texts are taken from the per-error rows with the ``<v>...</v>`` error marks removed; rows of one
system and segment must agree on the text.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import FIELDS_ENCODING, read_text_lines

__all__ = ["error_file_texts", "read_mqm_error_texts", "read_mqm_segment_scores"]

_ERROR_MARK = re.compile(r"</?v>")


def read_mqm_segment_scores(path: str) -> pd.DataFrame:
    """Read an MQM ``*.avg_seg_scores.tsv``: ``system mqm_avg_score seg_id`` separated by tabs or spaces.

    Returns columns ``system, segment_id, mqm`` (``mqm`` NaN where the file says ``None``: not rated).

    Raises:
        InputError: The header differs, a line has not three fields, a score is not a number or
            ``None``, or a (system, segment) is given twice (each names the file and line).
    """
    lines = read_text_lines(path, segments=False)
    if not lines or lines[0].split() != ["system", "mqm_avg_score", "seg_id"]:
        raise InputError(f"{path}: line 1: expected the header 'system mqm_avg_score seg_id'")
    rows, seen = [], set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3:
            raise InputError(f"{path}: line {number}: expected 3 fields (system, score, segment), found {len(fields)}")
        system, score, segment = fields
        if score == "None":
            value = math.nan
        else:
            try:
                value = float(score)
            except ValueError:
                raise InputError(f"{path}: line {number}: score {score!r} is neither a number nor None") from None
        if (system, segment) in seen:
            raise InputError(f"{path}: line {number}: system {system} segment {segment} is scored twice")
        seen.add((system, segment))
        rows.append((system, segment, value))
    return pd.DataFrame(rows, columns=["system", "segment_id", "mqm"])


def read_mqm_error_texts(path: str) -> pd.DataFrame:
    """Source and target text of every (system, segment) of a per-error MQM TSV (``<v>`` marks removed).

    Returns columns ``system, segment_id, source, target`` in order of first appearance.

    Raises:
        InputError: A needed column is missing, or two rows of one system and segment disagree on
            the source or the unmarked target text (names the file and line).
    """
    texts: dict[tuple[str, str], tuple[str, str, int]] = {}
    try:
        # A header first: a U+FEFF opening the file is its signature; one in a text field is kept (nlp_robustness.fileio.text_files).
        with open(path, encoding=FIELDS_ENCODING, newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            missing = [name for name in ("system", "seg_id", "source", "target") if name not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{path}: line 1: missing column(s) {', '.join(missing)}")
            for number, row in enumerate(reader, start=2):
                key = (row["system"], row["seg_id"])
                text = (_ERROR_MARK.sub("", row["source"] or ""), _ERROR_MARK.sub("", row["target"] or ""))
                if key in texts and texts[key][:2] != text:
                    raise InputError(
                        f"{path}: line {number}: system {key[0]} segment {key[1]} has another text than on line {texts[key][2]}"
                    )
                texts.setdefault(key, (*text, number))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None
    return pd.DataFrame(
        [(system, segment, source, target) for (system, segment), (source, target, _) in texts.items()],
        columns=["system", "segment_id", "source", "target"],
    )


def error_file_texts(
    texts: pd.DataFrame, systems: Mapping[str, str], reference_system: str, source: str
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, str]]]:
    """Source, reference and outputs by segment id from :func:`read_mqm_error_texts` of a per-error file.

    The reference is the target text of ``reference_system``; every system's output is its target text.

    Raises:
        InputError: The reference system or a mapped system is not in the file (``source`` names it).
    """
    by_system = {name: group.set_index("segment_id") for name, group in texts.groupby("system", sort=False)}
    for role, name in [("reference_system", reference_system), *((f"system {table}", mqm) for table, mqm in systems.items())]:
        if name not in by_system:
            raise InputError(f"{source}: no rows of {role} {name!r} (systems: {', '.join(by_system)})")
    reference = by_system[reference_system]
    return (
        reference["source"].to_dict(),
        reference["target"].to_dict(),
        {table: by_system[mqm]["target"].to_dict() for table, mqm in systems.items()},
    )
