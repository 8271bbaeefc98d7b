"""Natural Robustness (paper 001): identity test sets, the chrF criterion's sensitivity and the circular pairs.

**Identity test sets, one per record sample.** The families of ``natural_robustness.families`` that draw
their records as one seeded sample (the same sample group, ``sample_size``, test sets and parts: the
natural, paraphrase and structure families draw under ``natural_robustness``) perturb the same records
in the same layout, so they share one identity test set per part (:func:`identity_samples`): the sampled
records unperturbed, in the order of the perturbed test sets (:func:`identity_testset`), named
``perturbed/<sample>/identity/<part>`` after the sample, not a family. Every system translates it once
(it is a test set: the same translate rules, in the job of the sample's first family); a family that
samples differently gets its own. Each perturbation is compared with the record's translation there,
among the same neighbours (why: :mod:`nlp_robustness.studies.natural_robustness_responses`).

**Per-type controls.** A type with few perturbations (fewer than ``natural_robustness.type_noise_floor_below``,
by default :data:`~nlp_robustness.statistics.natural_robustness.FEW_PERTURBATIONS`, the count below which its
interval is marked conservative) sits among other neighbours in its perturbed test set than in the identity
test set, so the shared control does not bound its noise. Its control test set
``perturbed/<family>/<type>/identity/<part>`` (:func:`type_control`) holds the type's records unperturbed in
its perturbed test set's order; larger types' control test sets are empty (which types are small is only
known once they are perturbed: the rule that writes them is a checkpoint, and only non-empty ones are
translated, one job each). The record's translation there against the one in the identity test set is the
type's own noise floor (response type ``identity/<type>``).

**Thresholds.** The ``chrf`` criterion counts a response as unchanged when the sentence chrF of the new
translation against the original one is at least a threshold (``same_response.chrf_threshold``, 80 by
default). :func:`threshold_scores` scores every MT system and perturbation type at each threshold of
``natural_robustness.chrf_thresholds`` on the same records and with the same intervals as the scores
(:func:`~nlp_robustness.studies.natural_robustness_scores.natural_scores`), from the chrF the responses tables hold.

**Circular pairs.** A round-trip paraphrase (a family function with a ``modes`` setting: the Apertium modes
of its round trip) that shares a mode with an Apertium system (config ``systems.<name>.modes``, kind
``apertium``) is made by the engine under test: the system's score on that type is circular
(:func:`circular_pairs`); the tables mark it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.perturbations.configuration import DERIVED_PREFIX, parts
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, sample_group
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.statistics.natural_robustness import same_chrf
from nlp_robustness.studies.natural_robustness_responses import IDENTITY
from nlp_robustness.studies.natural_robustness_scores import SCORE_COLUMNS, natural_scores

__all__ = [
    "THRESHOLD_COLUMNS", "IdentitySample", "circular_pairs", "identity_samples", "identity_testset", "identity_testsets",
    "read_control", "threshold_scores", "type_control", "type_control_testset", "type_controls", "type_samples",
]

#: Columns of the threshold table: the chrF threshold, then the score table's.
THRESHOLD_COLUMNS = ("threshold", *SCORE_COLUMNS)


@dataclass(frozen=True)
class IdentitySample:
    """One record sample of the natural-robustness families, and its identity test sets.

    Attributes:
        name: The sample's name: its sample group, or ``<group>-<first family>`` where families of one group
            sample differently. Its identity test sets are ``perturbed/<name>/identity/<part>`` and its
            control's responses have the type ``identity/<name>``.
        families: The families whose records are this sample, in ``natural_robustness.families`` order; the
            first one's sample files are read and its translation job translates the identity test sets.
        parts: Part -> the test sets it holds (:func:`~nlp_robustness.perturbations.configuration.parts`).
    """

    name: str
    families: tuple[str, ...]
    parts: Mapping[str, Sequence[str]]

    def testset(self, part: str) -> str:
        """The name of the identity test set of one part."""
        return f"{DERIVED_PREFIX}/{self.name}/{IDENTITY}/{part}"

    def testsets(self) -> list[str]:
        """The names of its identity test sets, one per part."""
        return [self.testset(part) for part in self.parts]


def _sample_key(spec: Mapping[str, Any], group: str) -> tuple[Any, ...]:
    """What a family's records and their layout depend on besides the (shared) seed: the group it samples under
    (moot when it takes every segment), its ``sample_size``, and its parts with their test sets in order."""
    size = spec.get("sample_size")
    return (group if size is not None else None, size, tuple((part, tuple(names)) for part, names in parts(spec).items()))


def identity_samples(
    section: Mapping[str, Any] | None, families: Mapping[str, Mapping[str, Any]], groups: Mapping[str, str] | None = None,
) -> dict[str, IdentitySample]:
    """The distinct record samples of the section's families (name -> :class:`IdentitySample`), in family order.

    Families whose records are one seeded sample -- the same sample group (the family module's
    ``SAMPLE_GROUP``, else its name; moot with ``sample_size: null``), ``sample_size``, test sets and parts
    (``derived_testsets``) -- share one; the others each get their own.

    Args:
        section: The ``natural_robustness`` section (None or empty: no samples).
        families: ``perturbations.families``, completed.
        groups: Family -> its sample group (default: :func:`~nlp_robustness.perturbations.derive.sample_group`
            of its module).

    Raises:
        InputError: A sample's name is also a perturbation type's (their controls' response types would clash).
    """
    if not section:
        return {}
    keys: dict[tuple[Any, ...], list[str]] = {}
    group_of: dict[str, str] = {}
    for family in section["families"]:
        group = (groups or {}).get(family) or sample_group(family_module(family), family)
        group_of[family] = group
        keys.setdefault(_sample_key(families[family], group), []).append(family)
    per_group: dict[str, int] = {}
    for members in keys.values():
        per_group[group_of[members[0]]] = per_group.get(group_of[members[0]], 0) + 1
    samples: dict[str, IdentitySample] = {}
    types = {function for family in section["families"] for function in families[family]["functions"]}
    for members in keys.values():
        group = group_of[members[0]]
        name = group if per_group[group] == 1 else f"{group}-{members[0]}"
        if name in types:
            raise InputError(
                f"invalid configuration at key 'natural_robustness.families': the record sample of {', '.join(members)} is "
                f"named '{name}', which is also a perturbation type; rename the function"
            )
        samples[name] = IdentitySample(name, tuple(members), dict(parts(families[members[0]])))
    return samples


def type_samples(samples: Mapping[str, IdentitySample], types: Mapping[str, str]) -> dict[str, str]:
    """Perturbation type -> the name of the record sample whose identity test set its perturbations are compared with.

    Args:
        samples: :func:`identity_samples`.
        types: Type -> its family.
    """
    family_sample = {family: name for name, sample in samples.items() for family in sample.families}
    return {perturbation_type: family_sample[family] for perturbation_type, family in types.items()}


def type_control_testset(family: str, function: str, part: str) -> str:
    """The name of one part of a type's control test set: ``perturbed/<family>/<type>/identity/<part>``."""
    return f"{DERIVED_PREFIX}/{family}/{function}/{IDENTITY}/{part}"


def type_controls(section: Mapping[str, Any] | None, families: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Type -> part -> the name of its control test set, for every type of the section's families; none
    without a section or with ``type_noise_floor_below: 0``. Every type has one (empty unless the type turns
    out to have fewer perturbations than the threshold: :func:`type_control`)."""
    if not section or not section.get("type_noise_floor_below"):
        return {}
    return {
        function: {part: type_control_testset(family, function, part) for part in parts(families[family])}
        for family in section["families"] for function in families[family]["functions"]
    }


def identity_testsets(
    section: Mapping[str, Any] | None, families: Mapping[str, Mapping[str, Any]], groups: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Family -> the identity test sets its translation job translates besides its perturbed ones: those of the
    samples it is the first family of, so each is translated once (none without a ``natural_robustness``
    section). The types' control test sets are translated one job each (which are needed is known only once
    they are written: :func:`type_control`)."""
    if not section:
        return {}
    testsets: dict[str, list[str]] = {family: [] for family in section["families"]}
    for sample in identity_samples(section, families, groups).values():
        testsets[sample.families[0]] += sample.testsets()
    return testsets


def identity_testset(samples: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The identity test set of one part (:data:`~nlp_robustness.perturbations.derive.DERIVED_COLUMNS`):
    every sampled segment unperturbed, in the order a perturbed test set of the part lists its kept
    segments (test set, then sample order), so each original is translated among the same neighbours as
    its perturbed versions (``samples``: test set -> its sample table)."""
    frames = [
        pd.DataFrame({
            "segment_id": table["segment_id"].astype(str).to_numpy(), "doc_id": table["doc_id"].astype(str).to_numpy(),
            "source": table["source"].to_numpy(), "reference": table["reference"].to_numpy(), "testset": testset,
            "original_source": table["source"].to_numpy(), "source_tokens": table["source"].to_numpy(),
            "perturbed_reference": table["reference"].to_numpy(),
        })
        for testset, table in samples.items()
    ]
    return pd.concat(frames, ignore_index=True)[list(DERIVED_COLUMNS)]


def read_control(path: str) -> pd.DataFrame:
    """A control test set (:func:`type_control`), which may be empty (header only), unlike a test set."""
    with open(path, encoding="utf-8") as handle:
        rows = sum(1 for _ in zip(range(2), handle))
    if rows < 2:
        return pd.DataFrame(columns=list(DERIVED_COLUMNS), dtype=str)
    return read_table(path, DERIVED_COLUMNS, "control test set")


def type_control(perturbed: Mapping[str, pd.DataFrame], part: str, below: int) -> pd.DataFrame:
    """One part of a type's control test set (:data:`~nlp_robustness.perturbations.derive.DERIVED_COLUMNS`).

    When the type has fewer than ``below`` perturbations over all its parts: the part's perturbed records
    unperturbed (source and tokens the original source, the reference unperturbed), in the order and so
    among the same neighbours as in its perturbed test set; otherwise empty (the shared identity control
    bounds its noise).

    Args:
        perturbed: Part -> the type's perturbed test set of that part (every part of the type).
        part: The part to write.
        below: ``natural_robustness.type_noise_floor_below``.
    """
    if part not in perturbed:
        raise KeyError(f"part {part!r} is not one of the type's parts ({', '.join(perturbed)})")
    table = perturbed[part]
    if sum(len(frame) for frame in perturbed.values()) >= below:
        return pd.DataFrame(columns=list(DERIVED_COLUMNS), dtype=str)
    control = table[list(DERIVED_COLUMNS)].copy().reset_index(drop=True)
    control["source"] = control["original_source"]
    control["source_tokens"] = control["original_source"]
    control["perturbed_reference"] = control["reference"]
    return control


def circular_pairs(
    types: Mapping[str, str], families: Mapping[str, Mapping[str, Any]], systems: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[str]]:
    """Perturbation type -> the Apertium systems that share a mode with its round trip (types without any left out).

    Args:
        types: Type (function) -> its family.
        families: ``perturbations.families`` (each with ``functions``: function -> settings).
        systems: ``systems`` of the config (``kind``, and ``modes`` for Apertium).
    """
    circular: dict[str, list[str]] = {}
    for perturbation_type, family in types.items():
        # a family that runs Apertium says which modes a function uses (paraphrase.round_trip_modes); others run none
        modes_of = getattr(family_module(family), "round_trip_modes", None)
        settings = families[family]["functions"].get(perturbation_type) or {}
        modes = set(modes_of(perturbation_type, settings)) if modes_of else set()
        shared = [name for name, spec in systems.items()
                  if spec.get("kind") == "apertium" and modes & set(spec.get("modes") or ())]
        if shared:
            circular[perturbation_type] = shared
    return circular


def threshold_scores(
    records: Mapping[str, pd.DataFrame], responses: Mapping[str, pd.DataFrame], types: Mapping[str, str],
    thresholds: Sequence[float], sizes: Sequence[int | None], bootstrap: Mapping[str, Any], seed: int,
    interval: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The chrF criterion's score at every threshold (:data:`THRESHOLD_COLUMNS`), MT systems only.

    Args:
        records: ``{"mt": records}`` as for :func:`~nlp_robustness.studies.natural_robustness_scores.natural_scores`.
        responses: MT system -> its responses table (with ``chrf``); identity-control rows are scored too,
            so each threshold has its noise floor.
        thresholds: chrF thresholds (0-100).
    """
    frames = []
    for threshold in thresholds:
        rows = {}
        for system, table in responses.items():
            rows[system] = table.assign(same_chrf=same_chrf(pd.to_numeric(table["chrf"]).to_numpy(), threshold))
        scores = natural_scores(records, {"mt": rows}, types, sizes, bootstrap, seed, interval)
        scores = scores[scores["criterion"] == "chrf"]
        scores.insert(0, "threshold", float(threshold))
        frames.append(scores)
    return pd.concat(frames, ignore_index=True)[list(THRESHOLD_COLUMNS)]


