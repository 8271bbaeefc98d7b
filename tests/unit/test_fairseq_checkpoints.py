"""fairseq checkpoints: a good one is described, a corrupt, truncated or foreign one is named."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.checkpoints import check_checkpoint

torch = pytest.importorskip("torch")


def _checkpoint(path: Path) -> Path:
    state = {"model": {"encoder.weight": torch.zeros(3, 4), "decoder.bias": torch.zeros(5)}, "cfg": {"model": {"arch": "fconv"}}}
    torch.save(state, path)
    return path


def test_a_good_checkpoint_is_described(tmp_path: Path) -> None:
    from nlp_robustness.systems.fairseq.checkpoints import checkpoint_weights_sha256

    path = _checkpoint(tmp_path / "model.pt")
    # the digest of the weights comes from the same load (every translation report carries it)
    assert check_checkpoint(path) == {"arch": "fconv", "parameters": 17, "weights_sha256": checkpoint_weights_sha256(path)}


def test_old_style_checkpoints_with_args_are_accepted(tmp_path: Path) -> None:
    import argparse

    path = tmp_path / "old.pt"
    torch.save({"model": {"w": torch.zeros(2)}, "args": argparse.Namespace(arch="fconv_wmt_en_fr")}, path)
    assert check_checkpoint(path)["arch"] == "fconv_wmt_en_fr"


def test_corrupt_truncated_and_foreign_checkpoints_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        check_checkpoint(tmp_path / "missing.pt")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a checkpoint" * 100)
    with pytest.raises(InputError, match=r"garbage\.pt: not a readable fairseq checkpoint"):
        check_checkpoint(garbage)
    truncated = tmp_path / "truncated.pt"
    data = _checkpoint(tmp_path / "whole.pt").read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"truncated\.pt: not a readable fairseq checkpoint"):
        check_checkpoint(truncated)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    with pytest.raises(InputError, match=r"foreign\.pt: not a fairseq checkpoint"):
        check_checkpoint(foreign)
    pickled = tmp_path / "pickled.pt"
    pickled.write_bytes(pickle.dumps({"model": {}}))
    with pytest.raises(InputError, match="pickled.pt"):
        check_checkpoint(pickled)
