"""The conditions and metric variants of the metric-robustness study (paper 002), and its config section.

**Conditions.** A condition is the clean references (:data:`CLEAN`, p = 0) or one attack at one level
(``<attack>-p<level>``, the names of :mod:`nlp_robustness.perturbations.character_attacks`). Every
system output of a pair is scored against the references of every condition; a level's conditions are
scored in one job (:func:`levels_of`).

**Metric variants** (the rows of the study): the sacrebleu sentence metrics (``bleu``, ``chrf``) and
BERTScore F1 at the configured layers: ``bertscore_first`` (hidden layer 1, the output of the first
transformer layer), ``bertscore_last`` (the top layer), ``bertscore_mean`` (embeddings averaged over the
layers) and ``bertscore_best`` (chosen on the other pairs: :mod:`nlp_robustness.studies.metric_attack_scoring`).

:func:`complete_metric_robustness` fills and checks the config section these are read from.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from nlp_robustness.errors import InputError

__all__ = [
    "BERTSCORE_LAYERS",
    "CLEAN",
    "complete_metric_robustness",
    "condition_attack_level",
    "conditions",
    "level_name",
    "levels_of",
    "metric_variants",
    "pair_downloads",
]

#: The condition of the unattacked references.
CLEAN = "clean"
#: BERTScore layer choices (config ``metric_robustness.bertscore.layers``).
BERTSCORE_LAYERS: tuple[str, ...] = ("first", "last", "best", "mean")


def _attacks_module() -> Any:
    from nlp_robustness.perturbations import character_attacks

    return character_attacks


def pair_downloads(pair: str, downloads: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The manifest downloads of one WMT19 pair: its reference, and its system outputs by system name
    (keys ``wmt19-<pair>-ref`` and ``wmt19-<pair>-system-<SYSTEM>``)."""
    prefix = f"wmt19-{pair}-system-"
    return f"wmt19-{pair}-ref", {key[len(prefix):]: key for key in downloads if key.startswith(prefix)}


def complete_metric_robustness(config: MutableMapping[str, Any], downloads: Sequence[str]) -> None:
    """Fill the ``metric_robustness`` section's remaining defaults and check it (in place; no-op without one).

    Raises:
        InputError: naming the first offending key.
    """
    from nlp_robustness.perturbations.configuration import fill_schema_defaults

    section = config.get("metric_robustness")
    if section is None:
        return
    attacks = _attacks_module()
    key = "metric_robustness"
    section.setdefault("attacks", {name: {} for name in attacks.FUNCTIONS})
    for attack, settings in section["attacks"].items():
        if attack not in attacks.FUNCTIONS:
            raise InputError(
                f"invalid configuration at key '{key}.attacks.{attack}': unknown attack (known: {', '.join(attacks.FUNCTIONS)})"
            )
        fill_schema_defaults(settings, attacks.FUNCTIONS[attack], f"{key}.attacks.{attack}")
    try:  # the family's own check: every level must name its condition uniquely (p written with :g)
        attacks.expand_functions(section["attacks"], {"levels": section["levels"]})
    except InputError as error:
        raise InputError(f"invalid configuration at key '{key}.levels': {error}") from None
    for pair in section["pairs"]:
        reference, systems = pair_downloads(pair, downloads)
        if reference not in downloads or not systems:
            raise InputError(
                f"invalid configuration at key '{key}.pairs': the dataset manifest has no {reference} download or no "
                f"wmt19-{pair}-system-* downloads for pair {pair}"
            )
    if section["darr"] not in downloads:
        raise InputError(f"invalid configuration at key '{key}.darr': no download {section['darr']!r} in the dataset manifest")
    if "best" in section["bertscore"]["layers"] and len(section["pairs"]) < 2:
        raise InputError(
            f"invalid configuration at key '{key}.bertscore.layers': 'best' chooses a pair's layer on the other pairs, "
            "so it needs two pairs or more (add a pair or drop 'best')"
        )
    if not section["sentence_metrics"] and not section["bertscore"]["layers"]:
        raise InputError(f"invalid configuration at key '{key}.sentence_metrics': no metric to evaluate")
    names = conditions(section)
    section.setdefault("leave_out", list(names))
    for index, name in enumerate(section["leave_out"]):
        if name not in names:
            raise InputError(f"invalid configuration at key '{key}.leave_out[{index}]': '{name}' is not a condition (known: {', '.join(names)})")
    if section["epsilon"]["stop"] < section["epsilon"]["start"]:
        raise InputError(f"invalid configuration at key '{key}.epsilon.stop': must be >= start")


def conditions(section: Mapping[str, Any]) -> list[str]:
    """Every condition: clean, then each attack at each level (attack-major, levels in config order)."""
    attacks = _attacks_module()
    return [CLEAN] + [attacks.instance_name(attack, p) for attack in section["attacks"] for p in section["levels"]]


def condition_attack_level(condition: str) -> tuple[str, float]:
    """``(attack, p)`` of a condition; ``("none", 0.0)`` for the clean references."""
    if condition == CLEAN:
        return "none", 0.0
    return _attacks_module().parse_instance(condition)


def level_name(p: float) -> str:
    """The file name of one level's scores: ``p0`` (clean), ``p0.1``, ..."""
    return f"p{p:g}"


def levels_of(section: Mapping[str, Any]) -> dict[str, list[str]]:
    """Level name -> the conditions scored at that level (one scoring job each: editing a level reruns only its jobs)."""
    grouped: dict[str, list[str]] = {level_name(0.0): [CLEAN]}
    for condition in conditions(section)[1:]:
        grouped.setdefault(level_name(condition_attack_level(condition)[1]), []).append(condition)
    return grouped


def metric_variants(section: Mapping[str, Any]) -> list[str]:
    """The study's rows: sentence metrics, then ``bertscore_<layer>`` for every configured layer choice."""
    return list(section["sentence_metrics"]) + [f"bertscore_{layer}" for layer in section["bertscore"]["layers"]]
