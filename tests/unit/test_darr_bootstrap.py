"""Intervals of DARR tau from a bootstrap over segments and paired tests between metric variants: a small
table worked out by hand, the replicates against a loop over judgements, agreement with
scipy.stats.bootstrap, the engine's bootstrap units, the families and comparisons, the Markdown."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import write_table
from nlp_robustness.outputs.metric_robustness import tau_difference_markdown, tau_interval_markdown
from nlp_robustness.statistics.darr_bootstrap import (
    AVERAGE,
    segment_totals,
    tau_bootstrap,
    tau_differences,
    tau_intervals,
    tau_replicates,
)
from nlp_robustness.statistics.resampling import cluster_design, resample_weights
from nlp_robustness.studies.metric_attack_conditions import CLEAN
from nlp_robustness.studies.metric_attacks import AGREEMENT_KEY_COLUMNS, bootstrap_units, units
from nlp_robustness.studies.metric_tau_uncertainty import ATTACKED_MEAN, tau_comparisons, tau_families, tau_uncertainty_tables

ATTACKED = "visual-p0.3"
#: (pair, line, sid) of six judgements: de-en has segments 1 (three judgements) and 2 (one); lt-en 7 and 8.
JUDGEMENTS = [("de-en", 10, 1), ("de-en", 11, 1), ("de-en", 12, 1), ("de-en", 13, 2), ("lt-en", 20, 7), ("lt-en", 21, 8)]
AGREE = {  # condition -> variant -> agreement of each judgement
    CLEAN: {"chrf": [1, 1, -1, 1, 1, -1], "bertscore_first": [1, -1, -1, 1, 1, 1], "bertscore_last": [1, 1, 1, -1, -1, -1]},
    ATTACKED: {"chrf": [1, -1, -1, -1, 1, 1], "bertscore_first": [-1, -1, -1, 1, 1, 1], "bertscore_last": [1, 1, -1, 1, -1, -1]},
}
VARIANTS = ["chrf", "bertscore_first", "bertscore_last"]


def agreement_table() -> pd.DataFrame:
    rows = []
    for condition, variants in AGREE.items():
        for index, (pair, line, sid) in enumerate(JUDGEMENTS):
            rows.append({"condition": condition, "pair": pair, "line": line, "sid": sid, "unit_id": f"{pair}/{line}",
                         **{variant: values[index] for variant, values in variants.items()}})
    return pd.DataFrame(rows)


def test_estimates_are_the_pairs_taus_and_their_mean_with_counts() -> None:
    result = tau_bootstrap(agreement_table(), VARIANTS, 200, seed=0)
    assert result.pairs == ["de-en", "lt-en"] and result.conditions == [CLEAN, ATTACKED] and result.scopes[-1] == AVERAGE
    assert list(result.judgements) == [4, 2] and list(result.segments) == [2, 2]
    # clean chrF: de-en (1 + 1 - 1 + 1) / 4 = 0.5, lt-en 0, average 0.25
    assert result.estimate[:, 0, 0] == pytest.approx([0.5, 0.0, 0.25])
    assert result.estimate[:, 1, 1] == pytest.approx([-0.5, 1.0, 0.25])  # attacked first layer
    assert result.replicates.shape == (200, 3, 2, 3)
    assert np.allclose(result.replicates[:, 2], result.replicates[:, :2].mean(axis=1))


def test_replicates_equal_a_loop_over_judgements_with_the_shared_weights() -> None:
    table = agreement_table()
    result = tau_bootstrap(table, VARIANTS, 120, seed=3)
    segments = np.array([0, 0, 1, 1])  # segment -> pair: de-en/1, de-en/2, lt-en/7, lt-en/8
    segment_of = {(pair, line): ["de-en/1", "de-en/2", "lt-en/7", "lt-en/8"].index(f"{pair}/{sid}") for pair, line, sid in JUDGEMENTS}
    weights = np.concatenate(list(resample_weights(cluster_design(segments), 120, 3, "metric_robustness", "tau")))
    clean = table[table["condition"] == CLEAN]
    for replicate in (0, 57, 119):
        for pair_index, pair in enumerate(["de-en", "lt-en"]):
            rows = clean[clean["pair"] == pair]
            w = np.array([weights[replicate, segment_of[(pair, line)]] for line in rows["line"]])
            expected = (w * rows["bertscore_last"]).sum() / w.sum()
            assert result.replicates[replicate, pair_index, 0, 2] == pytest.approx(expected)


def test_a_segment_brings_all_its_judgements_and_pairs_keep_their_size() -> None:
    # de-en: segment 1 (three judgements, clean chrF 1, 1, -1) and segment 2 (one, +1): a replicate's tau can
    # only be (1 + 1 - 1) * a / (3a) + ... with a segment drawn whole, never e.g. (1 + 1) / 2
    result = tau_bootstrap(agreement_table(), VARIANTS, 400, seed=1)
    possible = {(1 * a + 1 * b) / (3 * a + b) for a, b in ((2, 0), (1, 1), (0, 2))}
    assert set(np.round(result.replicates[:, 0, 0, 0], 12)) <= {round(value, 12) for value in possible}
    assert len(set(np.round(result.replicates[:, 0, 0, 0], 12))) == 3


def test_the_same_resamples_whatever_the_variants_measured() -> None:
    table = agreement_table()
    everything = tau_bootstrap(table, VARIANTS, 100, seed=5)
    one = tau_bootstrap(table, ["bertscore_last"], 100, seed=5)
    assert np.array_equal(everything.replicates[..., 2], one.replicates[..., 0])
    other_seed = tau_bootstrap(table, ["bertscore_last"], 100, seed=6)
    assert not np.array_equal(other_seed.replicates, one.replicates)


def test_intervals_table_holds_the_estimate_between_its_bounds() -> None:
    intervals = tau_intervals(tau_bootstrap(agreement_table(), VARIANTS, 300, seed=0), 0.95)
    assert list(intervals.columns) == ["condition", "pair", "metric", "tau", "tau_lo", "tau_hi", "judgements", "segments"]
    assert len(intervals) == 2 * 3 * 3
    assert (intervals["tau_lo"] <= intervals["tau_hi"]).all()
    average = intervals[(intervals["pair"] == AVERAGE) & (intervals["condition"] == CLEAN)]
    assert list(average["judgements"]) == [6] * 3 and list(average["segments"]) == [4] * 3


def test_percentile_interval_agrees_with_scipy_bootstrap_over_segments() -> None:
    rng = np.random.default_rng(11)
    sizes = rng.integers(3, 25, size=25)
    probability = rng.beta(4, 2.5, size=25)
    concordant = rng.binomial(sizes, probability)
    sums, counts = (2 * concordant - sizes).astype(float), sizes.astype(float)
    ours = tau_replicates(sums[:, None], counts, np.zeros(25, dtype=np.int64), 20000, 0, "scipy")[:, 0, 0]
    low, high = np.quantile(ours, [0.025, 0.975])
    reference = stats.bootstrap(
        (sums, counts), lambda s, n, axis=-1: s.sum(axis=axis) / n.sum(axis=axis), paired=True, vectorized=True,
        n_resamples=20000, method="percentile", confidence_level=0.95, random_state=np.random.default_rng(0),
    )
    # Monte-Carlo error of a 2.5 % quantile with 20,000 resamples: about 0.1 x the SE of tau here
    tolerance = 0.05 * reference.standard_error + 0.005
    assert low == pytest.approx(reference.confidence_interval.low, abs=tolerance)
    assert high == pytest.approx(reference.confidence_interval.high, abs=tolerance)
    assert np.std(ours, ddof=1) == pytest.approx(reference.standard_error, rel=0.03)


def test_paired_differences_with_holm_per_family() -> None:
    result = tau_bootstrap(agreement_table(), VARIANTS, 500, seed=0)
    comparisons = [("bertscore_first", "bertscore_last"), ("chrf", "chrf")]
    table = tau_differences(result, comparisons, {"clean": [CLEAN], "both": [CLEAN, ATTACKED]}, 0.95)
    assert list(table.columns[6:]) == ["difference", "lo", "hi", "standard_error", "p", "p_holm", "level_adjusted",
                                       "lo_unadjusted", "hi_unadjusted"]
    assert len(table) == 2 * 3 * 2
    same = table[table["metric_a"] == table["metric_b"]]
    assert (same["difference"] == 0).all() and (same["p"] == 1).all()
    both = table[(table["family"] == "both") & (table["pair"] == AVERAGE) & (table["metric_a"] == "bertscore_first")].iloc[0]
    clean_first = result.estimate[2, 0, 1] - result.estimate[2, 0, 2]
    attacked_first = result.estimate[2, 1, 1] - result.estimate[2, 1, 2]
    assert both["difference"] == pytest.approx((clean_first + attacked_first) / 2)
    for _, family in table.groupby("family"):
        p = family["p"].to_numpy()
        order = np.argsort(p, kind="stable")
        expected = np.minimum(1, np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order]))
        assert family["p_holm"].to_numpy()[order] == pytest.approx(expected)
    with pytest.raises(InputError, match="no metric variant 'bleu'"):
        tau_differences(result, [("bleu", "chrf")], {"clean": [CLEAN]}, 0.95)
    with pytest.raises(InputError, match="family 'x'"):
        tau_differences(result, comparisons, {"x": ["keyboard-p0.1"]}, 0.95)


def test_agreement_errors_name_the_judgement() -> None:
    table = agreement_table()
    with pytest.raises(InputError, match="lacks column.*sid"):
        tau_bootstrap(table.drop(columns="sid"), VARIANTS, 10, 0)
    with pytest.raises(InputError, match="de-en line 13 is missing under condition visual-p0.3"):
        tau_bootstrap(table.drop(index=9), VARIANTS, 10, 0)
    with pytest.raises(InputError, match=r"\+1 or -1"):
        tau_bootstrap(table.assign(chrf=0), VARIANTS, 10, 0)
    with pytest.raises(InputError, match="appears twice"):
        tau_bootstrap(pd.concat([table, table.iloc[[0]]]), VARIANTS, 10, 0)


def test_segment_totals() -> None:
    sums, counts = segment_totals(np.array([[1.0, -1], [1, 1], [-1, -1]]), np.array([1, 1, 0]), 3)
    assert sums.tolist() == [[-1, -1], [2, 0], [0, 0]] and counts.tolist() == [1, 2, 0]


def test_bootstrap_units_mean_is_the_condition_units_tau(tmp_path) -> None:
    path = tmp_path / "agreement.tsv"
    write_table(agreement_table(), path, AGREEMENT_KEY_COLUMNS)
    files = {"agreement": str(path)}
    for variant in VARIANTS:
        resampled = bootstrap_units(files, [ATTACKED, CLEAN], variant, "tau", {"bagging_unit": "condition"})
        assert list(resampled.columns) == ["domain", "unit_id", "cluster", "score"]
        assert list(resampled["domain"]) == [ATTACKED] * 6 + [CLEAN] * 6
        assert list(resampled["cluster"][:6]) == ["de-en/1"] * 3 + ["de-en/2", "lt-en/7", "lt-en/8"]
        condition_units = units(files, [ATTACKED, CLEAN], variant, "tau", {"bagging_unit": "condition"})
        means = resampled.groupby("domain", sort=False)["score"].mean()
        assert means.to_dict() == dict(zip(condition_units["domain"], condition_units["score"]))  # exactly equal
    old = tmp_path / "old.tsv"
    write_table(agreement_table().drop(columns="sid"), old, [column for column in AGREEMENT_KEY_COLUMNS if column != "sid"])
    with pytest.raises(InputError, match="lacks column.*sid"):
        bootstrap_units({"agreement": str(old)}, [CLEAN], "chrf", "tau", {"bagging_unit": "condition"})
    assert len(units({"agreement": str(old)}, [CLEAN], "chrf", "tau", {"bagging_unit": "judgement"})) == 6


def test_comparisons_and_families() -> None:
    assert tau_comparisons(["bleu", "chrf", "bertscore_first", "bertscore_last", "bertscore_best"]) == [
        ("bertscore_first", "bertscore_last"), ("bertscore_first", "chrf"), ("bertscore_last", "chrf"), ("bertscore_best", "chrf"),
    ]
    assert tau_comparisons(["bleu", "bertscore_last"]) == []
    families = tau_families([CLEAN, "visual-p0.1", "visual-p0.3", "keyboard-p0.3"])
    assert families == {
        CLEAN: [CLEAN], "visual-p0.1": ["visual-p0.1"], "visual-p0.3": ["visual-p0.3"], "keyboard-p0.3": ["keyboard-p0.3"],
        "visual (mean over p)": ["visual-p0.1", "visual-p0.3"], ATTACKED_MEAN: ["visual-p0.1", "visual-p0.3", "keyboard-p0.3"],
    }
    assert tau_families([CLEAN]) == {CLEAN: [CLEAN]}


def test_uncertainty_tables_and_markdown() -> None:
    intervals, differences = tau_uncertainty_tables(agreement_table(), VARIANTS, [ATTACKED, CLEAN], 200, 0.9, 0)
    assert list(intervals.columns[:5]) == ["condition", "attack", "p", "pair", "metric"]
    assert list(dict.fromkeys(intervals["condition"])) == [ATTACKED, CLEAN]
    assert set(zip(intervals["condition"], intervals["attack"], intervals["p"])) == {(ATTACKED, "visual", 0.3), (CLEAN, "none", 0.0)}
    assert list(dict.fromkeys(differences["family"])) == [ATTACKED, CLEAN, ATTACKED_MEAN]
    text = tau_interval_markdown(intervals, 0.9)
    row = intervals[(intervals["condition"] == CLEAN) & (intervals["pair"] == "de-en") & (intervals["metric"] == "chrf")].iloc[0]
    assert f"| clean | de-en | {row.tau:.3f} [{row.tau_lo:.3f}, {row.tau_hi:.3f}] |" in text
    assert "90% percentile intervals" in text
    markdown = tau_difference_markdown(differences, 0.9)
    assert "BERTScore (first layer) − BERTScore (last layer)" in markdown
    assert markdown.count("not distinguishable at 90%") + markdown.count(" higher |") + markdown.count(" lower |") == len(differences)


def moderate_differences() -> pd.DataFrame:
    """A seeded agreement table of four metrics on three pairs (40 segments of 3 judgements each, a segment
    difficulty shared by every metric): differences of 0.02-0.2 in the chance of agreeing, so that some tests
    pass alone and fail after Holm, and one pair of metrics is separated even after Holm."""
    rng = np.random.default_rng(52)
    chances = {"m0": 0.58, "m1": 0.64, "m2": 0.66, "m3": 0.80}
    rows = []
    for pair in ("de-en", "fi-en", "lt-en"):
        for sid in range(40):
            difficulty = rng.normal(0, 0.15)
            for judgement in range(3):
                rows.append({"condition": CLEAN, "pair": pair, "line": 3 * sid + judgement, "sid": sid,
                             **{metric: 1 if rng.random() < np.clip(chance + difficulty, 0.01, 0.99) else -1
                                for metric, chance in chances.items()}})
    return pd.DataFrame(rows)


def test_the_interval_beside_a_holm_p_is_holm_adjusted() -> None:
    """issue 52, item 4: tau_differences.* printed the unadjusted interval beside the Holm p (30 rows of the
    default run excluded 0 with Holm p >= 0.05). The printed interval excludes 0 exactly when Holm p < alpha;
    the unadjusted one is kept under a name that says so."""
    metrics = ["m0", "m1", "m2", "m3"]
    result = tau_bootstrap(moderate_differences(), metrics, 1000, seed=0)
    comparisons = [(a, b) for index, a in enumerate(metrics) for b in metrics[index + 1:]]
    table = tau_differences(result, comparisons, {CLEAN: [CLEAN]}, 0.95)
    excludes = (table["lo"] > 0) | (table["hi"] < 0)
    assert (excludes == (table["p_holm"] < 0.05)).all()
    unadjusted = (table["lo_unadjusted"] > 0) | (table["hi_unadjusted"] < 0)
    assert (unadjusted & (table["p_holm"] >= 0.05)).sum() >= 3  # the rows the old table contradicted
    assert excludes.sum() >= 1  # and some rows are separated: both sides of the equivalence are tested
    assert ((table["lo"] <= table["lo_unadjusted"]) & (table["hi"] >= table["hi_unadjusted"])).all()  # wider
    markdown = tau_difference_markdown(table, 0.95)
    assert "Hall-Wilson" not in markdown and "Wald test" in markdown
    first = table.iloc[0]
    assert (f"| {first.difference:.3f} [{first.lo:.3f}, {first.hi:.3f}] | "
            f"[{first.lo_unadjusted:.3f}, {first.hi_unadjusted:.3f}] |") in markdown
    assert "| difference [Holm-adjusted interval] | unadjusted interval |" in markdown


def test_tau_differences_print_p_as_every_table_does() -> None:
    """One p formatter (issue 52, item 6): a p below a thousandth prints "< 0.001", never "0.000"."""
    table = pd.DataFrame({"family": ["clean"], "pair": ["de-en"], "metric_a": ["bleu"], "metric_b": ["chrf"],
                          "difference": [-0.2], "lo": [-0.3], "hi": [-0.1], "lo_unadjusted": [-0.28],
                          "hi_unadjusted": [-0.12], "p": [1e-9], "p_holm": [4e-9]})
    markdown = tau_difference_markdown(table, 0.95)
    assert "| < 0.001 | < 0.001 |" in markdown and "0.000" not in markdown
