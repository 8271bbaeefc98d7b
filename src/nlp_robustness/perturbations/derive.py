"""From a test set to its perturbed versions: the seeded sample, and one perturbed test set per function.

A perturbed test set is a test-set table (:data:`~nlp_robustness.data.testsets.TABLE_COLUMNS`) that the
translation and scoring rules use like any other: its ``source`` is the perturbed source and its
``reference`` the gold reference, so the sentence scores of its translations are beta1. Beside them it
keeps what the other metrics need, so each is a pure function of files on disk: the test set and the
original segment id of every row, the original source, the source as the tokens that were permuted
(``source_tokens``: alpha compares the perturbed source with it, so the tokenisation alone costs
nothing), and the perturbed reference (beta2). A family that perturbs parsed references writes the
perturbed reference with the gold reference's spacing (:mod:`~nlp_robustness.perturbations.token_spacing`:
``d'endroit`` stays one word while its tokens stay together), so beta2 and beta1 are scored against
references of the same form and an unchanged order scores beta2 = beta1.

A segment is kept when the function perturbs both its source and its reference; any other sampled
segment is recorded, with the reason, in the function's status table, never silently dropped.

The sample is :func:`nlp_robustness.sampling.sample_segments`; every random choice is seeded from (seed,
family, function, test set, segment id, side) (:func:`nlp_robustness.sampling.segment_rng`): adding a test
set or a function changes no other perturbed text, and the result does not depend on the order or the
number of jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.parse import ParsedSegment
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.perturbations.token_spacing import join_with_gold_spacing
from nlp_robustness.sampling import segment_rng

__all__ = [
    "DERIVED_COLUMNS", "SIDES", "STATUS_COLUMNS", "derive_for_job", "derive_testset", "perturbed_sides", "sample_group",
]

#: Columns of a perturbed test set: the test-set table's, then what the pair metrics read.
DERIVED_COLUMNS: tuple[str, ...] = (
    "segment_id", "doc_id", "source", "reference",
    "testset", "original_source", "source_tokens", "perturbed_reference",
)
#: Columns of a function's status table: one row per sampled segment.
STATUS_COLUMNS: tuple[str, ...] = ("testset", "segment_id", "kept", "reason")
#: The two sides a function perturbs, and the test-set column each is read from.
SIDES: dict[str, str] = {"source": "source", "reference": "reference"}


def sample_group(module: ModuleType, family: str) -> str:
    """The name the family's sample is drawn under: ``module.SAMPLE_GROUP``, else the family's name."""
    return getattr(module, "SAMPLE_GROUP", family)


def perturbed_sides(module: ModuleType) -> tuple[str, ...]:
    """The sides a family perturbs: both (word order), or the source only (character attacks: the
    reference is left as it is, so beta2 equals beta1)."""
    return tuple(getattr(module, "PERTURBED_SIDES", tuple(SIDES)))


def _perturb_side(
    module: ModuleType, function: str, settings: Mapping[str, Any], text: str,
    parsed: ParsedSegment | None, rng: np.random.Generator, context: Any,
) -> Perturbed | Skipped:
    if module.NEEDS_PARSE:
        if parsed is None or not parsed.tokens:
            return Skipped("no tokens")
        return module.perturb(function, parsed, settings, rng, context)
    return module.perturb(function, text, settings, rng, context)


def _perturb_batches(
    module: ModuleType, family: str, function: str, settings: Mapping[str, Any], samples: Mapping[str, pd.DataFrame],
    sides: tuple[str, ...], seed: int, context: Any,
) -> dict[str, dict[tuple[str, str], Perturbed | Skipped]] | None:
    """Every sampled text of every perturbed side through ``module.perturb_batch`` at once (None: the family
    perturbs text by text). Each text keeps its own generator, so the outcome is the one a call per text
    would give, whatever else is in the batch."""
    if not hasattr(module, "perturb_batch") or module.NEEDS_PARSE:
        return None
    outcomes: dict[str, dict[tuple[str, str], Perturbed | Skipped]] = {}
    for side in sides:
        keys = [(testset, str(segment_id)) for testset, sample in samples.items() for segment_id in sample["segment_id"]]
        texts = [text for sample in samples.values() for text in sample[SIDES[side]]]
        rngs = [segment_rng(seed, family, function, testset, segment_id, side) for testset, segment_id in keys]
        results = module.perturb_batch(function, texts, settings, rngs, context)
        if len(results) != len(texts):
            raise InputError(f"perturbation {family}/{function} returned {len(results)} results for {len(texts)} texts")
        outcomes[side] = dict(zip(keys, results))
    return outcomes


def _tokens_text(module: ModuleType, text: str, parsed: ParsedSegment | None) -> str:
    """The text as the family's tokens joined by spaces: what a perturbation permutes."""
    if module.NEEDS_PARSE:
        return " ".join(parsed.words()) if parsed is not None else ""
    return text


def _reference_text(
    module: ModuleType, result: Perturbed, reference: str, parsed: ParsedSegment | None, perturbed: bool, where: str,
) -> str:
    """The perturbed reference as beta2 reads it: in the gold's form for a parsed, perturbed reference (its
    tokens with the gold's spacing), else the text as it is (a reference left alone joins back byte for byte)."""
    if perturbed and module.NEEDS_PARSE and parsed is not None:
        return join_with_gold_spacing(result.tokens, parsed.words(), reference, where)
    return result.text


def derive_testset(
    module: ModuleType,
    family: str,
    function: str,
    settings: Mapping[str, Any],
    samples: Mapping[str, pd.DataFrame],
    parses: Mapping[str, Mapping[str, Mapping[str, ParsedSegment]]] | None,
    seed: int,
    context: Any = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Perturb the sampled segments of every test set (``samples``: test set -> sampled rows) with one function.

    ``parses`` maps test set -> side -> segment id -> parse (families that need them, for the sides they
    perturb; a segment without tokens has no entry). ``context`` is what the family loaded from its resource files
    (``module.load_context``), for families that have some. A side the family does not perturb
    (:func:`perturbed_sides`) is kept as it is. Returns the perturbed test set (:data:`DERIVED_COLUMNS`, kept segments in
    test-set then segment order) and the status table (:data:`STATUS_COLUMNS`, every sampled segment).

    Raises:
        InputError: The function keeps no segment at all (nothing to translate).
    """
    rows: list[dict[str, str]] = []
    status: list[dict[str, Any]] = []
    sides = perturbed_sides(module)
    batched = _perturb_batches(module, family, function, settings, samples, sides, seed, context)
    for testset, sample in samples.items():
        for record in sample.itertuples(index=False):
            segment_id = str(record.segment_id)
            results: dict[str, Perturbed | Skipped] = {}
            parsed: dict[str, ParsedSegment | None] = {}
            for side, column in SIDES.items():
                parsed[side] = parses[testset].get(side, {}).get(segment_id) if module.NEEDS_PARSE else None
                if side not in sides:
                    results[side] = Perturbed(tuple(getattr(record, column).split(" ")))  # joins back byte for byte
                    continue
                if batched is not None:
                    results[side] = batched[side][(testset, segment_id)]
                    continue
                rng = segment_rng(seed, family, function, testset, segment_id, side)
                results[side] = _perturb_side(module, function, settings, getattr(record, column), parsed[side], rng, context)
            reasons = [f"{side}: {result.reason}" for side, result in results.items() if isinstance(result, Skipped)]
            status.append({"testset": testset, "segment_id": segment_id, "kept": not reasons, "reason": "; ".join(reasons)})
            if reasons:
                continue
            rows.append({
                "segment_id": segment_id,
                "doc_id": record.doc_id,
                "source": results["source"].text,
                "reference": record.reference,
                "testset": testset,
                "original_source": record.source,
                "source_tokens": _tokens_text(module, record.source, parsed["source"]),
                "perturbed_reference": _reference_text(
                    module, results["reference"], record.reference, parsed["reference"], "reference" in sides,
                    f"{family}/{function}: reference of segment {segment_id} of {testset}",
                ),
            })
    if not rows:
        raise InputError(
            f"perturbation {family}/{function} kept none of the {len(status)} sampled segments of "
            f"{', '.join(samples)}: raise the family's sample_size or drop the function"
        )
    return pd.DataFrame(rows, columns=list(DERIVED_COLUMNS)), pd.DataFrame(status, columns=list(STATUS_COLUMNS))


def derive_for_job(
    job: Mapping[str, Any], samples: Mapping[str, pd.DataFrame],
    parses: Mapping[str, Mapping[str, Mapping[str, ParsedSegment]]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`derive_testset` as a perturb job of the workflow describes it: ``job`` names the ``family``,
    ``function``, ``settings`` and ``seed``, and, for a family with resource files, their paths under
    ``resources`` (handed to the family's ``load_context``)."""
    module = family_module(job["family"])
    context = module.load_context(job["resources"]) if "resources" in job else None
    return derive_testset(module, job["family"], job["function"], job["settings"], samples, parses, job["seed"], context)
