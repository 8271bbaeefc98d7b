"""Every registered study module offers the two readers the engine's rules call and its one resampling method."""

from __future__ import annotations

import inspect

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.studies.registry import STUDIES, study_module


@pytest.mark.parametrize("study", list(STUDIES))
def test_study_modules_define_unit_keys_and_units(study: str) -> None:
    module = study_module(study)
    assert list(inspect.signature(module.unit_keys).parameters) == ["files", "domains", "options"]
    assert list(inspect.signature(module.units).parameters) == ["files", "domains", "row", "score", "options"]
    # how the study is resampled is one method, and nothing beside it
    assert list(inspect.signature(module.resampling_design).parameters) == ["files", "domains", "row", "score", "options"]
    assert not any(hasattr(module, name) for name in ("crossed_units", "replicate_units", "document_universe"))


def test_unknown_study_is_named() -> None:
    with pytest.raises(InputError, match="unknown study 'wordorder'"):
        study_module("wordorder")
