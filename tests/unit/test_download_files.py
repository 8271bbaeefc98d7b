"""Downloaded and extracted files: the umask's permissions (not mkstemp's 0600), and a full disk names the file."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from nlp_robustness.data.archives import extract_members
from nlp_robustness.data.download import Checksum, fetch


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _checksum(data: bytes) -> Checksum:
    return Checksum("sha256", hashlib.sha256(data).hexdigest(), "test")


@pytest.fixture
def umask_027():
    saved = os.umask(0o027)  # restored below; pytest runs the tests in one thread
    yield
    os.umask(saved)


def test_fetched_and_extracted_files_get_the_umask_permissions(tmp_path: Path, umask_027) -> None:
    member = tmp_path / "member.txt"
    member.write_text("segment\n", encoding="utf-8")
    archive = tmp_path / "mirror" / "data.tar.gz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(member, arcname="data/member.txt")
    fetched = fetch("http://127.0.0.1:9/unused", tmp_path / "downloads" / "data.tar.gz",
                    _checksum(archive.read_bytes()), mirror_file=archive)
    assert _mode(fetched.path) == 0o640  # 0o666 & ~0o027
    target = tmp_path / "downloads" / "extracted"
    extract_members(fetched.path, "tar", target)
    assert _mode(target) == 0o750  # 0o777 & ~0o027 (mkdtemp would give 0o700)
    assert _mode(target / "data" / "member.txt") == 0o640
    assert sorted(path.name for path in (tmp_path / "downloads").iterdir()) == ["data.tar.gz", "extracted"]


def test_a_download_onto_a_full_disk_names_the_destination(tmp_path: Path) -> None:
    """A real 64 KiB tmpfs (root only): copying 200 KB fails with ENOSPC naming the destination, and leaves nothing."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        data = os.urandom(200_000)
        mirror_file = tmp_path / "big.bin"
        mirror_file.write_bytes(data)
        destination = disk / "big.bin"
        with pytest.raises(OSError) as caught:
            fetch("http://127.0.0.1:9/unused", destination, _checksum(data), mirror_file=mirror_file)
        assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(destination))
        assert list(disk.iterdir()) == []
    finally:
        subprocess.run(["umount", str(disk)], check=True)
