"""The perturbation interface every family implements, and the two outcomes of perturbing one text.

A *family* (word order, character attacks, ...) is a module, registered in
:mod:`nlp_robustness.perturbations.registry`, that defines:

``FUNCTIONS``
    ``{function name: JSON schema of its settings}`` in display order; each schema is an object with
    ``additionalProperties: false`` whose properties carry their defaults, so a config that names a
    function with ``{}`` gets every default, and an unknown or mistyped setting is a config error.
``CATEGORIES``
    ``{function name: category}`` (e.g. ``random``, ``pos``, ``tree``), used to group functions in tables
    and figures.
``OPTIONS_SCHEMA``
    JSON schema of the family's own options (e.g. which spaCy models parse the two sides).
``NEEDS_PARSE``
    Whether :func:`perturb` takes parsed segments (:class:`~nlp_robustness.perturbations.parse.ParsedSegment`,
    the workflow parses each side of the family's sample once) or plain texts.
``perturb(function, segment, settings, rng) -> Perturbed | Skipped``
    Perturb one segment (one side: source or reference) with one function. ``rng`` is seeded by the
    workflow from (config seed, family, function, test set, segment id, side), so a function's output on
    one segment never depends on any other segment, function or test set.

Optional, for families that need them:

``PERTURBED_SIDES``
    The sides it perturbs (default both); a side left out is kept as it is (character attacks attack
    the source only).
``RESOURCE_DOWNLOADS`` and ``load_context(paths)``
    Files of the dataset manifest the family reads (resource name -> download key), handed to
    ``load_context`` by name; its result is passed to ``perturb`` as a fifth argument.
``expand_functions(functions, options)`` and ``instance_category(name)``
    One function per level: each configured function becomes several (``visual`` -> ``visual-p0.1``,
    ``visual-p0.3``), which are the functions the workflow sees.
``perturb_batch(function, texts, settings, rngs, context) -> list[Perturbed | Skipped]``
    Perturb many texts of one side at once (``rngs[i]`` is the generator of ``texts[i]``; ``context`` is
    None for a family without resources): for functions that run an external program over a whole file
    (paraphrases: an Apertium round trip), whose start-up would dominate one call per text. When the
    module defines it, it is used instead of ``perturb``, for every function of the family.
``SAMPLE_GROUP``
    The name a family's seeded sample is drawn under (default: the family's own name). Families that
    share one (the natural perturbations and the paraphrases of paper 001) perturb the same records, so
    their functions can be compared record by record.

The rules, the scoring of pairs and the tables only see the derived test sets the family's outcomes are
written into; they do not know which family made them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Perturbed", "Skipped", "PerturbationResult"]


@dataclass(frozen=True)
class Perturbed:
    """A perturbed text as its tokens; the text fed to a system is the tokens joined by single spaces."""

    tokens: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


@dataclass(frozen=True)
class Skipped:
    """A segment the function cannot perturb (e.g. one noun and no verb), with the reason."""

    reason: str


PerturbationResult = Perturbed | Skipped
