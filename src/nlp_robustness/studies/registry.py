"""Every study the engine measures, by name: the module that reads its units.

A study module defines these functions (their files are the paths the study's rules hand over, by domain
or by role; ``options`` are the study's settings from the config):

* ``unit_keys(files, domains, options)``: the keys ``domain, unit_id`` that blocks are drawn over;
* ``units(files, domains, row, score, options)``: the units ``domain, unit_id, score`` of one row (a
  system under a metric, a classifier, ...);
* ``has_variance_components(options)``: whether a domain's value is the mean of its unit scores, so the
  engine decomposes them into between- and within-domain variance
  (:mod:`nlp_robustness.statistics.variance_components`);
* ``resampling_design(files, domains, row, score, options)``: what the bootstrap of the uncertainty layer draws
  of a row, one :class:`~nlp_robustness.statistics.study_design.StudyDesign`: the units or finer replicate units
  (the metric study's judgements behind each condition's tau), each unit's cluster (itself, its document, its
  unit id), the universe of documents every row draws from (the human study: each system rated on its own
  segments of the same documents), and whether clusters are crossed across domains (a segment under every
  perturbation function) or nested in one. Its ``crossed`` must depend on the options alone: the plan asks with
  ``files`` None, before any file exists, to check ``uncertainty.resample_domains``; the design's tables are
  then not read (left None).

A new study writes such a module and adds one line here; the
rule ``study_blocks``, the script ``robustness_statistics.py``, the engine and the table writers serve
it unchanged. Modules are imported on demand, so a job loads only the study it serves.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from nlp_robustness.errors import InputError

__all__ = ["STUDIES", "study_module"]

#: Study name -> the module with its ``unit_keys``, ``units``, ``has_variance_components`` and ``resampling_design``.
STUDIES: dict[str, str] = {
    "domains": "nlp_robustness.studies.domains",  # MT test sets as domains, sentence scores
    "human": "nlp_robustness.studies.human",  # human-rated domains, MQM and sentence scores
    "sentiment": "nlp_robustness.studies.sentiment",  # review domains, one classifier a row
    "perturbations": "nlp_robustness.studies.perturbations",  # perturbation functions as domains, beta1
    "metric_attacks": "nlp_robustness.studies.metric_attacks",  # attack conditions as domains, DARR agreement of a metric
    "natural_robustness": "nlp_robustness.studies.natural_robustness",  # perturbation types as domains, same response or not
}


def study_module(study: str) -> ModuleType:
    """The module of ``study`` (it has ``unit_keys``, ``units`` and ``has_variance_components``).

    Raises:
        InputError: No such study.
    """
    if study not in STUDIES:
        raise InputError(f"unknown study {study!r} (known: {', '.join(STUDIES)})")
    return importlib.import_module(STUDIES[study])
