"""nlp_robustness.data.download against a real HTTP server on loopback: success, every failure, the checksum lock."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest
import yaml

from nlp_robustness.data.download import Checksum, DownloadError, RetryPolicy, fetch, read_checksum_lock
from nlp_robustness.errors import InputError
from tests.loopback import LoopbackServer

BODY = bytes(range(256)) * 4096  # 1 MiB, every byte value
SHA256 = Checksum("sha256", hashlib.sha256(BODY).hexdigest(), "test")
MD5 = Checksum("md5", hashlib.md5(BODY).hexdigest(), "test registry")
FAST = RetryPolicy(timeout_seconds=2.0, retries=2, retry_wait_seconds=0.0)


@pytest.fixture(scope="module")
def server():
    """One server for the module; every test serves its own paths."""
    # a proxy configured in the environment must not capture loopback traffic
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("no_proxy", "127.0.0.1,localhost")
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        with LoopbackServer() as running:
            yield running


def _leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir()) if directory.exists() else []


def test_clean_download_md5_and_sha256(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/data/archive.tgz", BODY)
    result = fetch(url, tmp_path / "out" / "archive.tgz", MD5, policy=FAST)
    assert (tmp_path / "out" / "archive.tgz").read_bytes() == BODY
    assert (result.size, result.attempts, result.sha256) == (len(BODY), 1, SHA256.hexdigest)
    assert result.checksum == MD5
    assert _leftovers(tmp_path / "out") == ["archive.tgz"]
    fetch(url, tmp_path / "again.tgz", SHA256, policy=FAST)
    assert (tmp_path / "again.tgz").read_bytes() == BODY


def test_http_404_is_final_and_leaves_nothing(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.url("/missing.tgz")
    with pytest.raises(DownloadError, match=r"download of http://127\.0\.0\.1:\d+/missing\.tgz failed: HTTP 404"):
        fetch(url, tmp_path / "missing.tgz", SHA256, policy=FAST)
    assert server.requests["/missing.tgz"] == 1  # not retried
    assert _leftovers(tmp_path) == []


def test_http_500_then_success_is_retried(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/flaky.tgz", BODY, ["500", "500", "ok"])
    waits: list[float] = []
    policy = RetryPolicy(timeout_seconds=2.0, retries=3, retry_wait_seconds=0.5)
    result = fetch(url, tmp_path / "flaky.tgz", SHA256, policy=policy, sleep=waits.append)
    assert result.attempts == 3 and server.requests["/flaky.tgz"] == 3
    assert waits == [0.5, 1.0]  # exponential, deterministic
    assert (tmp_path / "flaky.tgz").read_bytes() == BODY


def test_http_500_until_retries_run_out(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/down.tgz", BODY, ["500"])
    with pytest.raises(DownloadError, match=r"down\.tgz failed after 3 attempt\(s\): HTTP 500"):
        fetch(url, tmp_path / "down.tgz", SHA256, policy=FAST)
    assert server.requests["/down.tgz"] == 3
    assert _leftovers(tmp_path) == []


def test_truncated_body_is_retried_then_fails(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/cut.tgz", BODY, ["truncate"])
    with pytest.raises(DownloadError, match=r"cut\.tgz failed after 3 attempt\(s\): truncated body"):
        fetch(url, tmp_path / "cut.tgz", SHA256, policy=FAST)
    assert _leftovers(tmp_path) == []
    # a truncation followed by a complete answer succeeds
    url = server.add("/cut-once.tgz", BODY, ["truncate", "ok"])
    assert fetch(url, tmp_path / "cut-once.tgz", SHA256, policy=FAST).attempts == 2
    assert (tmp_path / "cut-once.tgz").read_bytes() == BODY


def test_checksum_mismatch_is_final_and_leaves_nothing(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/changed.tgz", BODY[:-1] + b"!")
    with pytest.raises(DownloadError) as raised:
        fetch(url, tmp_path / "changed.tgz", MD5, policy=FAST)
    message = str(raised.value)
    assert "checksum mismatch for http://127.0.0.1" in message and "changed.tgz" in message
    assert f"expected md5 {MD5.hexdigest} (test registry)" in message
    assert server.requests["/changed.tgz"] == 1
    assert _leftovers(tmp_path) == []


def test_stalled_server_times_out(server: LoopbackServer, tmp_path: Path) -> None:
    url = server.add("/stall.tgz", BODY, ["stall"])
    policy = RetryPolicy(timeout_seconds=0.5, retries=1, retry_wait_seconds=0.0)
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"stall\.tgz failed after 2 attempt\(s\): no data for 0\.5 s \(timed out\)"):
        fetch(url, tmp_path / "stall.tgz", SHA256, policy=policy)
    assert time.monotonic() - started < 10
    assert _leftovers(tmp_path) == []


def test_existing_file_survives_a_failed_download(server: LoopbackServer, tmp_path: Path) -> None:
    target = tmp_path / "kept.tgz"
    target.write_bytes(b"previous, verified content")
    with pytest.raises(DownloadError):
        fetch(server.url("/nothing-here"), target, SHA256, policy=FAST)
    assert target.read_bytes() == b"previous, verified content"
    assert _leftovers(tmp_path) == ["kept.tgz"]


def test_connection_refused_is_retried_then_named(tmp_path: Path) -> None:
    # a port nobody listens on (bound and closed at once)
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DownloadError, match=r"failed after 3 attempt\(s\): connection failed"):
        fetch(f"http://127.0.0.1:{port}/x.tgz", tmp_path / "x.tgz", SHA256, policy=FAST)
    assert _leftovers(tmp_path) == []


def test_trust_on_first_use_records_then_verifies(server: LoopbackServer, tmp_path: Path) -> None:
    lock = tmp_path / "resources" / "checksums.lock.yaml"
    url = server.add("/unpublished.zip", BODY)
    first = fetch(url, tmp_path / "a" / "unpublished.zip", None, policy=FAST, lock_file=lock, lock_key="khresmoi")
    assert "first download" in first.checksum.source
    recorded = read_checksum_lock(lock)
    assert recorded["khresmoi"]["url"] == url
    assert recorded["khresmoi"]["sha256"] == SHA256.hexdigest and recorded["khresmoi"]["size"] == len(BODY)
    assert lock.read_text(encoding="utf-8").startswith("# Checksums recorded on first download")
    # a second download must match the recorded digest
    second = fetch(url, tmp_path / "b" / "unpublished.zip", None, policy=FAST, lock_file=lock, lock_key="khresmoi")
    assert second.checksum.hexdigest == SHA256.hexdigest and "checksum lock" in second.checksum.source
    # the publisher changes the file: refused, nothing written, the lock unchanged
    server.add("/unpublished.zip", BODY + b"more")
    with pytest.raises(DownloadError, match=rf"checksum mismatch .*expected sha256 {SHA256.hexdigest} \(checksum lock"):
        fetch(url, tmp_path / "c" / "unpublished.zip", None, policy=FAST, lock_file=lock, lock_key="khresmoi")
    assert _leftovers(tmp_path / "c") == []
    assert read_checksum_lock(lock) == recorded


def test_lock_entry_for_another_url_is_refused(server: LoopbackServer, tmp_path: Path) -> None:
    lock = tmp_path / "checksums.lock.yaml"
    lock.write_text(yaml.safe_dump({"amazon": {"url": "https://old.example/x.tgz", "sha256": "0" * 64}}), encoding="utf-8")
    url = server.add("/x.tgz", BODY)
    with pytest.raises(DownloadError, match=r"entry 'amazon' was recorded for https://old\.example/x\.tgz"):
        fetch(url, tmp_path / "x.tgz", None, policy=FAST, lock_file=lock, lock_key="amazon")
    assert not (tmp_path / "x.tgz").exists()
    lock.write_text("- not a mapping\n", encoding="utf-8")
    with pytest.raises(InputError, match="checksum lock .*expected a mapping"):
        read_checksum_lock(lock)


def test_mirror_copy_is_verified_like_a_download(tmp_path: Path) -> None:
    mirror_file = tmp_path / "mirror" / "en-fr.tgz"
    mirror_file.parent.mkdir()
    mirror_file.write_bytes(BODY)
    result = fetch("https://unreachable.invalid/en-fr.tgz", tmp_path / "out" / "en-fr.tgz", MD5, mirror_file=mirror_file)
    assert result.origin == f"mirror file {mirror_file}" and result.attempts == 1
    assert (tmp_path / "out" / "en-fr.tgz").read_bytes() == BODY
    mirror_file.write_bytes(BODY + b"x")
    with pytest.raises(DownloadError, match=rf"checksum mismatch for mirror file {mirror_file}"):
        fetch("https://unreachable.invalid/en-fr.tgz", tmp_path / "bad" / "en-fr.tgz", MD5, mirror_file=mirror_file)
    assert _leftovers(tmp_path / "bad") == []


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="md5 digest must be 32"):
        Checksum("md5", "abc", "x")
    with pytest.raises(ValueError, match="unknown checksum algorithm"):
        Checksum("crc32", "0" * 8, "x")
    with pytest.raises(ValueError, match="retries"):
        RetryPolicy(retries=-1)
    with pytest.raises(ValueError, match="lock_file"):
        fetch("http://127.0.0.1/x", "x", None)
