"""Outputs that appear whole or not at all: atomic writing, staging names, and the scratch and locked folders of jobs.

Files written here get the permissions any other tool's output gets: the temporary file under an
atomic write is created with mode ``0o666`` and the kernel applies the process umask (or a default
ACL of the directory) to it, as it does for ``open(..., "w")``; ``tempfile.mkstemp`` would create it
``0o600`` and every result would end up readable by its owner only. The umask itself is never read
or changed (``os.umask`` can only be read by setting it, which races with other threads).

An operating-system error while writing (a full disk, a quota, a read-only file system) is raised as
an :class:`OSError` with the same ``errno`` whose ``filename`` is the file being written, and the
original error as its ``__cause__``; the temporary file is removed.

Every output that appears whole or not at all (a written file, a download, an extracted archive, fairseq's
binarized data) is built under a staging name beside it, ``.<final name>.<8 random characters>.part``, by
:func:`staging_path`. A process killed with SIGKILL runs no cleanup, so its staging stays behind; the next
start for the same final name removes it, whatever it is (a file or a folder).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import io
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator

__all__ = [
    "NEW_DIRECTORY_MODE", "NEW_FILE_MODE", "atomic_write", "job_scratch_directory", "locked_directory", "naming_error",
    "open_staged_file", "stale_temporary_files", "staging_path",
]

#: Permissions of a new file and of a new directory before the umask (what ``open`` and ``mkdir`` use).
NEW_FILE_MODE = 0o666
NEW_DIRECTORY_MODE = 0o777

# Temporary names are ".<final name>.<8 random characters>.part"; tempfile.mkstemp, used before,
# made the same shape, so a temporary file left by an older run is recognised too.
_RANDOM_CHARACTERS = 8
_TEMPORARY_SUFFIX = ".part"


def _temporary_name(target: Path) -> Path:
    return target.parent / f".{target.name}.{secrets.token_hex(_RANDOM_CHARACTERS // 2)}{_TEMPORARY_SUFFIX}"


def stale_temporary_files(target: str | os.PathLike[str]) -> list[Path]:
    """Staging files and folders of earlier attempts at ``target`` (left by a killed process), none of another name's.

    Only names of the exact shape ``.<target name>.<8 characters>.part`` match: ``target``'s name is escaped,
    and the fixed length means the staging of ``a.tsv.gz`` can never match that of ``a.tsv``.
    """
    target = Path(target)
    pattern = f".{glob.escape(target.name)}.{'?' * _RANDOM_CHARACTERS}{_TEMPORARY_SUFFIX}"
    return sorted(target.parent.glob(pattern))


def naming_error(error: OSError, path: str | os.PathLike[str]) -> OSError:
    """``error`` as an :class:`OSError` whose ``filename`` is ``path`` (same errno and message; ``error`` becomes the cause).

    An error that already names ``path`` is returned as it is.
    """
    if error.filename == os.fspath(path) and error.filename2 is None:
        return error
    if error.errno is None:
        named = OSError(f"{os.fspath(path)}: {error}")
    else:
        named = OSError(error.errno, error.strerror, os.fspath(path))  # OSError(errno, ...) picks the subclass
    named.__cause__ = error
    return named


def _remove(path: Path) -> None:
    """Remove a file or a whole folder (a symbolic link is removed, not followed); a missing one is no error."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _create_staging(target: Path, directory: bool) -> Path:
    """Create an empty file or folder under a fresh staging name beside ``target`` (another name while one exists).

    It is created exclusively, with :data:`NEW_FILE_MODE` or :data:`NEW_DIRECTORY_MODE`, so the umask decides
    its permissions and those of ``target`` once renamed there (``tempfile.mkstemp`` and ``mkdtemp`` would
    give ``0o600`` and ``0o700``).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        name = _temporary_name(target)
        try:
            if directory:
                os.mkdir(name, NEW_DIRECTORY_MODE)
            else:
                os.close(os.open(name, flags, NEW_FILE_MODE))
            return name
        except FileExistsError:
            continue  # 2**32 names: a clash is rare, and the next name is another one
        except OSError as error:
            raise naming_error(error, target) from error


def _replace(staging: Path, target: Path, directory: bool) -> None:
    """Rename ``staging`` onto ``target``; a folder already there is first renamed aside under a staging name
    (``rename`` cannot replace a non-empty folder), so a kill while it is removed leaves only a recognised leftover."""
    old = None
    if directory and target.is_dir() and not target.is_symlink():
        old = _create_staging(target, directory=True)
        os.replace(target, old)  # onto the empty folder just reserved: the name cannot clash
    os.replace(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def staging_path(final: str | os.PathLike[str], *, directory: bool) -> Iterator[Path]:
    """A new empty file (or folder, if ``directory``) beside ``final``, renamed onto ``final`` when the block succeeds.

    ``final`` therefore appears complete, or not at all: Snakemake would take a half-written output for an
    up-to-date one. Before the staging is made, what earlier attempts at ``final`` left (a process killed with
    SIGKILL runs no cleanup) is removed: names of the exact shape ``.<final name>.<8 characters>.part``, files
    or folders (:func:`stale_temporary_files`), never another output's. That is safe because no two jobs write
    one output at the same time (Snakemake's outputs are unique, and it runs one job per output). A failure in
    the block removes the staging and leaves ``final`` as it was. An earlier ``final`` is replaced: a file
    atomically, a folder by renaming the old one aside and the new one in.

    The block writes the staging itself (for a file, with :func:`open_staged_file`); making its content
    durable (``fsync``) is the block's business, since only the block holds the open file.

    Raises:
        OSError: The staging cannot be created or renamed; ``filename`` is ``final`` (errors of the block pass unchanged).
    """
    target = Path(final)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise naming_error(error, target) from error
    for stale in stale_temporary_files(target):
        _remove(stale)
    staging = _create_staging(target, directory)
    try:
        yield staging
        try:
            _replace(staging, target, directory)
        except OSError as error:
            raise naming_error(error, target) from error
    except BaseException:
        _remove(staging)
        raise


class _NamedFileIO(io.FileIO):
    """A raw file whose write errors name ``target``, the file the bytes are meant for."""

    def __init__(self, descriptor: int, target: Path) -> None:
        super().__init__(descriptor, "wb", closefd=True)
        self._target = target

    def write(self, data) -> int:  # type: ignore[override]
        try:
            return super().write(data)
        except OSError as error:
            raise naming_error(error, self._target) from error


def open_staged_file(
    staging: str | os.PathLike[str], target: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8"
) -> IO:
    """A buffered file object writing ``staging`` (from :func:`staging_path`) from its start, whose write errors name ``target``.

    ``mode`` is ``"w"`` (text; ``encoding``, newlines written as given) or ``"wb"``.

    Raises:
        ValueError: Another ``mode``.
        OSError: ``staging`` cannot be opened; ``filename`` is ``target``.
    """
    if mode not in ("w", "wt", "wb"):
        raise ValueError(f"cannot write {target} with mode {mode!r}: use 'w' or 'wb'")
    try:
        descriptor = os.open(staging, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise naming_error(error, target) from error
    raw = _NamedFileIO(descriptor, Path(target))
    buffered = io.BufferedWriter(raw)
    if mode == "wb":
        return buffered
    return io.TextIOWrapper(buffered, encoding=encoding, newline="")


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it onto ``path`` only if the block succeeds.

    A failure inside the block removes the temporary file, so no partial output is ever left
    under the final name (Snakemake would otherwise treat a half-written file as up to date); a
    temporary file left by a killed process is removed by the next write of the same path
    (:func:`staging_path`). The file gets the permissions the umask gives a new file (see the module docstring).

    Raises:
        OSError: The file cannot be created, written, synced or renamed; ``filename`` is ``path``
            and the original error is the cause (errors raised by the block itself pass unchanged).
    """
    with staging_path(path, directory=False) as staging:
        with open_staged_file(staging, path, mode, encoding) as handle:
            yield handle
            handle.flush()
            try:
                os.fsync(handle.fileno())
            except OSError as error:
                raise naming_error(error, path) from error


@contextlib.contextmanager
def job_scratch_directory(
    output: str | os.PathLike[str], prefix: str, parent: str | os.PathLike[str] | None = None
) -> Iterator[Path]:
    """A scratch folder for the job that writes ``output``, in ``parent`` (default: the system's temporary folder);
    removed when the block ends.

    Its name is ``prefix`` and a digest of ``output``'s absolute path, so it is the same every time that job runs:
    one that a killed job left behind (SIGKILL skips the cleanup) is removed when the job starts again, as
    :func:`atomic_write` removes a killed write's temporary file. Snakemake runs one job per output at a time.
    A ``parent`` beside ``output`` lets the job rename a file from the folder onto ``output`` (one file system).
    """
    digest = hashlib.sha256(os.fsencode(Path(output).absolute())).hexdigest()[:16]
    scratch = Path(tempfile.gettempdir() if parent is None else parent) / f"{prefix}{digest}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(mode=0o700)
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def locked_directory(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (created if missing) while the block runs: another
    process asking for it waits until it is released."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)
