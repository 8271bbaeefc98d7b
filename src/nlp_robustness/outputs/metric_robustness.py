"""Tables and figures of the metric-robustness branch (paper 002 analogs).

* :func:`tau_markdown` / :func:`tau_latex` (Tables 5, 8 and 9): DARR tau of every metric variant per
  pair and the pairs' average, one block per condition (clean first, then attack x level).
* :func:`tau_interval_markdown`: tau [lo, hi] of every metric per condition and pair (segment bootstrap);
  :func:`tau_difference_markdown`: the paired tests of tau differences between metric variants, with a verdict
  and the Holm-adjusted interval that agrees with it.
* :func:`unknown_token_table` (Table 4, Figure 1): average unknown tokens per segment by attack, level, pair.
* :func:`attack_rate_table`: the achieved rates (share of words and characters changed) by attack and level;
  :func:`attacked_source_rates` the same for the attacked sources of the MT systems' test sets.
* :func:`plot_unknown_tokens` (Figure 1), :func:`plot_tau_vs_level` (Figures 2 and 4: tau of each metric
  against p, one panel per attack, the clean tau at p = 0), :func:`plot_tau_by_layer` (Figure 3's layer
  comparison, every hidden layer of BERTScore and the mean of layers).

Tables go through :mod:`nlp_robustness.outputs.table_writer`, figures through the primitives of
:mod:`nlp_robustness.outputs.figures` (PNG and PDF, atomically, no creation date: same data, same bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from nlp_robustness.display_names import METRIC_VARIANT_NAMES, display_name
from nlp_robustness.outputs.table_writer import format_value, latex_cell, latex_escape, latex_row, latex_table, markdown_table, p_value_text
from nlp_robustness.statistics.holm_intervals import separated

if TYPE_CHECKING:
    from nlp_robustness.outputs.figures import plt

# matplotlib is imported by the drawing functions, on first use: the jobs that only write tables start without it.

__all__ = [
    "PAPER_COLUMNS", "RATE_CAPTION", "attack_rate_table", "with_paper_rates", "wordpiece_kept_rate",
    "attacked_source_rates",
    "frame_markdown",
    "plot_tau_by_layer",
    "plot_tau_vs_level",
    "plot_unknown_tokens",
    "tau_difference_markdown",
    "tau_interval_markdown",
    "tau_latex",
    "tau_markdown",
    "unknown_token_latex",
    "unknown_token_table",
]

def _name(variant: str) -> str:
    return display_name(METRIC_VARIANT_NAMES, variant)


def _ordered_unique(values: Sequence) -> list:
    return list(dict.fromkeys(values))


def _tau_pivot(tau: pd.DataFrame) -> tuple[list[str], list[str], dict[tuple[str, str], pd.DataFrame]]:
    conditions = _ordered_unique(tau["condition"])
    pairs = _ordered_unique(tau["pair"])
    blocks = {}
    for condition in conditions:
        selected = tau[tau["condition"] == condition]
        blocks[condition] = selected.pivot(index="metric", columns="pair", values="tau").reindex(
            index=_ordered_unique(selected["metric"]), columns=pairs
        )
    return conditions, pairs, blocks


def tau_markdown(tau: pd.DataFrame, best: pd.DataFrame) -> str:
    """The tau table as GitHub Markdown: one block per condition, metrics as rows, pairs then average as columns."""
    conditions, pairs, blocks = _tau_pivot(tau)
    rows = [[condition, _name(metric), *values] for condition in conditions for metric, values in blocks[condition].iterrows()]
    table = pd.DataFrame(rows, columns=["condition", "metric", *pairs])
    note = ""
    if not best.empty:
        note = " Best layer of each pair (chosen on the other pairs' clean references): " + ", ".join(
            f"{row.pair} {row.best_layer}" for row in best.itertuples()
        ) + "."
    caption = (
        "WMT19 DARR segment-level Kendall-like tau (metric ties count as discordant) of every metric, per pair and "
        f"averaged over pairs, on clean and attacked references.{note}"
    )
    return markdown_table(table, caption=caption, align="ll" + "r" * len(pairs), decimals=3)


def tau_latex(tau: pd.DataFrame) -> str:
    """The tau table as a booktabs LaTeX table (condition blocks separated by rules)."""
    conditions, pairs, blocks = _tau_pivot(tau)
    header = [latex_row(["Condition", "Metric", *map(latex_escape, pairs)])]
    body = []
    for index, condition in enumerate(conditions):
        if index:
            body.append(r"\midrule")
        for metric, values in blocks[condition].iterrows():
            body.append(latex_row([latex_escape(condition), latex_escape(_name(metric)), *(latex_cell(value, 3) for value in values)]))
    caption = "WMT19 DARR Kendall-like tau of each metric on clean and attacked references (metric ties are discordant)."
    return latex_table("ll" + "r" * len(pairs), header, body, caption, "tab:metric-robustness-tau")


def _with_interval(value: float, low: float, high: float, decimals: int = 3) -> str:
    return f"{format_value(value, decimals)} [{format_value(low, decimals)}, {format_value(high, decimals)}]"


def tau_interval_markdown(intervals: pd.DataFrame, confidence: float) -> str:
    """Tau with its percentile interval, "tau [lo, hi]": a row per condition and pair (then the average), a
    column per metric variant."""
    frame = intervals.copy()
    frame["cell"] = [_with_interval(*values) for values in zip(frame["tau"], frame["tau_lo"], frame["tau_hi"])]
    metrics = _ordered_unique(frame["metric"])
    table = frame.pivot(index=["condition", "pair"], columns="metric", values="cell")
    keys = list(dict.fromkeys(zip(frame["condition"], frame["pair"])))
    table = table.reindex(index=pd.MultiIndex.from_tuples(keys, names=["condition", "pair"]), columns=metrics).reset_index()
    table.columns = ["condition", "pair", *(_name(metric) for metric in metrics)]
    caption = (
        f"WMT19 DARR tau (metric ties discordant) with {confidence:.0%} percentile intervals from a bootstrap over "
        "segments (every judgement of a segment, in every condition, drawn together; segments drawn within each pair). "
        "average: the mean of the pairs' taus, its interval from the same resamples."
    )
    return markdown_table(table, caption=caption, align="ll" + "r" * len(metrics))


def tau_difference_markdown(differences: pd.DataFrame, confidence: float) -> str:
    """The paired tests of tau(a) - tau(b): family, pair, comparison, difference [Holm-adjusted interval], the
    unadjusted interval, p, Holm p, verdict (a is higher / lower, or "not distinguishable" at the level
    ``1 - confidence`` after Holm). The verdict and the Holm-adjusted interval beside it say the same
    (:mod:`nlp_robustness.statistics.holm_intervals`)."""
    level = 1 - confidence
    verdicts = []
    for row in differences.itertuples(index=False):
        if not separated(row.p_holm, level):
            verdicts.append(f"not distinguishable at {confidence:.0%}")
        else:
            verdicts.append(f"{_name(row.metric_a)} {'higher' if row.difference > 0 else 'lower'}")
    table = pd.DataFrame({
        "family": differences["family"], "pair": differences["pair"],
        "comparison": [f"{_name(a)} − {_name(b)}" for a, b in zip(differences["metric_a"], differences["metric_b"])],
        "difference [Holm-adjusted interval]": [_with_interval(*values) for values in
                                                zip(differences["difference"], differences["lo"], differences["hi"])],
        "unadjusted interval": [_with_interval(*values).partition(" ")[2] for values in
                                zip(differences["difference"], differences["lo_unadjusted"], differences["hi_unadjusted"])],
        "p": [p_value_text(p) for p in differences["p"]], "Holm p": [p_value_text(p) for p in differences["p_holm"]],
        "verdict": verdicts,
    })
    caption = (
        "Paired bootstrap tests of the difference of two metrics' DARR tau on the same judgements and resamples of "
        "segments: the Wald test of the difference over its bootstrap SE (nlp_robustness.statistics.paired_tests). A "
        "family is a condition, an attack averaged over its levels, or every attacked condition averaged; Holm's "
        "adjustment runs over the tests of one family (comparisons x pairs and their average). 'Holm-adjusted "
        "interval': the interval at the level Holm holds the test to, so it excludes 0 exactly when the verdict "
        f"separates the metrics; 'unadjusted interval': the difference's own symmetric {confidence:.0%} interval, "
        "which ignores the other tests of the family."
    )
    return markdown_table(table, caption=caption, align="lllrrrrl")


def unknown_token_table(references: pd.DataFrame) -> pd.DataFrame:
    """Average unknown tokens per segment: ``attack, p, pair, segments, unknown_tokens`` (every pair, then ``average``)."""
    frame = references.copy()
    frame["p"] = frame["p"].astype(float)
    frame["unknown_tokens"] = frame["unknown_tokens"].astype(float)
    grouped = frame.groupby(["attack", "p", "pair"], sort=False)["unknown_tokens"].agg(["size", "mean"]).reset_index()
    grouped.columns = ["attack", "p", "pair", "segments", "unknown_tokens"]
    average = grouped.groupby(["attack", "p"], sort=False).agg(segments=("segments", "sum"), unknown_tokens=("unknown_tokens", "mean")).reset_index()
    average.insert(2, "pair", "average")
    table = pd.concat([grouped, average], ignore_index=True)
    order = {attack: index for index, attack in enumerate(_ordered_unique(frame["attack"]))}  # clean first, config order
    return table.iloc[np.lexsort((table["p"].to_numpy(), table["attack"].map(order).to_numpy()))].reset_index(drop=True)


def attack_rate_table(references: pd.DataFrame, tokenizer: Any | None = None) -> pd.DataFrame:
    """Achieved rates by attack and level over every pair beside paper 002's (:func:`with_paper_rates`):
    ``attack, p, segments, word_rate, character_rate, edits_per_changed_word, wordpiece_kept`` (with
    ``tokenizer``, a WordPiece ``tokenizers.Tokenizer``: the share of changed words whose WordPiece tokens
    stay the clean word's, from the ``reference`` and ``original`` columns), then the paper's columns."""
    frame = references.copy()
    for column in ("p", "words", "words_changed", "characters", "characters_changed"):
        frame[column] = frame[column].astype(float)
    grouped = frame.groupby(["attack", "p"], sort=False).agg(
        segments=("sid", "size"), words=("words", "sum"), words_changed=("words_changed", "sum"),
        characters=("characters", "sum"), characters_changed=("characters_changed", "sum"),
    ).reset_index()
    grouped["word_rate"] = grouped["words_changed"] / grouped["words"]
    grouped["character_rate"] = grouped["characters_changed"] / grouped["characters"]
    grouped["edits_per_changed_word"] = grouped["characters_changed"] / grouped["words_changed"].where(grouped["words_changed"] > 0)
    columns = ["attack", "p", "segments", "word_rate", "character_rate", "edits_per_changed_word"]
    if tokenizer is not None:
        kept = {key: wordpiece_kept_rate(zip(rows["original"], rows["reference"]), tokenizer)
                for key, rows in frame.groupby(["attack", "p"], sort=False)}
        grouped["wordpiece_kept"] = [kept[attack, p] for attack, p in zip(grouped["attack"], grouped["p"])]
        columns.append("wordpiece_kept")
    return with_paper_rates(grouped[columns])


def wordpiece_kept_rate(pairs: Iterable[tuple[str, str]], tokenizer: Any) -> float:
    """The share of changed whitespace words (paired lines of equal word count) whose WordPiece tokens equal
    the clean word's (:func:`~nlp_robustness.perturbations.attack_calibration.measure`); NaN if none changed."""
    from nlp_robustness.perturbations.attack_calibration import measure

    pairs = list(pairs)
    return measure([clean for clean, _ in pairs], [attacked for _, attacked in pairs], tokenizer).wordpiece_kept_rate


#: The caption of an attack-rates table (``texts``: what was attacked).
RATE_CAPTION = ("Achieved attack rates on the {texts}, per attack and level p, beside paper 002's on its own attacked "
                "WMT19 references (paper_*; nlp_robustness.perturbations.attack_calibration): word_rate, the share of "
                "whitespace words changed; character_rate, of characters (Levenshtein, word by word); "
                "edits_per_changed_word; wordpiece_kept, the share of changed words whose uncased BERT WordPiece "
                "tokens stay the clean word's")

#: Paper 002's rates beside the achieved ones: column -> its index in an entry of ``PAPER_RATES``.
PAPER_COLUMNS: dict[str, int] = {"paper_word_rate": 0, "paper_edits_per_changed_word": 1, "paper_wordpiece_kept": 2}


def with_paper_rates(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (``attack`` and ``p`` columns) with paper 002's rates at the same attack and level
    (:data:`~nlp_robustness.perturbations.attack_calibration.PAPER_RATES`; NaN where it published none, and
    for the clean rows) in :data:`PAPER_COLUMNS`."""
    from nlp_robustness.perturbations.attack_calibration import paper_rate

    table = table.copy()
    rates = [paper_rate(attack, p) for attack, p in zip(table["attack"], table["p"])]
    for column, index in PAPER_COLUMNS.items():
        table[column] = [rate[index] if rate is not None else float("nan") for rate in rates]
    return table


def frame_markdown(frame: pd.DataFrame, caption: str, decimals: int = 3) -> str:
    """A small table as GitHub Markdown (floats rounded to ``decimals``)."""
    return markdown_table(frame, caption=caption, decimals=decimals)


def unknown_token_latex(unknown: pd.DataFrame) -> str:
    """Unknown tokens per segment: attacks x levels as rows, pairs and average as columns."""
    pairs = _ordered_unique(unknown["pair"])
    table = unknown.pivot_table(index=["attack", "p"], columns="pair", values="unknown_tokens", sort=False).reindex(columns=pairs)
    header = [latex_row(["Attack", "$p$", *map(latex_escape, pairs)])]
    body = [latex_row([latex_escape(attack), f"{p:g}", *(latex_cell(value, 2) for value in values)]) for (attack, p), values in table.iterrows()]
    caption = "Average unknown tokens per segment (Algorithm 1 of paper 002; WordPiece vocabulary of bert-base-uncased)."
    return latex_table("lr" + "r" * len(pairs), header, body, caption, "tab:metric-robustness-unknown")


def _with_clean(frame: pd.DataFrame, value: str, keys: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Per attack, its rows plus the clean rows (attack ``none``) at p = 0, sorted by p."""
    clean = frame[frame["attack"] == "none"]
    result = {}
    for attack in _ordered_unique(frame.loc[frame["attack"] != "none", "attack"]):
        rows = pd.concat([clean, frame[frame["attack"] == attack]], ignore_index=True)
        result[attack] = rows.sort_values(["p", *keys], kind="stable")
    return result


def plot_unknown_tokens(unknown: pd.DataFrame, png: str, pdf: str) -> None:
    """Average unknown tokens per segment against p, one line per attack (pairs averaged; Figure 1)."""
    from nlp_robustness.outputs.figures import figure_outputs, grid, panel_grid, save_figure
    average = unknown[unknown["pair"] == "average"]
    figure, axes = panel_grid(1, 1, (5.5, 3.8))
    axis = axes[0, 0]
    for attack, rows in _with_clean(average, "unknown_tokens", []).items():
        axis.plot(rows["p"], rows["unknown_tokens"], marker="o", label=attack)
    axis.set_xlabel("perturbation level p")
    axis.set_ylabel("unknown tokens per segment")
    axis.set_title("Unknown WordPiece tokens in attacked references")
    axis.legend(fontsize=8)
    grid(axis)
    figure.tight_layout()
    save_figure(figure, figure_outputs(png, pdf))


def _attack_panels(
    panels: dict[str, pd.DataFrame], draw: Callable[[plt.Axes, pd.DataFrame], None], ylabel: str,
    legend_columns: int, png: str, pdf: str,
) -> None:
    """One panel per attack (three a row, shared y axis), ``draw`` filling each, one legend below them all."""
    from nlp_robustness.outputs.figures import figure_outputs, grid, panel_grid, save_figure
    columns = min(3, len(panels)) or 1
    rows_count = int(np.ceil(len(panels) / columns)) or 1
    figure, axes = panel_grid(rows_count, columns, (4.2 * columns, 3.3 * rows_count), sharey=True)
    for axis, (attack, rows) in zip(axes.flat, panels.items()):
        draw(axis, rows)
        axis.set_title(attack)
        axis.set_xlabel("p")
        grid(axis)
    for axis in axes[:, 0]:
        axis.set_ylabel(ylabel)
    for axis in list(axes.flat)[len(panels):]:
        axis.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    # 9.5 points: at least 9 px where the report shows the figure 900 px wide (8 points were 7.9 px)
    figure.legend(handles, labels, loc="lower center", ncol=min(len(labels), legend_columns), fontsize=9.5)
    figure.tight_layout(rect=(0, 0.1, 1, 1))
    save_figure(figure, figure_outputs(png, pdf))


def plot_tau_vs_level(tau: pd.DataFrame, png: str, pdf: str, intervals: pd.DataFrame | None = None) -> None:
    """Average tau of every metric variant against p, one panel per attack (Figures 2 and 4); with
    ``intervals`` (the segment bootstrap's ``tau_lo``, ``tau_hi`` per condition, pair and metric) each point
    gets its error bar."""
    from nlp_robustness.outputs.figures import plt
    average = tau[tau["pair"] == "average"].copy()
    average["p"] = average["p"].astype(float)
    if intervals is not None:
        bounds = intervals[intervals["pair"] == "average"][["condition", "metric", "tau_lo", "tau_hi"]]
        average = average.merge(bounds, on=["condition", "metric"], how="left", validate="one_to_one")

    def draw(axis: plt.Axes, rows: pd.DataFrame) -> None:
        metrics = _ordered_unique(rows["metric"])
        for index, metric in enumerate(metrics):
            selected = rows[rows["metric"] == metric]
            if "tau_lo" in selected:
                error = np.vstack([selected["tau"] - selected["tau_lo"], selected["tau_hi"] - selected["tau"]])
                # each metric's bars a little to the side, so that six intervals at one p do not lie on one line
                dodge = (index - (len(metrics) - 1) / 2) * 0.004
                axis.errorbar(selected["p"] + dodge, selected["tau"], yerr=error, marker="o", capsize=2, label=_name(metric))
            else:
                axis.plot(selected["p"], selected["tau"], marker="o", label=_name(metric))

    _attack_panels(_with_clean(average, "tau", ["metric"]), draw, "DARR tau (pair average)", 3, png, pdf)


def plot_tau_by_layer(tau_by_layer: pd.DataFrame, png: str, pdf: str) -> None:
    """Tau of BERTScore at every hidden layer and with the mean of layers, against p, one panel per attack
    (pairs averaged): where the first layer holds up and the top layers fall (Figure 3)."""
    from nlp_robustness.outputs.figures import plt
    frame = tau_by_layer.copy()
    frame["p"] = frame["p"].astype(float)
    frame["layer"] = frame["layer"].astype(str)
    average = frame.groupby(["condition", "attack", "p", "layer"], sort=False)["tau"].mean().reset_index()
    layers = _ordered_unique(average["layer"])
    colours = plt.get_cmap("viridis")(np.linspace(0, 0.9, max(len(layers), 1)))

    def draw(axis: plt.Axes, rows: pd.DataFrame) -> None:
        for colour, layer in zip(colours, layers):
            selected = rows[rows["layer"] == layer]
            label = "mean of layers" if layer == "mean" else f"layer {layer}"
            axis.plot(selected["p"], selected["tau"], "--" if layer == "mean" else "-", marker="o", color=colour, label=label)

    _attack_panels(_with_clean(average, "tau", ["layer"]), draw, "BERTScore DARR tau (pair average)", 4, png, pdf)


def attacked_source_rates(derived: Mapping[str, pd.DataFrame], rate: Callable[[str, str], Any], attack_level: Callable[[str], tuple[str, float]],
                          unit_rate: Callable[[str, str, str], Any] | None = None, tokenizer: Any | None = None) -> pd.DataFrame:
    """Achieved rates of a family's attacked sources, one row per function (``derived``: function -> its
    perturbed test sets' rows, with ``original_source`` and ``source``): ``function, attack, p, segments,
    word_rate, character_rate``, summed over segments as :func:`attack_rate_table` does for references.
    With ``unit_rate`` (``(attack, original, attacked)`` -> an object with ``unit``, ``units`` and
    ``units_changed``: the share the level p sets, in the attack's own unit) also ``unit`` and
    ``unit_rate`` (changed / eligible units, summed over segments) before ``word_rate``. After them
    ``edits_per_changed_word``, with ``tokenizer`` ``wordpiece_kept`` (:func:`wordpiece_kept_rate`), and paper
    002's rates at the same attack and level (:func:`with_paper_rates`)."""
    rows = []
    for function, table in derived.items():
        pairs = list(zip(table["original_source"], table["source"]))
        rates = [rate(original, attacked) for original, attacked in pairs]
        attack, level = attack_level(function)
        words, characters = sum(r.words for r in rates), sum(r.characters for r in rates)
        row = {"function": function, "attack": attack, "p": level, "segments": len(rates)}
        if unit_rate is not None:
            units = [unit_rate(attack, original, attacked) for original, attacked in pairs]
            eligible = sum(u.units for u in units)
            row["unit"] = units[0].unit if units else ""
            row["unit_rate"] = sum(u.units_changed for u in units) / eligible if eligible else float("nan")
        row["word_rate"] = sum(r.words_changed for r in rates) / words if words else float("nan")
        row["character_rate"] = sum(r.characters_changed for r in rates) / characters if characters else float("nan")
        changed = sum(r.words_changed for r in rates)
        row["edits_per_changed_word"] = sum(r.characters_changed for r in rates) / changed if changed else float("nan")
        if tokenizer is not None:
            row["wordpiece_kept"] = wordpiece_kept_rate(pairs, tokenizer)
        rows.append(row)
    unit_columns = ["unit", "unit_rate"] if unit_rate is not None else []
    kept_columns = ["wordpiece_kept"] if tokenizer is not None else []
    columns = ["function", "attack", "p", "segments", *unit_columns, "word_rate", "character_rate", "edits_per_changed_word", *kept_columns]
    return with_paper_rates(pd.DataFrame(rows, columns=columns))
