"""Safe archive extraction: path traversal, links and devices are refused; extraction is all-or-nothing."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from nlp_robustness.data.archives import UnsafeArchiveError, archive_kind_of, extract_members, list_members
from nlp_robustness.errors import InputError


def _tar(path: Path, entries: list[tuple[str, str, bytes | str]], mode: str = "w:gz") -> Path:
    """Build a tar archive: entries are (name, kind, data or link target); kind in file/dir/symlink/hardlink/chr/fifo."""
    with tarfile.open(path, mode) as archive:
        for name, kind, payload in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                assert isinstance(payload, bytes)
                info.size = len(payload)
                archive.addfile(info, io.BytesIO(payload))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                         "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("symlink", "hardlink"):
                info.linkname = str(payload)
            archive.addfile(info)
    return path


def _zip(path: Path, entries: list[tuple[str, bytes, int | None]]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, data)
    return path


GOOD = [
    ("test-full/", "dir", b""),
    ("test-full/newstest2014-fren-src.en.sgm", "file", b"<srcset>\n"),
    ("test-full/newstest2014-fren-ref.fr.sgm", "file", b"<refset>\n"),
    ("test-full/other.sgm", "file", b"unused\n"),
]


def test_archive_kinds() -> None:
    assert [archive_kind_of(name) for name in ("a.tgz", "a.tar.gz", "A.TAR.BZ2", "a.tar.xz", "a.zip", "a.tar")] == [
        "tar", "tar", "tar", "tar", "zip", "tar"
    ]
    assert archive_kind_of("medline18_en2fr.en") is None and archive_kind_of("MTNT.1.1.tar.gz") == "tar"


@pytest.mark.parametrize("mode", ["w", "w:gz", "w:bz2", "w:xz"])
def test_requested_members_only(tmp_path: Path, mode: str) -> None:
    archive = _tar(tmp_path / "test-full.tar", GOOD, mode)
    members = ["test-full/newstest2014-fren-src.en.sgm", "test-full/newstest2014-fren-ref.fr.sgm"]
    written = extract_members(archive, "tar", tmp_path / "extracted", members)
    assert written == [tmp_path / "extracted" / member for member in members]
    assert (tmp_path / "extracted/test-full/newstest2014-fren-src.en.sgm").read_bytes() == b"<srcset>\n"
    assert not (tmp_path / "extracted/test-full/other.sgm").exists()
    assert sorted(list_members(archive, "tar")) == sorted(name for name, kind, _ in GOOD if kind == "file")


def test_everything_when_no_members_are_named(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "a.tgz", GOOD)
    written = extract_members(archive, "tar", tmp_path / "out")
    assert sorted(path.name for path in written) == ["newstest2014-fren-ref.fr.sgm", "newstest2014-fren-src.en.sgm", "other.sgm"]


@pytest.mark.parametrize("evil", ["../escape.txt", "test-full/../../escape.txt", "/etc/escape.txt", "./a/../../escape.txt"])
def test_member_escaping_the_target_refuses_the_archive(tmp_path: Path, evil: str) -> None:
    archive = _tar(tmp_path / "evil.tgz", [*GOOD, (evil, "file", b"owned\n")])
    target = tmp_path / "deep" / "extracted"
    with pytest.raises(UnsafeArchiveError, match=r"evil\.tgz: refusing the archive: member .* would be written outside"):
        extract_members(archive, "tar", target, ["test-full/newstest2014-fren-src.en.sgm"])
    assert not target.exists()
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "deep" / "escape.txt").exists()
    assert [path.name for path in (tmp_path / "deep").iterdir()] == []  # no staging directory left behind


@pytest.mark.parametrize(
    ("kind", "payload", "word"),
    [("symlink", "/etc/passwd", "symlink"), ("hardlink", "test-full/other.sgm", "hardlink"),
     ("chr", b"", "device"), ("fifo", b"", "fifo")],
)
def test_links_and_devices_are_refused(tmp_path: Path, kind: str, payload: str | bytes, word: str) -> None:
    archive = _tar(tmp_path / "links.tgz", [*GOOD, ("test-full/special", kind, payload)])
    with pytest.raises(UnsafeArchiveError, match=rf"refusing member 'test-full/special': it is a {word}"):
        extract_members(archive, "tar", tmp_path / "out", ["test-full/newstest2014-fren-src.en.sgm", "test-full/special"])
    assert not (tmp_path / "out").exists()
    # extracting everything refuses it too; naming only regular members extracts them
    with pytest.raises(UnsafeArchiveError):
        extract_members(archive, "tar", tmp_path / "all", None)
    assert extract_members(archive, "tar", tmp_path / "ok", ["test-full/other.sgm"]) == [tmp_path / "ok/test-full/other.sgm"]


def test_missing_member_and_existing_target(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "a.tgz", GOOD)
    with pytest.raises(InputError, match=r"a\.tgz: member\(s\) not found in the archive: .test-full/absent\.sgm."):
        extract_members(archive, "tar", tmp_path / "out", ["test-full/absent.sgm"])
    assert not (tmp_path / "out").exists()
    (tmp_path / "out").mkdir()
    with pytest.raises(InputError, match="already exists"):
        extract_members(archive, "tar", tmp_path / "out", ["test-full/other.sgm"])


def test_corrupt_archive(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "a.tgz", GOOD)
    data = archive.read_bytes()
    (tmp_path / "cut.tgz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.tgz: not a readable tar archive"):
        extract_members(tmp_path / "cut.tgz", "tar", tmp_path / "out", ["test-full/other.sgm"])
    (tmp_path / "not.zip").write_bytes(b"plain text")
    with pytest.raises(InputError, match=r"not\.zip: not a readable zip archive"):
        extract_members(tmp_path / "not.zip", "zip", tmp_path / "out2")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()


def test_zip_members_and_refusals(tmp_path: Path) -> None:
    regular = stat.S_IFREG | 0o644
    good = [("khresmoi/dev.en", b"one\n", regular), ("khresmoi/dev.fr", b"un\n", None)]
    archive = _zip(tmp_path / "k.zip", good)
    assert extract_members(archive, "zip", tmp_path / "out", ["khresmoi/dev.fr"]) == [tmp_path / "out/khresmoi/dev.fr"]
    assert (tmp_path / "out/khresmoi/dev.fr").read_bytes() == b"un\n"
    evil = _zip(tmp_path / "evil.zip", [*good, ("..\\..\\escape.txt", b"owned", None)])
    with pytest.raises(UnsafeArchiveError, match="would be written outside"):
        extract_members(evil, "zip", tmp_path / "evil-out", ["khresmoi/dev.en"])
    link = _zip(tmp_path / "link.zip", [*good, ("khresmoi/link", b"/etc/passwd", stat.S_IFLNK | 0o777)])
    with pytest.raises(UnsafeArchiveError, match="it is a symlink"):
        extract_members(link, "zip", tmp_path / "link-out", ["khresmoi/link"])
    assert not (tmp_path / "evil-out").exists() and not (tmp_path / "link-out").exists()
