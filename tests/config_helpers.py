"""Completing part of a config in a unit test as rules/common.smk completes the whole (nlp_robustness.planning)."""

from __future__ import annotations

import functools
from collections.abc import MutableMapping
from typing import Any

from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.perturbations import configuration
from nlp_robustness.studies.mt_studies import complete_mt_studies
from tests.paths import MANIFEST, MANIFEST_SCHEMA


@functools.cache
def dataset_languages() -> dict[str, tuple[str | None, str | None]]:
    """Manifest dataset -> (source, target) language, of the repository's manifest."""
    manifest = load_manifest(MANIFEST, MANIFEST_SCHEMA)
    return {key: (dataset.source_language, dataset.target_language) for key, dataset in manifest.datasets.items()}


def complete_perturbations(config: MutableMapping[str, Any]) -> None:
    """The perturbation section completed after the MT studies, whose language pairs its defaults follow."""
    complete_mt_studies(config, dataset_languages())  # idempotent: a completed section is checked again
    configuration.complete_perturbations(config)
