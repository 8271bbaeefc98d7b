"""Atomic file writing: an output appears under its final name complete, or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it onto ``path`` only if the block succeeds.

    A failure inside the block removes the temporary file, so no partial output is ever left
    under the final name (Snakemake would otherwise treat a half-written file as up to date).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        if "b" in mode:
            handle = os.fdopen(descriptor, mode)
        else:
            handle = os.fdopen(descriptor, mode, encoding=encoding, newline="")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary_name)
        raise


def write_lines(lines: list[str], path: str | os.PathLike[str]) -> None:
    """Write one segment per line, atomically; a segment holding a newline would misalign the file."""
    for number, line in enumerate(lines, start=1):
        if "\n" in line or "\r" in line:
            raise ValueError(f"{path}: segment {number} contains a line break")
    with atomic_write(path) as handle:
        handle.writelines(f"{line}\n" for line in lines)
