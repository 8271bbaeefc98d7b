"""Figures of the word-order perturbation study (paper 004, Figures 1, 5, 7, 10 and 11 as analogs).

* :func:`plot_robust_vs_faithful` (Figure 1): per-segment beta2 - beta1 per function and per system;
  left of 0 means the translation of the perturbed source is closer to the gold target (robust) than
  to the perturbed target (faithful).
* :func:`plot_beta_heatmaps` (Figure 5): mean beta1 and beta2, function x system, one colour scale.
* :func:`plot_scores_vs_alpha_and_length` (Figures 7 and 11): per-segment scatter plots with Spearman's rho.
* :func:`plot_function_similarity` (Figure 10): mean kappa(Psi_i(s), Psi_j(s)) between functions.

The paper draws one panel per target language; this workflow has one language pair and several
systems, so systems take the place of languages. Scores are on the 0-100 scale (the paper's Figure 1
is on 0-1). Every figure is written as each format of ``outputs`` (``png``, ``pdf``) atomically; PDFs
carry no creation date, so the same data give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from nlp_robustness.errors import InputError
from nlp_robustness.display_names import MISSING, WORD_ORDER_CATEGORY_NAMES, metric_name
from nlp_robustness.outputs.figures import grid, panel_grid, plt, save_figure
from nlp_robustness.outputs.perturbation_tables import order_by_category

__all__ = [
    "plot_robust_vs_faithful",
    "plot_beta_heatmaps",
    "plot_scores_vs_alpha_and_length",
    "plot_function_similarity",
    "spearman",
    "system_free_points",
]

#: Colour of each word-order category; every other family's categories take the colours of :data:`CATEGORY_PALETTE`
#: in the order they appear (before, they were all grey: the three character-attack categories could not be told apart).
CATEGORY_COLOURS = {"random": "tab:blue", "pos": "tab:orange", "tree": "tab:green"}
CATEGORY_PALETTE = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
OTHER_COLOUR = "tab:grey"

#: The share of all differences the x axis of :func:`plot_robust_vs_faithful` shows: the central 98 % (the tails of a
#: few segments stretched it to +/-60 BLEU while the boxes, a quarter of a point wide, could not be seen).
SHOWN_QUANTILES = (0.01, 0.99)

#: Below this, a difference beta2 - beta1 is 0 (the two scores of one segment, in floating point).
ZERO_DIFFERENCE = 1e-9

#: Axis labels of the per-segment quantities.
QUANTITY_LABELS = {"beta1": r"$\beta_1$ (robustness)", "beta2": r"$\beta_2$ (faithfulness)",
                   "alpha": r"$\alpha$ (source vs perturbed source)", "source_length": "source length (tokens)"}


def category_colours(categories: Sequence[str]) -> dict[str, str]:
    """The colour of every category of ``categories`` (in the order they appear): a word-order category its fixed
    colour, any other the first colour of :data:`CATEGORY_PALETTE` not yet taken, "" (no category) grey."""
    colours: dict[str, str] = {}
    for category in dict.fromkeys(categories):
        if category in CATEGORY_COLOURS:
            colours[category] = CATEGORY_COLOURS[category]
        elif not category:
            colours[category] = OTHER_COLOUR
        else:
            taken = set(colours.values()) | {CATEGORY_COLOURS[known] for known in categories if known in CATEGORY_COLOURS}
            colours[category] = next((colour for colour in CATEGORY_PALETTE if colour not in taken), OTHER_COLOUR)
    return colours


def _palette(functions: Sequence[str], categories: Mapping[str, str]) -> dict[str, str]:
    return category_colours([categories.get(function, "") for function in functions])


def _metric_rows(scores: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of ``metric`` in a fixed order (input order never changes a figure)."""
    selected = scores[scores["metric"] == metric]
    return selected.sort_values(["system", "function", "testset", "segment_id"], kind="mergesort")


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values`` (1-D, no NaN), ties sharing their mean rank: ``scipy.stats.rankdata``'s
    default, whose values are exact (integers and halves), so any correct computation gives the same bits."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.concatenate(([True], ordered[1:] != ordered[:-1]))  # the first of each run of equal values
    counts = np.diff(np.flatnonzero(first), append=len(values))
    ranks = np.empty(len(values), dtype=float)
    ranks[order] = np.repeat(np.arange(1, len(values) + 1, dtype=float)[first] + (counts - 1) / 2, counts)
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho of the pairs without a NaN; NaN (and no warning) for fewer than 2 pairs or a constant side.

    ``scipy.stats.spearmanr(x, y).statistic`` bit for bit (its average ranks, then ``np.corrcoef`` of the
    two rank rows), without importing scipy.stats (about 0.8 s per figure job)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    finite = ~(np.isnan(x) | np.isnan(y))
    x, y = x[finite], y[finite]
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(np.corrcoef(np.vstack((_average_ranks(x), _average_ranks(y))))[1, 0])


def _share_label(label: str, values: np.ndarray) -> str:
    """A row's tick label with the shares of its differences below, at and above 0 (most are exactly 0: a box of
    quartiles alone hides that)."""
    if not len(values):
        return label
    below, above = float(np.mean(values < -ZERO_DIFFERENCE)), float(np.mean(values > ZERO_DIFFERENCE))
    return f"{label}\n< 0: {below:.0%} · 0: {1 - below - above:.0%} · > 0: {above:.0%}"


def _shown_range(groups: Sequence[np.ndarray]) -> tuple[float, float, int, int]:
    """The x range of the box panels (the central :data:`SHOWN_QUANTILES` of every difference, 0 inside, at least
    +/-1 point) and how many of how many differences lie beyond it."""
    values = np.concatenate([group for group in groups if len(group)]) if any(len(group) for group in groups) else np.zeros(1)
    low, high = (float(value) for value in np.quantile(values, SHOWN_QUANTILES))
    low, high = min(low, -1.0), max(high, 1.0)
    pad = 0.05 * (high - low)
    low, high = low - pad, high + pad
    return low, high, int(((values < low) | (values > high)).sum()), len(values)


def _boxes(axis: plt.Axes, groups: Sequence[np.ndarray], labels: Sequence[str], colours: Sequence[str]) -> None:
    """Horizontal box plots, first group at the top; an empty group keeps its row, without a box; each row's label
    carries the shares of its values below, at and above 0."""
    positions = np.arange(len(groups))[::-1]
    filled = [index for index, values in enumerate(groups) if len(values)]
    if filled:
        boxes = axis.boxplot([groups[index] for index in filled], positions=positions[filled],
                             orientation="horizontal", widths=0.6, patch_artist=True, showmeans=True,
                             meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black",
                                        "markersize": 4},
                             flierprops={"marker": ".", "markersize": 2, "alpha": 0.4},
                             medianprops={"color": "black"})
        for patch, index in zip(boxes["boxes"], filled):
            patch.set_facecolor(colours[index])
            patch.set_alpha(0.75)
    axis.set_yticks(positions, [_share_label(label, values) for label, values in zip(labels, groups)], fontsize=9)
    axis.set_ylim(-0.7, len(groups) - 0.3)
    axis.axvline(0.0, color="black", linestyle="--", linewidth=1)
    grid(axis, axis="x")


def plot_robust_vs_faithful(
    scores: pd.DataFrame,
    functions: Sequence[str],
    categories: Mapping[str, str],
    systems: Sequence[str],
    metric: str,
    outputs: Mapping[str, str | Path],
) -> None:
    """Figure 1 analog: distributions of per-segment beta2 - beta1 (a) per function, coloured by
    category, all systems pooled, and (b) per system, all functions pooled. Box: quartiles, line:
    median, diamond: mean; dashed line at 0."""
    name = metric_name(metric)
    rows = _metric_rows(scores, metric)
    difference = rows["beta2"] - rows["beta1"]
    rows = rows.assign(difference=difference)
    by_function = [rows.loc[(rows["function"] == function) & rows["system"].isin(systems), "difference"].to_numpy()
                   for function in functions]
    by_system = [rows.loc[(rows["system"] == system) & rows["function"].isin(functions), "difference"].to_numpy()
                 for system in systems]
    height = max(4.0, 0.5 * len(functions) + 2.0)
    figure, axes = panel_grid(1, 2, (12, height), constrained_layout=True, gridspec_kw={"width_ratios": [1.3, 1]})
    function_axis, system_axis = axes[0]
    palette = _palette(functions, categories)
    _boxes(function_axis, by_function, list(functions), [palette[categories.get(function, "")] for function in functions])
    _boxes(system_axis, by_system, list(systems), ["tab:purple"] * len(systems))
    low, high, beyond, total = _shown_range(by_function)  # every difference once (panel b pools the same ones)
    for axis in (function_axis, system_axis):
        axis.set_xlabel(rf"$\beta_2 - \beta_1$ ({name} points)")
        axis.set_xlim(low, high)
    function_axis.set_title("(a) per perturbation function, systems pooled")
    system_axis.set_title("(b) per system, functions pooled")
    _category_legend(figure, functions, categories)
    reading = "< 0: more robust than faithful"
    if beyond:
        reading += f"; axis cut at the 1st and 99th percentiles ({beyond} of {total} differences beyond)"
    if all(not len(values) or np.all(np.abs(values) <= ZERO_DIFFERENCE) for values in by_function):
        # e.g. a family that perturbs sources only: its perturbed target is the target
        reading = r"$\beta_2 = \beta_1$ for every segment: the perturbed target is the target, so faithfulness and robustness coincide"
    figure.suptitle(rf"Faithfulness minus robustness per segment, sentence {name}: "
                    rf"$\kappa$(perturbed target, $\Phi$(perturbed source)) $-$ $\kappa$(target, $\Phi$(perturbed source))"
                    f"\n{reading}")
    save_figure(figure, outputs)


def _category_legend(figure: plt.Figure, functions: Sequence[str], categories: Mapping[str, str]) -> None:
    """A legend of the categories present, under the figure."""
    present = list(dict.fromkeys(categories.get(function, "") for function in functions))
    palette = _palette(functions, categories)
    figure.legend(handles=[Patch(facecolor=palette[category], alpha=0.75,
                                 label=WORD_ORDER_CATEGORY_NAMES.get(category, category or "other")) for category in present],
                  loc="outside lower center", ncol=len(present), frameon=False)


def _category_runs(functions: Sequence[str], categories: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """(first index, last index, category) of each run of consecutive functions of one category."""
    runs: list[tuple[int, int, str]] = []
    for index, function in enumerate(functions):
        category = categories.get(function, "")
        if runs and runs[-1][2] == category:
            runs[-1] = (runs[-1][0], index, category)
        else:
            runs.append((index, index, category))
    return runs


def _annotated_heatmap(axis: plt.Axes, values: np.ndarray, vmin: float, vmax: float, cmap: str, decimals: int,
                       fontsize: float):
    """Draw ``values`` (NaN cells blank, marked with the missing-value marker) with each value written in its cell; return the image."""
    image = axis.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    for (row, column), value in np.ndenumerate(values):
        if np.isnan(value):
            axis.text(column, row, MISSING, ha="center", va="center", fontsize=fontsize, color="grey")
        else:
            red, green, blue, _ = image.cmap(image.norm(value))
            dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5  # white text on a dark cell
            axis.text(column, row, f"{value:.{decimals}f}", ha="center", va="center", fontsize=fontsize,
                      color="white" if dark else "black")
    return image


def _mark_categories(axis: plt.Axes, functions: Sequence[str], categories: Mapping[str, str], columns: bool) -> None:
    """Colour function tick labels by category and draw a line between categories (rows; columns too if asked)."""
    for run_index, (first, _, _) in enumerate(_category_runs(functions, categories)):
        if run_index:
            axis.axhline(first - 0.5, color="black", linewidth=1.2)
            if columns:
                axis.axvline(first - 0.5, color="black", linewidth=1.2)
    labels = axis.get_yticklabels() + (axis.get_xticklabels() if columns else [])
    palette = _palette(functions, categories)
    for label in labels:
        label.set_color(palette[categories.get(label.get_text(), "")])


def plot_beta_heatmaps(
    means: pd.DataFrame,
    functions: Sequence[str],
    systems: Sequence[str],
    metric: str,
    outputs: Mapping[str, str | Path],
) -> None:
    """Figure 5 analog: mean beta1 (a) and beta2 (b), functions (rows, grouped by category, tick labels
    coloured by category) x systems (columns), one colour scale for both, values written in the cells.
    ``means`` is :func:`~nlp_robustness.outputs.perturbation_tables.means_table`'s output."""
    name = metric_name(metric)
    categories = dict(zip(means["function"], means["category"]))
    ordered = order_by_category(list(functions), categories)
    indexed = means.set_index(["function", "system"])
    panels = {}
    for column in ("beta1", "beta2"):
        panels[column] = np.array([[float(indexed.at[(function, system), column])
                                    if (function, system) in indexed.index else np.nan
                                    for system in systems] for function in ordered])
    both = np.concatenate([panel.ravel() for panel in panels.values()])
    finite = both[~np.isnan(both)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 100.0)
    if vmax <= vmin:
        vmin, vmax = vmin - 1.0, vmax + 1.0
    height = max(4.0, 0.32 * len(ordered) + 2.0)
    width = 2.0 * (1.6 + 0.9 * len(systems)) + 1.0
    figure, axes = panel_grid(1, 2, (width, height), constrained_layout=True, sharey=True)
    titles = {"beta1": r"(a) mean $\beta_1$ (robustness)", "beta2": r"(b) mean $\beta_2$ (faithfulness)"}
    image = None
    for axis, (column, values) in zip(axes[0], panels.items()):
        image = _annotated_heatmap(axis, values, vmin, vmax, "Blues", 1, 8)
        axis.set_xticks(np.arange(len(systems)), list(systems), rotation=30, ha="right")
        axis.set_yticks(np.arange(len(ordered)), ordered)
        axis.set_title(titles[column])
        axis.set_xlabel("system")
        _mark_categories(axis, ordered, categories, columns=False)
    figure.colorbar(image, ax=list(axes[0]), label=f"mean sentence {name}", shrink=0.8)
    _category_legend(figure, ordered, categories)
    figure.suptitle(f"Robustness and faithfulness per perturbation function and system, sentence {name}")
    save_figure(figure, outputs)


#: The six panels of :func:`plot_scores_vs_alpha_and_length`: (y, x, title).
SCATTER_PANELS = (
    ("beta1", "beta2", r"(a) $\beta_1$ vs $\beta_2$"),
    ("alpha", "source_length", r"(b) $\alpha$ vs source length"),
    ("beta1", "source_length", r"(c) $\beta_1$ vs source length"),
    ("beta2", "source_length", r"(d) $\beta_2$ vs source length"),
    ("beta1", "alpha", r"(e) $\beta_1$ vs $\alpha$"),
    ("beta2", "alpha", r"(f) $\beta_2$ vs $\alpha$"),
)


#: The panels whose quantities do not depend on the system: drawn once, from one point per (function, segment).
SYSTEM_FREE_PANELS = frozenset({("alpha", "source_length")})
_SEGMENT_KEYS = ["function", "testset", "segment_id"]


def system_free_points(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (function, test set, segment) of ``rows`` (one metric, any number of systems): alpha and
    the source length depend on the perturbed source only, not on the system that translated it.

    Raises:
        InputError: Two systems have different alpha or source length for the same segment and function
            (their pair-score tables were not computed from the same perturbed test set).
    """
    columns = [*_SEGMENT_KEYS, "alpha", "source_length"]
    distinct = rows[columns].drop_duplicates()
    if distinct.duplicated(_SEGMENT_KEYS).any():
        clash = distinct[distinct.duplicated(_SEGMENT_KEYS, keep=False)].iloc[0]
        raise InputError(
            f"pair scores: the systems disagree on alpha or source length of segment {clash['segment_id']} of "
            f"{clash['testset']} under {clash['function']}: their perturbed test sets differ"
        )
    return distinct.sort_values(_SEGMENT_KEYS, kind="mergesort").reset_index(drop=True)


def plot_scores_vs_alpha_and_length(
    scores: pd.DataFrame,
    systems: Sequence[str],
    metric: str,
    outputs: Mapping[str, str | Path],
) -> None:
    """Figures 7 and 11 analogs: one point per (segment, function) of each system, all functions pooled,
    in six panels (y vs x): beta1 vs beta2, alpha vs source length, beta1 and beta2 vs source length,
    beta1 and beta2 vs alpha. Each system's Spearman rho is in the panel legend (NaN when a side is
    constant). Panel (b) does not depend on the system: it has one point per (function, segment)
    (:func:`system_free_points`) and one rho. Points are drawn without jitter; scatter layers are
    rasterised in the PDF."""
    name = metric_name(metric)
    rows = _metric_rows(scores, metric)
    figure, axes = panel_grid(2, 3, (12, 8.4), constrained_layout=True)  # 15 in wide showed 7 px text in the report
    colours = plt.get_cmap("tab10")
    for axis, (y, x, title) in zip(axes.ravel(), SCATTER_PANELS):
        if (y, x) in SYSTEM_FREE_PANELS:
            points = system_free_points(rows)
            rho = spearman(points[x], points[y])
            axis.scatter(points[x], points[y], s=6, alpha=0.35, color="0.3", linewidths=0, rasterized=True,
                         label=rf"every system ($\rho$ = {rho:.2f}, n = {len(points)})")
        for index, system in enumerate(systems if (y, x) not in SYSTEM_FREE_PANELS else ()):
            points = rows[rows["system"] == system]
            rho = spearman(points[x], points[y])
            axis.scatter(points[x], points[y], s=6, alpha=0.35, color=colours(index % 10), linewidths=0,
                         rasterized=True, label=rf"{system} ($\rho$ = {rho:.2f}, n = {len(points)})")
        axis.set_xlabel(QUANTITY_LABELS[x] + ("" if x == "source_length" else f", {name}"))
        axis.set_ylabel(QUANTITY_LABELS[y] + f", {name}")
        axis.set_title(title)
        grid(axis)
        legend = axis.legend(loc="best", fontsize=9, markerscale=2.5)
        for handle in legend.legend_handles:
            handle.set_alpha(1.0)
    figure.suptitle(f"Per-segment robustness, faithfulness, perturbation distance and length, sentence {name}\n"
                    r"(all perturbation functions pooled; Spearman's $\rho$ per system)")
    save_figure(figure, outputs)


def plot_function_similarity(
    matrix: pd.DataFrame,
    categories: Mapping[str, str],
    metric: str,
    outputs: Mapping[str, str | Path],
) -> None:
    """Figure 10 analog: heatmap of :func:`~nlp_robustness.outputs.perturbation_tables.function_similarity`
    (row: function whose output is the hypothesis, column: the reference), 0-100 colour scale, values in
    the cells, tick labels coloured and blocks separated by category in the matrix's order."""
    name = metric_name(metric)
    functions = [str(function) for function in matrix.index]
    values = matrix.to_numpy(dtype=float)
    size = max(5.0, 0.45 * len(functions) + 2.5)
    figure, axes = panel_grid(1, 1, (size + 1.2, size), constrained_layout=True)
    axis = axes[0, 0]
    image = _annotated_heatmap(axis, values, 0.0, 100.0, "viridis", 0, 8)
    axis.set_xticks(np.arange(len(matrix.columns)), [str(column) for column in matrix.columns],
                    rotation=45, ha="right")
    axis.set_yticks(np.arange(len(functions)), functions)
    axis.set_xlabel(r"$\Psi_j$ (reference)")
    axis.set_ylabel(r"$\Psi_i$ (hypothesis)")
    _mark_categories(axis, functions, categories, columns=list(matrix.columns) == functions)
    _category_legend(figure, functions, categories)
    figure.colorbar(image, ax=axis, label=f"mean sentence {name}", shrink=0.8)
    axis.set_title("Mutual similarity of perturbation functions:\n"
                   rf"mean sentence {name} $\kappa(\Psi_i(s), \Psi_j(s))$" "\nover segments both functions perturbed")
    save_figure(figure, outputs)
