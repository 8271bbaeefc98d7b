"""Shared fixtures: where the offline data mirror and the repository are."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import MIRROR, REPOSITORY


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The offline mirror of the datasets (../shared/data beside the repository unless overridden)."""
    if not MIRROR.is_dir():
        pytest.skip(f"data mirror not found at {MIRROR} (set NLP_ROBUSTNESS_MIRROR)")
    return MIRROR


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY
