"""Shared figure primitives: the one place that sets up matplotlib, lays out panel grids and saves figures.

Every figure of the package (gamma curves, perturbation, metric-robustness, Natural Robustness and
profile figures) is drawn with the ``plt`` of this module, on the non-interactive Agg backend (files
only; no display on cluster nodes), and written by :func:`save_figure`: atomically, once per format
(PNG and PDF), at one resolution, and without a creation date in the PDF, so that the same data give
the same bytes on every run. Branch modules keep only what they draw.

The report shows a figure about :data:`REPORT_WIDTH_PX` wide whatever its size in inches, so a wide figure's text
shrinks on screen: :func:`shown_text_px` says how large its smallest text is shown, and the tests hold every figure
to :data:`MIN_SHOWN_TEXT_PX` (issue 52: every figure of the default report looked at the size the report shows it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on cluster nodes

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.text  # noqa: E402
import numpy as np  # noqa: E402

from nlp_robustness.fileio.atomic import atomic_write  # noqa: E402

__all__ = ["DPI", "GRID_ALPHA", "MIN_SHOWN_TEXT_PX", "REPORT_WIDTH_PX", "figure_outputs", "grid", "panel_grid", "plt", "save_figure",
           "shown_text_px"]

#: Resolution of the PNG files.
DPI = 150

#: The width (CSS px) at which the HTML report shows a figure (about 800-1000 px on a desktop window).
REPORT_WIDTH_PX = 900

#: The smallest text a figure may show at :data:`REPORT_WIDTH_PX` (px): what a reader reads without zooming.
MIN_SHOWN_TEXT_PX = 9.0

#: Opacity of the grid lines behind the data (light: the data stay in front).
GRID_ALPHA = 0.3


def grid(panel: plt.Axes, **options: Any) -> None:
    """The light grid every figure draws behind its data (``options``: e.g. ``axis="x"``)."""
    panel.grid(alpha=GRID_ALPHA, **options)


def panel_grid(rows: int, columns: int, figsize: tuple[float, float], **options: Any) -> tuple[plt.Figure, np.ndarray]:
    """A figure of ``rows`` x ``columns`` panels, its axes always as a 2-D array (``options`` go to
    :func:`matplotlib.pyplot.subplots`: shared axes, layout, width ratios)."""
    return plt.subplots(rows, columns, figsize=figsize, squeeze=False, **options)


def shown_text_px(figure: plt.Figure, width_px: float = REPORT_WIDTH_PX) -> float:
    """The size (px) of the smallest visible text of ``figure`` when it is shown ``width_px`` wide, as the report shows
    it: a font of s points is s / 72 inches of a figure W inches wide, so s * width_px / (72 W) pixels on screen."""
    sizes = [text.get_fontsize() for text in figure.findobj(matplotlib.text.Text)
             if text.get_visible() and text.get_text().strip() and text.get_figure() is not None]
    return min(sizes) * width_px / (72 * figure.get_figwidth()) if sizes else float("inf")


def figure_outputs(png: str | Path, pdf: str | Path) -> dict[str, str | Path]:
    """The ``outputs`` of :func:`save_figure` for one PNG and one PDF path."""
    return {"png": png, "pdf": pdf}


def save_figure(figure: plt.Figure, outputs: Mapping[str, str | Path], png_text: Mapping[str, str] | None = None) -> None:
    """Write ``figure`` once per format of ``outputs`` (``png``, ``pdf`` -> path), atomically, and close it
    (``png_text``: text chunks added to the PNG)."""
    try:
        for file_format, path in outputs.items():
            with atomic_write(path, mode="wb") as handle:
                # No creation date in the PDF: the same data give the same bytes on every run.
                metadata = {"CreationDate": None} if file_format == "pdf" else dict(png_text) if png_text else None
                figure.savefig(handle, format=file_format, dpi=DPI, metadata=metadata)
    finally:
        plt.close(figure)
