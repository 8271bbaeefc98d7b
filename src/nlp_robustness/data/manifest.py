"""The dataset manifest (``resources/datasets.yaml``): canonical downloads, mirror copies, formats, sizes.

The manifest has two sections, and an optional third.

``downloads``
    One entry per file fetched from the internet: an archive (``.tgz``, ``.zip``, ...) or a plain
    file. Its URL and checksum are given in one of three ways:

    * ``sacrebleu: {entry, url_suffix}`` -- both are read from sacrebleu's own dataset registry
      (``sacrebleu.dataset.DATASETS[entry]``, its ``data`` URLs and ``md5`` sums), so numbers that
      sacrebleu already publishes are never copied by hand. ``url_suffix`` picks one of the entry's
      URLs when it has several (IWSLT entries list one archive per language direction).
    * ``url`` with ``sha256`` or ``md5`` -- a pinned checksum (e.g. a raw GitHub file at a commit).
    * ``url`` with ``checksum: trust-on-first-use`` -- nobody publishes a checksum: the sha256 seen
      on the first download is recorded in the checksum lock and every later download must match.

    ``mirror`` optionally names the same file inside the offline mirror directory.

``datasets``
    One entry per dataset (a test set, a dev set, a review collection): its kind (``parallel``
    source/reference pairs, or ``reviews``), description, domain, licence, expected size, and two
    *copies*: ``download`` (files inside downloads) and, optionally, ``mirror`` (files inside the
    mirror directory, each with its sha256). The two copies may differ in format: the mirror copy of
    WMT'15 is a plain-text conversion of the official SGML release, for instance.

``models`` (optional)
    Pretrained translation models published as archives (fairseq's ``wmt14.v2.en-fr.fconv-py``):
    the download that holds one, its language pair, and the archive members of its four files
    (``checkpoint``, ``source_dictionary``, ``target_dictionary``, ``bpe_codes``).

:func:`load_manifest` validates the file against ``schemas/datasets.schema.yaml``, checks the
cross-references a schema cannot express, resolves sacrebleu entries and returns a
:class:`~nlp_robustness.data.manifest_entries.Manifest` (the entries are defined in
:mod:`nlp_robustness.data.manifest_entries`).
"""

from __future__ import annotations

import os
import posixpath
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from nlp_robustness.data.archives import archive_kind_of
from nlp_robustness.data.download import Checksum
from nlp_robustness.data.manifest_entries import (
    COLUMN_FORMATS,
    MODEL_ROLES,
    PARALLEL_ROLES,
    WMT_XML_FORMAT,
    Dataset,
    DatasetCopy,
    Download,
    FileRef,
    Manifest,
    MirrorSubstitute,
    PretrainedModel,
)
from nlp_robustness.errors import InputError

__all__ = ["load_manifest", "sacrebleu_download", "sacrebleu_langpair_files"]

PathLike = str | os.PathLike[str]

# --------------------------------------------------------------------------------------------
# sacrebleu's registry
# --------------------------------------------------------------------------------------------


def sacrebleu_download(entry: str, url_suffix: str | None, where: str) -> tuple[str, Checksum]:
    """URL and md5 of one file of a sacrebleu registry entry (``sacrebleu.dataset.DATASETS``).

    Raises:
        InputError: Unknown entry, no md5 published for it, or ``url_suffix`` matching no URL or several.
    """
    import sacrebleu
    from sacrebleu.dataset import DATASETS

    if entry not in DATASETS:
        raise InputError(f"{where}: sacrebleu {sacrebleu.__version__} has no dataset entry {entry!r}")
    dataset = DATASETS[entry]
    urls = list(dataset.data)
    md5s = list(dataset.md5 or [])
    indices = [index for index, url in enumerate(urls) if url_suffix is None or url.endswith(url_suffix)]
    if len(indices) != 1:
        listing = ", ".join(urls)
        raise InputError(
            f"{where}: sacrebleu entry {entry!r} has {len(indices)} URLs ending with {url_suffix!r} "
            f"(need exactly one; its URLs: {listing})"
        )
    index = indices[0]
    if index >= len(md5s) or not md5s[index]:
        raise InputError(f"{where}: sacrebleu entry {entry!r} publishes no md5 for {urls[index]}")
    source = f"sacrebleu {sacrebleu.__version__} dataset registry, entry {entry!r}"
    return urls[index], Checksum("md5", md5s[index], source)


def sacrebleu_langpair_files(entry: str, langpair: str) -> list[str]:
    """The member paths (``column:`` prefixes removed) sacrebleu lists for one language pair of an entry."""
    from sacrebleu.dataset import DATASETS

    return [meta.split(":", 1)[-1] for meta in DATASETS[entry].langpairs[langpair]]


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _json_path(path: Any) -> str:
    return ".".join(str(part) for part in path) or "<top level>"


def _parse_download(key: str, entry: Mapping[str, Any], where: str) -> Download:
    if "sacrebleu" in entry:
        url, checksum = sacrebleu_download(entry["sacrebleu"]["entry"], entry["sacrebleu"].get("url_suffix"), where)
        checksum_source = checksum.source
    else:
        url = entry["url"]
        if "sha256" in entry:
            checksum = Checksum("sha256", entry["sha256"], f"sha256 pinned in the manifest (downloads.{key})")
        elif "md5" in entry:
            checksum = Checksum("md5", entry["md5"], f"md5 pinned in the manifest (downloads.{key})")
        else:
            checksum = None
        checksum_source = checksum.source if checksum else "none published: sha256 recorded on first download (checksum lock)"
    filename = posixpath.basename(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
    if not filename or filename in (".", ".."):
        raise InputError(f"{where}.url: the URL {url!r} does not end with a file name")
    return Download(
        key=key,
        url=url,
        checksum=checksum,
        checksum_source=checksum_source,
        filename=filename,
        archive=archive_kind_of(filename),
        mirror=entry.get("mirror"),
        mirror_substitute=MirrorSubstitute(**entry["mirror_substitute"]) if "mirror_substitute" in entry else None,
    )


def _check_download_ref(ref: FileRef, downloads: Mapping[str, Download], where: str) -> None:
    if ref.download not in downloads:
        raise InputError(f"{where}.download: {ref.download!r} is not a key of the downloads section")
    download = downloads[ref.download]
    if download.archive is not None and not ref.path:
        raise InputError(f"{where}: download {ref.download!r} is a {download.archive} archive; name the 'member' to read")
    if download.archive is None and ref.path:
        raise InputError(f"{where}: download {ref.download!r} is a plain file, not an archive; remove 'member'")


def _check_columns(copy: DatasetCopy, where: str) -> None:
    for role, ref in copy.files.items():
        if copy.format in COLUMN_FORMATS and ref.column is None:
            raise InputError(f"{where}.{role}: format {copy.format!r} needs a 'column'")
        if copy.format not in COLUMN_FORMATS and ref.column is not None:
            raise InputError(f"{where}.{role}: 'column' applies only to the formats {', '.join(COLUMN_FORMATS)}")


def _common_fields(key: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """The fields every kind of dataset has."""
    return {
        "key": key,
        "kind": entry["kind"],
        "description": entry["description"],
        "domain": entry["domain"],
        "licence": entry["licence"],
        "segments": entry["segments"],
        "notes": entry.get("notes"),
    }


def _parse_parallel(key: str, entry: Mapping[str, Any], downloads: Mapping[str, Download], where: str) -> Dataset:
    download_entry = entry["download"]
    files = {}
    for role in PARALLEL_ROLES:
        spec = download_entry[role]
        ref = FileRef(path=spec.get("member", ""), download=spec["download"], sha256=spec.get("sha256"), column=spec.get("column"))
        _check_download_ref(ref, downloads, f"{where}.download.{role}")
        files[role] = ref
    download_copy = DatasetCopy("download", download_entry["format"], files)
    _check_columns(download_copy, f"{where}.download")
    mirror_copy = None
    if "mirror" in entry:
        mirror_entry = entry["mirror"]
        mirror_copy = DatasetCopy(
            "mirror",
            mirror_entry.get("format", download_entry["format"]),
            {
                role: FileRef(path=mirror_entry[role]["path"], sha256=mirror_entry[role]["sha256"], column=mirror_entry[role].get("column"))
                for role in PARALLEL_ROLES
            },
        )
        _check_columns(mirror_copy, f"{where}.mirror")
    _check_wmt_xml(entry, [copy for copy in (download_copy, mirror_copy) if copy is not None], where)
    return Dataset(
        **_common_fields(key, entry),
        download=download_copy,
        mirror=mirror_copy,
        source_language=entry["source_language"],
        target_language=entry["target_language"],
        domains=tuple(entry.get("domains", ())),
        systems=tuple(entry.get("systems", ())),
        reference_translator=entry.get("reference_translator"),
    )


def _check_wmt_xml(entry: Mapping[str, Any], copies: list[DatasetCopy], where: str) -> None:
    """A ``wmt-xml`` copy reads one file for both roles and its dataset declares what the file holds;
    the declarations belong to that format only."""
    xml_copies = [copy for copy in copies if copy.format == WMT_XML_FORMAT]
    declared = [name for name in ("domains", "systems", "reference_translator") if name in entry]
    if not xml_copies:
        if declared:
            raise InputError(f"{where}.{declared[0]}: applies only to a dataset of format {WMT_XML_FORMAT!r}")
        return
    if len(xml_copies) != len(copies):
        raise InputError(f"{where}: the download and mirror copies must both be of format {WMT_XML_FORMAT!r}, or neither")
    for name, meaning in (("reference_translator", "the translator attribute of the reference to read"), ("domains", "the domains of its documents")):
        if name not in entry:
            raise InputError(f"{where}: format {WMT_XML_FORMAT!r} needs '{name}' ({meaning})")
    for copy in xml_copies:
        source, reference = copy.files["source"], copy.files["reference"]
        if (source.path, source.download) != (reference.path, reference.download):
            raise InputError(f"{where}.{copy.origin}: format {WMT_XML_FORMAT!r} reads source and reference from one file; name the same file for both")


def _expand(template: str, domain: str, label: str, where: str) -> str:
    if "{domain}" not in template or "{label}" not in template:
        raise InputError(f"{where}: the path {template!r} must contain both {{domain}} and {{label}}")
    return template.replace("{domain}", domain).replace("{label}", label)


def _parse_reviews(key: str, entry: Mapping[str, Any], downloads: Mapping[str, Download], where: str) -> Dataset:
    roles = [(domain, label, f"{domain}/{label}") for domain in entry["domains"] for label in entry["labels"]]
    download_entry = entry["download"]
    files = {}
    for domain, label, role in roles:
        ref = FileRef(path=_expand(download_entry["member"], domain, label, f"{where}.download.member"), download=download_entry["download"])
        _check_download_ref(ref, downloads, f"{where}.download")
        files[role] = ref
    mirror_copy = None
    if "mirror" in entry:
        mirror_entry = entry["mirror"]
        digests = mirror_entry["sha256"]
        missing = [role for _, _, role in roles if role not in digests]
        unknown = sorted(set(digests) - {role for _, _, role in roles})
        if missing or unknown:
            raise InputError(
                f"{where}.mirror.sha256: needs exactly one digest per '<domain>/<label>'"
                + (f"; missing {', '.join(missing)}" if missing else "")
                + (f"; unknown {', '.join(unknown)}" if unknown else "")
            )
        mirror_copy = DatasetCopy(
            "mirror",
            download_entry["format"],
            {
                role: FileRef(path=_expand(mirror_entry["path"], domain, label, f"{where}.mirror.path"), sha256=digests[role])
                for domain, label, role in roles
            },
        )
    return Dataset(
        **_common_fields(key, entry),
        download=DatasetCopy("download", download_entry["format"], files),
        mirror=mirror_copy,
        domains=tuple(entry["domains"]),
        labels=tuple(entry["labels"]),
    )


def _parse_model(key: str, entry: Mapping[str, Any], downloads: Mapping[str, Download], where: str) -> PretrainedModel:
    if entry["download"] not in downloads:
        raise InputError(f"{where}.download: {entry['download']!r} is not a key of the downloads section")
    if downloads[entry["download"]].archive is None:
        raise InputError(f"{where}.download: {entry['download']!r} is a plain file; a model is read from an archive")
    return PretrainedModel(
        key=key,
        description=entry["description"],
        licence=entry["licence"],
        download=entry["download"],
        source_language=entry["source_language"],
        target_language=entry["target_language"],
        files={role: entry["files"][role] for role in MODEL_ROLES},
        notes=entry.get("notes"),
    )


def load_manifest(path: PathLike, schema_path: PathLike) -> Manifest:
    """Load, validate and resolve the dataset manifest.

    Args:
        path: The manifest (YAML).
        schema_path: Its JSON Schema (``schemas/datasets.schema.yaml``).

    Returns:
        The :class:`Manifest`, with sacrebleu entries resolved to URLs and md5 sums.

    Raises:
        InputError: The file is missing or not YAML (names the line), violates the schema (names the
            key path, e.g. ``datasets.wmt14-newstest2014-enfr.download.source``), refers to an unknown
            download, or names a sacrebleu entry the installed sacrebleu lacks.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"dataset manifest not found: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read dataset manifest {path}: {error}") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        location = f" line {mark.line + 1}:" if mark is not None else ""
        raise InputError(f"{path}:{location} invalid YAML: {error}") from None
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document), key=lambda error: list(error.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        detail = error.message
        if error.validator == "oneOf" and len(error.absolute_path) == 2 and error.absolute_path[0] == "downloads":
            detail = "give either 'sacrebleu', or 'url' with exactly one of 'sha256', 'md5', 'checksum: trust-on-first-use'"
        raise InputError(f"{path}: invalid manifest at key '{_json_path(error.absolute_path)}': {detail}")

    downloads = {
        key: _parse_download(key, entry, f"{path}: downloads.{key}") for key, entry in document["downloads"].items()
    }
    datasets = {}
    for key, entry in document["datasets"].items():
        where = f"{path}: datasets.{key}"
        parse = _parse_parallel if entry["kind"] == "parallel" else _parse_reviews
        datasets[key] = parse(key, entry, downloads, where)
    models = {
        key: _parse_model(key, entry, downloads, f"{path}: models.{key}") for key, entry in (document.get("models") or {}).items()
    }
    return Manifest(path=str(path), downloads=downloads, datasets=datasets, models=models)
