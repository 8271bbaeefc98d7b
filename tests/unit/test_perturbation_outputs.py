"""Word-order perturbation outputs (paper 004): means, flips, function similarity, and the figures."""

from __future__ import annotations

import functools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.figures import plt
from nlp_robustness.outputs.perturbation_figures import (
    plot_beta_heatmaps,
    plot_function_similarity,
    plot_robust_vs_faithful,
    plot_scores_vs_alpha_and_length,
    spearman,
    system_free_points,
)
from nlp_robustness.outputs.perturbation_table_writer import (
    means_latex_text,
    means_markdown_text,
    write_flip_examples,
    write_means_tables,
    write_over_functions_tables,
)
from nlp_robustness.outputs.perturbation_tables import (
    FLIP_COLUMNS,
    DEFAULT_FLIP_MARGIN,
    MEANS_COLUMNS,
    OVER_FUNCTIONS_COLUMNS,
    flip_examples,
    is_flip,
    function_similarity,
    means_table,
    order_by_category,
    over_functions_table,
)
from nlp_robustness.statistics.perturbation_intervals import family_intervals
from nlp_robustness.scoring.sentence_scores import sentence_scores

FUNCTIONS = ["shuffle", "nounSwap", "treeMirror"]
CATEGORIES = {"shuffle": "random", "nounSwap": "pos", "treeMirror": "tree"}
SYSTEMS = ["sys_b", "sys_a"]  # display order is not alphabetical on purpose


def score_row(system, function, segment, beta, beta1, beta2, alpha, metric="bleu", length=5, testset="wmt"):
    return {"system": system, "function": function, "testset": testset, "segment_id": segment, "source_length": length,
            "metric": metric, "beta": beta, "beta1": beta1, "beta2": beta2, "alpha": alpha}


@pytest.fixture
def scores() -> pd.DataFrame:
    rows = [
        # sys_a, shuffle: flips on segments 2 (gain 10) and 3 (gain 10, tie) -> 2 flips of 3
        score_row("sys_a", "shuffle", "1", 50, 40, 20, 60, length=4),
        score_row("sys_a", "shuffle", "2", 30, 40, 10, 70, length=8),
        score_row("sys_a", "shuffle", "3", 20, 30, 30, 80, length=12),
        # sys_a, nounSwap: one flip (gain 5)
        score_row("sys_a", "nounSwap", "1", 60, 65, 50, 90),
        score_row("sys_a", "nounSwap", "2", 40, 40.005, 20, 85),  # gain 0.005 < DEFAULT_FLIP_MARGIN: no flip
        # sys_b, shuffle: no flip
        score_row("sys_b", "shuffle", "1", 70, 60, 30, 60, length=4),  # alpha and length: the source's, as sys_a's
        score_row("sys_b", "shuffle", "2", 70, 50, 40, 70, length=8),
        score_row("sys_b", "shuffle", "3", 70, 40, 50, 80, length=12),
        score_row("sys_b", "nounSwap", "1", 10, 50, 45, 90),
        score_row("sys_b", "nounSwap", "2", 10, 20, 15, 85),
        # another metric, which must not leak into the BLEU numbers
        score_row("sys_a", "shuffle", "1", 0, 100, 0, 0, metric="chrf"),
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def status() -> pd.DataFrame:
    rows = [("shuffle", str(segment), True, "") for segment in (1, 2, 3)] + [("shuffle", "4", False, "too short")]
    rows += [("nounSwap", "1", True, ""), ("nounSwap", "2", True, ""), ("nounSwap", "3", False, "no noun")]
    rows += [("treeMirror", "1", False, "no parse"), ("treeMirror", "2", False, "no parse")]
    frame = pd.DataFrame(rows, columns=["function", "segment_id", "kept", "reason"])
    return frame.assign(testset="wmt")


@pytest.fixture
def texts(scores: pd.DataFrame) -> pd.DataFrame:
    keys = scores[["system", "function", "testset", "segment_id"]].drop_duplicates()
    return keys.assign(
        source=lambda frame: "source " + frame["segment_id"],
        perturbed_source=lambda frame: frame["function"] + " | " + frame["segment_id"],
        reference=lambda frame: "reference " + frame["segment_id"],
        translation=lambda frame: frame["system"] + " translation",
        perturbed_translation=lambda frame: frame["system"] + " perturbed | translation",
    )


def intervals_of(scores: pd.DataFrame, metric: str = "bleu"):
    return family_intervals(scores, FUNCTIONS, SYSTEMS, metric, resamples=200, confidence=0.95, seed=0, labels=("test",))


@pytest.fixture
def means(scores, status) -> pd.DataFrame:
    return means_table(scores, status, FUNCTIONS, CATEGORIES, SYSTEMS, "bleu", intervals_of(scores))


def test_means_rows_follow_the_given_orders(means: pd.DataFrame) -> None:
    assert list(means.columns) == list(MEANS_COLUMNS)
    assert list(zip(means["system"], means["function"])) == [
        (system, function) for system in SYSTEMS for function in FUNCTIONS]
    assert list(means["category"]) == ["random", "pos", "tree"] * 2


def test_means_values_kept_fractions_and_flips(means: pd.DataFrame) -> None:
    row = means.set_index(["system", "function"]).loc[("sys_a", "shuffle")]
    assert (row["sampled"], row["kept"]) == (4, 3)
    assert row["kept_fraction"] == 0.75
    assert row["beta"] == pytest.approx(100 / 3) and row["beta1"] == pytest.approx(110 / 3)
    assert row["beta2"] == pytest.approx(20.0) and row["alpha"] == pytest.approx(70.0)
    assert row["beta2_minus_beta1"] == pytest.approx(20.0 - 110 / 3)
    assert (row["flips"], row["flip_fraction"]) == (2, pytest.approx(2 / 3))
    noun = means.set_index(["system", "function"]).loc[("sys_a", "nounSwap")]
    assert (noun["sampled"], noun["kept"], noun["kept_fraction"]) == (3, 2, pytest.approx(2 / 3))
    assert (noun["flips"], noun["flip_fraction"]) == (1, 0.5)  # beta1 within FLIP_MARGIN of beta is no flip
    b_noun = means.set_index(["system", "function"]).loc[("sys_b", "nounSwap")]
    assert (b_noun["flips"], b_noun["beta1"], b_noun["beta2_minus_beta1"]) == (2, 35.0, -5.0)
    assert means.set_index(["system", "function"]).at[("sys_b", "shuffle"), "flips"] == 0


def test_means_of_a_function_that_kept_nothing_are_missing(means: pd.DataFrame) -> None:
    tree = means[means["function"] == "treeMirror"]
    assert list(tree["sampled"]) == [2, 2] and list(tree["kept"]) == [0, 0] and list(tree["kept_fraction"]) == [0.0, 0.0]
    assert tree[["beta", "beta1", "beta2", "alpha", "flip_fraction"]].isna().all().all()
    assert list(tree["flips"]) == [0, 0]


def test_means_reject_bad_input(scores, status) -> None:
    with pytest.raises(InputError, match="boolean"):
        means_table(scores, status.assign(kept=status["kept"].astype(str)), FUNCTIONS, CATEGORIES, SYSTEMS, "bleu", intervals_of(scores))
    with pytest.raises(InputError, match="more than one row"):
        means_table(pd.concat([scores, scores.iloc[:1]]), status, FUNCTIONS, CATEGORIES, SYSTEMS, "bleu", intervals_of(scores))
    with pytest.raises(InputError, match="no category"):
        means_table(scores, status, FUNCTIONS, {"shuffle": "random"}, SYSTEMS, "bleu", intervals_of(scores))
    with pytest.raises(InputError, match="give system sys_a, function shuffle, segment wmt/1 twice"):
        intervals_of(pd.concat([scores, scores.iloc[:1]]))
    with pytest.raises(InputError, match="intervals lack system sys_a"):
        only_b = family_intervals(scores, FUNCTIONS, ["sys_b"], "bleu", resamples=20, confidence=0.95, seed=0)
        means_table(scores, status, FUNCTIONS, CATEGORIES, SYSTEMS, "bleu", only_b)


def test_means_carry_intervals_that_hold_the_estimate_and_the_margin(means: pd.DataFrame) -> None:
    rows = means.set_index(["system", "function"])
    for stat in ("beta", "beta1", "beta2", "alpha", "beta2_minus_beta1"):
        scored = rows[rows[stat].notna()]
        assert (scored[f"{stat}_lo"] <= scored[stat] + 1e-9).all() and (scored[stat] <= scored[f"{stat}_hi"] + 1e-9).all()
    # sys_b, shuffle: beta1 60, 50, 40 -> resample means in [40, 60], expanded about 50 by c(3) = 2.69
    assert 50 - 2.7 * 10 <= rows.at[("sys_b", "shuffle"), "beta1_lo"] < 50 < rows.at[("sys_b", "shuffle"), "beta1_hi"] <= 50 + 2.7 * 10
    assert rows.loc[("sys_a", "treeMirror"), ["beta_lo", "beta_hi", "p"]].isna().all()
    assert (means["flip_margin"] == DEFAULT_FLIP_MARGIN).all()
    # p_holm over the functions of a system: never below p, at most 1
    scored = means[means["p"].notna()]
    assert (scored["p_holm"] >= scored["p"]).all() and (scored["p_holm"] <= 1).all()


def test_a_gain_below_the_margin_is_no_flip(scores, status) -> None:
    assert list(is_flip(pd.Series([40.0, 40.0, 2.0]), pd.Series([40.9, 41.1, 2.99]))) == [False, True, False]
    assert list(is_flip(pd.Series([2.0]), pd.Series([2.99]), margin=0.5)) == [True]
    with pytest.raises(ValueError, match="flip margin"):
        is_flip(pd.Series([1.0]), pd.Series([2.0]), margin=-1)
    # sys_a, shuffle gains 10 and 10; sys_b, nounSwap gains 40 and 10: a margin of 10 keeps only the 40
    strict = means_table(scores, status, FUNCTIONS, CATEGORIES, SYSTEMS, "bleu", intervals_of(scores), flip_margin=10)
    assert strict.set_index(["system", "function"])["flips"].to_dict() == {
        ("sys_b", "shuffle"): 0, ("sys_b", "nounSwap"): 1, ("sys_b", "treeMirror"): 0,
        ("sys_a", "shuffle"): 0, ("sys_a", "nounSwap"): 0, ("sys_a", "treeMirror"): 0}
    assert (strict["flip_margin"] == 10).all()


def test_over_functions_table(scores, tmp_path: Path) -> None:
    table = over_functions_table(intervals_of(scores))
    assert list(table.columns) == list(OVER_FUNCTIONS_COLUMNS) and list(table["system"]) == SYSTEMS
    sys_a = table.set_index("system").loc["sys_a"]
    # the mean of the per-function means (shuffle 110/3, nounSwap 52.5002; treeMirror has none)
    assert sys_a["functions"] == 2 and sys_a["beta1"] == pytest.approx((110 / 3 + (65 + 40.005) / 2) / 2)
    assert sys_a["beta1_lo"] <= sys_a["beta1"] <= sys_a["beta1_hi"]
    write_over_functions_tables(table, tmp_path / "over.csv", tmp_path / "over.md", "Over functions.")
    markdown = (tmp_path / "over.md").read_text()
    assert f"| sys_a | 2 | {sys_a['beta']:.2f} [{sys_a['beta_lo']:.2f}, {sys_a['beta_hi']:.2f}] |" in markdown


def test_write_means_tables(means: pd.DataFrame, tmp_path: Path) -> None:
    paths = tmp_path / "means.csv", tmp_path / "means.md", tmp_path / "means.tex"
    write_means_tables(means, *paths, caption="Means of BLEU & co", label="tab:means")
    read = pd.read_csv(paths[0])
    assert read.loc[(read["system"] == "sys_a") & (read["function"] == "shuffle"), "beta"].item() == 100 / 3
    markdown = paths[1].read_text()
    row = means.set_index(["system", "function"]).loc[("sys_a", "shuffle")]
    cells = " | ".join(f"{row[stat]:.2f} [{row[stat + '_lo']:.2f}, {row[stat + '_hi']:.2f}]"
                       for stat in ("beta", "beta1", "beta2", "alpha", "beta2_minus_beta1"))
    cells += f" | [{row['beta2_minus_beta1_lo_unadjusted']:.2f}, {row['beta2_minus_beta1_hi_unadjusted']:.2f}]"
    assert f"| sys_a | shuffle | random | 4 | 3 | 0.750 | {cells} | {row['p']:.3f} | {row['p_holm']:.3f} | 2 | 0.667 |" in markdown
    assert cells.startswith("33.33 [") and "_lo" not in markdown and "margin" in markdown
    assert "| β2 − β1 [Holm-adjusted interval] | β2 − β1 unadjusted interval | p (β2 = β1) | p Holm |" in markdown
    assert "| sys_a | treeMirror | tree | 2 | 0 | 0.000 | \u2013 | \u2013 | \u2013 | \u2013 | \u2013 | \u2013 | \u2013 | \u2013 | 0 | \u2013 |" in markdown
    assert markdown.rstrip().endswith("Means of BLEU & co")
    latex = paths[2].read_text()
    assert f"sys\\_a & shuffle & random & 4 & 3 & 0.750 & {cells.replace(' | ', ' & ')} & {row['p']:.3f} & {row['p_holm']:.3f} & 2 & 0.667 \\\\" in latex
    assert r" & nounSwap & pos & 3 & 2 & 0.667 & 50.00 [" in latex
    assert r"\caption{Means of BLEU \& co}" in latex and r"\label{tab:means}" in latex
    assert r"$\beta_2-\beta_1$" in latex


def test_flip_examples_pick_the_largest_gains_with_ties_by_segment(scores, texts) -> None:
    flips = flip_examples(scores, texts, "bleu", per_function=1)
    assert list(flips.columns) == list(FLIP_COLUMNS)
    # sorted system names when no order is given; sys_a/shuffle ties (gain 10) on segments 2 and 3 -> 2
    assert list(zip(flips["system"], flips["function"], flips["segment_id"])) == [
        ("sys_a", "nounSwap", "1"), ("sys_a", "shuffle", "2"), ("sys_b", "nounSwap", "1")]
    assert list(flips["beta1"] - flips["beta"]) == [5, 10, 40]
    assert flips.loc[1, "perturbed_source"] == "shuffle | 2" and flips.loc[2, "translation"] == "sys_b translation"


def test_flip_examples_follow_given_orders_and_sort_by_gain(scores, texts) -> None:
    flips = flip_examples(scores, texts, "bleu", per_function=3, systems=SYSTEMS, functions=FUNCTIONS)
    assert list(zip(flips["system"], flips["function"], flips["segment_id"])) == [
        ("sys_b", "nounSwap", "1"), ("sys_b", "nounSwap", "2"),  # gains 40, 10
        ("sys_a", "shuffle", "2"), ("sys_a", "shuffle", "3"), ("sys_a", "nounSwap", "1")]
    assert flip_examples(scores, texts, "chrf")["segment_id"].tolist() == ["1"]


def test_flip_examples_need_texts(scores, texts) -> None:
    with pytest.raises(InputError, match="texts lack"):
        flip_examples(scores, texts.drop(index=3), "bleu")  # sys_a, nounSwap, 1 is a flip


def test_write_flip_examples_escapes_pipes(scores, texts, tmp_path: Path) -> None:
    flips = flip_examples(scores, texts, "bleu", per_function=1)
    write_flip_examples(flips, tmp_path / "flips.csv", tmp_path / "flips.md", "Flips.")
    markdown = (tmp_path / "flips.md").read_text()
    assert r"| sys_a | shuffle | wmt | 2 | source 2 | shuffle \| 2 | 30.00 | 40.00 | sys_a translation | "\
           r"sys_a perturbed \| translation | reference 2 |" in markdown
    header = markdown.splitlines()[0]
    assert header.count("|") == len(FLIP_COLUMNS) + 1
    read = pd.read_csv(tmp_path / "flips.csv", dtype={"segment_id": str})
    assert read.loc[1, "perturbed_source"] == "shuffle | 2" and read.loc[0, "beta1"] == 65.0


def test_function_similarity_with_levenshtein() -> None:
    perturbed = pd.DataFrame(
        [("f", "t", "1", "abcd"), ("g", "t", "1", "abce"), ("h", "t", "1", "dcba"),
         ("f", "t", "2", "xy"), ("g", "t", "2", "xy"),  # h skipped segment 2
         ("f", "u", "1", "kkkk")],  # only f kept it
        columns=["function", "testset", "segment_id", "text"])
    score = functools.partial(sentence_scores, metric="levenshtein")
    matrix = function_similarity(perturbed, ["f", "g", "h", "never"], score)
    assert list(matrix.index) == list(matrix.columns) == ["f", "g", "h", "never"]
    assert matrix.at["f", "f"] == 100.0 and matrix.at["h", "h"] == 100.0
    assert matrix.at["f", "g"] == pytest.approx((75.0 + 100.0) / 2)  # one substitution in four, then identical
    assert matrix.at["f", "h"] == pytest.approx(0.0)  # abcd vs dcba: four substitutions
    assert matrix.at["g", "h"] == pytest.approx(0.0)
    values = matrix.to_numpy()
    assert np.allclose(values, values.T, equal_nan=True)  # Levenshtein is symmetric
    assert matrix.loc["never"].isna().all() and matrix["never"].isna().all()


def test_function_similarity_uses_row_as_hypothesis() -> None:
    perturbed = pd.DataFrame([("f", "t", "1", "aa"), ("g", "t", "1", "bbbb")],
                             columns=["function", "testset", "segment_id", "text"])
    calls = []

    def score(hypotheses, references):
        calls.append((hypotheses, references))
        return np.array([len(hypotheses[0]) / len(references[0])])

    matrix = function_similarity(perturbed, ["f", "g"], score)
    assert matrix.at["f", "g"] == 0.5 and matrix.at["g", "f"] == 2.0
    assert calls == [(["aa"], ["bbbb"]), (["bbbb"], ["aa"])]


def test_order_by_category_is_stable() -> None:
    categories = {"a": "tree", "b": "random", "c": "tree", "d": "random"}
    assert order_by_category(["a", "b", "c", "d"], categories) == ["a", "c", "b", "d"]


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 25]) == pytest.approx(0.8)
    assert spearman([1, 2, float("nan"), 4], [1, 2, 3, 4]) == pytest.approx(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(spearman([1, 1, 1], [1, 2, 3])) and math.isnan(spearman([1], [2]))


def test_spearman_is_scipys_bit_for_bit() -> None:
    """spearman goes without scipy.stats but gives spearmanr's statistic exactly, ties included."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(7)
    for trial in range(300):
        size = int(rng.integers(3, 200))
        if trial % 3 == 0:
            x, y = rng.normal(size=size), rng.normal(size=size)
        elif trial % 3 == 1:  # many ties
            x, y = rng.integers(0, 5, size).astype(float), rng.integers(0, 3, size).astype(float)
        else:  # scores on a 0-100 scale against lengths
            x, y = np.round(rng.uniform(0, 100, size), 1), rng.integers(1, 60, size).astype(float)
        if np.all(x == x[0]) or np.all(y == y[0]):
            continue
        assert spearman(x, y) == float(spearmanr(x, y).statistic)


def _figures(tmp_path: Path, name: str) -> dict[str, Path]:
    return {"png": tmp_path / f"{name}.png", "pdf": tmp_path / f"{name}.pdf"}


def _draw_all(scores, means, tmp_path: Path) -> dict[str, dict[str, Path]]:
    outputs = {name: _figures(tmp_path, name) for name in ("robust", "heatmaps", "scatter", "similarity")}
    plot_robust_vs_faithful(scores, FUNCTIONS, CATEGORIES, SYSTEMS, "bleu", outputs["robust"])
    plot_beta_heatmaps(means, FUNCTIONS, SYSTEMS, "bleu", outputs["heatmaps"])
    plot_scores_vs_alpha_and_length(scores, SYSTEMS, "levenshtein", outputs["scatter"])  # no rows: empty panels
    plot_scores_vs_alpha_and_length(scores, SYSTEMS, "bleu", outputs["scatter"])
    matrix = pd.DataFrame([[100.0, 40.0, np.nan], [40.0, 100.0, 10.0], [np.nan, 10.0, 100.0]],
                          index=FUNCTIONS, columns=FUNCTIONS)
    plot_function_similarity(matrix, CATEGORIES, "levenshtein", outputs["similarity"])
    return outputs


def test_alpha_against_length_has_one_point_per_function_and_segment(scores: pd.DataFrame) -> None:
    rows = scores[scores["metric"] == "bleu"]
    points = system_free_points(rows)
    assert len(rows) == 10 and len(points) == len(rows[["function", "testset", "segment_id"]].drop_duplicates()) == 5
    assert points[["function", "segment_id", "alpha", "source_length"]].values.tolist() == [
        ["nounSwap", "1", 90, 5], ["nounSwap", "2", 85, 5], ["shuffle", "1", 60, 4], ["shuffle", "2", 70, 8],
        ["shuffle", "3", 80, 12]]
    clash = rows.copy()
    clash.loc[(clash["system"] == "sys_b") & (clash["function"] == "shuffle") & (clash["segment_id"] == "2"), "alpha"] = 71
    with pytest.raises(InputError, match="segment 2 of wmt under shuffle"):
        system_free_points(clash)


def test_panel_b_draws_alpha_once(scores: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = []
    original = plt.Axes.scatter

    def recording_scatter(axis, x, y, *args, **kwargs):
        drawn.append((axis, len(x)))
        return original(axis, x, y, *args, **kwargs)

    monkeypatch.setattr(plt.Axes, "scatter", recording_scatter)
    plot_scores_vs_alpha_and_length(scores, SYSTEMS, "bleu", _figures(tmp_path, "scatter"))
    counts = [(axis.get_title()[:3], count) for axis, count in drawn]  # titles are set after the points
    assert [count for title, count in counts if title == "(b)"] == [5]  # one layer, a point per (function, segment)
    assert [count for title, count in counts if title == "(a)"] == [5, 5]  # a layer per system elsewhere


def test_figures_are_written_and_pdfs_are_deterministic(scores, means, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a constant input to Spearman's rho must not warn
        first = _draw_all(scores, means, tmp_path / "first")
        second = _draw_all(scores.sample(frac=1.0, random_state=0), means, tmp_path / "second")
    for name, paths in first.items():
        png, pdf = paths["png"].read_bytes(), paths["pdf"].read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000, name
        assert pdf.startswith(b"%PDF-") and b"CreationDate" not in pdf, name
        # same data (rows shuffled) give the same PDF bytes
        assert second[name]["pdf"].read_bytes() == pdf, name
    assert not list(tmp_path.rglob("*.part"))


def test_means_print_p_as_every_table_does(means: pd.DataFrame) -> None:
    """One p formatter (issue 52, item 6): a p below a thousandth prints "< 0.001" in Markdown and LaTeX, never
    "0.000"."""
    tiny = means.assign(p=1e-40, p_holm=1e-39)
    markdown, latex = means_markdown_text(tiny, "caption"), means_latex_text(tiny, "caption", "tab:x")
    assert markdown.count("| < 0.001 | < 0.001 |") == len(tiny)
    assert latex.count(r"\textless{} 0.001 & \textless{} 0.001") == len(tiny)
