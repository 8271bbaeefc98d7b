"""The robustness profile for readers: its figures, its generated reading and the report's opening page.

Figure choice: a heatmap, not a radar. Per group of systems the detailed figure has one panel per axis
(quality, test domains, each perturbation family, natural perturbations) with the systems as rows and the
measures as columns; a cell's colour is the system's place within its column scaled to [0, 1] (1 = the best
system of the column: the most robust, or the best quality), its text the raw value and rank. Colour then
reads the same in every column whatever its unit or direction (COV: lower is better; beta1: higher), rows
line up across panels, and nothing depends on the order of the axes around a circle (a radar's area does).
The overview figure shows, per group, each axis's ranking (the mean rank over the axis's robustness
columns) the same way: small enough to open the report with.
"""

from __future__ import annotations

import base64
import math
import re
from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlp_robustness.display_names import MISSING
from nlp_robustness.outputs.table_writer import markdown_table
from nlp_robustness.outputs.report_sections import TEXT_PX_KEY
from nlp_robustness.studies.profile import AXES

if TYPE_CHECKING:
    import matplotlib.image

    from nlp_robustness.outputs.figures import plt

# matplotlib is imported by the drawing functions, on first use: the jobs that only write tables start without it.

__all__ = ["plot_axes_overview", "plot_profile", "profile_display", "profile_markdown", "read_profile_table", "reading", "report_description",
           "rst_text", "value_text"]

_COLOURS = "viridis"
#: Font size (points) of the detailed profile's cell text, and of the overview's cell text and labels.
_CELL_POINTS, _OVERVIEW_POINTS = 7, 8
#: The overview opens the report in a column about 500 px wide (Snakemake's description box): drawn this
#: wide at save_figure's 150 dpi, its 8-point text shows at 8 x 150 / 72 x 500 / (4.6 x 150) = 12 px.
_OVERVIEW_WIDTH_INCHES, _FIGURE_DPI = 4.6, 150


def value_text(value: float) -> str:
    """A raw value with three significant digits (rounded for display only)."""
    if not math.isfinite(value):
        return MISSING
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def _axes_of(frame: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(frame["axis"]))
    return [axis for axis in AXES if axis in present] + [axis for axis in present if axis not in AXES]


def _scaled(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Place of each value within its column, 1 = best, 0 = worst (0.5 throughout for a constant column)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.full(values.shape, np.nan)
    low, high = float(finite.min()), float(finite.max())
    if high == low:
        return np.where(np.isfinite(values), 0.5, np.nan)
    scaled = (values - low) / (high - low)
    return scaled if higher_is_better else 1.0 - scaled


def _heatmap(axis: plt.Axes, scaled: np.ndarray, texts: list[list[str]], columns: Sequence[str], rows: Sequence[str],
             title: str, show_rows: bool, cell_points: float = _CELL_POINTS) -> matplotlib.image.AxesImage:
    image = axis.imshow(np.ma.masked_invalid(scaled), cmap=_COLOURS, vmin=0.0, vmax=1.0, aspect="auto")
    for row_index, row in enumerate(texts):
        for column_index, text in enumerate(row):
            value = scaled[row_index, column_index]
            colour = "black" if math.isfinite(value) and value > 0.6 else "white"
            axis.text(column_index, row_index, text, ha="center", va="center", fontsize=cell_points,
                      color=colour if math.isfinite(value) else "black")
    axis.set_xticks(range(len(columns)), columns, rotation=40, ha="right", fontsize=8)
    axis.set_yticks(range(len(rows)), rows if show_rows else [""] * len(rows), fontsize=8)
    axis.set_title(title, fontsize=9)
    axis.tick_params(length=0)
    return image


def plot_profile(profile: pd.DataFrame, group: str, label: str, outputs: Mapping[str, str | Path]) -> None:
    """The detailed profile of one group: a panel per axis, systems as rows, measures as columns."""
    from nlp_robustness.outputs.figures import panel_grid, save_figure
    frame = profile[profile["group"] == group]
    systems = list(dict.fromkeys(frame["system"]))
    axes_names = _axes_of(frame)
    widths = [frame[frame["axis"] == axis]["measure"].nunique() for axis in axes_names]
    figure, panels = panel_grid(1, len(axes_names), (1.6 + 0.85 * sum(widths) + 0.3 * len(widths), 1.6 + 0.42 * len(systems)),
                                gridspec_kw={"width_ratios": widths}, layout="constrained")
    image = None
    for index, (panel, axis_name) in enumerate(zip(panels[0], axes_names)):
        rows = frame[frame["axis"] == axis_name]
        measures = list(dict.fromkeys(rows["measure"]))
        scaled = np.full((len(systems), len(measures)), np.nan)
        texts = [["" for _ in measures] for _ in systems]
        labels = []
        for column, measure in enumerate(measures):
            cells = rows[rows["measure"] == measure].set_index("system")
            labels.append(cells["label"].iloc[0])
            values = np.array([float(cells["value"].get(system, math.nan)) for system in systems])
            scaled[:, column] = _scaled(values, cells["orientation"].iloc[0] == "higher")
            for row, system in enumerate(systems):
                if system in cells.index and math.isfinite(values[row]):
                    rank = cells.loc[system, "rank"]
                    texts[row][column] = f"{value_text(values[row])}\n#{rank}" if rank is not pd.NA else value_text(values[row])
        image = _heatmap(panel, scaled, texts, labels, systems, axis_name, show_rows=index == 0)
    if image is not None:
        bar = figure.colorbar(image, ax=panels[0].tolist(), fraction=0.02, pad=0.01)
        bar.set_label("place in column (1 = best)", fontsize=8)
    figure.suptitle(f"Robustness profile: {label} (cell: value, #rank)", fontsize=10)
    save_figure(figure, outputs)


def plot_axes_overview(axes: pd.DataFrame, labels: Mapping[str, str], outputs: Mapping[str, str | Path]) -> None:
    """Every group's axis rankings in one compact figure: a panel per group, systems as rows, axes as
    columns, the cell the system's mean rank over the axis's columns (colour: 1 = best on the axis)."""
    from nlp_robustness.outputs.figures import panel_grid, save_figure
    groups = list(dict.fromkeys(axes["group"]))
    heights = [axes[axes["group"] == group]["system"].nunique() for group in groups]
    figure, panels = panel_grid(len(groups), 1, (_OVERVIEW_WIDTH_INCHES, 1.0 + 0.9 * len(groups) + 0.3 * sum(heights)),
                                  gridspec_kw={"height_ratios": heights}, layout="constrained")
    image = None
    for panel, group in zip(panels[:, 0], groups):
        frame = axes[axes["group"] == group]
        systems = list(dict.fromkeys(frame["system"]))
        names = _axes_of(frame)
        scaled = np.full((len(systems), len(names)), np.nan)
        texts = [["" for _ in names] for _ in systems]
        for column, name in enumerate(names):
            cells = frame[frame["axis"] == name].set_index("system")
            means = np.array([float(cells["mean_rank"].get(system, math.nan)) for system in systems])
            scaled[:, column] = _scaled(means, higher_is_better=False)
            for row, system in enumerate(systems):
                if system in cells.index:
                    texts[row][column] = f"#{int(cells.loc[system, 'rank'])}"
        image = _heatmap(panel, scaled, texts, names, systems, labels.get(group, group), show_rows=True,
                         cell_points=_OVERVIEW_POINTS)
    if image is not None:
        bar = figure.colorbar(image, ax=panels[:, 0].tolist(), fraction=0.03, pad=0.02)
        bar.set_label("place on the axis (1 = best)", fontsize=8)
    # the report check reads the smallest text's size from the PNG to judge it as displayed
    save_figure(figure, outputs, png_text={TEXT_PX_KEY: f"{_OVERVIEW_POINTS * _FIGURE_DPI / 72:g}"})


def _names(systems: Sequence[str]) -> str:
    systems = list(systems)
    return systems[0] if len(systems) == 1 else ", ".join(systems[:-1]) + " and " + systems[-1]


def _within_noise(measures: pd.DataFrame, best: Sequence[str], worst: Sequence[str]) -> str:
    """A caveat when the best and the worst systems of an axis are not told apart: no column of the axis that
    has intervals separates them *in the axis's direction* (the best's interval entirely on the better side of
    the worst's; a column separating them the other way does not support the ranking). The paired tests of
    the studies' comparisons tables are the sharper check. Empty when a column separates them so, or none has
    intervals."""
    with_intervals = measures.dropna(subset=["ci_low", "ci_high"])
    if with_intervals.empty:
        return ""
    for _, rows in with_intervals.groupby("measure", sort=False):
        ends = rows.set_index("system")
        higher = rows["orientation"].iloc[0] == "higher" if "orientation" in rows else True
        for first in best:
            for second in worst:
                if first not in ends.index or second not in ends.index:
                    continue
                separated = (ends.at[first, "ci_low"] > ends.at[second, "ci_high"] if higher
                             else ends.at[first, "ci_high"] < ends.at[second, "ci_low"])
                if separated:
                    return ""
    return " (not distinguishable: no column separates them beyond their intervals)"


def _tau_interval(row: Any) -> str:
    low, high = getattr(row, "tau_lo", math.nan), getattr(row, "tau_hi", math.nan)
    return "" if not (np.isfinite(low) and np.isfinite(high)) else f" [{low:+.2f}, {high:+.2f}]"


def reading(axes: pd.DataFrame, axes_kendall: pd.DataFrame, profile: pd.DataFrame, groups: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The profile in sentences, one paragraph per group (``groups``: name -> its ``label`` and ``scores``):
    the best and worst system on every axis (quality: highest and lowest; other axes: most and least robust
    by mean rank over their robustness columns), the pairs of axes whose rankings disagree (Kendall tau < 0)
    and what the number of systems allows."""
    paragraphs = []
    for group in dict.fromkeys(axes["group"]):
        frame = axes[axes["group"] == group]
        systems = frame["system"].nunique()
        spec = groups.get(group, {})
        sentences = [f"{spec.get('label', group)} ({systems} systems; {spec.get('scores', 'scores')})."]
        for axis in _axes_of(frame):
            rows = frame[frame["axis"] == axis]
            best = rows[rows["rank"] == rows["rank"].min()]["system"].tolist()
            worst = rows[rows["rank"] == rows["rank"].max()]["system"].tolist()
            columns = int(rows["measures"].max())
            name = f"{axis[0].upper()}{axis[1:]}" + ("" if axis == "quality" else f" ({columns} column{'s' * (columns > 1)})")
            caveat = _within_noise(profile[(profile["group"] == group) & (profile["axis"] == axis)], best, worst)
            if len(best) == len(rows):
                sentences.append(f"{name}: every system ties.")
            elif axis == "quality":
                sentences.append(f"{name}: best {_names(best)}, worst {_names(worst)}{caveat}.")
            else:
                sentences.append(f"{name}: most robust {_names(best)}, least robust {_names(worst)}{caveat}.")
        pairs = axes_kendall[axes_kendall["group"] == group].dropna(subset=["tau"])
        disagree = pairs[pairs["tau"] < 0].sort_values("tau", kind="stable")
        if pairs.empty:
            sentences.append("Too few systems or axes to compare their rankings.")
        elif disagree.empty:
            sentences.append("No two axes disagree: every Kendall tau between axis rankings is at least 0.")
        else:
            clauses = [f"{row.first} vs {row.second} (tau = {row.tau:+.2f}{_tau_interval(row)})" for row in disagree.itertuples()]
            sentences.append(f"The axes disagree on {len(disagree)} of {len(pairs)} pairs: {'; '.join(clauses)}.")
            noisy = [row for row in disagree.itertuples() if getattr(row, "tau_hi", math.nan) >= 0]
            if noisy:
                sentences.append(f"{len(noisy)} of these {'lies' if len(noisy) == 1 else 'lie'} within noise: "
                                 f"{'its' if len(noisy) == 1 else 'their'} tau interval reaches 0 (the ranks' bootstrap), "
                                 f"so {'it is not a finding' if len(noisy) == 1 else 'they are not findings'}.")
            measures = profile[profile["group"] == group]
            drop_axes = set(measures[measures["measure"].str.startswith("drop_")]["axis"])
            against_quality = {row.second if row.first == "quality" else row.first for row in disagree.itertuples()
                               if "quality" in (row.first, row.second)}
            if against_quality & drop_axes:
                sentences.append(f"{', '.join(sorted(against_quality & drop_axes)).capitalize()} measure an absolute "
                                 "drop, which is smaller for a system with less quality to lose.")
        sentences.append(f"With {systems} systems an exact reversal arises by chance in 1 of {math.factorial(systems)} "
                         "orderings (p-values: results/profile/kendall.tsv).")
        paragraphs.append(" ".join(sentences))
    return paragraphs


def profile_display(profile: pd.DataFrame, group: str) -> pd.DataFrame:
    """One group's profile for reading: a row per measure (axis, column), a column per system holding
    'value [interval] (#rank, rank interval)' as text -- with few systems and many measures, measures down the page read
    better than across it (the CSV keeps a row per system)."""
    frame = profile[profile["group"] == group]
    systems = list(dict.fromkeys(frame["system"]))
    rows = []
    for measure, cells in frame.groupby("measure", sort=False):
        row = {"axis": cells["axis"].iloc[0], "measure": cells["label"].iloc[0]}
        by_system = cells.set_index("system")
        for system in systems:
            if system not in by_system.index:
                row[system] = MISSING
                continue
            cell = by_system.loc[system]
            text = value_text(float(cell["value"]))
            if pd.notna(cell["ci_low"]):
                text += f" [{value_text(float(cell['ci_low']))}, {value_text(float(cell['ci_high']))}]"
            rank = ""
            if pd.notna(cell["rank"]):
                spread = (f", {int(cell['rank_lo'])}–{int(cell['rank_hi'])}"
                          if "rank_lo" in cell and pd.notna(cell["rank_lo"]) and cell["rank_lo"] != cell["rank_hi"] else "")
                rank = f" (#{cell['rank']}{spread})"
            row[system] = f"{text}{rank}"
        rows.append(row)
    return pd.DataFrame(rows, columns=["axis", "measure", *systems])


def profile_markdown(display: pd.DataFrame, label: str) -> str:
    """:func:`profile_display` as Markdown, under its title."""
    return f"**Robustness profile: {label}** (value [interval] (#rank, rank interval); rank 1 = best)\n\n" + markdown_table(display)


def rst_text(text: str) -> str:
    """``text`` as literal reStructuredText: markup characters (a system named ``kitchen_&_housewares`` would
    otherwise end in a reference, ``*`` start emphasis) are escaped."""
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


def _data_uri(png: str | Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(png).read_bytes()).decode("ascii")


# Snakemake's report centres the opening page vertically in a scrolling pane, so a page taller than the
# window loses its top (it cannot be scrolled to): the page scrolls in a box of the window's height instead.
_PAGE_BOX = '<div class="robustness-profile" style="max-height: calc(100vh - 3rem); overflow-y: auto; padding-right: 0.75rem">'
# The app centres the opening page and the rule graph beside it in its content pane; on a narrow window
# (1366 px) the pair is wider than the pane and, centred, starts under the menu, where it cannot be scrolled
# to. "safe center" centres only what fits and otherwise starts at the pane's edge. A style element in the
# page is applied by the browser (and removed with the page when the reader opens a result).
_PAGE_STYLE = "<style>div.grow.flex.items-center.justify-center.h-screen { justify-content: safe center; }</style>"


def report_description(introduction: str, overview_png: str | Path, paragraphs: Sequence[str], digest: str) -> str:
    """The report's opening page (reStructuredText; Snakemake renders it as a Jinja template, then with
    docutils): the workflow's own introduction, links to the report's sections in order (Jinja lists the
    categories the report has: a section without results has no link target), the overview figure embedded
    (a data: URI, so the single-file report carries it) and the generated reading, in a box that scrolls.

    The generated part is wrapped in Jinja's ``raw`` so that no system name is read as template syntax.
    """
    uri = _data_uri(overview_png)
    lines = [".. raw:: html", "", f"   {_PAGE_STYLE}{_PAGE_BOX}", "", introduction.rstrip(), "",
             "Sections: {% for category in categories | sort(attribute='name') %}{% if category.name %}"
             "`{{ category.name }}`_{{ '.' if loop.last else ', ' }}{% endif %}{% endfor %}", "",
             "{% raw %}", "", ".. rubric:: Robustness profile", "",
             # docutils refuses lines over 10,000 characters: the URI continues on indented lines (joined)
             ".. image::", *(f"   {uri[start:start + 76]}" for start in range(0, len(uri), 76)),
             "   :alt: Robustness profile: axis rankings per group of systems", "",
             "Each panel is a group of systems; a cell is the system's rank on the axis, by its mean rank over the "
             "axis's robustness columns (colour: 1 = best: the most robust, or the best quality on the quality axis). Section 1 holds the detailed profile, its table "
             "and the Kendall taus between columns.", ""]
    for paragraph in paragraphs:
        lines += [f"* {rst_text(paragraph)}", ""]
    lines += [f"Config hash: ``{digest}`` (``results/profile.json`` holds every number).", "", "{% endraw %}", "",
              ".. raw:: html", "", "   </div>", ""]
    return "\n".join(lines)


def read_profile_table(path: str | Path) -> pd.DataFrame:
    """The long profile table as the profile stage wrote it (``results/profile/profile.tsv``), ranks as integers."""
    profile = pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])
    profile["rank"] = profile["rank"].astype("Int64")
    return profile
