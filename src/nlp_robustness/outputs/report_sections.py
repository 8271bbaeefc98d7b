"""The sections of the HTML report (``snakemake --report``), in reading order.

Snakemake's report lists its categories alphabetically, so every section name starts with its position:
the robustness profile first, then one section per branch, then the data and systems. Every ``report()``
marker of the workflow names one of these (through :func:`family_section` for perturbation families).
"""

from __future__ import annotations

__all__ = ["SECTIONS", "PROFILE", "DOMAINS", "SENTIMENT", "HUMAN", "WORD_ORDER", "CHARACTER_ATTACKS", "NATURAL",
           "METRIC_ROBUSTNESS", "DATA", "BENCHMARKS", "family_section"]

PROFILE = "1. Robustness profile"
DOMAINS = "2. Test domains (MT)"
SENTIMENT = "3. Sentiment classifiers"
HUMAN = "4. Human judgements"
WORD_ORDER = "5. Word order (paper 004)"
CHARACTER_ATTACKS = "6. Character attacks (paper 002)"
NATURAL = "7. Natural robustness (paper 001)"
METRIC_ROBUSTNESS = "8. Metric robustness (paper 002)"
DATA = "9. Data and systems"
BENCHMARKS = "9b. Time and memory per rule"  # "9b" sorts after "9. "; a "10." would sort before "2."

#: Every section, in the order the report shows them.
SECTIONS = (PROFILE, DOMAINS, SENTIMENT, HUMAN, WORD_ORDER, CHARACTER_ATTACKS, NATURAL, METRIC_ROBUSTNESS, DATA, BENCHMARKS)

#: The PNG text chunk in which a figure records the pixel size of its smallest text, so the report check can
#: tell how large that text is shown (shown size = recorded size x displayed width / natural width).
TEXT_PX_KEY = "nlp_robustness:min_text_px"

_FAMILY_SECTIONS = {"word_order": WORD_ORDER, "character_attacks": CHARACTER_ATTACKS, "natural": NATURAL, "paraphrase": NATURAL,
                    "structure": NATURAL}


def family_section(family: str) -> str:
    """The section of a perturbation family's tables and figures; a family of no known paper gets a section
    of its own, after the numbered ones."""
    return _FAMILY_SECTIONS.get(family, f"Perturbations: {family}")


def render_caption(template: str, variables: dict[str, str]) -> str:
    """A caption file's text (Jinja, as Snakemake renders captions) with ``snakemake.wildcards.<name>`` filled
    from ``variables``.

    The generic table and figure rules serve every study with one caption file (``report/study_table.rst``,
    ``report/study_gamma_curves.rst``) that prints the job's ``caption`` parameter: this renders the study's
    own caption into that parameter when the workflow is planned, since Snakemake's caption renderer cannot
    include another file.
    """
    from types import SimpleNamespace

    from jinja2 import Environment, StrictUndefined

    environment = Environment(trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
    return environment.from_string(template).render(snakemake=SimpleNamespace(wildcards=SimpleNamespace(**variables)))
