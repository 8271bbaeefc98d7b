"""Test sets of a user's own files that carry domains: a WMT XML file, or plain text with a per-line domain file.

A test set is a manifest dataset, a pair of files, or one of the two *local* routes here (config
``testsets.<name>``), which need no manifest entry:

``file`` + ``format: wmt-xml`` (+ ``translator``: without it, the file's only reference translator, else ``A``)
    The organisers' WMT XML (WMT'21 onwards, :mod:`nlp_robustness.data.wmt_xml`): the table is
    :func:`~nlp_robustness.data.wmt_xml_tables.wmt_xml_table` of the whole file, as a manifest ``wmt-xml`` dataset's is,
    so a domain selected from it has the same segment ids (positions in the whole file) and document ids.
    A document without a ``domain`` is allowed unless the test set selects a domain. The systems' outputs
    (``<hyp system>``) are read by a ``hypotheses`` system with ``submission``.
``source`` + ``reference`` + ``format: plain`` + ``domain_file``
    The domain file has one line per line of the two text files: the domain, optionally a tab and the
    document id (on every line or on none). Segment ids are line numbers of the whole files.

Either way ``select: {domain: ...}`` keeps one domain's rows (:func:`~nlp_robustness.data.testset_selection.select_rows`),
and a ``hypotheses`` file of such a test set translates the *whole* file, one line per segment: the test set's
lines are picked by segment id (so one file serves every domain's test set).

:class:`LocalFiles` reads each file once per planning; :func:`check_local_testsets` runs, when the workflow is
planned, the checks the prepare job would run, and those of the config against the file (a selected domain or a
translator it lacks), each error one line naming the config key and the file. :func:`read_local_testset` is
what the prepare job reads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nlp_robustness.data.testset_preparation import prepare_testset
from nlp_robustness.data.testset_formats import read_plain_lines
from nlp_robustness.data.testsets import build_parallel_table, sha256_of
from nlp_robustness.data.wmt_xml import WmtXmlFile, read_wmt_xml, reference_translator, reference_translators
from nlp_robustness.data.wmt_xml_tables import wmt_xml_table
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines

PathLike = str | os.PathLike[str]

#: The column a local test set selects on.
DOMAIN = "domain"


def is_local_testset(spec: Mapping[str, Any]) -> bool:
    """Whether a test set's config entry is one of the local routes (a WMT XML file, or a domain file)."""
    return "file" in spec or "domain_file" in spec


def whole_file(spec: Mapping[str, Any]) -> str:
    """The file a local test set's segment ids count in: its WMT XML file or its source file."""
    return str(spec["file"] if "file" in spec else spec["source"])


@dataclass(frozen=True)
class DomainFile:
    """A per-line domain file.

    Attributes:
        path: The file.
        domains: The domain of every line.
        doc_ids: The document id of every line, or ``None`` when the file gives none.
    """

    path: str
    domains: tuple[str, ...]
    doc_ids: tuple[str, ...] | None

    @property
    def values(self) -> tuple[str, ...]:
        """Every domain, in the order of its first line."""
        return tuple(dict.fromkeys(self.domains))


def read_domain_file(path: PathLike) -> DomainFile:
    """Read a domain file: per line the domain, optionally a tab and a document id (stripped).

    Raises:
        InputError: The file is unreadable or not UTF-8, a line has no domain or more than two fields, or some
            lines give a document id and others do not (names the file and the line).
    """
    domains: list[str] = []
    doc_ids: list[str] = []
    with_ids: bool | None = None  # whether line 1 gives a document id
    for number, line in enumerate(read_text_lines(path, segments=False), start=1):
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) > 2:
            raise InputError(f"{path}: line {number}: {len(fields)} tab-separated fields; a line is a domain, optionally a tab and a document id")
        if not fields[0]:
            raise InputError(f"{path}: line {number}: no domain")
        if len(fields) == 2 and not fields[1]:
            raise InputError(f"{path}: line {number}: a tab but no document id")
        domains.append(fields[0])
        with_ids = len(fields) == 2 if with_ids is None else with_ids
        if with_ids != (len(fields) == 2):
            raise InputError(
                f"{path}: line {number}: {'a' if len(fields) == 2 else 'no'} document id, but line 1 gives "
                f"{'one' if with_ids else 'none'}: give a document id on every line or on none"
            )
        if with_ids:
            doc_ids.append(fields[1])
    if not domains:
        raise InputError(f"{path}: empty domain file")
    return DomainFile(str(path), tuple(domains), tuple(doc_ids) if doc_ids else None)


def _xml_table(parsed: WmtXmlFile) -> pd.DataFrame:
    return wmt_xml_table(parsed, [])  # the systems' outputs are read by the hypotheses kind


def _domain_file_table(spec: Mapping[str, Any], domains: DomainFile) -> pd.DataFrame:
    table = build_parallel_table(spec["source"], spec["reference"], "plain")
    if len(domains.domains) != len(table):
        raise InputError(
            f"{domains.path} has {len(domains.domains)} lines, but {spec['source']} and {spec['reference']} have {len(table)}: "
            "a domain file has one line per segment"
        )
    table[DOMAIN] = pd.Series(domains.domains, dtype=str)
    if domains.doc_ids is not None:
        table["doc_id"] = pd.Series(domains.doc_ids, dtype=str)
    return table


def read_local_testset(spec: Mapping[str, Any]) -> tuple[pd.DataFrame, tuple[str, str, str], dict[str, Any]]:
    """What the prepare job reads of a local test set: the whole table (with ``domain``), the files for
    :func:`~nlp_robustness.data.testset_preparation.prepare_testset` to name in errors, and the provenance origin
    (files, format, the translator read, checksums).

    Raises:
        InputError: A file malformed or not aligned, a domain file whose length differs from the texts'.
    """
    if "file" in spec:
        parsed = read_wmt_xml(spec["file"], spec.get("translator"), require_domain=False)
        origin = {"file": spec["file"], "format": spec["format"], "translator": parsed.translator, "file_sha256": sha256_of(spec["file"])}
        return _xml_table(parsed), (spec["file"], spec["file"], "wmt-xml"), origin
    table = _domain_file_table(spec, read_domain_file(spec["domain_file"]))
    origin = {
        "source": spec["source"], "reference": spec["reference"], "format": spec["format"], "domain_file": spec["domain_file"],
        **{f"{side}_sha256": sha256_of(spec[side]) for side in ("source", "reference", "domain_file")},
    }
    return table, (spec["source"], spec["reference"], "plain"), origin


class LocalFiles:
    """The local files of one planning, each read once (by path; a WMT XML file by path and the translator asked for)."""

    def __init__(self) -> None:
        self._xml: dict[tuple[str, str | None], WmtXmlFile] = {}
        self._domains: dict[str, DomainFile] = {}
        self._tables: dict[tuple[str | None, ...], pd.DataFrame] = {}

    def wmt_xml(self, path: str, translator: str | None) -> WmtXmlFile:
        """The parsed WMT XML file (documents without a domain allowed; ``translator`` None: the file's only one, else A)."""
        if (path, translator) not in self._xml:
            self._xml[path, translator] = read_wmt_xml(path, translator, require_domain=False)
        return self._xml[path, translator]

    def domain_file(self, path: str) -> DomainFile:
        """The parsed domain file."""
        if path not in self._domains:
            self._domains[path] = read_domain_file(path)
        return self._domains[path]

    def table(self, spec: Mapping[str, Any]) -> pd.DataFrame:
        """The whole table of a local test set (as the prepare job reads it)."""
        if "file" in spec:
            key: tuple[str | None, ...] = (spec["file"], spec.get("translator"))
            if key not in self._tables:
                self._tables[key] = _xml_table(self.wmt_xml(spec["file"], spec.get("translator")))
        else:
            key = (spec["source"], spec["reference"], spec["domain_file"])
            if key not in self._tables:
                self._tables[key] = _domain_file_table(spec, self.domain_file(spec["domain_file"]))
        return self._tables[key]


def _one_line(key: str, error: InputError) -> InputError:
    return InputError(f"{key}: {' '.join(str(error).split())}")


def _checked_xml(name: str, spec: Mapping[str, Any], files: LocalFiles) -> WmtXmlFile:
    """The test set's WMT XML file, read; a translator that cannot be read (one the file lacks, or none given and
    several in the file, none of them A) named by its config key with the ones the file has."""
    try:
        return files.wmt_xml(spec["file"], spec.get("translator"))
    except InputError as error:
        translators = reference_translators(spec["file"])
        if translators:  # the choice first: its error names the key to change
            try:
                reference_translator(spec["file"], translators, spec.get("translator"), key=f"testsets.{name}.translator")
            except InputError as choice:
                raise choice from None  # it starts with the key
        raise _one_line(f"testsets.{name}.file", error) from None


def _check_selected_domain(name: str, spec: Mapping[str, Any], files: LocalFiles) -> None:
    """A selected domain is one the file has (and every document of a WMT XML file has a domain)."""
    key = f"testsets.{name}.select"
    for column, value in spec["select"].items():
        if column != DOMAIN:
            raise InputError(f"{key}.{column}: unknown column {column!r} (a test set of own files selects on: {DOMAIN})")
        if "file" in spec:
            parsed = files.wmt_xml(spec["file"], spec.get("translator"))
            missing = next((document for document in parsed.documents if not document.domain), None)
            if not parsed.domains:
                raise InputError(f"{key}.{DOMAIN}: {spec['file']} has no document with a domain attribute, so none can be selected")
            if missing is not None:
                raise InputError(
                    f"{key}.{DOMAIN}: {spec['file']}: line {missing.line}: document {missing.doc_id!r} has no domain attribute, "
                    "so the file's documents cannot be selected by domain"
                )
            path, known = spec["file"], parsed.domains
        else:
            path, known = spec["domain_file"], files.domain_file(spec["domain_file"]).values
        if value not in known:
            raise InputError(f"{key}.{DOMAIN}: {value!r} is not a domain of {path} (its domains: {', '.join(sorted(known))})")


def check_local_testsets(testsets: Mapping[str, Mapping[str, Any]], files: LocalFiles) -> dict[str, int]:
    """Check every local test set when the workflow is planned, as its prepare job will (and its config against its files).

    A WMT XML file: well formed and aligned (:func:`~nlp_robustness.data.wmt_xml.read_wmt_xml`), holding the
    ``translator``'s reference. A domain file: one line per line of ``source``/``reference`` (those checked as a
    plain pair). Then the ``select``: a domain the file has, a WMT XML file whose every document has a domain;
    and the selected segments: no empty one unless ``allow_empty_segments``, one left after
    ``drop_source_equals_reference``. A file that does not exist is left to Snakemake (a missing input).

    Returns:
        Test set -> the segments of its whole file (the lines of a hypotheses file of it).

    Raises:
        InputError: One line naming the config key, the file and, where there is one, the line.
    """
    whole: dict[str, int] = {}
    for name, spec in testsets.items():
        if not is_local_testset(spec):
            continue
        paths = [spec["file"]] if "file" in spec else [spec["source"], spec["reference"], spec["domain_file"]]
        if not all(os.path.isfile(path) for path in paths):
            continue
        if "file" in spec:
            _checked_xml(name, spec, files)
        else:
            for side in ("source", "reference"):
                try:
                    read_plain_lines(spec[side])
                except InputError as error:
                    raise _one_line(f"testsets.{name}.{side}", error) from None
            try:
                files.domain_file(spec["domain_file"])
            except InputError as error:
                raise _one_line(f"testsets.{name}.domain_file", error) from None
        key = f"testsets.{name}.domain_file" if "domain_file" in spec else f"testsets.{name}"
        try:
            table = files.table(spec)
        except InputError as error:
            raise _one_line(key, error) from None
        if spec.get("select"):
            _check_selected_domain(name, spec, files)
        try:
            prepare_testset(
                table, max_segments=None, allow_empty_segments=spec.get("allow_empty_segments", False),
                drop_source_equals_reference=spec.get("drop_source_equals_reference", False),
                files=(spec["file"], spec["file"], "wmt-xml") if "file" in spec else (spec["source"], spec["reference"], "plain"),
                select=spec.get("select"), where=f"test set {name} ({whole_file(spec)})",
            )
        except InputError as error:
            raise _one_line(f"testsets.{name}", error) from None
        whole[name] = len(table)
    return whole
