"""How the package's names print: metrics, methods, perturbation families and categories, Natural
Robustness criteria. One registry, so that a table, a figure and the profile call a thing the same.

It sits at the package's base (beside :mod:`nlp_robustness.errors`), below the layers data -> systems ->
scoring -> statistics -> studies -> outputs, because the profile study (``studies``) names its measures
with these names as well as the figures and tables (``outputs``) do. A name not listed prints as itself
(:func:`display_name`).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "INTERVAL_NOTE", "MISSING", "FAMILY_NAMES", "METHOD_DESCRIPTIONS", "METHOD_NAMES", "METRIC_NAMES", "METRIC_VARIANT_NAMES",
    "NATURAL_CRITERION_NAMES", "NATURAL_CRITERION_TITLES", "WORD_ORDER_CATEGORY_NAMES", "display_name",
    "family_name", "metric_name",
]

#: Printed for a value that does not exist (a COV of a zero mean, a mean over no segment, a system absent
#: from a branch), in every table format and in the cells of every figure: an en dash, what a typeset table
#: uses; it cannot be misread as a name.
MISSING = "\u2013"

#: Sentence-level similarity metrics (BLEU, chrF, normalised Levenshtein similarity).
METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF", "levenshtein": "Levenshtein"}

#: The metric variants of the metric-robustness branch (paper 002): sentence BLEU and the BERTScore layers.
METRIC_VARIANT_NAMES = {
    "bleu": "sentBLEU", "chrf": "chrF", "bertscore_first": "BERTScore (first layer)", "bertscore_last": "BERTScore (last layer)",
    "bertscore_best": "BERTScore (best layer)", "bertscore_mean": "BERTScore (mean of layers)",
}

#: The robustness methods: the whole pool, Algorithm 5 and Algorithm 6.
METHOD_NAMES = {"pool": "pool", "bagging": "bagging", "design_bagging": "design bagging"}

#: What each method's robustness table shows and how it was computed (the caption's middle part).
#: How a robustness table's intervals were made, by method (nlp_robustness.statistics.pool_uncertainty).
INTERVAL_NOTE = {
    "pool": "Brackets: 95 % percentile intervals (or the configured level) of a bootstrap of the pool's units "
            "(within domains, or by units shared across domains).",
    "bagging": "Brackets: intervals from the blocks as a delete-d jackknife plus the Monte-Carlo error of the block average.",
    "design_bagging": "Brackets: intervals from the blocks as a delete-d jackknife plus the Monte-Carlo error of the block average.",
}

METHOD_DESCRIPTIONS = {
    "pool": "Robustness Metrics I & II on the whole pool",
    "bagging": "Robustness Metrics by bagging (Algorithm 5): mean and variance averaged over blocks, COV from those averages",
    "design_bagging": "Robustness Metrics by design bagging (Algorithm 6): mean and variance averaged over blocks, "
    "COV from those averages",
}

#: Perturbation families (the profile's axis of a family).
FAMILY_NAMES = {"word_order": "word order", "character_attacks": "character attacks", "natural": "natural"}

#: The categories of the word-order functions (paper 004).
WORD_ORDER_CATEGORY_NAMES = {"random": "random shuffles", "pos": "PoS-tag based", "tree": "dependency-tree based"}

#: What counts as the same response under a Natural Robustness criterion: short names (tables) ...
NATURAL_CRITERION_NAMES = {"exact": "exact", "chrf": "chrF", "label": "label"}
#: ... and panel titles (figure; ``{threshold}`` is the chrF threshold).
NATURAL_CRITERION_TITLES = {"exact": "MT: same translation (normalised)", "chrf": "MT: chrF to original \u2265 {threshold:g}",
                            "label": "classifiers: same label"}


def display_name(names: Mapping[str, str], key: str) -> str:
    """``key`` as ``names`` prints it, or ``key`` itself when ``names`` does not list it."""
    return names.get(key, key)


def metric_name(metric: str) -> str:
    """A sentence metric's printed name (``bleu`` -> ``BLEU``)."""
    return display_name(METRIC_NAMES, metric)


def family_name(family: str) -> str:
    """A perturbation family's printed name (an unlisted family: its underscores as spaces)."""
    return FAMILY_NAMES.get(family, family.replace("_", " "))
