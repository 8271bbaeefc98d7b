"""Which test sets have document ids, and what a table, a caption or the log says of one that has none.

Every interval and paired test of the workflow resamples whole documents within each test set
(docs/statistics.md): the segments of one document share its topic, style and translator, so they are not
independent draws. A test set without document ids (plain text, TSV, a domain file without a document column)
has no documents to resample, and its segments are resampled one by one, as independent units. Nothing in the
numbers shows that, and it can decide a verdict: on TICO-19 (19 documents, one of 450 segments) the two Apertium
pivots are separated with the segments resampled alone (p = 0.009) and not with the documents (p = 0.084;
issue 52). So a study of such a test set says so, in the run's log when the workflow is planned
(:func:`segments_as_units_warning`) and in the caption of every table and figure whose intervals or tests resample
its segments (:func:`segments_as_units_note`), with the way to give document ids: a ``domain_file`` whose every
line is the domain, a tab and the document id (docs/own-data.md, config/own-data/plain-with-domains.yaml).

Whether a test set has document ids is known when the workflow is planned, from the format of the files it is
read from (:func:`configured_without_document_ids`): a manifest dataset's as planned (its mirror copy or its
download: wmt15's mirror copy is plain text, its download SGML with document ids), a file pair's ``format``, a
WMT XML file (always), a domain file's lines. The prepare job records what it found in the test set's provenance
file (``document_ids``; ``documents`` 0 where there are none) and warns in its log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from nlp_robustness.data.local_testsets import read_domain_file

__all__ = [
    "FORMATS_WITH_DOCUMENT_IDS", "HOW_TO_GIVE_DOCUMENT_IDS", "segments_as_units_note", "segments_as_units_warning",
    "has_document_ids", "configured_without_document_ids",
]

#: File formats whose segments carry a document id (every other format: plain, tsv, has none).
FORMATS_WITH_DOCUMENT_IDS = frozenset({"wmt-sgml", "iwslt-xml", "wmt-xml"})

#: How a user gives a test set document ids (one wording for the log and the captions).
HOW_TO_GIVE_DOCUMENT_IDS = (
    "to give document ids, give the test set a domain_file whose every line is the segment's domain, a tab and its "
    "document id (docs/own-data.md; config/own-data/plain-with-domains.yaml), or read a manifest dataset from its "
    "SGML/XML download"
)


def has_document_ids(spec: Mapping[str, Any], dataset_formats: Mapping[str, str]) -> bool | None:
    """Whether the segments of a configured test set carry document ids (None: not known when planned, a domain
    file that does not exist yet).

    Args:
        spec: The test set's config entry (``testsets.<name>``).
        dataset_formats: Manifest dataset -> the format it is read in, as planned (mirror or download).
    """
    if "dataset" in spec:
        return dataset_formats[spec["dataset"]] in FORMATS_WITH_DOCUMENT_IDS
    if "file" in spec:  # a WMT XML file: every segment is in a <doc>
        return True
    if "domain_file" in spec:
        if not os.path.isfile(spec["domain_file"]):
            return None
        return read_domain_file(spec["domain_file"]).doc_ids is not None
    return spec.get("format", "plain") in FORMATS_WITH_DOCUMENT_IDS


def configured_without_document_ids(testsets: Mapping[str, Mapping[str, Any]], dataset_formats: Mapping[str, str]) -> list[str]:
    """The configured test sets whose segments carry no document id, in config order (their segments are
    resampled as independent units)."""
    return [name for name, spec in testsets.items() if has_document_ids(spec, dataset_formats) is False]


def segments_as_units_note(testsets: Sequence[str]) -> str:
    """The sentence a caption ends with when ``testsets`` (those of its table without document ids) is not empty;
    "" when it is."""
    if not testsets:
        return ""
    names = ", ".join(testsets)
    subject = f"Test set {names} has" if len(testsets) == 1 else f"Test sets {names} have"
    return (
        f"{subject} no document ids: {'its' if len(testsets) == 1 else 'their'} segments were resampled as independent "
        f"units, which makes intervals narrower and p-values smaller where segments of one document are alike; "
        f"{HOW_TO_GIVE_DOCUMENT_IDS}."
    )


def segments_as_units_warning(study: str, testsets: Sequence[str]) -> str:
    """The planning warning of an MT study with test sets without document ids (``testsets``, not empty)."""
    return f"study {study}: {segments_as_units_note(testsets)}"
