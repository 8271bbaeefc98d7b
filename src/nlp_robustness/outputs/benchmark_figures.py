"""The figure of where the workflow's time goes: wall and CPU seconds per rule, coloured by branch, and each
rule's peak memory (the rows of :func:`nlp_robustness.outputs.benchmarks.rule_summary`)."""

from __future__ import annotations

import pandas as pd

from nlp_robustness.outputs.benchmarks import BRANCHES
from nlp_robustness.outputs.figures import grid, panel_grid, plt

__all__ = ["time_by_rule_figure"]

#: Points of the smallest text (rule names): readable in the report at the figure's shown width.
LABEL_POINTS = 8


def time_by_rule_figure(summary: pd.DataFrame) -> plt.Figure:
    """Two panels sharing the rules (most summed wall time on top): summed wall seconds (bar, the branch's
    colour) with summed CPU seconds (black tick) per rule, and the rule's max RSS in MB."""
    rules = summary.sort_values("wall_s_sum", ascending=True, kind="stable")
    colours = dict(zip(BRANCHES, plt.get_cmap("tab10").colors, strict=False))
    height = max(2.5, 0.22 * len(rules) + 1.2)
    figure, panels = panel_grid(1, 2, (10, height), sharey=True, width_ratios=[3, 1], layout="constrained")
    time_panel, memory_panel = panels[0]
    positions = range(len(rules))
    bar_colours = [colours.get(branch, "grey") for branch in rules["branch"]]
    time_panel.barh(positions, rules["wall_s_sum"], color=bar_colours)
    time_panel.scatter(rules["cpu_s_sum"], positions, marker="|", s=80, color="black", zorder=3, label="CPU s (sum)")
    time_panel.set_yticks(list(positions), rules["rule"], fontsize=LABEL_POINTS)
    time_panel.set_ylim(-0.7, len(rules) - 0.3)
    time_panel.set_xlabel("wall seconds, summed over the rule's jobs (bar); CPU seconds (tick)")
    grid(time_panel, axis="x")
    memory_panel.barh(positions, rules["max_rss_mb"].fillna(0), color=bar_colours)
    memory_panel.set_xlabel("max RSS (MB)")
    grid(memory_panel, axis="x")
    shown = [branch for branch in BRANCHES if branch in set(rules["branch"])]
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[branch]) for branch in shown]
    time_panel.legend(handles + time_panel.get_legend_handles_labels()[0], shown + ["CPU s (sum)"],
                      fontsize=LABEL_POINTS, loc="lower right")
    return figure
