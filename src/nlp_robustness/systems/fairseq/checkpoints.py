"""A fairseq model's files (a *model bundle*) and the check that its checkpoint is one, before fairseq loads it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from nlp_robustness.errors import InputError

__all__ = ["ModelBundle", "check_checkpoint", "checkpoint_weights_sha256", "weights_sha256"]


def weights_sha256(state: Mapping[str, Any]) -> str:
    """sha256 of a state dict's tensors: names, dtypes, shapes and bytes, in sorted name order.

    A checkpoint file is not byte-stable (it holds the run's configuration, paths included), its weights
    are: two trainings with bit-identical weights have the same digest, whatever else the files hold.
    """
    import torch

    digest = hashlib.sha256()
    for name in sorted(state):
        value = state[name]
        digest.update(name.encode("utf-8") + b"\0")
        if isinstance(value, torch.Tensor):
            tensor = value.detach().cpu().contiguous()
            digest.update(f"{tensor.dtype}{tuple(tensor.shape)}".encode("ascii") + b"\0")
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            digest.update(repr(value).encode("utf-8") + b"\0")
    return digest.hexdigest()


def checkpoint_weights_sha256(path: str | os.PathLike[str]) -> str:
    """:func:`weights_sha256` of a fairseq checkpoint's model weights (its ``model`` state dict)."""
    import torch

    # fairseq checkpoints hold argparse/omegaconf objects; only the workflow's own or checksum-verified ones come here
    return weights_sha256(torch.load(path, map_location="cpu", weights_only=False)["model"])


def check_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a fairseq checkpoint on the CPU to check it is one, before fairseq's CLI sees it.

    Returns:
        A short description: fairseq architecture, number of parameters and ``weights_sha256``
        (:func:`weights_sha256` of its weights, from the same load).

    Raises:
        InputError: The file is missing, truncated or corrupt, or is not a fairseq checkpoint (names the file).
    """
    import pickle
    import zipfile

    import torch

    if not Path(path).is_file():
        raise InputError(f"fairseq checkpoint not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except (RuntimeError, EOFError, OSError, ValueError, pickle.UnpicklingError, zipfile.BadZipFile, AttributeError) as error:
        raise InputError(f"{path}: not a readable fairseq checkpoint (corrupt or truncated?): {error}") from None
    if not isinstance(state, dict) or "model" not in state or not isinstance(state["model"], Mapping):
        raise InputError(f"{path}: not a fairseq checkpoint (no 'model' state dict)")
    cfg = state.get("cfg")
    arch = None
    if cfg is not None and "model" in cfg and cfg["model"] is not None:
        arch = getattr(cfg["model"], "arch", None) or (cfg["model"].get("arch") if isinstance(cfg["model"], Mapping) else None)
    elif state.get("args") is not None:  # checkpoints of fairseq < 0.10 (the published WMT'14 model)
        arch = getattr(state["args"], "arch", None)
    if arch is None:
        raise InputError(f"{path}: not a fairseq checkpoint (no model configuration)")
    parameters = sum(int(tensor.numel()) for tensor in state["model"].values() if hasattr(tensor, "numel"))
    return {"arch": str(arch), "parameters": parameters, "weights_sha256": weights_sha256(state["model"])}


@dataclass(frozen=True)
class ModelBundle:
    """Everything needed to translate with one model."""

    checkpoint: str
    source_dictionary: str
    target_dictionary: str
    bpe_codes: str
    source_language: str = "en"
    target_language: str = "fr"

    def check(self) -> dict[str, Any]:
        """Check every file exists and the checkpoint loads; returns :func:`check_checkpoint`'s description."""
        for role in ("source_dictionary", "target_dictionary", "bpe_codes"):
            if not Path(getattr(self, role)).is_file():
                raise InputError(f"model file missing ({role.replace('_', ' ')}): {getattr(self, role)}")
        return check_checkpoint(self.checkpoint)
