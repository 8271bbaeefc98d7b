"""Safe extraction of downloaded archives (tar, optionally compressed, and zip).

A downloaded archive is untrusted input even when its checksum matches (a checksum recorded on first
use proves only that the bytes did not change since). :func:`extract_members` therefore

* refuses the *whole archive* if any member name is absolute (``/etc/passwd``, ``C:\\...``) or has a
  ``..`` component: such a name can only be meant to write outside the target directory;
* extracts only regular files (the requested ones, or all of them) and refuses a requested member
  that is a symbolic link, a hard link, a device, a FIFO or anything else that is not a plain file
  (links can point outside the target; devices have no place in a dataset); links elsewhere in the
  archive are not extracted and do no harm;
* writes into a fresh temporary directory beside the target and renames it onto the target only when
  every member was written, so an interrupted or refused extraction leaves nothing under the final
  name; one left by a killed extraction is removed when the target is extracted again
  (:func:`nlp_robustness.fileio.atomic.staging_path`).

File modes, owners and timestamps of the members are not restored: the files are data, written with
the default permissions of the process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import staging_path

PathLike = str | os.PathLike[str]

#: Archive kinds understood by :func:`extract_members` (``tar`` covers .tar, .tar.gz/.tgz, .tar.bz2, .tar.xz).
ARCHIVE_KINDS: tuple[str, ...] = ("tar", "zip")

_COPY_CHUNK_BYTES = 1 << 20


class UnsafeArchiveError(InputError):
    """An archive member that could write outside the target directory, or is not a regular file."""


@dataclass(frozen=True)
class _Member:
    """One archive member: its name, what kind of entry it is, and how to open it."""

    name: str
    kind: str  # "file", "directory", "symlink", "hardlink", "device", "fifo", "other"
    handle: object  # tarfile.TarInfo or zipfile.ZipInfo


def archive_kind_of(filename: str) -> str | None:
    """The archive kind a file name implies (``"tar"``, ``"zip"``), or ``None`` for a plain file."""
    name = filename.lower()
    if name.endswith((".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")):
        return "tar"
    if name.endswith(".zip"):
        return "zip"
    return None


def _check_name(name: str, archive: PathLike) -> PurePosixPath:
    """Refuse member names that are absolute or climb out with ``..``; return the normalised relative path."""
    posix = name.replace("\\", "/")
    path = PurePosixPath(posix)
    drive_letter = len(posix) >= 2 and posix[1] == ":"
    if path.is_absolute() or drive_letter or ".." in path.parts:
        raise UnsafeArchiveError(
            f"{archive}: refusing the archive: member {name!r} would be written outside the target directory"
        )
    parts = [part for part in path.parts if part not in ("", ".")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.isreg():
        return "file"
    if info.isdir():
        return "directory"
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    if info.ischr() or info.isblk():
        return "device"
    if info.isfifo():
        return "fifo"
    return "other"


def _zip_kind(info: zipfile.ZipInfo) -> str:
    if info.is_dir():
        return "directory"
    # Unix file-type bits live in the high 16 bits of external_attr; archives made elsewhere (or
    # with permission bits only) leave them 0, which means a regular file.
    file_type = stat.S_IFMT(info.external_attr >> 16)
    if file_type == 0 or stat.S_ISREG(file_type):
        return "file"
    if stat.S_ISLNK(file_type):
        return "symlink"
    if stat.S_ISCHR(file_type) or stat.S_ISBLK(file_type):
        return "device"
    if stat.S_ISFIFO(file_type):
        return "fifo"
    return "other"


@contextlib.contextmanager
def _open_archive(archive: PathLike, kind: str) -> Iterator[tuple[Iterator[_Member], object]]:
    """Open an archive; yield an iterator over its members in archive order, and the open archive.

    Tar members are read in order, each one's data right after its header (forward reads only), so a
    large compressed archive is decompressed once.
    """
    try:
        if kind == "tar":
            with tarfile.open(archive, mode="r:*") as opened:
                yield (_Member(info.name, _tar_kind(info), info) for info in opened), opened
        elif kind == "zip":
            with zipfile.ZipFile(archive) as opened:
                yield (_Member(info.filename, _zip_kind(info), info) for info in opened.infolist()), opened
        else:
            raise InputError(f"{archive}: unknown archive kind {kind!r}; expected one of {', '.join(ARCHIVE_KINDS)}")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error) as error:
        raise InputError(f"{archive}: not a readable {kind} archive: {error}") from None
    except FileNotFoundError:
        raise InputError(f"archive not found: {archive}") from None


def _copy_member(opened: object, member: _Member, destination: Path) -> None:
    destination.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(opened, tarfile.TarFile):
        source = opened.extractfile(member.handle)  # type: ignore[arg-type]
    else:
        source = opened.open(member.handle)  # type: ignore[attr-defined]
    if source is None:
        raise InputError(f"cannot read member {member.name!r}")
    # "wb": a later member of the same name replaces an earlier one, as tar itself does
    with source, open(destination, "wb") as target:
        shutil.copyfileobj(source, target, _COPY_CHUNK_BYTES)


def list_members(archive: PathLike, kind: str) -> list[str]:
    """Names of the regular-file members of an archive, after checking every name is safe.

    Raises:
        UnsafeArchiveError: A member name is absolute or contains ``..``.
        InputError: The archive is missing or unreadable.
    """
    with _open_archive(archive, kind) as (members, _):
        return [member.name for member in members if _check_name(member.name, archive) and member.kind == "file"]


def extract_members(
    archive: PathLike,
    kind: str,
    target_dir: PathLike,
    members: Sequence[str] | None = None,
) -> list[Path]:
    """Extract regular-file members of ``archive`` into ``target_dir``, safely and atomically.

    The archive is read once, in order. Members go to a staging directory beside ``target_dir``,
    which is renamed onto it only after the last member was checked, so a refusal anywhere in the
    archive (even after the wanted members) leaves nothing.

    Args:
        archive: The archive file.
        kind: ``"tar"`` (any compression tarfile detects) or ``"zip"``.
        target_dir: Directory to create; it must not exist yet (it appears complete, or not at all).
        members: Member names to extract (as written in the archive, e.g.
            ``"test-full/newstest2014-fren-src.en.sgm"``); ``None`` extracts every regular file and
            refuses the archive if it holds any link, device or FIFO.

    Returns:
        The paths of the extracted files, in the order of ``members`` (or of the archive).

    Raises:
        UnsafeArchiveError: A member name is absolute or has a ``..`` component (anywhere in the
            archive), or a member to extract is a link, device, FIFO or other non-regular entry.
        InputError: The archive is unreadable, a requested member is missing, or ``target_dir``
            already exists.
    """
    target = Path(target_dir)
    if target.exists():
        raise InputError(f"extraction target already exists: {target}")
    wanted = None if members is None else {_check_name(name, archive): name for name in members}
    with staging_path(target, directory=True) as staging:
        found: dict[PurePosixPath, Path] = {}
        with _open_archive(archive, kind) as (listed, opened):
            for member in listed:
                path = _check_name(member.name, archive)
                if member.kind == "directory" or (wanted is not None and path not in wanted):
                    continue
                if member.kind != "file":
                    raise UnsafeArchiveError(
                        f"{archive}: refusing member {member.name!r}: it is a {member.kind}, not a regular file"
                    )
                _copy_member(opened, member, staging.joinpath(*path.parts))
                found[path] = target.joinpath(*path.parts)
        if wanted is not None:
            missing = [name for path, name in wanted.items() if path not in found]
            if missing:
                raise InputError(f"{archive}: member(s) not found in the archive: {', '.join(map(repr, missing))}")
            written = [found[path] for path in wanted]
        else:
            written = list(found.values())
    return written
