"""Every study the engine measures, by name: the module that reads its units.

A study module defines these functions (their files are the paths the study's rules hand over, by domain
or by role; ``options`` are the study's settings from the config):

* ``unit_keys(files, domains, options)``: the keys ``domain, unit_id`` that blocks are drawn over;
* ``units(files, domains, row, score, options)``: the units ``domain, unit_id, score`` of one row (a
  system under a metric, a classifier, ...);
* ``has_variance_components(options)``: whether a domain's value is the mean of its unit scores, so the
  engine decomposes them into between- and within-domain variance
  (:mod:`nlp_robustness.statistics.variance_components`);
* ``crossed_units(options)``: whether a unit id names the same item in every domain (a segment under every
  perturbation function), so the bootstrap of the uncertainty layer resamples ids across domains instead of
  units within each domain (:mod:`nlp_robustness.statistics.pool_uncertainty`);
* ``replicate_units(files, domains, row, score, options)``: finer units (``domain, unit_id, cluster, score``)
  whose domain means are the study's domain values, resampled by ``cluster`` in their place (the metric
  study's judgements behind each condition's tau), or None: the study's own units are resampled.
* optionally ``document_universe(files, domains, options)``: the documents (``domain, document``) every row's
  bootstrap draws, for a study whose rows are measured on different units of the same documents (the human
  study: each system rated on its own segments), so the rows stay paired.

A new study writes such a module and adds one line here; the
rule ``study_blocks``, the script ``robustness_statistics.py``, the engine and the table writers serve
it unchanged. Modules are imported on demand, so a job loads only the study it serves.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from nlp_robustness.errors import InputError

__all__ = ["STUDIES", "study_module"]

#: Study name -> the module with its ``unit_keys``, ``units``, ``has_variance_components``, ``crossed_units`` and
#: ``replicate_units``.
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
