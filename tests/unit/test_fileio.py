"""Atomic writes leave either the complete file or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlp_robustness.fileio import atomic_write, write_lines


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
    stale = tmp_path / ".out.tsv.abc123.part"  # what a SIGKILL during atomic_write leaves behind
    stale.write_text("half", encoding="utf-8")
    other = tmp_path / ".other.tsv.abc123.part"  # another output's: not touched
    other.write_text("half", encoding="utf-8")
    with atomic_write(tmp_path / "out.tsv") as handle:
        handle.write("whole\n")
    assert not stale.exists() and other.exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == [".other.tsv.abc123.part", "out.tsv"]


def test_write_lines_refuses_segments_with_line_breaks(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="segment 2"):
        write_lines(["fine", "not\nfine"], tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()
    write_lines(["a", "", "c"], tmp_path / "out.txt")
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "a\n\nc\n"
