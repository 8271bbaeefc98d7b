"""Shared fixtures: where the offline data mirror and the repository are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The offline mirror of the datasets (../shared/data beside the repository unless overridden)."""
    path = Path(os.environ.get("NLP_ROBUSTNESS_MIRROR", REPOSITORY.parent / "shared" / "data")).resolve()
    if not path.is_dir():
        pytest.skip(f"data mirror not found at {path} (set NLP_ROBUSTNESS_MIRROR)")
    return path


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY
