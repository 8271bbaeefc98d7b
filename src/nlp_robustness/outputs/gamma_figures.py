"""(epsilon, gamma)-Robustness curves of every row of a study (paper Figure 4; Figure 5 for human scores).

Two panels. Left, raw: gamma against epsilon on the configured grid (score units, e.g. BLEU points).
Right, normalised: the same curves against epsilon / sigma, epsilon in units of each system's sample
standard deviation of the pooled scores. The paper does not say how its Figure 4 is normalised; we chose
the standardised epsilon because it removes the spread (which Metric I already reports) and leaves the
shape of the score distribution, i.e. how much tighter than Chebyshev's bound (gamma = 1) a system is
at k standard deviations, comparable across systems.

Made to be read with many rows (issue 52: WMT22 ja-en has 14 systems, whose curves and bands were 10 colours,
all solid, under bands that hid them, on an axis up to 1 while the curves stayed below 0.45):

* **Every row its own colour and line style** (:func:`curve_styles`): 16 colours, then the line style and marker
  change with each row, so no two rows share (colour, line style) up to 64 rows and neighbours in the legend differ
  in both; a marker every eighth of the curve tells the rows apart where lines cross.
* **Axes fitted to the data** (:func:`gamma_limits`): gamma from 0 to just above the highest curve or drawn band
  (to 1.05, with Chebyshev's bound drawn, only when a curve comes near it; otherwise the y label says the bound is
  1); epsilon up to where the last curve reaches 0 (gamma is 0 where no score deviates by epsilon), and each curve
  ends where it reaches 0 for good, rather than running on along the axis over the others.
* **Bands that do not hide curves** (:func:`banded_rows`): with up to :data:`ALL_BANDS_UP_TO` rows every row's
  bootstrap band is drawn; with more, only those of the rows named by ``highlight`` or, by default, of the two
  extremes: the rows of the lowest and the highest gamma-area (the mean of the curve over the grid, the statistic
  human studies rank by). Those rows are drawn thicker, on top, and named where their curves end above 0, so an outlier
  (ja-en: AIST, highest gamma-area) is found without the legend. The bands share one amount of ink (each lighter
  the more are drawn), so a curve drawn through several of them stays visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nlp_robustness.display_names import metric_name
from nlp_robustness.outputs.figures import grid, panel_grid, plt, save_figure

__all__ = ["ALL_BANDS_UP_TO", "COLOURS", "CurveStyle", "banded_rows", "curve_styles", "gamma_figure", "gamma_limits", "legend_columns",
           "plot_gamma_curves"]

#: Colours of the rows, in order: matplotlib's ten, then six more far from them (all dark enough on white).
COLOURS: tuple[str, ...] = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
                            "tab:gray", "tab:olive", "tab:cyan", "black", "navy", "teal", "maroon", "darkgoldenrod", "deeppink")

#: Line styles (solid, dashed, dotted, dash-dot), cycled so that neighbouring rows differ.
LINE_STYLES: tuple[tuple[int, tuple[float, ...] | None], ...] = ((0, None), (0, (5.0, 2.0)), (0, (1.2, 1.4)), (0, (6.0, 2.0, 1.2, 2.0)))
LINE_STYLE_NAMES = ("solid", "dashed", "dotted", "dash-dot")

#: Markers, one every eighth of a curve, offset per row so that rows' markers do not stack.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

#: Up to this many rows every band is drawn; above it, only the highlighted rows' bands.
ALL_BANDS_UP_TO = 4

#: Opacity of the bands, shared by the bands drawn (one band 0.2, four 0.06 each, never below 0.06): overlapping
#: bands stay light enough for every curve drawn through them to be seen.
BAND_INK, MIN_BAND_ALPHA = 0.24, 0.06

#: Line widths of a row and of a highlighted row.
LINE_WIDTH, HIGHLIGHT_WIDTH = 1.3, 2.6


@dataclass(frozen=True)
class CurveStyle:
    """How one row's curve is drawn: colour, line style (a name of :data:`LINE_STYLE_NAMES`), marker."""

    colour: str
    line_style: str
    marker: str

    @property
    def dashes(self) -> tuple[int, tuple[float, ...] | None]:
        """The matplotlib line style of :attr:`line_style`."""
        style = LINE_STYLES[LINE_STYLE_NAMES.index(self.line_style)]
        return "solid" if style[1] is None else style  # type: ignore[return-value]


def curve_styles(rows: Sequence[str]) -> dict[str, CurveStyle]:
    """The style of every row, in order: colour ``i mod 16``, line style ``(i + i div 16) mod 4`` (so a colour used
    again from row 17 comes with another line style), marker ``i mod 8``; (colour, line style) differs for every
    row up to 64 rows."""
    styles = {}
    for index, row in enumerate(rows):
        line_style = LINE_STYLE_NAMES[(index + index // len(COLOURS)) % len(LINE_STYLES)]
        styles[row] = CurveStyle(COLOURS[index % len(COLOURS)], line_style, MARKERS[index % len(MARKERS)])
    return styles


def _banded(curve: pd.DataFrame) -> bool:
    return "gamma_lo" in curve and bool(curve["gamma_lo"].notna().any())


def _gamma_area(curve: pd.DataFrame) -> float:
    return float(np.nanmean(curve["gamma"].to_numpy(dtype=float)))


def banded_rows(curves: Mapping[str, pd.DataFrame], highlight: Sequence[str] | None = None) -> list[str]:
    """The rows whose band is drawn and whose curve is highlighted (thicker, named at its end): every row with a band
    when there are at most :data:`ALL_BANDS_UP_TO` rows (none highlighted then: all are alike); otherwise ``highlight``
    (rows named by the caller) or, when it is None, the rows of the lowest and highest gamma-area."""
    if len(curves) <= ALL_BANDS_UP_TO:
        return [row for row, curve in curves.items() if _banded(curve)]
    if highlight is not None:
        unknown = [row for row in highlight if row not in curves]
        if unknown:
            raise ValueError(f"highlight names rows the figure does not have: {', '.join(unknown)} (rows: {', '.join(curves)})")
        return list(highlight)
    areas = {row: _gamma_area(curve) for row, curve in curves.items()}
    lowest, highest = min(areas, key=areas.__getitem__), max(areas, key=areas.__getitem__)
    return [row for row in curves if row in {lowest, highest}]


def _drawn_end(curve: pd.DataFrame, banded: bool) -> int:
    """The number of grid points of a row drawn: up to the first point from which its curve (and band, if drawn) is 0,
    that point included (the drop to 0 is drawn; a flat line along the axis after it would only hide others)."""
    drawn = curve["gamma"].to_numpy(dtype=float)
    if banded:
        drawn = np.fmax(drawn, curve["gamma_hi"].to_numpy(dtype=float))
    positive = np.flatnonzero(drawn > 0)
    return len(drawn) if not len(positive) else min(int(positive[-1]) + 2, len(drawn))


def gamma_limits(curves: Mapping[str, pd.DataFrame], banded: Sequence[str]) -> tuple[float, float]:
    """The top of the gamma axis and the largest raw epsilon drawn.

    Top: 8 % above the highest value drawn (every curve, and the bands of ``banded``), at least 0.05; 1.05 when that
    reaches 0.9 (Chebyshev's bound, 1, is then drawn). Epsilon: the grid up to the first point from which every curve
    is 0, one grid step past it (a band reaching further is cut there: with few units a band can run on to ten times
    the curves' range); the whole grid when some curve never reaches 0.
    """
    highest = max(float(np.nanmax(curve["gamma"])) for curve in curves.values())
    for row in banded:
        highest = max(highest, float(np.nanmax(curves[row]["gamma_hi"])))
    top = max(0.05, 1.08 * highest)
    top = 1.05 if top >= 0.9 else top
    last = max(float(curve["epsilon"].iloc[_drawn_end(curve, False) - 1]) for curve in curves.values())
    return top, last


def legend_columns(labels: Sequence[str], width_inches: float, points: float = 10) -> int:
    """How many legend columns fit ``width_inches`` (at most 5): an entry is its label (a character about 0.55 em wide)
    plus the line sample and gaps (about 6 em)."""
    em = points / 72
    entry = (0.55 * max((len(label) for label in labels), default=1) + 6) * em
    return max(1, min(len(labels), 5, int(width_inches // entry)))


def gamma_figure(curves: Mapping[str, pd.DataFrame], metric: str, scores: str | None = None,
                 highlight: Sequence[str] | None = None) -> plt.Figure:
    """The two-panel gamma figure of ``curves`` (row -> table with epsilon, gamma, sigma and, where the engine made
    them, the bootstrap band gamma_lo, gamma_hi), not saved (module docstring: styles, axes, bands).

    ``scores`` says in the title what the curves measure (default: sentence scores on the pooled test sets);
    ``highlight`` names the rows whose bands are drawn when there are more than :data:`ALL_BANDS_UP_TO` rows
    (default: the lowest and highest gamma-area).
    """
    metric = metric_name(metric)
    scores = scores or f"sentence {metric} on the pooled test sets"
    rows = list(curves)
    styles, banded = curve_styles(rows), banded_rows(curves, highlight)
    highlighted = set(banded) if len(rows) > ALL_BANDS_UP_TO else set()
    top, last_epsilon = gamma_limits(curves, banded)
    band_alpha = max(MIN_BAND_ALPHA, BAND_INK / max(len(banded), 1))
    legend_rows = -(-len(rows) // legend_columns([f"{row} (band drawn)" for row in rows], 11))
    figure, axes = panel_grid(1, 2, (11, 4.6 + 0.25 * legend_rows), constrained_layout=True)
    raw_axis, normalised_axis = axes[0]
    last_normalised = 0.0
    for row, curve in curves.items():
        style, strong = styles[row], row in highlighted
        sigma = float(curve["sigma"].iloc[0])
        shown = curve.iloc[:_drawn_end(curve, row in banded)]
        step = max(1, len(shown) // 8)
        offset = int(rows.index(row) * step / max(len(rows), 1)) % step
        marked = [index for index in range(offset, len(shown), step) if shown["gamma"].iloc[index] > 0]  # none on the axis
        line = {"color": style.colour, "linestyle": style.dashes, "marker": style.marker, "markersize": 4.5 if strong else 3.5,
                "markevery": marked,
                "linewidth": HIGHLIGHT_WIDTH if strong else LINE_WIDTH, "zorder": 3 if strong else 2}
        label = f"{row} (band drawn)" if strong else row
        panels = [(raw_axis, shown["epsilon"])]
        if sigma > 0:
            panels.append((normalised_axis, shown["epsilon"] / sigma))
            last_normalised = max(last_normalised, float(curve["epsilon"].iloc[_drawn_end(curve, False) - 1]) / sigma)
        for axis, x in panels:
            axis.plot(x, shown["gamma"], label=label if axis is raw_axis else None, **line)
            if row in banded:  # the bootstrap band of the curve (pointwise, the configured level)
                axis.fill_between(x, shown["gamma_lo"], shown["gamma_hi"], color=style.colour, alpha=band_alpha, linewidth=0, zorder=1)
            if strong:  # named at the last point where its curve is above 0, so the outlier is found without the legend
                positive = np.flatnonzero(shown["gamma"].to_numpy(dtype=float) > 0)
                end = int(positive[-1]) if len(positive) else len(shown) - 1
                axis.annotate(row, (float(x.iloc[end]), float(shown["gamma"].iloc[end])), xytext=(4, 2), textcoords="offset points",
                              color=style.colour, fontsize=9, fontweight="bold", va="bottom", clip_on=False)
    bound_drawn = top > 1
    for axis in (raw_axis, normalised_axis):
        if bound_drawn:
            axis.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="Chebyshev bound" if axis is raw_axis else None)
        axis.set_ylabel(r"$\gamma$" if bound_drawn else r"$\gamma$ (Chebyshev bound = 1: off the axis)")
        axis.set_ylim(0, top)
        grid(axis)
    raw_axis.set_xlim(left=0 if float(min(curve["epsilon"].iloc[0] for curve in curves.values())) >= 0 else None,
                      right=last_epsilon * (1.12 if highlighted else 1.02))
    if last_normalised > 0:
        normalised_axis.set_xlim(0, last_normalised * (1.12 if highlighted else 1.02))
    raw_axis.set_xlabel(rf"$\epsilon$ ({metric} points)")
    raw_axis.set_title(r"$(\epsilon,\gamma)$-Robustness, raw")
    normalised_axis.set_xlabel(r"$\epsilon / \sigma$")
    normalised_axis.set_title(r"normalised: $\epsilon$ in standard deviations")
    handles, labels = raw_axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=legend_columns(labels, figure.get_figwidth()), frameon=False,
                  handlelength=3.2)
    figure.suptitle(rf"$(\epsilon,\gamma)$-Robustness of {scores}")
    return figure


def plot_gamma_curves(
    curves: Mapping[str, pd.DataFrame], metric: str, outputs: Mapping[str, str | Path], scores: str | None = None,
    highlight: Sequence[str] | None = None,
) -> None:
    """Draw :func:`gamma_figure` and write it: ``outputs`` maps a file format (``png``, ``pdf``) to its path; each file
    is written atomically."""
    save_figure(gamma_figure(curves, metric, scores, highlight), outputs)
