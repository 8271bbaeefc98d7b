"""The perturbation figures read at the width the report shows them (issue 52, item 9; nlp_robustness.outputs.
perturbation_figures): every category its own colour, the beta2 - beta1 axis fitted to where the differences are,
a family whose differences are all 0 saying so, and no text under :data:`MIN_SHOWN_TEXT_PX` at 900 px."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba

import nlp_robustness.outputs.perturbation_figures as perturbation_figures
from nlp_robustness.outputs.figures import MIN_SHOWN_TEXT_PX, plt, shown_text_px
from nlp_robustness.outputs.perturbation_figures import (
    category_colours,
    plot_beta_heatmaps,
    plot_function_similarity,
    plot_robust_vs_faithful,
    plot_scores_vs_alpha_and_length,
)
from nlp_robustness.perturbations.registry import family_module

SYSTEMS = ["apertium-en-es-fr", "apertium-en-ca-fr", "convs2s-tatoeba"]


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[plt.Figure]:
    """Every figure the module saves, kept open for the test (saved as usual, then closed by the test)."""
    figures: list[plt.Figure] = []
    original = perturbation_figures.save_figure

    def keep(figure: plt.Figure, outputs, png_text=None) -> None:
        figures.append(figure)
        for file_format, path in outputs.items():
            figure.savefig(path, format=file_format)

    monkeypatch.setattr(perturbation_figures, "save_figure", keep)
    yield figures
    for figure in figures:
        plt.close(figure)
    assert original is not None


def _scores(functions: list[str], differences: np.ndarray) -> pd.DataFrame:
    """Pair scores of every system on 100 segments per function, beta2 - beta1 = ``differences`` (one per row)."""
    rows = []
    index = 0
    for system in SYSTEMS:
        for function in functions:
            for segment in range(100):
                beta1 = 20.0 + (segment % 7)
                rows.append({"system": system, "function": function, "testset": "wmt14", "segment_id": str(segment),
                             "source_length": 5 + segment % 30, "metric": "bleu", "beta": 30.0, "beta1": beta1,
                             "beta2": beta1 + differences[index], "alpha": 40.0 + segment % 50})
                index += 1
    return pd.DataFrame(rows)


def test_character_attack_categories_get_their_own_colours_and_zero_differences_are_said(tmp_path: Path, drawn) -> None:
    module = family_module("character_attacks")
    functions = ["intrude-p0.1", "disemvowel-p0.1", "keyboard-p0.1"]
    categories = {function: module.instance_category(function) for function in functions}
    assert list(categories.values()) == ["insertion", "deletion", "substitution"]
    colours = category_colours(list(categories.values()))
    assert len(set(colours.values())) == 3 and "tab:grey" not in colours.values()
    scores = _scores(functions, np.zeros(len(SYSTEMS) * len(functions) * 100))  # attacks perturb sources only
    plot_robust_vs_faithful(scores, functions, categories, SYSTEMS, "bleu", {"png": tmp_path / "robust.png"})
    figure = drawn[-1]
    patches = figure.legends[0].get_patches()
    # before: the three categories were one grey
    assert len({to_rgba(patch.get_facecolor(), 1) for patch in patches}) == 3
    assert r"$\beta_2 = \beta_1$ for every segment" in figure._suptitle.get_text()


def test_the_difference_axis_shows_where_the_differences_are(tmp_path: Path, drawn) -> None:
    functions = ["WordShuffle", "NounSwaps", "TreeMirrorPre"]
    categories = {"WordShuffle": "random", "NounSwaps": "pos", "TreeMirrorPre": "tree"}
    generator = np.random.default_rng(0)
    differences = np.where(generator.random(900) < 0.5, 0.0, np.round(generator.normal(0, 1.5, 900), 2))
    differences[[5, 400, 800]] = [-60.0, 45.0, 58.0]  # three segments far out, as on the default run
    plot_robust_vs_faithful(_scores(functions, differences), functions, categories, SYSTEMS, "bleu", {"png": tmp_path / "r.png"})
    figure = drawn[-1]
    function_axis = figure.axes[0]
    low, high = function_axis.get_xlim()
    # before: the axis ran from -60 to 58, the boxes a few pixels wide
    assert -10 < low < -1 and 1 < high < 10
    labels = [label.get_text() for label in function_axis.get_yticklabels()]
    # WordShuffle's differences, every system (rows are system-major, then function, then segment)
    pooled = np.concatenate([differences[system * 300:system * 300 + 100] for system in range(3)])
    assert labels[0] == (f"WordShuffle\n< 0: {np.mean(pooled < 0):.0%} · 0: {np.mean(pooled == 0):.0%} · "
                         f"> 0: {np.mean(pooled > 0):.0%}")
    beyond = int(((differences < low) | (differences > high)).sum())
    assert 3 <= beyond <= 18  # the three far out and a few of the 2 % in the tails
    assert f"axis cut at the 1st and 99th percentiles ({beyond} of 900 differences beyond)" in figure._suptitle.get_text()


def test_every_perturbation_figure_is_readable_at_the_reports_width(tmp_path: Path, drawn) -> None:
    module = family_module("word_order")
    functions = list(module.FUNCTIONS)[:16]
    categories = {function: module.CATEGORIES[function] for function in functions}
    generator = np.random.default_rng(1)
    scores = _scores(functions, np.round(generator.normal(0, 2, len(SYSTEMS) * len(functions) * 100), 2))
    means = scores.groupby(["function", "system"], as_index=False)[["beta1", "beta2"]].mean()
    means["category"] = means["function"].map(categories)
    matrix = np.round(generator.uniform(5, 80, (len(functions), len(functions))))
    np.fill_diagonal(matrix, 100.0)
    similarity = pd.DataFrame(matrix, index=functions, columns=functions)
    plot_robust_vs_faithful(scores, functions, categories, SYSTEMS, "bleu", {"png": tmp_path / "a.png"})
    plot_beta_heatmaps(means, functions, SYSTEMS, "bleu", {"png": tmp_path / "b.png"})
    plot_scores_vs_alpha_and_length(scores, SYSTEMS, "bleu", {"png": tmp_path / "c.png"})
    plot_function_similarity(similarity, categories, "bleu", {"png": tmp_path / "d.png"})
    # before: the scatter figure (15 in wide) showed 6.9 px text, the similarity matrix's cells 8.0 px
    assert [round(shown_text_px(figure), 1) >= MIN_SHOWN_TEXT_PX for figure in drawn] == [True] * 4, \
        [round(shown_text_px(figure), 1) for figure in drawn]
