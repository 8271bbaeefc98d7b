"""Segment scores read from files: Google's mt-metrics-eval (MTME) layout and plain one-score-per-line files.

A metric computed elsewhere (COMET on a GPU, a human study's MQM) arrives as files; these readers turn them into
one float array per system, in segment order, NaN where the file says ``None`` (not rated / not scored).

* **MTME segment scores** (``<pair>.<metric>-<ref>.seg.score``, ``<pair>.mqm.seg.score``): ``system<TAB>score``, one
  line per (system, segment), each system's lines in segment order, the systems one after another
  (:func:`read_mtme_segment_scores`). Every system must have the same number of lines, and a system's lines must be
  contiguous (a system appearing again after another one is a broken file, not a second block).
* **MTME documents** (``documents/<pair>.docs``): ``domain<TAB>document`` per segment (:func:`read_mtme_documents`).
* **Plain scores**: one number per line, one file per system and test set (:func:`read_plain_scores`).

Every reader names the file and line of the first bad value. ``None`` (MTME) or an empty line (plain) is a missing
score; whether a missing score is allowed is the caller's decision, since a human score may be
sparse (each system rated on its own segments) while a metric must score every segment people rated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import finite_number, read_text_lines

__all__ = ["MISSING", "read_mtme_documents", "read_mtme_segment_scores", "read_plain_scores", "system_scores"]

#: How MTME writes a missing score.
MISSING = "None"


def _number(text: str, path: str, line: int) -> float:
    """A score field as a float (NaN for :data:`MISSING`); a non-number or a non-finite number names file and line."""
    return math.nan if text == MISSING else finite_number(path, line, "score", text, " (a missing score is written None)")


def read_mtme_segment_scores(path: str, segments: int | None = None) -> dict[str, NDArray[np.float64]]:
    """The segment scores of an MTME ``*.seg.score`` file: system -> its scores in segment order (NaN = ``None``).

    Args:
        path: The file (``system<TAB>score`` per line).
        segments: The test set's number of segments, when known: every system must have exactly this many lines.

    Raises:
        InputError: A line without exactly two tab-separated fields, a score that is not a number, a system whose
            lines are not contiguous, systems with different numbers of lines, or another number than ``segments``
            (file and line named).
    """
    scores: dict[str, list[float]] = {}
    current = None
    for number, line in enumerate(read_text_lines(path, segments=False), start=1):
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0]:
            raise InputError(f"{path}: line {number}: expected 'system<TAB>score' (MTME layout), got {line[:80]!r}")
        system, text = fields[0], fields[1].strip()
        if system != current:
            if system in scores:
                raise InputError(f"{path}: line {number}: system {system!r} appears again after other systems; an MTME "
                                 "score file lists each system's segments in one block")
            scores[system], current = [], system
        scores[system].append(_number(text, path, number))
    if not scores:
        raise InputError(f"{path}: no scores (an MTME score file has a 'system<TAB>score' line per system and segment)")
    lengths = {system: len(values) for system, values in scores.items()}
    expected = segments if segments is not None else max(lengths.values())
    wrong = {system: length for system, length in lengths.items() if length != expected}
    if wrong:
        system, length = next(iter(wrong.items()))
        what = "the test set's" if segments is not None else "the other systems'"
        raise InputError(f"{path}: system {system!r} has {length} lines, but {what} segments number {expected}")
    return {system: np.asarray(values, dtype=np.float64) for system, values in scores.items()}


def read_plain_scores(path: str, segments: int | None = None) -> NDArray[np.float64]:
    """One system's segment scores from a plain file (one number per line; an empty line or ``None`` = missing).

    Raises:
        InputError: A line that is not a number, or another number of lines than ``segments`` (file and line named).
    """
    lines = read_text_lines(path, segments=False)
    if segments is not None and len(lines) != segments:
        raise InputError(f"{path}: {len(lines)} lines, but the test set has {segments} segments (one score per line)")
    return np.asarray([_number(line.strip() or MISSING, path, number) for number, line in enumerate(lines, start=1)],
                      dtype=np.float64)


def read_mtme_documents(path: str, segments: int | None = None) -> pd.DataFrame:
    """The domain and document of every segment from an MTME ``*.docs`` file (columns ``segment, domain, document``;
    ``segment`` 1-based, in file order).

    Raises:
        InputError: A line without two non-empty tab-separated fields, another number of lines than ``segments``, or
            a document that appears in two domains or in two separate runs of lines (file and line named).
    """
    lines = read_text_lines(path, segments=False)
    if segments is not None and len(lines) != segments:
        raise InputError(f"{path}: {len(lines)} lines, but the test set has {segments} segments (one line per segment)")
    domains, documents = [], []
    seen: dict[str, str] = {}
    previous = None
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise InputError(f"{path}: line {number}: expected 'domain<TAB>document', got {line[:80]!r}")
        domain, document = fields
        if document in seen and (seen[document] != domain or document != previous):
            raise InputError(f"{path}: line {number}: document {document!r} appears again after other documents (or in "
                             "another domain); a document's segments are contiguous lines of one domain")
        seen[document], previous = domain, document
        domains.append(domain)
        documents.append(document)
    return pd.DataFrame({"segment": np.arange(1, len(lines) + 1), "domain": domains, "document": documents})


def system_scores(scores: Mapping[str, NDArray[np.float64]], systems: Mapping[str, str], path: str,
                  where: str) -> dict[str, NDArray[np.float64]]:
    """The scores of the configured systems: our name -> the file's system name -> its scores.

    Raises:
        InputError: A configured system is not in the file (``where`` names the config key; the file's systems are listed).
    """
    missing = [name for name, file_name in systems.items() if file_name not in scores]
    if missing:
        name = missing[0]
        raise InputError(f"{where}: system {name!r} (called {systems[name]!r} in the file) has no scores in {path} "
                         f"(its systems: {', '.join(sorted(scores))})")
    return {name: scores[file_name] for name, file_name in systems.items()}
