"""The gamma-curve figure read with many rows (nlp_robustness.outputs.gamma_figures; issue 52, item 9): on the 14
systems of WMT22 ja-en's segment DA z scores (the mirror's ratings; Figure 5 of the human study), every system its own
(colour, line style), the gamma axis fitted to the curves, bands only where they hide nothing, the outlier named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba

from nlp_robustness.data.wmt_da import da_base_name, read_da_segment_scores
from nlp_robustness.outputs.figures import MIN_SHOWN_TEXT_PX, plt, shown_text_px
from nlp_robustness.outputs.gamma_figures import ALL_BANDS_UP_TO, banded_rows, curve_styles, gamma_figure, plot_gamma_curves
from nlp_robustness.statistics.robustness_metrics import gamma_curve
from tests.paths import MIRROR

JA_EN = MIRROR / "wmt22-general-toen-da" / "humaneval" / "DA" / "newstest2022-toen" / "ad-seg-scores-ja-en.csv"
needs_ja_en = pytest.mark.skipif(not JA_EN.is_file(), reason=f"WMT22 ja-en DA scores not found under {MIRROR}")
EPSILON = np.round(np.arange(0.01, 2.5001, 0.01), 2)  # the config's grid of the ja-en study (z units)


def _curves(resamples: int = 30) -> dict[str, pd.DataFrame]:
    """Each ja-en system's gamma curve on its segment z scores, with a seeded percentile bootstrap band."""
    scores = read_da_segment_scores(str(JA_EN))
    scores = scores[~scores["placeholder"]]
    generator = np.random.default_rng(0)
    curves = {}
    for system in sorted(scores["system"].unique(), key=str.lower):
        values = scores.loc[scores["system"] == system, "z"].to_numpy()
        replicates = np.array([gamma_curve(generator.choice(values, len(values)), EPSILON) for _ in range(resamples)])
        curves[da_base_name(system)] = pd.DataFrame({
            "epsilon": EPSILON, "gamma": gamma_curve(values, EPSILON), "sigma": values.std(ddof=1),
            "gamma_lo": np.quantile(replicates, 0.025, axis=0), "gamma_hi": np.quantile(replicates, 0.975, axis=0)})
    return curves


@pytest.fixture(scope="module")
def ja_en() -> dict[str, pd.DataFrame]:
    if not JA_EN.is_file():
        pytest.skip(f"WMT22 ja-en DA scores not found under {MIRROR}")
    return _curves()


def _curve_lines(axis: plt.Axes) -> list:
    return [line for line in axis.get_lines() if line.get_label() != "Chebyshev bound" and len(line.get_xdata()) > 2]


@needs_ja_en
def test_fourteen_systems_each_get_their_own_colour_and_line_style(ja_en: dict[str, pd.DataFrame]) -> None:
    assert len(ja_en) == 14
    figure = gamma_figure(ja_en, "human", "segment DA z scores")
    try:
        for axis in figure.axes:
            lines = _curve_lines(axis)
            assert len(lines) == 14
            colours = [to_rgba(line.get_color()) for line in lines]
            dashes = [repr(line._unscaled_dash_pattern) for line in lines]  # the dash pattern drawn (no public getter)
            # before: 10 colours for 14 systems (AIST and Online-G both orange), every line solid
            assert len(set(colours)) == 14 and len(set(zip(colours, dashes))) == 14
            assert len(set(dashes)) == 4
    finally:
        plt.close(figure)
    styles = curve_styles([f"row {index}" for index in range(64)])
    assert len({(style.colour, style.line_style) for style in styles.values()}) == 64
    for index in range(63):  # neighbours in the legend differ in colour and in line style
        first, second = styles[f"row {index}"], styles[f"row {index + 1}"]
        assert first.colour != second.colour and first.line_style != second.line_style


@needs_ja_en
def test_the_gamma_axis_is_fitted_to_the_curves(ja_en: dict[str, pd.DataFrame]) -> None:
    figure = gamma_figure(ja_en, "human", "segment DA z scores")
    try:
        highest = max(float(curve["gamma"].max()) for curve in ja_en.values())
        for axis in figure.axes:
            bottom, top = axis.get_ylim()
            # before: 0 to 1 (ylim bottom=0 only) while every curve stays below 0.35
            assert bottom == 0 and highest < top < 0.5
            assert "Chebyshev" in axis.get_ylabel()  # the bound is said where it is not drawn
    finally:
        plt.close(figure)


@needs_ja_en
def test_bands_are_drawn_for_the_extremes_only_and_the_outlier_is_named(ja_en: dict[str, pd.DataFrame]) -> None:
    areas = {row: float(curve["gamma"].mean()) for row, curve in ja_en.items()}
    assert max(areas, key=areas.__getitem__) == "AIST"  # the system the human-study finding is about
    assert banded_rows(ja_en) == ["AIST", "NT5"]
    figure = gamma_figure(ja_en, "human", "segment DA z scores")
    try:
        raw_axis = figure.axes[0]
        bands = [collection for collection in raw_axis.collections if isinstance(collection, PolyCollection)]
        colours = {row: to_rgba(line.get_color()) for row, line in zip(ja_en, _curve_lines(raw_axis))}
        assert len(bands) == 2  # before: 14 overlapping bands
        assert {tuple(np.round(band.get_facecolor()[0][:3], 6)) for band in bands} == {
            tuple(np.round(colours[row][:3], 6)) for row in ("AIST", "NT5")}
        assert {text.get_text() for text in raw_axis.texts} == {"AIST", "NT5"}
        assert shown_text_px(figure) >= MIN_SHOWN_TEXT_PX  # the names too, at the width the report shows the figure
        widths = {row: line.get_linewidth() for row, line in zip(ja_en, _curve_lines(raw_axis))}
        assert widths["AIST"] > max(width for row, width in widths.items() if row not in ("AIST", "NT5"))
    finally:
        plt.close(figure)
    chosen = gamma_figure(ja_en, "human", highlight=["Online-G"])
    try:
        assert len([c for c in chosen.axes[0].collections if isinstance(c, PolyCollection)]) == 1
    finally:
        plt.close(chosen)
    with pytest.raises(ValueError, match="no-such-system"):
        banded_rows(ja_en, ["no-such-system"])


@needs_ja_en
def test_few_rows_keep_every_band_and_a_curve_near_the_bound_shows_it(ja_en: dict[str, pd.DataFrame], tmp_path: Path) -> None:
    few = {row: ja_en[row] for row in list(ja_en)[:ALL_BANDS_UP_TO]}
    assert banded_rows(few) == list(few)
    near = {"flat": pd.DataFrame({"epsilon": EPSILON, "gamma": np.linspace(0, 0.95, len(EPSILON)), "sigma": 1.0})}
    figure = gamma_figure(near, "human")
    try:
        assert figure.axes[0].get_ylim()[1] == pytest.approx(1.05)
        assert any(line.get_label() == "Chebyshev bound" for line in figure.axes[0].get_lines())
    finally:
        plt.close(figure)
    outputs = {"png": tmp_path / "gamma.png", "pdf": tmp_path / "gamma.pdf"}
    plot_gamma_curves(few, "human", outputs)
    assert all(path.stat().st_size > 0 for path in outputs.values())
