"""Download (or copy from a local mirror) one file, verified by checksum, written atomically.

:func:`fetch` is the only place that touches the network. Its guarantees:

* **Atomic.** Bytes go to a temporary file beside the destination (``.<name>.<random>.part``); it is
  renamed onto the destination only after the transfer is complete *and* the checksum matches. Any
  failure removes the temporary file, so no partial or unverified file ever carries the final name;
  one left by a killed download is removed when the destination is fetched again
  (:func:`nlp_robustness.fileio.atomic.staging_path`).
* **Verified.** The expected digest (sha256 or md5) comes from the manifest, from sacrebleu's dataset
  registry, or -- where nobody publishes one -- from the *checksum lock*: the sha256 seen on the first
  download is recorded there (trust on first use) and every later download must match it.
* **Bounded.** Every connection and every read has a timeout (a stalled server fails instead of
  hanging); transient failures (connection errors, timeouts, HTTP 5xx, 408 and 429, a body shorter
  than its ``Content-Length``) are retried a bounded number of times with exponential waits
  (``retry_wait_seconds * 2**k``; deterministic, no jitter). HTTP 4xx answers and checksum mismatches
  are final: retrying cannot fix them.
"""

from __future__ import annotations

import datetime
import hashlib
import http.client
import logging
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import yaml

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import atomic_write, locked_directory, open_staged_file, staging_path

PathLike = str | os.PathLike[str]

#: Digest algorithms a checksum may use.
ALGORITHMS: tuple[str, ...] = ("sha256", "md5")

#: HTTP status codes worth retrying (besides every 5xx).
RETRYABLE_STATUS: frozenset[int] = frozenset({408, 429})

_CHUNK_BYTES = 1 << 16
_USER_AGENT = "nlp-robustness-workflow (dataset download; https://github.com/snakemake)"

logger = logging.getLogger(__name__)


class DownloadError(InputError):
    """A download failed for good (after the retries it was allowed); the message names the URL."""


class _TransientError(Exception):
    """A failure that another attempt may not repeat."""


@dataclass(frozen=True)
class Checksum:
    """An expected digest and where it comes from.

    Attributes:
        algorithm: ``"sha256"`` or ``"md5"``.
        hexdigest: Lowercase hexadecimal digest.
        source: Who vouches for it, for messages (e.g. ``"sacrebleu 2.6.0 registry, entry 'wmt14/full'"``).
    """

    algorithm: str
    hexdigest: str
    source: str

    def __post_init__(self) -> None:
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown checksum algorithm {self.algorithm!r}; expected one of {', '.join(ALGORITHMS)}")
        length = {"sha256": 64, "md5": 32}[self.algorithm]
        if len(self.hexdigest) != length or any(char not in "0123456789abcdef" for char in self.hexdigest):
            raise ValueError(f"{self.algorithm} digest must be {length} lowercase hex digits, got {self.hexdigest!r}")


@dataclass(frozen=True)
class RetryPolicy:
    """How hard :func:`fetch` tries.

    Attributes:
        timeout_seconds: Limit for connecting and for each read (a server silent this long has stalled).
        retries: Further attempts after the first failed one (0 = try once).
        retry_wait_seconds: Wait before the first retry; it doubles for every further one.
    """

    timeout_seconds: float = 60.0
    retries: int = 3
    retry_wait_seconds: float = 5.0

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        if self.retries < 0:
            raise ValueError("retries must be >= 0")
        if self.retry_wait_seconds < 0:
            raise ValueError("retry_wait_seconds must be >= 0")


@dataclass(frozen=True)
class FetchResult:
    """What :func:`fetch` wrote: the file, its size and digests, where it came from and how many attempts it took."""

    path: Path
    size: int
    sha256: str
    md5: str
    origin: str
    attempts: int
    checksum: Checksum


class _Digests:
    def __init__(self) -> None:
        self.sha256 = hashlib.sha256()
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.size = 0

    def update(self, chunk: bytes) -> None:
        self.sha256.update(chunk)
        self.md5.update(chunk)
        self.size += len(chunk)

    def hexdigest(self, algorithm: str) -> str:
        return (self.sha256 if algorithm == "sha256" else self.md5).hexdigest()


def _network_failure(error: BaseException, url: str, timeout: float) -> Exception:
    """Classify an exception raised while talking to the server: transient (retry) or final."""
    if isinstance(error, urllib.error.HTTPError):
        if error.code >= 500 or error.code in RETRYABLE_STATUS:
            return _TransientError(f"HTTP {error.code} {error.reason}")
        return DownloadError(f"download of {url} failed: HTTP {error.code} {error.reason}")
    if isinstance(error, (TimeoutError, socket.timeout)):
        return _TransientError(f"no data for {timeout:g} s (timed out)")
    if isinstance(error, http.client.IncompleteRead):
        return _TransientError(f"truncated body ({len(error.partial)} bytes of a read, {error.expected} more expected)")
    if isinstance(error, urllib.error.URLError):
        if isinstance(error.reason, (TimeoutError, socket.timeout)):
            return _TransientError(f"no answer for {timeout:g} s (timed out)")
        return _TransientError(f"connection failed: {error.reason}")
    return _TransientError(f"connection failed: {error}")


# URLError, ConnectionError and timeouts are all OSErrors; http.client raises the rest.
_NETWORK_ERRORS = (OSError, http.client.HTTPException)


def _download_once(url: str, handle: IO[bytes], timeout: float) -> _Digests:
    """One HTTP(S) GET of ``url`` into ``handle``; transient failures raise :class:`_TransientError`.

    Only errors of the connection are classified; an error writing ``handle`` (a full disk) propagates.
    """
    handle.seek(0)
    handle.truncate()
    digests = _Digests()
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except _NETWORK_ERRORS as error:
        raise _network_failure(error, url, timeout) from None
    with response:
        declared = response.headers.get("Content-Length")
        while True:
            try:
                chunk = response.read(_CHUNK_BYTES)
            except _NETWORK_ERRORS as error:
                raise _network_failure(error, url, timeout) from None
            if not chunk:
                break
            handle.write(chunk)
            digests.update(chunk)
    if declared is not None and declared.isdigit() and int(declared) != digests.size:
        raise _TransientError(f"truncated body: received {digests.size} of {declared} bytes (Content-Length)")
    handle.flush()
    return digests


def _copy_once(source: Path, handle: IO[bytes]) -> _Digests:
    """Copy the mirror file into ``handle``; only errors reading ``source`` blame it (a full disk names the destination)."""
    digests = _Digests()
    try:
        reader = open(source, "rb")
    except FileNotFoundError:
        raise InputError(f"mirror file not found: {source}") from None
    except OSError as error:
        raise InputError(f"cannot read mirror file {source}: {error.strerror or error}") from None
    with reader:
        while True:
            try:
                chunk = reader.read(_CHUNK_BYTES)
            except OSError as error:
                raise InputError(f"cannot read mirror file {source}: {error.strerror or error}") from None
            if not chunk:
                break
            handle.write(chunk)
            digests.update(chunk)
    handle.flush()
    return digests


def fetch(
    url: str,
    destination: PathLike,
    checksum: Checksum | None,
    *,
    policy: RetryPolicy = RetryPolicy(),
    mirror_file: PathLike | None = None,
    lock_file: PathLike | None = None,
    lock_key: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> FetchResult:
    """Fetch ``url`` (or copy ``mirror_file``) to ``destination``, verify it, and rename it into place.

    Args:
        url: Canonical HTTP(S) URL of the file.
        destination: Final path; it appears only once the file is complete and verified.
        checksum: Expected digest, or ``None`` when no checksum is published: then the sha256 recorded
            in ``lock_file`` under ``lock_key`` is expected, and recorded there if absent.
        policy: Timeouts and retries of the network transfer.
        mirror_file: A local copy to use instead of the network (same bytes, same verification).
        lock_file: The checksum lock (YAML), required when ``checksum`` is ``None``.
        lock_key: The lock entry's key (the manifest's download key).
        sleep: Waits between retries (injected by tests).

    Returns:
        A :class:`FetchResult` describing the verified file.

    Raises:
        DownloadError: HTTP 4xx, retries exhausted (the last failure is named), or a checksum mismatch.
        InputError: The mirror file cannot be read, or the lock file is invalid.
    """
    target = Path(destination)
    if checksum is None and (lock_file is None or lock_key is None):
        raise ValueError("a download without checksum needs lock_file and lock_key")
    origin = f"mirror file {mirror_file}" if mirror_file is not None else url
    with staging_path(target, directory=False) as staging, open_staged_file(staging, target, "wb") as handle:
        attempts = 0
        if mirror_file is not None:
            attempts = 1
            digests = _copy_once(Path(mirror_file), handle)
        else:
            for attempt in range(policy.retries + 1):
                attempts = attempt + 1
                try:
                    digests = _download_once(url, handle, policy.timeout_seconds)
                    break
                except _TransientError as error:
                    if attempt == policy.retries:
                        raise DownloadError(
                            f"download of {url} failed after {attempts} attempt(s): {error}"
                        ) from None
                    wait = policy.retry_wait_seconds * 2**attempt
                    logger.warning("%s: attempt %d failed (%s); retrying in %g s", url, attempts, error, wait)
                    sleep(wait)
        os.fsync(handle.fileno())
        handle.close()
        expected = checksum if checksum is not None else _locked_checksum(lock_file, lock_key, url)
        if expected is None:
            expected = _record_in_lock(lock_file, lock_key, url, digests.hexdigest("sha256"), digests.size)
            logger.warning(
                "%s: no published checksum; recorded sha256 %s in %s (trust on first use)",
                url, expected.hexdigest, lock_file,
            )
        actual = digests.hexdigest(expected.algorithm)
        if actual != expected.hexdigest:
            raise DownloadError(
                f"checksum mismatch for {origin}: expected {expected.algorithm} {expected.hexdigest} "
                f"({expected.source}), got {actual} ({digests.size} bytes); nothing was written to {target}"
            )
    return FetchResult(
        path=target,
        size=digests.size,
        sha256=digests.hexdigest("sha256"),
        md5=digests.hexdigest("md5"),
        origin=origin,
        attempts=attempts,
        checksum=expected,
    )


# --------------------------------------------------------------------------------------------
# Checksum lock (trust on first use)
# --------------------------------------------------------------------------------------------


def read_checksum_lock(lock_file: PathLike) -> dict[str, dict[str, object]]:
    """Read the checksum lock: ``{download key: {url, sha256, size, recorded}}`` (empty if the file is absent).

    Raises:
        InputError: The file is not a YAML mapping of that shape (names the file and the key).
    """
    path = Path(lock_file)
    if not path.exists():
        return {}
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise InputError(f"cannot read checksum lock {path}: {error}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise InputError(f"checksum lock {path}: expected a mapping from download key to entry")
    for key, entry in document.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str) or not isinstance(entry.get("sha256"), str):
            raise InputError(f"checksum lock {path}: entry {key!r} needs 'url' and 'sha256'")
    return document


def _locked_checksum(lock_file: PathLike | None, key: str | None, url: str) -> Checksum | None:
    entry = read_checksum_lock(lock_file).get(key) if lock_file is not None else None
    if entry is None:
        return None
    if entry["url"] != url:
        raise DownloadError(
            f"checksum lock {lock_file}: entry {key!r} was recorded for {entry['url']}, not {url}; "
            f"remove the entry to trust the new URL on its next download"
        )
    try:
        return Checksum("sha256", str(entry["sha256"]), f"checksum lock {lock_file}, recorded {entry.get('recorded', '?')}")
    except ValueError as error:
        raise InputError(f"checksum lock {lock_file}: entry {key!r}: {error}") from None


def _record_in_lock(lock_file: PathLike, key: str, url: str, sha256: str, size: int) -> Checksum:
    """Record ``sha256`` for ``key`` unless another job recorded one meanwhile; return the checksum to verify against."""
    path = Path(lock_file)
    with locked_directory(path.parent):  # serialises concurrent download jobs on one machine
        existing = _locked_checksum(path, key, url)
        if existing is not None:
            return existing
        document = read_checksum_lock(path)
        recorded = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
        document[key] = {"url": url, "sha256": sha256, "size": size, "recorded": recorded}
        header = (
            "# Checksums recorded on first download (trust on first use) for files whose publishers give none.\n"
            "# Written by the workflow's fetch_download rule; every later download must match. Commit this file.\n"
        )
        with atomic_write(path) as handle:
            handle.write(header)
            yaml.safe_dump(dict(sorted(document.items())), handle, sort_keys=False, allow_unicode=True)
    return Checksum("sha256", sha256, f"checksum lock {path}, recorded {recorded} (first download)")
