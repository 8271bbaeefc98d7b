"""(epsilon, gamma)-Robustness curves of every row of a study (paper Figure 4; Figure 5 for human scores).

Two panels. Left, raw: gamma against epsilon on the configured grid (score units, e.g. BLEU points).
Right, normalised: the same curves against epsilon / sigma, epsilon in units of each system's sample
standard deviation of the pooled scores. The paper does not say how its Figure 4 is normalised; we chose
the standardised epsilon because it removes the spread (which Metric I already reports) and leaves the
shape of the score distribution, i.e. how much tighter than Chebyshev's bound (gamma = 1) a system is
at k standard deviations, comparable across systems.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on cluster nodes

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from nlp_robustness.fileio import atomic_write  # noqa: E402

#: How metric names are printed on the figure.
METRIC_DISPLAY_NAMES = {"bleu": "BLEU", "chrf": "chrF", "levenshtein": "Levenshtein"}


def plot_gamma_curves(
    curves: Mapping[str, pd.DataFrame], metric: str, outputs: Mapping[str, str | Path], scores: str | None = None
) -> None:
    """Draw the two-panel gamma figure for ``curves`` (system -> table with epsilon, gamma, sigma).

    ``outputs`` maps a file format (``png``, ``pdf``) to its path; each file is written atomically.
    ``scores`` says in the title what the curves measure (default: sentence scores on the pooled test sets).
    """
    metric = METRIC_DISPLAY_NAMES.get(metric, metric)
    scores = scores or f"sentence {metric} on the pooled test sets"
    figure, (raw_axis, normalised_axis) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for system, curve in curves.items():
        raw_axis.plot(curve["epsilon"], curve["gamma"], label=system, linewidth=1.6)
        sigma = float(curve["sigma"].iloc[0])
        if sigma > 0:
            normalised_axis.plot(curve["epsilon"] / sigma, curve["gamma"], label=system, linewidth=1.6)
    for axis in (raw_axis, normalised_axis):
        axis.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="Chebyshev bound")
        axis.set_ylabel(r"$\gamma$")
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
    raw_axis.set_xlabel(rf"$\epsilon$ ({metric} points)")
    raw_axis.set_title(r"$(\epsilon,\gamma)$-Robustness, raw")
    normalised_axis.set_xlabel(r"$\epsilon / \sigma$")
    normalised_axis.set_title(r"normalised: $\epsilon$ in standard deviations")
    handles, labels = raw_axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), frameon=False)
    figure.suptitle(rf"$(\epsilon,\gamma)$-Robustness of {scores}")
    save_figure(figure, outputs)


def save_figure(figure: plt.Figure, outputs: Mapping[str, str | Path], png_text: Mapping[str, str] | None = None) -> None:
    """Write ``figure`` once per format of ``outputs`` (``png``, ``pdf`` -> path), atomically, and close it
    (``png_text``: text chunks added to the PNG)."""
    try:
        for file_format, path in outputs.items():
            with atomic_write(path, mode="wb") as handle:
                # No creation date in the PDF: the same data give the same bytes on every run.
                metadata = {"CreationDate": None} if file_format == "pdf" else dict(png_text) if png_text else None
                figure.savefig(handle, format=file_format, dpi=150, metadata=metadata)
    finally:
        plt.close(figure)
