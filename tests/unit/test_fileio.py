"""Atomic writes leave either the complete file or nothing, with the umask's permissions; write errors name the file."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.fileio.atomic import atomic_write, locked_directory, open_staged_file, staging_path
from nlp_robustness.fileio.text_files import write_lines, write_table


def test_complete_write_appears(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "out.txt"
    with atomic_write(target) as handle:
        handle.write("hello\n")
    assert target.read_text(encoding="utf-8") == "hello\n"
    assert [path.name for path in target.parent.iterdir()] == ["out.txt"]


def test_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as handle:
            handle.write("half")
            raise RuntimeError("interrupted")
    assert target.read_text(encoding="utf-8") == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["out.txt"]


def test_temporary_file_of_a_killed_writer_is_removed_by_the_next_write(tmp_path: Path) -> None:
    stale = tmp_path / ".out.tsv.ab12cd34.part"  # what a SIGKILL during atomic_write leaves behind
    stale.write_text("half", encoding="utf-8")
    other = tmp_path / ".other.tsv.ab12cd34.part"  # another output's: not touched
    other.write_text("half", encoding="utf-8")
    longer = tmp_path / ".out.tsv.gz.ab12cd34.part"  # that of out.tsv.gz, being written by another job
    longer.write_text("half", encoding="utf-8")
    with atomic_write(tmp_path / "out.tsv") as handle:
        handle.write("whole\n")
    assert not stale.exists() and other.exists() and longer.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        ".other.tsv.ab12cd34.part", ".out.tsv.gz.ab12cd34.part", "out.tsv"
    ]


@pytest.mark.parametrize("directory", [False, True])
def test_staging_removes_every_leftover_of_its_own_name_and_nothing_else(tmp_path: Path, directory: bool) -> None:
    """Leftovers of killed attempts, a file and a folder (with content), go; other outputs' stagings stay."""
    final = tmp_path / "data[1].bin"  # glob characters in the name match only themselves
    (tmp_path / ".data[1].bin.0a1b2c3d.part").write_bytes(b"half")
    (tmp_path / ".data[1].bin.4e5f6a7b.part" / "sub").mkdir(parents=True)
    (tmp_path / ".data[1].bin.4e5f6a7b.part" / "sub" / "half.txt").write_text("half", encoding="utf-8")
    kept = [
        ".data1.bin.0a1b2c3d.part",  # what an unescaped pattern would take for its own
        ".data[1].bin.gz.0a1b2c3d.part",  # data[1].bin.gz's, maybe being written now
        ".data[1].bin.0a1b2c3.part",  # not the shape of a staging name (7 characters)
        "data[1].bin.0a1b2c3d.part",
    ]
    for name in kept:
        (tmp_path / name).write_bytes(b"another output's")
    with staging_path(final, directory=directory) as staging:
        assert staging.is_dir() == directory and staging.name.startswith(".data[1].bin.")
        if directory:
            (staging / "whole.txt").write_text("whole", encoding="utf-8")
        else:
            staging.write_bytes(b"whole")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([*kept, "data[1].bin"])
    assert (final / "whole.txt" if directory else final).read_bytes() == b"whole"


def test_a_staged_folder_replaces_the_old_one_and_a_failure_keeps_it(tmp_path: Path) -> None:
    final = tmp_path / "data-bin"
    final.mkdir()
    (final / "old.bin").write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with staging_path(final, directory=True) as staging:
            (staging / "half.bin").write_bytes(b"half")
            raise RuntimeError("interrupted")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data-bin"] and (final / "old.bin").exists()
    with staging_path(final, directory=True) as staging:
        (staging / "new.bin").write_bytes(b"new")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data-bin"]
    assert sorted(path.name for path in final.iterdir()) == ["new.bin"]


def test_write_lines_refuses_segments_with_line_breaks(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="segment 2"):
        write_lines(["fine", "not\nfine"], tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()
    write_lines(["a", "", "c"], tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "a\n\nc\n"


# --------------------------------------------------------------------------------------------
# Permissions: a result gets 0o666 less the umask, as any other tool's output
# --------------------------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards (pytest runs tests in one thread)."""
    saved = os.umask(0o022)  # reading the umask means setting it; restored below
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077, 0o027])
def test_written_files_get_the_mode_the_umask_gives(tmp_path: Path, umask, mask: int) -> None:
    umask(mask)
    expected = 0o666 & ~mask
    with atomic_write(tmp_path / "text.txt") as handle:
        handle.write("x\n")
    with atomic_write(tmp_path / "binary.bin", mode="wb") as handle:
        handle.write(b"x")
    write_lines(["a"], tmp_path / "lines.txt")
    write_table(pd.DataFrame({"a": ["1"]}), tmp_path / "table.tsv", ["a"])
    plain = tmp_path / "plain.txt"  # what open() gives under the same umask
    plain.write_text("x", encoding="utf-8")
    written = ["text.txt", "binary.bin", "lines.txt", "table.tsv"]
    assert {name: oct(_mode(tmp_path / name)) for name in written} == {name: oct(expected) for name in written}
    assert _mode(plain) == expected
    with staging_path(tmp_path / "extracted", directory=True) as directory:
        assert _mode(directory) == 0o777 & ~mask
    assert _mode(tmp_path / "extracted") == 0o777 & ~mask


def test_rewriting_a_file_takes_the_current_umask(tmp_path: Path, umask) -> None:
    target = tmp_path / "out.txt"
    umask(0o077)
    write_lines(["old"], target)
    assert _mode(target) == 0o600
    umask(0o022)
    write_lines(["new"], target)
    assert _mode(target) == 0o644 and target.read_text(encoding="utf-8") == "new\n"


def test_umask_of_a_fresh_process(tmp_path: Path) -> None:
    """The same in a separate process started with umask 002 (a group-shared results directory)."""
    script = textwrap.dedent(
        f"""
        import os, stat
        from nlp_robustness.fileio.text_files import write_lines
        write_lines(["x"], {str(tmp_path / "out.txt")!r})
        print(oct(stat.S_IMODE(os.stat({str(tmp_path / "out.txt")!r}).st_mode)))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, preexec_fn=lambda: os.umask(0o002)
    )
    assert result.stdout.strip() == "0o664"


# --------------------------------------------------------------------------------------------
# Write errors name the file being written
# --------------------------------------------------------------------------------------------


def test_a_full_device_error_names_the_target(tmp_path: Path) -> None:
    """/dev/full fails every write with ENOSPC: the error keeps the errno and names the file meant."""
    target = tmp_path / "results" / "table.tsv"
    with pytest.raises(OSError) as caught:
        with open_staged_file("/dev/full", target) as handle:
            handle.write("x" * 10)  # buffered: the device is written when the file is flushed on close
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(target)
    assert str(target) in str(caught.value) and "No space left on device" in str(caught.value)
    assert isinstance(caught.value.__cause__, OSError) and caught.value.__cause__.errno == errno.ENOSPC


def test_a_file_too_large_for_its_limit_fails_naming_it_and_leaves_nothing(tmp_path: Path) -> None:
    """A real kernel write error in a child process limited to 4 KiB files (RLIMIT_FSIZE gives EFBIG)."""
    target = tmp_path / "big.tsv"
    script = textwrap.dedent(
        f"""
        import resource, signal
        import pandas as pd
        from nlp_robustness.fileio.text_files import write_table
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        try:
            write_table(pd.DataFrame({{"a": ["x" * 100] * 1000}}), {str(target)!r}, ["a"])
        except OSError as error:
            print(error.errno, error.filename, "|", error)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    code, filename, message = result.stdout.strip().split(" ", 2)
    assert int(code) == errno.EFBIG and filename == str(target), result.stdout
    assert "File too large" in message
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary file


def _mount_tiny_tmpfs(directory: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(directory)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A 64 KiB tmpfs: a real file system that fills up (root only)."""
    directory = tmp_path / "disk"
    _mount_tiny_tmpfs(directory)
    yield directory
    subprocess.run(["umount", str(directory)], check=True)


def test_a_full_disk_fails_naming_the_file_and_keeps_the_old_one(tiny_disk: Path) -> None:
    target = tiny_disk / "scores.tsv"
    write_lines(["old"], target)
    with pytest.raises(OSError) as caught:
        write_lines(["x" * 1000] * 200, target)  # 200 KB on a 64 KiB disk
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(target)
    assert f"No space left on device: '{target}'" in str(caught.value)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert sorted(path.name for path in tiny_disk.iterdir()) == ["scores.tsv"]  # no temporary file left


def test_a_full_disk_fails_a_binary_write_naming_the_file(tiny_disk: Path) -> None:
    target = tiny_disk / "sub" / "model.joblib"
    with pytest.raises(OSError) as caught:
        with atomic_write(target, mode="wb") as handle:
            for _ in range(100):
                handle.write(bytes(4096))
    assert (caught.value.errno, caught.value.filename) == (errno.ENOSPC, str(target))
    assert list((tiny_disk / "sub").iterdir()) == []


def test_errors_of_the_block_itself_pass_unchanged(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as caught:
        with atomic_write(tmp_path / "out.txt") as handle:
            handle.write("x")
            open(tmp_path / "missing.txt", encoding="utf-8")
    assert caught.value.filename == str(tmp_path / "missing.txt")
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_directory_names_the_target(tmp_path: Path) -> None:
    """The temporary file cannot be created: the error names the file meant, not the temporary one.

    Root ignores directory permissions, so as root the directory is a read-only tmpfs (EROFS)."""
    directory = tmp_path / "locked"
    if os.geteuid() == 0:
        directory.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(directory)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    else:
        directory.mkdir(mode=0o500)
    try:
        with pytest.raises(OSError) as caught:
            write_lines(["x"], directory / "out.txt")
        assert caught.value.errno in (errno.EACCES, errno.EROFS)
        assert caught.value.filename == str(directory / "out.txt")
        assert caught.value.__cause__ is not None and caught.value.__cause__.filename != str(directory / "out.txt")
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(directory)], check=True)


def test_a_locked_directory_is_exclusive_until_released(tmp_path: Path) -> None:
    directory = tmp_path / "made" / "here"

    def try_lock() -> bool:
        descriptor = os.open(directory, os.O_RDONLY)  # another open file description, as another process has
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(descriptor)

    with locked_directory(directory):
        assert directory.is_dir() and not try_lock()
    assert try_lock()
