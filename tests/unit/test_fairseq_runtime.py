"""Running fairseq: command-line options, a reproducible environment, the device."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
import subprocess
import sys
from pathlib import Path

from nlp_robustness.systems.fairseq import runtime
from nlp_robustness.systems.fairseq.runtime import (
    MALLOC_SWITCH, TCMALLOC_NAME, fairseq_environment, option_arguments, resolve_device, tcmalloc_library,
)

torch = pytest.importorskip("torch")


def test_option_arguments() -> None:
    assert option_arguments({"lr": 0.5, "share-input-output-embed": True, "no-progress-bar": False, "x": None}) == [
        "--lr", "0.5", "--share-input-output-embed",
    ]


def test_fairseq_runs_with_fixed_threads_and_a_reproducible_mkl_path() -> None:
    environment = fairseq_environment(3, base={"PATH": "/bin", "MKL_CBWR": "COMPATIBLE"}, tcmalloc="/lib/tc.so")
    assert environment["PATH"] == "/bin"
    assert environment["OMP_NUM_THREADS"] == environment["MKL_NUM_THREADS"] == "3"
    assert environment["MKL_CBWR"] == "AUTO,STRICT" and environment["MKL_DYNAMIC"] == "FALSE"
    assert environment["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"


def test_device_resolution() -> None:
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(InputError, match="device must be one of"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no GPU"):
            resolve_device("cuda")


def test_tcmalloc_is_preloaded_once_after_what_was_there() -> None:
    environment = fairseq_environment(1, base={"LD_PRELOAD": "/lib/other.so"}, tcmalloc="/lib/tc.so")
    assert environment["LD_PRELOAD"] == "/lib/other.so /lib/tc.so"
    assert int(environment["TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD"]) >= 1 << 40  # no report lines in fairseq's output
    assert fairseq_environment(1, base=environment, tcmalloc="/lib/tc.so")["LD_PRELOAD"] == "/lib/other.so /lib/tc.so"


def test_the_switch_keeps_glibc_and_a_bad_value_is_named() -> None:
    assert "LD_PRELOAD" not in fairseq_environment(1, base={MALLOC_SWITCH: "system"}, tcmalloc="/lib/tc.so")
    with pytest.raises(InputError, match=MALLOC_SWITCH):
        fairseq_environment(1, base={MALLOC_SWITCH: "jemalloc"}, tcmalloc="/lib/tc.so")


def test_tcmalloc_asked_for_by_name_and_missing_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "tcmalloc_library", lambda prefix=None: None)
    assert "LD_PRELOAD" not in fairseq_environment(1, base={})  # not asked for: glibc's allocator
    with pytest.raises(InputError, match=f"{MALLOC_SWITCH}=tcmalloc.*{TCMALLOC_NAME}"):
        fairseq_environment(1, base={MALLOC_SWITCH: "tcmalloc"})


def test_tcmalloc_is_found_in_a_conda_env_first(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / TCMALLOC_NAME).write_bytes(b"")
    assert tcmalloc_library(tmp_path) == str(tmp_path / "lib" / TCMALLOC_NAME)


def test_the_installed_tcmalloc_is_what_fairseq_processes_run_with() -> None:
    """``make setup`` installs it; a process started with the environment has it mapped."""
    library = tcmalloc_library()
    assert library is not None, "make setup installs tcmalloc (libtcmalloc-minimal4)"
    maps = subprocess.run(
        [sys.executable, "-c", "print(open('/proc/self/maps').read())"], env=fairseq_environment(1),
        capture_output=True, text=True, check=True,
    ).stdout
    assert TCMALLOC_NAME in maps
    assert TCMALLOC_NAME not in subprocess.run(
        [sys.executable, "-c", "print(open('/proc/self/maps').read())"], env=fairseq_environment(1, base={MALLOC_SWITCH: "system"}),
        capture_output=True, text=True, check=True,
    ).stdout
