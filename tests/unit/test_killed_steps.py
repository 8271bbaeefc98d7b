"""A step killed with SIGKILL leaves its staging beside the output; the next run of the step removes it.

Each test starts the real step in a child process, waits until it is mid-way (its staging exists and holds
part of the work), kills the child's whole session with SIGKILL (as a cluster's time limit or ``kill -9``
does: no cleanup runs), checks what is left, then runs the step again and checks that the output is right
and nothing else is left: the download of a file, the extraction of an archive, fairseq's binarization.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from nlp_robustness.data.archives import extract_members
from nlp_robustness.data.download import Checksum, RetryPolicy, fetch
from nlp_robustness.fileio.atomic import stale_temporary_files
from nlp_robustness.systems.fairseq.binarize import binarize
from nlp_robustness.systems.fairseq.runtime import fairseq_environment
from tests.loopback import serving, tar_archive

#: The longest a step may take to reach the point where it is killed.
_READY_SECONDS = 30.0


def _start(snippet: str) -> subprocess.Popen:
    """Run ``snippet`` in a new Python process in a session of its own (so that its children can be killed with it)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(snippet)], start_new_session=True, stderr=subprocess.PIPE, text=True
    )


def _kill_when(process: subprocess.Popen, ready: Callable[[], bool]) -> None:
    """SIGKILL ``process`` and every process it started once ``ready()`` holds; fail if it ends or stalls first."""
    deadline = time.monotonic() + _READY_SECONDS
    while not ready():
        if process.poll() is not None:
            pytest.fail(f"the step ended (exit status {process.returncode}) before it was killed:\n{process.stderr.read()}")
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"the step did not get mid-way in {_READY_SECONDS:g} s:\n{process.stderr.read()}")
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL


def _names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def _files(directory: Path) -> list[str]:
    """Every file under ``directory``, relative to it."""
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*") if path.is_file())


def test_a_killed_download_leaves_a_staging_file_that_the_next_fetch_removes(tmp_path: Path) -> None:
    body = os.urandom(1 << 20)
    checksum = Checksum("sha256", hashlib.sha256(body).hexdigest(), "the test")
    destination = tmp_path / "downloads" / "data.tar.gz"
    with serving() as server:
        url = server.add("/data.tar.gz", body, ["stall-midway", "ok"])  # the killed fetch gets half, then silence
        process = _start(
            f"""
            from nlp_robustness.data.download import Checksum, RetryPolicy, fetch
            fetch({url!r}, {str(destination)!r}, Checksum("sha256", {checksum.hexdigest!r}, "the test"),
                  policy=RetryPolicy(timeout_seconds=60, retries=0))
            """
        )

        def half_written() -> bool:
            staged = stale_temporary_files(destination)
            return bool(staged) and staged[0].stat().st_size == len(body) // 2

        _kill_when(process, half_written)
        assert [path.stat().st_size for path in stale_temporary_files(destination)] == [len(body) // 2]
        assert not destination.exists()

        fetch(url, destination, checksum, policy=RetryPolicy(timeout_seconds=10, retries=0))
    assert destination.read_bytes() == body
    assert _names(destination.parent) == ["data.tar.gz"]


def test_a_killed_extraction_leaves_a_staging_folder_that_the_next_extraction_removes(tmp_path: Path) -> None:
    members = {"corpus/a.txt": b"first member\n" * 1000, "corpus/b.txt": b"second member\n" * 1000}
    archive = tmp_path / "corpus.tar.gz"
    archive.write_bytes(tar_archive(members))
    target = tmp_path / "extracted"
    # The real extraction, held after its first member (a hook around the copy of one member), so that the kill
    # comes mid-way through the archive.
    process = _start(
        f"""
        import time
        from nlp_robustness.data import archives
        copy_member = archives._copy_member
        def copy_then_wait(opened, member, destination):
            copy_member(opened, member, destination)
            time.sleep(60)
        archives._copy_member = copy_then_wait
        archives.extract_members({str(archive)!r}, "tar", {str(target)!r})
        """
    )

    def first_member_written() -> bool:
        staged = stale_temporary_files(target)
        return bool(staged) and _files(staged[0]) == ["corpus/a.txt"]

    _kill_when(process, first_member_written)
    assert [_files(path) for path in stale_temporary_files(target)] == [["corpus/a.txt"]]
    assert not target.exists()

    written = extract_members(archive, "tar", target)
    assert [path.read_bytes() for path in written] == list(members.values())
    assert _files(target) == sorted(members)
    assert _names(tmp_path) == ["corpus.tar.gz", "extracted"]


def _runs_in_session(session: int, command: str) -> bool:
    """Whether a process of ``session`` runs ``command`` (its name is on its command line)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == session and command.encode() in (entry / "cmdline").read_bytes():
                return True
        except OSError:  # the process ended meanwhile
            continue
    return False


@pytest.mark.skipif(importlib.util.find_spec("fairseq") is None, reason="fairseq is not installed")
def test_a_killed_binarization_leaves_a_staging_folder_that_the_next_binarization_removes(tmp_path: Path) -> None:
    sources = [" ".join("abcdefgh"[(line * 7 + word) % 8] for word in range(6)) for line in range(50)]
    targets = [" ".join("ijklmnop"[(line * 5 + word) % 8] for word in range(6)) for line in range(50)]
    data_bin = tmp_path / "models" / "tiny" / "data-bin"
    splits = {"train": (sources, targets), "valid": (sources[:5], targets[:5])}
    process = _start(
        f"""
        from nlp_robustness.systems.fairseq.binarize import binarize
        from nlp_robustness.systems.fairseq.runtime import fairseq_environment
        binarize({splits!r}, {str(data_bin)!r}, "en", "fr", joined_dictionary=True, environment=fairseq_environment(1))
        """
    )
    # Killed once fairseq-preprocess runs: it takes seconds to start, so it is killed mid-way, with the step.
    _kill_when(process, lambda: _runs_in_session(process.pid, "fairseq-preprocess"))
    assert len(stale_temporary_files(data_bin)) == 1 and not data_bin.exists()

    binarize(splits, data_bin, "en", "fr", joined_dictionary=True, environment=fairseq_environment(1))
    assert _names(data_bin.parent) == ["data-bin"]
    assert _names(data_bin) == [
        "dict.en.txt", "dict.fr.txt", "preprocess.log",
        *(f"{split}.en-fr.{language}.{kind}" for split in ("train", "valid") for language in ("en", "fr") for kind in ("bin", "idx")),
    ]
    words = [line.split()[0] for line in (data_bin / "dict.en.txt").read_text(encoding="utf-8").splitlines()]
    real_words = sorted(word for word in words if not word.startswith("madeupword"))  # fairseq pads to 8n symbols
    assert real_words == list("abcdefghijklmnop")  # one joined dictionary of both sides
    log = (data_bin / "preprocess.log").read_text(encoding="utf-8")
    assert "train.en: 50 sents, 350 tokens" in log and "valid.fr: 5 sents, 35 tokens" in log  # with end-of-sentence
