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

import pandas as pd

from nlp_robustness.display_names import metric_name
from nlp_robustness.outputs.figures import grid, panel_grid, save_figure

__all__ = ["plot_gamma_curves"]


def plot_gamma_curves(
    curves: Mapping[str, pd.DataFrame], metric: str, outputs: Mapping[str, str | Path], scores: str | None = None
) -> None:
    """Draw the two-panel gamma figure for ``curves`` (system -> table with epsilon, gamma, sigma and, where the
    engine made them, the bootstrap band gamma_lo, gamma_hi, drawn shaded behind each curve).

    ``outputs`` maps a file format (``png``, ``pdf``) to its path; each file is written atomically.
    ``scores`` says in the title what the curves measure (default: sentence scores on the pooled test sets).
    """
    metric = metric_name(metric)
    scores = scores or f"sentence {metric} on the pooled test sets"
    figure, axes = panel_grid(1, 2, (11, 4.2), constrained_layout=True)
    raw_axis, normalised_axis = axes[0]
    for system, curve in curves.items():
        (line,) = raw_axis.plot(curve["epsilon"], curve["gamma"], label=system, linewidth=1.6)
        banded = "gamma_lo" in curve and curve["gamma_lo"].notna().any()
        if banded:  # the bootstrap band of the curve (pointwise, the configured level)
            raw_axis.fill_between(curve["epsilon"], curve["gamma_lo"], curve["gamma_hi"], color=line.get_color(), alpha=0.15, linewidth=0)
        sigma = float(curve["sigma"].iloc[0])
        if sigma > 0:
            normalised_axis.plot(curve["epsilon"] / sigma, curve["gamma"], label=system, linewidth=1.6)
            if banded:
                normalised_axis.fill_between(curve["epsilon"] / sigma, curve["gamma_lo"], curve["gamma_hi"],
                                             color=line.get_color(), alpha=0.15, linewidth=0)
    for axis in (raw_axis, normalised_axis):
        axis.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="Chebyshev bound")
        axis.set_ylabel(r"$\gamma$")
        axis.set_ylim(bottom=0)
        grid(axis)
    raw_axis.set_xlabel(rf"$\epsilon$ ({metric} points)")
    raw_axis.set_title(r"$(\epsilon,\gamma)$-Robustness, raw")
    normalised_axis.set_xlabel(r"$\epsilon / \sigma$")
    normalised_axis.set_title(r"normalised: $\epsilon$ in standard deviations")
    handles, labels = raw_axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 5), frameon=False)
    figure.suptitle(rf"$(\epsilon,\gamma)$-Robustness of {scores}")
    save_figure(figure, outputs)
