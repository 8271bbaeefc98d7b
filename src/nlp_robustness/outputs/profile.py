"""The robustness profile for readers: its figures, its generated reading and the report's opening page.

Figure choice: a heatmap, not a radar. Per group of systems the detailed figure has one panel per axis
(quality, test domains, each perturbation family, natural perturbations) with the systems as rows and the
measures as columns; a cell's colour is the system's place within its column scaled to [0, 1] (1 = the best
system of the column: the most robust, or the best quality), its text the raw value and rank. Colour then
reads the same in every column whatever its unit or direction (COV: lower is better; beta1: higher), rows
line up across panels, and nothing depends on the order of the axes around a circle (a radar's area does).
The overview figure shows, per group, each axis's ranking (the mean rank over the axis's robustness
columns) the same way: small enough to open the report with.

Both figures show how sure each rank is, so that a reader who only looks at the picture does not read noise
as order: a cell's text carries its rank interval where it is wider than one rank (``#2 (1–6)``), and a cell
whose system is not *separated* from every other system by the verdict rows
(:mod:`nlp_robustness.studies.profile_verdicts`: the comparisons tables; untested where its column has no
bootstrap replicates) is faded to a light grey, with a line under the figure saying so, and where a column's
rows separate at least one pair each cell carries its significance letters (``#3 ab``: systems sharing a
letter are not separated), the same letters the reading prints. Colour alone would not do: γ-areas of 0.126-0.129 that no test tells apart span the whole
scale. The detailed figure marks with † the columns that mostly restate quality (left out of the axes).
The reading is :mod:`.profile_reading`.
"""

from __future__ import annotations

import base64
import math
import re
import textwrap
from typing import TYPE_CHECKING
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlp_robustness.display_names import MISSING
from nlp_robustness.outputs.profile_reading import axes_order, is_separated, rank_text, reading, value_text
from nlp_robustness.outputs.table_writer import markdown_table
from nlp_robustness.outputs.report_sections import TEXT_PX_KEY

if TYPE_CHECKING:
    import matplotlib.cm

    from nlp_robustness.outputs.figures import plt

# matplotlib is imported by the drawing functions, on first use: the jobs that only write tables start without it.

__all__ = ["faded_cells", "letters_shown", "panel_rows", "plot_axes_overview", "plot_profile", "profile_display", "profile_markdown", "rank_text", "read_axes_table", "read_profile_table",
           "reading", "report_description", "rst_text", "value_text"]

_COLOURS = "viridis"
#: Font size (points) of the detailed profile's cell text, and of the overview's cell text and labels.
_CELL_POINTS, _OVERVIEW_POINTS, _TITLE_POINTS = 7, 8, 10
#: The overview opens the report in a column about 500 px wide (Snakemake's description box): drawn this
#: wide at save_figure's 150 dpi, its 8-point text shows at 8 x 150 / 72 x 500 / (4.6 x 150) = 12 px.
_OVERVIEW_WIDTH_INCHES, _FIGURE_DPI = 4.6, 150
#: How far a faded cell's colour is moved towards light grey (0: not at all, 1: grey): far enough that
#: the faint colour left does not read as an order, near enough to show the column's scale.
_FADE, _FADED_GREY = 0.85, 0.92
#: The most measure columns in one row of the detailed profile's panels: at 0.85 inch a column the figure stays
#: about 10 inches wide, so its 7-point cell text shows at about 8-9 px in the report's 900 px.
_ROW_COLUMNS = 9
#: The mark of a column that mostly restates quality (pooled Var, COV of sentence scores).
_TRACKS_QUALITY = " †"


def letters_shown(frame: pd.DataFrame) -> dict[str, str]:
    """The significance letters to print in a column's or axis's cells (system -> letters): only where its
    rows separate a pair (more than one letter in use); one group says nothing a faded cell does not."""
    letters = {system: str(value) for system, value in zip(frame["system"], frame.get("letters", pd.Series(dtype=str)))
               if isinstance(value, str) and value and value != "nan"}
    return letters if len({letter for value in letters.values() for letter in value}) > 1 else {}


def faded_cells(frame: pd.DataFrame) -> list[bool]:
    """Which rows of a profile or axes table the figures fade: every place not separated from every other
    system (the rank interval wider than one rank, the paired tests not separating it, or untested: no
    bootstrap replicates). The figures draw exactly this."""
    flags = frame["separated"] if "separated" in frame else [None] * len(frame)
    return [not flag for flag in is_separated(flags)]


def _legend(confidence: float, tracks_quality: bool, width: int) -> str:
    parts = [f"Faded: not separated from every other system at {1 - confidence:g} (the comparisons tables' paired "
             f"tests, Holm over all pairs) or untested (no replicates). Brackets: {confidence:.0%} rank interval. "
             "Letters: significance groups; systems sharing a letter are not separated."]
    if tracks_quality:
        parts.append("†: mostly restates quality, left out of the axis ranking.")
    return textwrap.fill(" ".join(parts), width)


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


def _heatmap(axis: plt.Axes, scaled: np.ndarray, faded: np.ndarray, texts: list[list[str]], columns: Sequence[str],
             rows: Sequence[str], title: str, show_rows: bool, cell_points: float = _CELL_POINTS) -> matplotlib.cm.ScalarMappable:
    """One panel: colour = place in column, faded to a light grey where ``faded``; empty where ``scaled`` is NaN."""
    import matplotlib.cm
    import matplotlib.colors
    mappable = matplotlib.cm.ScalarMappable(matplotlib.colors.Normalize(0.0, 1.0), _COLOURS)
    colours = mappable.to_rgba(np.nan_to_num(scaled, nan=0.0))
    colours[..., :3] = np.where(faded[..., None], colours[..., :3] * (1 - _FADE) + _FADE * _FADED_GREY, colours[..., :3])
    colours[~np.isfinite(scaled)] = (1.0, 1.0, 1.0, 0.0)
    axis.imshow(colours, aspect="auto")
    for row_index, row in enumerate(texts):
        for column_index, text in enumerate(row):
            value = scaled[row_index, column_index]
            dark = math.isfinite(value) and value <= 0.6 and not faded[row_index, column_index]
            axis.text(column_index, row_index, text, ha="center", va="center", fontsize=cell_points,
                      color="white" if dark else "black")
    axis.set_xticks(range(len(columns)), columns, rotation=40, ha="right", fontsize=8)
    axis.set_yticks(range(len(rows)), rows if show_rows else [""] * len(rows), fontsize=8)
    axis.set_title(title, fontsize=9)
    axis.tick_params(length=0)
    return mappable


def panel_rows(widths: Sequence[int], most: int = _ROW_COLUMNS) -> list[list[int]]:
    """The axes' panels (their column counts ``widths``, in order) laid out in rows of at most ``most`` columns; an
    axis wider than that has a row of its own. A profile of 20 columns in one row is shown 900 px wide at 5 px text."""
    rows: list[list[int]] = []
    for index, width in enumerate(widths):
        if rows and sum(widths[i] for i in rows[-1]) + width <= most:
            rows[-1].append(index)
        else:
            rows.append([index])
    return rows


def plot_profile(profile: pd.DataFrame, group: str, label: str, outputs: Mapping[str, str | Path], confidence: float = 0.95) -> None:
    """The detailed profile of one group: a panel per axis, systems as rows, measures as columns; a cell's text
    its value and rank (with the rank interval), faded where its place is not separated (:func:`faded_cells`). The
    panels wrap into rows of at most :data:`_ROW_COLUMNS` columns, each column as wide in every row, so the figure
    stays narrow enough for its cell text to be read at the report's width."""
    from nlp_robustness.outputs.figures import plt, save_figure
    frame = profile[profile["group"] == group].assign(faded=lambda rows: faded_cells(rows))
    systems = list(dict.fromkeys(frame["system"]))
    axes_names = axes_order(frame)
    widths = [frame[frame["axis"] == axis]["measure"].nunique() for axis in axes_names]
    layout = panel_rows(widths)
    row_columns = max(sum(widths[index] for index in row) for row in layout)
    most_panels = max(len(row) for row in layout)
    # a cell's text: value, rank (interval), and on a third line the significance letters where a column has them
    lettered = "letters" in frame and any(letters_shown(rows) for _, rows in frame.groupby("measure", sort=False))
    row_height = 1.6 + (0.55 if lettered else 0.42) * len(systems)
    figure = plt.figure(figsize=(1.6 + 0.85 * row_columns + 0.3 * most_panels, 0.6 + row_height * len(layout)),
                        layout="constrained")
    row_figures = np.atleast_1d(figure.subfigures(len(layout), 1))
    tracks = is_separated(frame["tracks_quality"]) if "tracks_quality" in frame else [False] * len(frame)
    marked = set(frame.loc[tracks, "measure"])
    image, first_row_panels = None, []
    for row_figure, row in zip(row_figures, layout):
        spare = row_columns - sum(widths[index] for index in row)  # an empty slot keeps every column as wide
        ratios = [widths[index] for index in row] + ([spare] if spare else [])
        panels = np.atleast_1d(row_figure.subplots(1, len(ratios), gridspec_kw={"width_ratios": ratios}))
        if spare:
            panels[-1].set_axis_off()
        first_row_panels = first_row_panels or list(panels[:len(row)])
        for position, (panel, axis_name) in enumerate(zip(panels, [axes_names[index] for index in row])):
            image = _profile_panel(panel, frame[frame["axis"] == axis_name], systems, marked, axis_name,
                                   show_rows=position == 0) or image
    if image is not None:
        bar = figure.colorbar(image, ax=first_row_panels, fraction=0.02, pad=0.01)
        bar.set_label("place in column (1 = best)", fontsize=8)
    legend_width = 60 + 12 * row_columns  # characters of the legend's font that fit the figure's width
    # the title wrapped to the figure's width (a character about 0.6 of the font size wide): a long study description
    # stays inside the figure
    figure.suptitle(textwrap.fill(f"Robustness profile: {label} (cell: value, #rank (rank interval))",
                                  int(figure.get_figwidth() * 72 / (0.6 * _TITLE_POINTS))), fontsize=_TITLE_POINTS)
    figure.supxlabel(_legend(confidence, bool(marked), legend_width), fontsize=_CELL_POINTS + 1)
    save_figure(figure, outputs)


def _profile_panel(panel: plt.Axes, rows: pd.DataFrame, systems: Sequence[str], marked: set[str], axis_name: str,
                   show_rows: bool) -> matplotlib.cm.ScalarMappable:
    """One axis's panel of :func:`plot_profile`: its measures as columns, a cell's value, rank and letters."""
    measures = list(dict.fromkeys(rows["measure"]))
    scaled = np.full((len(systems), len(measures)), np.nan)
    faded = np.ones((len(systems), len(measures)), dtype=bool)
    texts = [["" for _ in measures] for _ in systems]
    labels = []
    for column, measure in enumerate(measures):
        cells = rows[rows["measure"] == measure].set_index("system")
        labels.append(cells["label"].iloc[0] + (_TRACKS_QUALITY if measure in marked else ""))
        values = np.array([float(cells["value"].get(system, math.nan)) for system in systems])
        scaled[:, column] = _scaled(values, cells["orientation"].iloc[0] == "higher")
        letters = letters_shown(cells.reset_index())
        for row, system in enumerate(systems):
            if system in cells.index and math.isfinite(values[row]):
                cell = cells.loc[system]
                faded[row, column] = bool(cell["faded"])
                texts[row][column] = value_text(values[row]) + (
                    "" if pd.isna(cell["rank"]) else "\n" + rank_text(cell["rank"], cell.get("rank_lo"), cell.get("rank_hi"))
                    + (f"\n{letters[system]}" if system in letters else ""))
    return _heatmap(panel, scaled, faded, texts, labels, systems, axis_name, show_rows=show_rows)


def plot_axes_overview(axes: pd.DataFrame, labels: Mapping[str, str], outputs: Mapping[str, str | Path],
                       confidence: float = 0.95) -> None:
    """Every group's axis rankings in one compact figure: a panel per group, systems as rows, axes as
    columns, the cell the system's rank on the axis (the rank of its mean rank over the axis's columns) with
    its rank interval, faded where its place is not separated (:func:`faded_cells`; colour: 1 = best)."""
    from nlp_robustness.outputs.figures import panel_grid, save_figure
    groups = list(dict.fromkeys(axes["group"]))
    heights = [axes[axes["group"] == group]["system"].nunique() for group in groups]
    # rows of two text lines (rank and interval, then the significance letters) where a group has letters
    lettered = "letters" in axes and any(letters_shown(rows) for _, rows in axes.groupby(["group", "axis"], sort=False))
    figure, panels = panel_grid(len(groups), 1, (_OVERVIEW_WIDTH_INCHES, 1.5 + 0.9 * len(groups) + (0.42 if lettered else 0.3) * sum(heights)),
                                  gridspec_kw={"height_ratios": heights}, layout="constrained")
    image = None
    for panel, group in zip(panels[:, 0], groups):
        frame = axes[axes["group"] == group].assign(faded=lambda rows: faded_cells(rows))
        systems = list(dict.fromkeys(frame["system"]))
        names = axes_order(frame)
        scaled = np.full((len(systems), len(names)), np.nan)
        faded = np.ones((len(systems), len(names)), dtype=bool)
        texts = [["" for _ in names] for _ in systems]
        for column, name in enumerate(names):
            cells = frame[frame["axis"] == name].set_index("system")
            means = np.array([float(cells["mean_rank"].get(system, math.nan)) for system in systems])
            scaled[:, column] = _scaled(means, higher_is_better=False)
            letters = letters_shown(cells.reset_index())
            for row, system in enumerate(systems):
                if system in cells.index:
                    cell = cells.loc[system]
                    faded[row, column] = bool(cell["faded"])
                    texts[row][column] = (rank_text(cell["rank"], cell.get("rank_lo"), cell.get("rank_hi"))
                                          + (f"\n{letters[system]}" if system in letters else ""))
        # a long group label is wrapped: wider than the panel it would run under the colour bar
        image = _heatmap(panel, scaled, faded, texts, names, systems, textwrap.fill(labels.get(group, group), 44), show_rows=True,
                         cell_points=_OVERVIEW_POINTS)
    if image is not None:
        bar = figure.colorbar(image, ax=panels[:, 0].tolist(), fraction=0.03, pad=0.02)
        bar.set_label("place on the axis (1 = best)", fontsize=8)
    figure.supxlabel(_legend(confidence, False, 62), fontsize=_OVERVIEW_POINTS)
    # the report check reads the smallest text's size from the PNG to judge it as displayed
    save_figure(figure, outputs, png_text={TEXT_PX_KEY: f"{_OVERVIEW_POINTS * _FIGURE_DPI / 72:g}"})


def profile_display(profile: pd.DataFrame, group: str) -> pd.DataFrame:
    """One group's profile for reading: a row per measure (axis, column), a column per system holding
    'value [interval] (#rank, rank interval; letters)' as text -- with few systems and many measures, measures down the
    page read better than across it (the CSV keeps a row per system). The letters are the significance groups
    (:func:`letters_shown`: where the column's rows separate a pair)."""
    frame = profile[profile["group"] == group]
    systems = list(dict.fromkeys(frame["system"]))
    rows = []
    for measure, cells in frame.groupby("measure", sort=False):
        row = {"axis": cells["axis"].iloc[0], "measure": cells["label"].iloc[0]}
        by_system = cells.set_index("system")
        letters = letters_shown(cells)
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
                rank = f" (#{cell['rank']}{spread}{'; ' + letters[system] if system in letters else ''})"
            row[system] = f"{text}{rank}"
        rows.append(row)
    return pd.DataFrame(rows, columns=["axis", "measure", *systems])


def profile_markdown(display: pd.DataFrame, label: str) -> str:
    """:func:`profile_display` as Markdown, under its title."""
    return (f"**Robustness profile: {label}** (value [interval] (#rank, rank interval; significance letters: systems "
            "sharing a letter are not separated); rank 1 = best)\n\n" + markdown_table(display))


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
             "axis's robustness columns (colour: 1 = best: the most robust, or the best quality on the quality axis), "
             "with its rank interval in brackets where that is wider than one rank. A faded cell's place is not "
             "separated from every other system by the paired bootstrap tests (or is untested: no replicates), so its "
             "order is not a finding; the reading below names only separated places. Section 1 holds the detailed "
             "profile, its table and the Kendall taus between columns.", ""]
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


def read_axes_table(path: str | Path) -> pd.DataFrame:
    """The axis rankings as the profile stage wrote them (``results/profile/axes.tsv``): rank intervals as
    numbers (empty: none), separated flags as written."""
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""])
