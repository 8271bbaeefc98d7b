"""The entries of the dataset manifest (``resources/datasets.yaml``) once loaded: downloads, datasets and their
copies, pretrained models, and the :class:`Manifest` that holds them by key.

What each section of the file means, and how it is validated and resolved, is in
:mod:`nlp_robustness.data.manifest`, whose :func:`~nlp_robustness.data.manifest.load_manifest` builds these values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nlp_robustness.data.download import Checksum

__all__ = [
    "COLUMN_FORMATS", "MODEL_ROLES", "PARALLEL_ROLES", "WMT_XML_FORMAT", "Dataset", "DatasetCopy", "Download", "FileRef",
    "Manifest", "MirrorSubstitute", "PretrainedModel",
]

#: Roles of the two files of a parallel dataset.
PARALLEL_ROLES: tuple[str, ...] = ("source", "reference")

#: Formats whose files are read column by column (a ``column`` is required for each file).
COLUMN_FORMATS: tuple[str, ...] = ("tsv",)

#: The format of the organisers' WMT XML files (:mod:`nlp_robustness.data.wmt_xml`): source, references and
#: system outputs in one file, which the dataset's source and reference both name. Such a dataset declares
#: its ``domains``, ``systems`` and ``reference_translator``.
WMT_XML_FORMAT = "wmt-xml"


@dataclass(frozen=True)
class Download:
    """One file fetched from the internet (an archive or a plain file).

    Attributes:
        key: The manifest key.
        url: Canonical URL.
        checksum: The expected digest, or ``None`` for trust on first use (see :mod:`nlp_robustness.data.download`).
        checksum_source: Where the checksum comes from, in words.
        filename: The file name it is stored under (the last component of the URL path).
        archive: ``"tar"``, ``"zip"``, or ``None`` for a plain file.
        mirror: Path of the same file inside the mirror directory, if the mirror holds it.
    """

    key: str
    url: str
    checksum: Checksum | None
    checksum_source: str
    filename: str
    archive: str | None
    mirror: str | None = None
    mirror_substitute: MirrorSubstitute | None = None


@dataclass(frozen=True)
class MirrorSubstitute:
    """A file the mirror holds *instead of* a download: not the same bytes (a recovered or partial copy,
    say), so it is checked against its own sha256 and never recorded as the download's checksum.

    Attributes:
        path: Relative to the mirror directory.
        sha256: Its digest.
        description: How it differs from the canonical file.
    """

    path: str
    sha256: str
    description: str


@dataclass(frozen=True)
class FileRef:
    """One file of one copy of a dataset.

    Attributes:
        path: In a mirror copy, the path relative to the mirror directory. In a download copy, the
            member path inside the download's archive, or ``""`` when the download is the file itself.
        download: The download key (download copies only).
        sha256: Expected sha256 of the file itself (always known for mirror files).
        column: The 0-based column to read (``tsv`` format only).
    """

    path: str
    download: str | None = None
    sha256: str | None = None
    column: int | None = None


@dataclass(frozen=True)
class DatasetCopy:
    """The files of a dataset in one place (``origin`` ``"download"`` or ``"mirror"``), in one format."""

    origin: str
    format: str
    files: Mapping[str, FileRef]


@dataclass(frozen=True)
class Dataset:
    """One dataset of the manifest.

    Attributes:
        key: The manifest key, e.g. ``"wmt14-newstest2014-enfr"``.
        kind: ``"parallel"`` (roles ``source``, ``reference``) or ``"reviews"`` (roles ``<domain>/<label>``).
        description, domain, licence, notes: Free text.
        segments: Expected number of segments (reviews), or ``None`` when unknown before download.
        source_language, target_language: ISO codes (parallel datasets).
        domains, labels: The review domains and labels (review datasets); the document domains of a
            ``wmt-xml`` parallel dataset.
        systems: The systems whose submissions a ``wmt-xml`` dataset holds (its table's ``hypothesis:<system>`` columns).
        reference_translator: The reference read from a ``wmt-xml`` dataset (its ``translator`` attribute).
        download: The canonical copy.
        mirror: The copy in the mirror directory, if any.
    """

    key: str
    kind: str
    description: str
    domain: str
    licence: str
    segments: int | None
    download: DatasetCopy
    mirror: DatasetCopy | None = None
    source_language: str | None = None
    target_language: str | None = None
    domains: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    notes: str | None = None
    systems: tuple[str, ...] = ()
    reference_translator: str | None = None


#: The files of a pretrained model, in the order they are listed.
MODEL_ROLES: tuple[str, ...] = ("checkpoint", "source_dictionary", "target_dictionary", "bpe_codes")


@dataclass(frozen=True)
class PretrainedModel:
    """A pretrained translation model published as an archive (manifest section ``models``).

    Attributes:
        key: The manifest key, e.g. ``"wmt14-enfr-fconv"``.
        download: Key of the archive download that holds it.
        files: Archive member of each of :data:`MODEL_ROLES`.
    """

    key: str
    description: str
    licence: str
    download: str
    source_language: str
    target_language: str
    files: Mapping[str, str]
    notes: str | None = None


@dataclass(frozen=True)
class Manifest:
    """The validated manifest: downloads, datasets and pretrained models by key, in file order."""

    path: str
    downloads: Mapping[str, Download] = field(default_factory=dict)
    datasets: Mapping[str, Dataset] = field(default_factory=dict)
    models: Mapping[str, PretrainedModel] = field(default_factory=dict)

    def members_of(self, download: str) -> list[str]:
        """Archive members that some dataset or model reads from ``download`` (sorted, without duplicates)."""
        members = {
            ref.path
            for dataset in self.datasets.values()
            for ref in dataset.download.files.values()
            if ref.download == download and ref.path
        }
        members.update(path for model in self.models.values() if model.download == download for path in model.files.values())
        return sorted(members)

