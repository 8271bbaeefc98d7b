"""Where each dataset is read from (mirror or download), and reading it into a verified table.

Mirror mode
    When a mirror directory is configured and holds *every* file of a dataset's mirror copy, the
    dataset is read from there and nothing is downloaded. Otherwise the dataset's download copy is
    used: its downloads are fetched (each one from the mirror instead of the network when the mirror
    holds that download file itself, e.g. an archive), archives are extracted, and the files are read
    from the extraction. A dataset is never assembled half from the mirror and half from downloads:
    the two copies may differ in format.

    The choice is made when the workflow is planned (:func:`plan_dataset`), so a dry run shows which
    jobs will touch the network. It is part of the parse job's parameters: switching a dataset from
    mirror to download (or back) reruns exactly that dataset's jobs.

Plans travel from the workflow to its scripts as plain dictionaries (:meth:`AcquisitionPlan.as_params`),
so a change in one manifest entry reruns only the jobs of that dataset.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.data.manifest_entries import WMT_XML_FORMAT, Dataset, DatasetCopy, Download, Manifest
from nlp_robustness.data.reviews import REVIEW_COLUMNS, read_blitzer_reviews
from nlp_robustness.data.testsets import TABLE_COLUMNS, build_parallel_table, sha256_of, verify_checksum
from nlp_robustness.data.wmt_xml_tables import read_declared_wmt_xml

PathLike = str | os.PathLike[str]


def download_file_path(download_dir: PathLike, download: Download) -> str:
    """Where a download is stored: ``<download_dir>/<key>/<file name from the URL>``."""
    return str(Path(download_dir) / download.key / download.filename)


def extraction_dir_path(download_dir: PathLike, download: Download) -> str:
    """Where an archive download is extracted: ``<download_dir>/<key>/extracted``."""
    return str(Path(download_dir) / download.key / "extracted")


def mirror_download_file(download: Download, mirror_dir: PathLike | None) -> str | None:
    """The mirror's copy of a download file, if a mirror is configured and holds it; else the mirror's
    substitute for it (:class:`~nlp_robustness.data.manifest_entries.MirrorSubstitute`), if it holds that."""
    if mirror_dir is None:
        return None
    for relative in (download.mirror, download.mirror_substitute.path if download.mirror_substitute else None):
        if relative is not None and (Path(mirror_dir) / relative).is_file():
            return str(Path(mirror_dir) / relative)
    return None


def is_mirror_substitute(download: Download, mirror_file: str | None, mirror_dir: PathLike | None) -> bool:
    """Whether ``mirror_file`` (from :func:`mirror_download_file`) is the download's substitute, not its copy."""
    substitute = download.mirror_substitute
    return bool(mirror_file and mirror_dir is not None and substitute and mirror_file == str(Path(mirror_dir) / substitute.path))


def missing_mirror_files(dataset: Dataset, mirror_dir: PathLike | None) -> list[str]:
    """Files of the dataset's mirror copy that the mirror lacks (all of them when there is no mirror)."""
    if dataset.mirror is None:
        return []
    if mirror_dir is None:
        return [ref.path for ref in dataset.mirror.files.values()]
    return [ref.path for ref in dataset.mirror.files.values() if not (Path(mirror_dir) / ref.path).is_file()]


@dataclass(frozen=True)
class PlannedFile:
    """One file to read: its path, expected sha256 (if known) and column (tsv)."""

    path: str
    sha256: str | None = None
    column: int | None = None


@dataclass(frozen=True)
class AcquisitionPlan:
    """How one dataset is obtained and read.

    Attributes:
        dataset: The manifest key.
        kind: ``"parallel"`` or ``"reviews"``.
        origin: ``"mirror"`` or ``"download"``.
        format: The format of the files read.
        segments: Expected number of segments or reviews (``None``: not known in advance).
        files: The files by role (``source``/``reference``, or ``<domain>/<label>``).
        inputs: What the parse job depends on (mirror files, or download files and extraction directories).
        downloads: The download keys involved (empty in mirror mode).
        declared: What a ``wmt-xml`` dataset declares (``reference_translator``, ``domains``, ``systems``),
            checked against its file when it is read; ``None`` for other formats.
    """

    dataset: str
    kind: str
    origin: str
    format: str
    segments: int | None
    files: Mapping[str, PlannedFile]
    inputs: tuple[str, ...]
    downloads: tuple[str, ...] = ()
    declared: Mapping[str, Any] | None = None

    def as_params(self) -> dict[str, Any]:
        """A plain, JSON-able description (Snakemake ``params``) that :func:`plan_from_params` reads back
        (``declared`` only where there is one, so other datasets' params are as they were)."""
        params = {
            "dataset": self.dataset,
            "kind": self.kind,
            "origin": self.origin,
            "format": self.format,
            "segments": self.segments,
            "files": {role: {"path": f.path, "sha256": f.sha256, "column": f.column} for role, f in self.files.items()},
            "downloads": list(self.downloads),
        }
        if self.declared is not None:
            params["declared"] = {key: list(value) if isinstance(value, tuple) else value for key, value in self.declared.items()}
        return params


def plan_from_params(params: Mapping[str, Any]) -> AcquisitionPlan:
    """Rebuild an :class:`AcquisitionPlan` from :meth:`AcquisitionPlan.as_params`.

    ``inputs`` (the job's dependencies) are a planning matter and do not travel: the result has none.
    """
    return AcquisitionPlan(
        dataset=params["dataset"],
        kind=params["kind"],
        origin=params["origin"],
        format=params["format"],
        segments=params["segments"],
        files={role: PlannedFile(**spec) for role, spec in params["files"].items()},
        inputs=(),
        downloads=tuple(params.get("downloads", ())),
        declared=params.get("declared"),
    )


def _declared(dataset: Dataset) -> dict[str, Any] | None:
    """What a ``wmt-xml`` dataset declares about its file (see :attr:`AcquisitionPlan.declared`)."""
    if WMT_XML_FORMAT not in (dataset.download.format, dataset.mirror.format if dataset.mirror else None):
        return None
    return {"reference_translator": dataset.reference_translator, "domains": list(dataset.domains), "systems": list(dataset.systems)}


def _download_plan(dataset: Dataset, manifest: Manifest, download_dir: PathLike) -> AcquisitionPlan:
    copy: DatasetCopy = dataset.download
    files: dict[str, PlannedFile] = {}
    inputs: list[str] = []
    used: list[str] = []
    for role, ref in copy.files.items():
        download = manifest.downloads[ref.download]
        if download.archive is None:
            path = download_file_path(download_dir, download)
            dependency = path
        else:
            dependency = extraction_dir_path(download_dir, download)
            path = str(Path(dependency) / ref.path)
        files[role] = PlannedFile(path=path, sha256=ref.sha256, column=ref.column)
        if dependency not in inputs:
            inputs.append(dependency)
        if download.key not in used:
            used.append(download.key)
    return AcquisitionPlan(
        dataset.key, dataset.kind, "download", copy.format, dataset.segments, files, tuple(inputs), tuple(used), _declared(dataset)
    )


def plan_dataset(dataset: Dataset, manifest: Manifest, mirror_dir: PathLike | None, download_dir: PathLike) -> AcquisitionPlan:
    """Decide where ``dataset`` is read from (see the module docstring) and list the files to read."""
    if dataset.mirror is not None and mirror_dir is not None and not missing_mirror_files(dataset, mirror_dir):
        files = {
            role: PlannedFile(path=str(Path(mirror_dir) / ref.path), sha256=ref.sha256, column=ref.column)
            for role, ref in dataset.mirror.files.items()
        }
        inputs = tuple(dict.fromkeys(planned.path for planned in files.values()))
        return AcquisitionPlan(
            dataset.key, dataset.kind, "mirror", dataset.mirror.format, dataset.segments, files, inputs, declared=_declared(dataset)
        )
    return _download_plan(dataset, manifest, download_dir)


def read_dataset(plan: AcquisitionPlan) -> pd.DataFrame:
    """Read a planned dataset into a table, verifying every known checksum and the expected size.

    Parallel datasets give the columns of :data:`nlp_robustness.data.testsets.TABLE_COLUMNS` (a ``wmt-xml``
    dataset then ``domain`` and one ``hypothesis:<system>`` per declared system, see
    :mod:`nlp_robustness.data.wmt_xml`); review datasets those of
    :data:`nlp_robustness.data.reviews.REVIEW_COLUMNS`, in the manifest's order of domains and labels.

    Raises:
        InputError: A file is missing, fails its sha256, cannot be parsed, the sides are misaligned,
            or the number of segments (reviews) differs from the manifest's.
    """
    for planned in plan.files.values():
        if planned.sha256 is not None:
            verify_checksum(planned.path, planned.sha256, dataset=plan.dataset)
        elif not Path(planned.path).is_file():
            raise InputError(f"dataset {plan.dataset}: file not found: {planned.path}")
    if plan.kind == "parallel" and plan.format == WMT_XML_FORMAT:
        if plan.declared is None:
            raise InputError(f"dataset {plan.dataset}: format {WMT_XML_FORMAT!r} needs its declared domains, systems and reference translator")
        table = read_declared_wmt_xml(plan.files["source"].path, plan.declared, plan.dataset)
        columns = tuple(table.columns)
    elif plan.kind == "parallel":
        source, reference = plan.files["source"], plan.files["reference"]
        table = build_parallel_table(
            source.path, reference.path, plan.format, source_column=source.column, reference_column=reference.column
        )
        columns = TABLE_COLUMNS
    elif plan.kind == "reviews":
        frames = []
        for role, planned in plan.files.items():
            domain, label = role.rsplit("/", 1)
            frames.append(read_blitzer_reviews(planned.path, domain=domain, label=label))
        table = pd.concat(frames, ignore_index=True)
        columns = REVIEW_COLUMNS
    else:
        raise InputError(f"dataset {plan.dataset}: unknown kind {plan.kind!r}")
    if plan.segments is not None and len(table) != plan.segments:
        where = ", ".join(planned.path for planned in plan.files.values()) if plan.kind == "parallel" else f"{len(plan.files)} review files"
        raise InputError(
            f"dataset {plan.dataset}: {where} hold {len(table)} segments but the manifest expects {plan.segments}"
        )
    return table[list(columns)]


def provenance_record(
    plan: AcquisitionPlan, table: pd.DataFrame, canonical_downloads: list[Mapping[str, Any]]
) -> dict[str, Any]:
    """What :func:`read_dataset` read, for ``results/datasets/<key>.provenance.json``.

    Records the origin (mirror or download), the format, every file read with its sha256, the number
    of rows, and the dataset's canonical downloads (URL and checksum source), which are recorded even
    when the mirror was read. A file with an expected sha256 was verified by :func:`read_dataset`, so
    only the others are hashed here.
    """
    files = {
        role: {"path": planned.path, "sha256": planned.sha256 or sha256_of(planned.path)}
        for role, planned in plan.files.items()
    }
    record: dict[str, Any] = {
        "dataset": plan.dataset,
        "kind": plan.kind,
        "origin": plan.origin,
        "format": plan.format,
        "rows": len(table),
        "expected_rows": plan.segments,
        "files": files,
        "canonical_downloads": [dict(entry) for entry in canonical_downloads],
    }
    if plan.kind == "reviews":
        counts = table.groupby(["domain", "label"], sort=False).size()
        record["rows_per_file"] = {f"{domain}/{label}": int(count) for (domain, label), count in counts.items()}
    return record


def summary_table(records: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per provenance record: dataset, kind, origin, format, rows, canonical URLs and checksum sources."""
    rows = []
    for record in records:
        downloads = record["canonical_downloads"]
        rows.append(
            {
                "dataset": record["dataset"],
                "kind": record["kind"],
                "origin": record["origin"],
                "format": record["format"],
                "rows": record["rows"],
                "canonical_url": " ".join(entry["url"] for entry in downloads),
                "download_checksum": "; ".join(dict.fromkeys(entry["checksum_source"] for entry in downloads)),
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "kind", "origin", "format", "rows", "canonical_url", "download_checksum"])
