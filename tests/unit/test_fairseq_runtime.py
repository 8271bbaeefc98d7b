"""Running fairseq: command-line options, a reproducible environment, the device."""

from __future__ import annotations

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.runtime import fairseq_environment, option_arguments, resolve_device

torch = pytest.importorskip("torch")


def test_option_arguments() -> None:
    assert option_arguments({"lr": 0.5, "share-input-output-embed": True, "no-progress-bar": False, "x": None}) == [
        "--lr", "0.5", "--share-input-output-embed",
    ]


def test_fairseq_runs_with_fixed_threads_and_a_reproducible_mkl_path() -> None:
    environment = fairseq_environment(3, base={"PATH": "/bin", "MKL_CBWR": "COMPATIBLE"})
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
