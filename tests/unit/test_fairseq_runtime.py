"""Running fairseq: command-line options, a reproducible environment, the device."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
import subprocess
import sys
from pathlib import Path

from nlp_robustness.systems.fairseq import runtime
from nlp_robustness.systems.fairseq.runtime import (
    CPU_KERNELS, MALLOC_SWITCH, TCMALLOC_NAME, capability_warning, cpu_capability, environment_record, fairseq_environment,
    option_arguments, resolve_device, tcmalloc_library,
)

torch = pytest.importorskip("torch")


def test_option_arguments() -> None:
    assert option_arguments({"lr": 0.5, "share-input-output-embed": True, "no-progress-bar": False, "x": None}) == [
        "--lr", "0.5", "--share-input-output-embed",
    ]


def test_fairseq_runs_with_fixed_threads_and_pinned_cpu_code_paths() -> None:
    forced = {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "ALL"}
    environment = fairseq_environment(3, base={"PATH": "/bin", **forced}, tcmalloc="/lib/tc.so")
    assert environment["PATH"] == "/bin"
    assert environment["OMP_NUM_THREADS"] == environment["MKL_NUM_THREADS"] == "3"
    # the pins win over the caller's environment: a machine's own choice would otherwise come through
    assert {name: environment[name] for name in CPU_KERNELS} == {
        "ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert environment["MKL_DYNAMIC"] == "FALSE"
    assert environment["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] == "1"
    unpinned = fairseq_environment(3, base={"PATH": "/bin"}, tcmalloc="/lib/tc.so", pin_cpu_kernels=False)
    assert "ATEN_CPU_CAPABILITY" not in unpinned and "ONEDNN_MAX_CPU_ISA" not in unpinned
    assert unpinned["MKL_CBWR"] == "AUTO,STRICT"  # the machine's branch, reproducibly
    assert fairseq_environment(3, base=forced, tcmalloc="/lib/tc.so", pin_cpu_kernels=False).items() >= forced.items()


@pytest.mark.skipif(sys.platform != "linux" or __import__("platform").machine() != "x86_64", reason="x86-64 levels")
def test_torch_runs_at_the_pinned_level_whatever_the_caller_forces() -> None:
    """The level reaches torch (it reads it at start-up): forced from outside it counts, pinned it does not."""
    assert cpu_capability(fairseq_environment(1, base={**_path(), "ATEN_CPU_CAPABILITY": "default"}, pin_cpu_kernels=False)) == "DEFAULT"
    assert cpu_capability(fairseq_environment(1, base={**_path(), "ATEN_CPU_CAPABILITY": "default"})) == "AVX2"
    assert cpu_capability(fairseq_environment(1, base={**_path(), "ATEN_CPU_CAPABILITY": "avx512"})) == "AVX2"


def _path() -> dict[str, str]:
    import os

    return {"PATH": os.environ.get("PATH", "")}


def test_the_record_names_allocator_pins_and_level_and_a_lower_level_is_warned_of() -> None:
    environment = fairseq_environment(1, base={}, tcmalloc="/lib/libtcmalloc_minimal.so.4")
    assert environment_record(environment, "AVX2") == {
        "allocator": "tcmalloc",
        "cpu_kernels": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2",
                        "torch_cpu_capability": "AVX2"},
    }
    assert capability_warning("AVX2", environment) is None
    warning = capability_warning("DEFAULT", environment)
    assert warning is not None and "DEFAULT, not the pinned AVX2" in warning
    assert capability_warning("AVX512", fairseq_environment(1, base={}, pin_cpu_kernels=False)) is None  # nothing asked for


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
