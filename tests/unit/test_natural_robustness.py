"""Natural Robustness (nlp_robustness.statistics.natural_robustness, binomial_intervals): same-response tests,
record samples, the share-unchanged score and its interval (binomial, design effect, cluster bootstrap: values by
hand, determinism, coverage; tests/unit/test_natural_robustness_coverage.py checks coverage on few records)."""

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import CHRF

from nlp_robustness.errors import InputError
from nlp_robustness.sampling import hash_rank, record_order, rng_for, sample_records
from nlp_robustness.statistics.binomial_intervals import (
    BINOMIAL_INTERVALS,
    FLOOR_MARGIN,
    binomial_interval,
    design_effect,
    type_interval,
)
from nlp_robustness.statistics.natural_robustness import (
    FEW_PERTURBATIONS,
    SCORE_COLUMNS,
    few_perturbations,
    natural_robustness_scores,
    normalise_response,
    response_chrf,
    same_chrf,
    same_exact,
)

BOOTSTRAP = {"resamples": 200, "confidence": 0.95, "seed": 7, "labels": ["system", "exact"]}


# --- same response -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, options, expected",
    [
        ("Hello, World!", {}, "hello world"),
        ("Hello, World!", {"casefold": False}, "Hello World"),
        ("Hello, World!", {"punctuation": False}, "hello, world!"),
        ("Ｈｅｌｌｏ　ｗｏｒｌｄ！", {}, "hello world"),  # full-width letters, ideographic space, full-width "!"
        ("ﬁne", {"casefold": False, "punctuation": False}, "fine"),  # ligature (NFKC)
        ("Straße", {}, "strasse"),  # casefold, not lower
        ("  a \t b\n\n c  ", {}, "a b c"),
        ("a , b", {}, "a b"),  # punctuation between spaces leaves one space
        ("don't «stop» — now…", {}, "dont stop now"),  # Po, Pi/Pf, Pd; the ellipsis is NFKC "..."
        ("5 $ + 3 = 8 €", {}, "5 $ + 3 = 8 €"),  # symbols (S*) are kept
        ("", {}, ""),
    ],
)
def test_normalise_response(text, options, expected):
    assert normalise_response(text, **options) == expected


def test_same_exact():
    original = ["The cat sat.", "The cat sat.", "Ｃａｔ", "a  b", "well-known", "x"]
    perturbed = ["the cat sat", "The dog sat.", "cat", "a b", "well known", ""]
    assert same_exact(original, perturbed).tolist() == [True, False, True, True, False, False]
    assert same_exact(original, perturbed, casefold=False).tolist() == [False, False, False, True, False, False]
    assert same_exact(original, perturbed, punctuation=False).tolist() == [False, False, True, True, False, False]
    assert same_exact([], []).dtype == bool


@pytest.mark.parametrize("function", [same_exact, response_chrf])
def test_length_mismatch_and_bad_input(function):
    with pytest.raises(InputError, match="length mismatch"):
        function(["a", "b"], ["a"])
    with pytest.raises(InputError, match="single string"):
        function("ab", "ab")
    with pytest.raises(InputError, match=r"perturbed\[1\]"):
        function(["a", "b"], ["a", None])


def test_response_chrf_is_sacrebleu_chrf_with_original_as_reference():
    original = ["The cat sat on the mat.", "Il pleut.", "short", "A long sentence about nothing at all."]
    perturbed = ["The cat sat on a mat", "Il pleut!", "shirt", "Something entirely different here."]
    chrf = CHRF()
    expected = [chrf.sentence_score(hypothesis, [reference]).score for hypothesis, reference in zip(perturbed, original)]
    np.testing.assert_allclose(response_chrf(original, perturbed), expected)
    assert 0 < response_chrf(original, perturbed)[0] < 100
    # Direction matters: the perturbed response is the hypothesis (chrF2 weighs recall twice).
    expected = chrf.sentence_score("a b c", ["a b c d e f"]).score
    assert response_chrf(["a b c d e f"], ["a b c"])[0] == pytest.approx(expected)


def test_response_chrf_identical_texts_score_100_even_when_empty():
    assert CHRF().sentence_score("", [""]).score == 0  # what sacrebleu gives
    np.testing.assert_array_equal(response_chrf(["", "  ", "Same text."], ["", "  ", "Same text."]), [100, 100, 100])
    assert response_chrf(["something"], [""])[0] == 0


def test_same_chrf():
    np.testing.assert_array_equal(same_chrf([100, 80, 79.9, np.nan], 80), [True, True, False, False])
    for threshold in (-1, 100.5, True):
        with pytest.raises(InputError):
            same_chrf([50], threshold)


# --- record samples -----------------------------------------------------------------------------------------


def _records(n=40):
    parts = ["wmt14", "wmt19"]
    part = [parts[i % 2] for i in range(n)]
    return pd.DataFrame({"record": [f"{part[i]}/{i}" for i in range(n)], "part": part, "item": [str(i) for i in range(n)]})


def test_record_order_is_seeded_and_nested():
    records = _records()
    order = record_order(records, seed=3, group="naive")
    assert order == record_order(records, seed=3, group="naive")
    assert sorted(order) == sorted(records["record"])
    assert order != record_order(records, seed=4, group="naive")
    assert order != record_order(records, seed=3, group="paraphrase")
    ranks = {row.record: hash_rank(3, "naive", row.part, row.item) for row in records.itertuples()}
    assert order == sorted(ranks, key=ranks.__getitem__)
    # A record's rank does not depend on the others: dropping records keeps the rest in the same order.
    subset = records.iloc[::3]
    kept = set(subset["record"])
    assert record_order(subset, seed=3, group="naive") == [record for record in order if record in kept]
    # Nested samples.
    assert sample_records(order, 5) == order[:5]
    assert sample_records(order, 5) == sample_records(order, 8)[:5]
    assert sample_records(order, None) == order
    assert sample_records(order, 1000) == order
    for size in (0, -1, 2.5, True):
        with pytest.raises(InputError):
            sample_records(order, size)


def test_record_order_errors():
    with pytest.raises(InputError, match="item"):
        record_order(_records().drop(columns="item"), seed=1, group="g")
    with pytest.raises(InputError, match="duplicated"):
        record_order(pd.concat([_records(3), _records(3)]), seed=1, group="g")


# --- the score ----------------------------------------------------------------------------------------------

ORDER = ["r1", "r2", "r3", "r4"]
TYPES = ["punctuation", "typo"]
# r2 is skipped by "typo"; r4 by every type (a record without any perturbation).
OUTCOMES = pd.DataFrame(
    [
        ("r1", "punctuation", True), ("r1", "typo", False),
        ("r2", "punctuation", True),
        ("r3", "punctuation", False), ("r3", "typo", False),
    ],
    columns=["record", "type", "same"],
)


def test_scores_by_hand():
    frame = natural_robustness_scores(OUTCOMES, ORDER, [2, None, 10], TYPES, **BOOTSTRAP)
    assert list(frame.columns) == list(SCORE_COLUMNS)
    assert frame["sample"].tolist() == ["2"] * 3 + ["all"] * 3 + ["10"] * 3
    assert frame["type"].tolist() == ["punctuation", "typo", "all"] * 3
    assert frame["records"].tolist() == [2] * 3 + [4] * 6
    assert frame["perturbations"].tolist() == [2, 1, 3] + [3, 2, 5] * 2
    assert frame["unchanged"].tolist() == [2, 0, 2] + [2, 0, 2] * 2
    np.testing.assert_allclose(frame["score"], [1, 0, 2 / 3] + [2 / 3, 0, 0.4] * 2)
    assert (frame["ci_low"] < frame["ci_high"]).all()
    assert frame["interval"].tolist() == ["wilson"] * 9
    # Records r1, r2: punctuation 2 of 2 (Wilson [2 / (2 + z^2), 1] = [0.34, 1], widened to Clopper-Pearson at 0.93:
    # [0.035^(1/2), 1]), typo 0 of 1 (Wilson [0, z^2 / (1 + z^2)] = [0, 0.79]; Clopper-Pearson at 0.93 [0, 0.965]);
    # pooled 2 of 3 (plain Wilson) whose design effect (2/3 of the binomial variance) is clipped to 1.
    first = frame.iloc[:3]
    np.testing.assert_allclose(first[["ci_low", "ci_high"]].to_numpy()[:2], [[0.035**0.5, 1], [0, 0.965]], rtol=1e-6)
    assert first["design_effect"].tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(first[["ci_low", "ci_high"]].to_numpy()[2], np.ravel(binomial_interval(2 / 3, 3, 0.95)))


def test_binomial_intervals_by_hand():
    """Wilson 3 of 10 at 0.95: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n); Clopper-Pearson and
    Jeffreys against scipy's binomtest and the Beta quantiles; a fractional number of trials is allowed."""
    from scipy import stats

    z = 1.959964
    centre, half = 0.3 + z * z / 20, z * np.sqrt(0.021 + z * z / 400)
    np.testing.assert_allclose(np.ravel(binomial_interval(0.3, 10, 0.95)), [(centre - half) / (1 + z * z / 10), (centre + half) / (1 + z * z / 10)], rtol=1e-6)
    exact = stats.binomtest(3, 10).proportion_ci(0.95, method="exact")
    np.testing.assert_allclose(np.ravel(binomial_interval(0.3, 10, 0.95, "clopper-pearson")), [exact.low, exact.high])
    np.testing.assert_allclose(np.ravel(binomial_interval(0.3, 10, 0.9, "jeffreys")), stats.beta.ppf([0.05, 0.95], 3.5, 7.5))
    low, high = binomial_interval([0.5, 0.5], [12.5, 25.0], 0.95)
    assert high[0] - low[0] > high[1] - low[1]  # fewer effective trials: wider
    assert np.isnan(binomial_interval(0.5, 0, 0.95)).all() and np.isnan(binomial_interval(np.nan, 4, 0.95)).all()
    with pytest.raises(InputError, match="wilson"):
        binomial_interval(0.5, 4, 0.95, "wald")


def test_type_interval_is_the_method_widened_to_clopper_pearson_below_the_level():
    """The method's interval, widened to contain Clopper-Pearson at confidence - FLOOR_MARGIN: 3 of 10 keeps
    Wilson's upper end (0.174 > 0.170) and takes Clopper-Pearson's lower end (0.052 < 0.055); 0 of 93 stays
    Wilson's; 3 of 10 is Clopper-Pearson's at 0.93 (it contains Wilson's); Clopper-Pearson at 0.95 already
    contains its 0.93 interval; NaN stays NaN."""
    share, trials = np.array([0.1, 0.0, 0.3, 0.5, 0.5]), np.array([100.0, 93.0, 10.0, 12.0, 0.0])
    for method in BINOMIAL_INTERVALS:
        low, high = type_interval(share, trials, 0.95, method)
        plain, floor = binomial_interval(share, trials, 0.95, method), binomial_interval(share, trials, 0.95 - FLOOR_MARGIN, "clopper-pearson")
        np.testing.assert_array_equal(low[:4], np.minimum(plain[0], floor[0])[:4])
        np.testing.assert_array_equal(high[:4], np.maximum(plain[1], floor[1])[:4])
        assert np.isnan(low[4]) and np.isnan(high[4])
    (low, high), wilson = type_interval(share, trials, 0.95), binomial_interval(share, trials, 0.95)
    assert low[0] == pytest.approx(0.0519, abs=1e-4) and low[0] < wilson[0][0]
    assert high[0] == wilson[1][0] == pytest.approx(0.1744, abs=1e-4)
    assert high[1] == wilson[1][1]
    assert [low[2], high[2]] == pytest.approx([0.0759, 0.6312], abs=1e-4)  # Wilson: [0.108, 0.603]
    np.testing.assert_array_equal(type_interval(share, trials, 0.95, "clopper-pearson")[0][:4],
                                  binomial_interval(share, trials, 0.95, "clopper-pearson")[0][:4])
    np.testing.assert_array_equal(type_interval(0.3, 10, 0.01)[0], binomial_interval(0.3, 10, 0.01)[0])  # no floor level


def test_few_perturbations_marks_types_not_the_pooled_share_nor_the_bootstrap():
    table = pd.DataFrame({
        "type": ["casing", "casing", "casing", "casing", "all", "typo", "identity/natural"],
        "perturbations": [0, 1, FEW_PERTURBATIONS - 1, FEW_PERTURBATIONS, 5, 5, 5],
        "interval": ["", "wilson", "jeffreys", "wilson", "wilson", "cluster-bootstrap", "clopper-pearson"],
    })
    assert few_perturbations(table).tolist() == [False, True, True, False, False, False, True]
    frame = natural_robustness_scores(OUTCOMES, ORDER, [2, None], TYPES, **BOOTSTRAP)
    assert few_perturbations(frame).tolist() == [True, True, False] * 2  # 2, 1 / 3, 2 perturbations; pooled never


def test_design_effect_by_hand():
    """Four records of two perturbations, 2, 2, 0 and 1 unchanged: p = 5/8; the cluster-robust variance
    4/3 * 2.75 / 64 over the binomial 15/64/8 gives 1.9556 (at most M/n = 2)."""
    assert design_effect([2, 2, 2, 2, 0], [2, 2, 0, 1, 0]) == pytest.approx(4 / 3 * 2.75 / 64 / (15 / 512))
    assert design_effect([3, 3, 3], [3, 0, 0]) == 3.0  # perfectly correlated: clipped to M/n, one unit per record
    assert design_effect([1, 1, 1, 1], [1, 0, 1, 0]) == 1.0  # one per record: n/(n-1) clipped to M/n = 1
    assert design_effect([2, 2], [2, 2]) == 1.0 and design_effect([5], [2]) == 1.0 and design_effect([], []) == 1.0
    # Vectorised over leading axes (one design effect per sample), as one by one.
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 4, size=(2, 50, 6))
    same = rng.binomial(counts, rng.random((2, 50, 1)))
    same[0, 0] = counts[0, 0]  # a share of 1: design effect 1
    effects = design_effect(counts, same)
    assert effects.shape == (2, 50) and effects[0, 0] == 1.0
    np.testing.assert_array_equal(effects, [[design_effect(m, y) for m, y in zip(*sample)] for sample in zip(counts, same)])


def test_bootstrap_resamples_whole_records():
    """Replicates recomputed one by one from the same draws: each drawn record brings all its perturbations."""
    resamples, confidence = 50, 0.8
    frame = natural_robustness_scores(
        OUTCOMES, ORDER, [None], TYPES, resamples=resamples, confidence=confidence, seed=11, labels=["s"],
        bootstrap_from_records=4,
    )
    draws = rng_for(11, "natural_robustness", "s", "all").integers(0, len(ORDER), size=(resamples, len(ORDER)))
    for type_name in [*TYPES, "all"]:
        chosen = OUTCOMES if type_name == "all" else OUTCOMES[OUTCOMES["type"] == type_name]
        replicates = []
        for draw in draws:
            drawn = pd.concat([chosen[chosen["record"] == ORDER[position]] for position in draw])
            if len(drawn):
                replicates.append(drawn["same"].sum() / len(drawn))
        row = frame[frame["type"] == type_name].iloc[0]
        if min(replicates) == max(replicates):  # zero width: the binomial interval stays
            assert row["interval"] == "wilson" and row["ci_low"] < row["ci_high"]
            continue
        assert row["interval"] == "cluster-bootstrap" and np.isnan(row["design_effect"])
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(np.quantile(replicates, [0.1, 0.9]))
    assert frame["interval"].tolist() == ["cluster-bootstrap", "wilson", "cluster-bootstrap"]


def test_sample_without_perturbations_gives_nan():
    frame = natural_robustness_scores(OUTCOMES, ["r4", *ORDER[:3]], [1], TYPES, **BOOTSTRAP)
    assert frame["records"].tolist() == [1, 1, 1]
    assert frame["perturbations"].tolist() == [0, 0, 0]
    assert frame[["score", "ci_low", "ci_high", "design_effect"]].isna().all().all()
    assert frame["interval"].tolist() == ["", "", ""]


def test_five_records_all_unchanged_is_no_certainty():
    """Every resample of five agreeing records agrees (the bootstrap's zero width); on 5 perturbations per type
    Wilson's [5 / (5 + z^2), 1] = [0.57, 1] is widened to Clopper-Pearson's at 0.93, [0.035^(1/5), 1] = [0.51, 1];
    Wilson on the 10 pooled ones (design effect 1) gives [0.72, 1]."""
    order = [f"r{i}" for i in range(5)]
    outcomes = pd.DataFrame({"record": order * 2, "type": ["casing"] * 5 + ["typo"] * 5, "same": True})
    for options in ({}, {"bootstrap_from_records": 5}):
        frame = natural_robustness_scores(outcomes, order, [5], ["casing", "typo"], **BOOTSTRAP, **options)
        assert frame["score"].tolist() == [1, 1, 1] and frame["ci_high"].tolist() == [1, 1, 1]
        z2 = 1.959964**2
        np.testing.assert_allclose(frame["ci_low"], [0.035**0.2, 0.035**0.2, 10 / (10 + z2)], rtol=1e-6)
        assert frame["interval"].tolist() == ["wilson"] * 3


def test_scores_errors():
    with pytest.raises(InputError, match="record"):
        natural_robustness_scores(OUTCOMES, ORDER[1:], [None], TYPES, **BOOTSTRAP)
    with pytest.raises(InputError, match="typo"):
        natural_robustness_scores(OUTCOMES, ORDER, [None], ["punctuation"], **BOOTSTRAP)
    with pytest.raises(InputError, match="more than one"):
        natural_robustness_scores(pd.concat([OUTCOMES, OUTCOMES.iloc[:1]]), ORDER, [None], TYPES, **BOOTSTRAP)
    with pytest.raises(InputError, match="boolean"):
        natural_robustness_scores(OUTCOMES.assign(same=1), ORDER, [None], TYPES, **BOOTSTRAP)
    with pytest.raises(InputError, match="pooled"):
        natural_robustness_scores(OUTCOMES, ORDER, [None], [*TYPES, "all"], **BOOTSTRAP)
    bad_arguments = [
        {"resamples": 0}, {"confidence": 1.0}, {"confidence": 0}, {"sizes": [0]}, {"sizes": [2.0]},
        {"sizes": [5, 5]}, {"sizes": [None, None]}, {"order": ORDER + ["r1"]}, {"labels": "system"},
        {"method": "wald"}, {"bootstrap_from_records": 0},
    ]
    for bad in bad_arguments:
        arguments = {"outcomes": OUTCOMES, "order": ORDER, "sizes": [None], "types": TYPES, **BOOTSTRAP, **bad}
        with pytest.raises(InputError):
            natural_robustness_scores(**arguments)


def _bernoulli_outcomes(n_records, share, rng):
    order = [f"r{i}" for i in range(n_records)]
    return order, pd.DataFrame({"record": order, "type": "typo", "same": rng.random(n_records) < share})


def test_determinism_and_independence_of_rows():
    order, outcomes = _bernoulli_outcomes(60, 0.6, np.random.default_rng(0))
    # The binomial intervals draw nothing: the seed does not matter.
    plain = natural_robustness_scores(outcomes, order, [5, None], ["typo"], **BOOTSTRAP)
    pd.testing.assert_frame_equal(plain, natural_robustness_scores(outcomes, order, [5, None], ["typo"], **(BOOTSTRAP | {"seed": 8})))
    arguments = BOOTSTRAP | {"bootstrap_from_records": 1}
    frame = natural_robustness_scores(outcomes, order, [5, 20, None], ["typo"], **arguments)
    pd.testing.assert_frame_equal(frame, natural_robustness_scores(outcomes, order, [5, 20, None], ["typo"], **arguments))
    # A size's rows do not depend on which other sizes are computed, nor on their order.
    alone = natural_robustness_scores(outcomes, order, [None], ["typo"], **arguments)
    pd.testing.assert_frame_equal(frame.iloc[4:].reset_index(drop=True), alone)
    reordered = natural_robustness_scores(outcomes, order, [None, 20, 5], ["typo"], **arguments)
    for sample in ("5", "20", "all"):
        pd.testing.assert_frame_equal(
            frame[frame["sample"] == sample].reset_index(drop=True),
            reordered[reordered["sample"] == sample].reset_index(drop=True),
        )
    # Other labels or another seed: same counts, other intervals.
    for other in ({"labels": ["other", "exact"]}, {"seed": 8}):
        different = natural_robustness_scores(outcomes, order, [5, 20, None], ["typo"], **(arguments | other))
        pd.testing.assert_frame_equal(frame.iloc[:, :6], different.iloc[:, :6])
        assert not np.allclose(frame[["ci_low", "ci_high"]].iloc[2:], different[["ci_low", "ci_high"]].iloc[2:])


# --- coverage -------------------------------------------------------------------------------------------------

REPLICATIONS = 400


def _covers(order, outcomes, types, share, seed):
    arguments = {"resamples": 300, "confidence": 0.95, "seed": seed, "labels": ["coverage"]}
    row = natural_robustness_scores(outcomes, order, [None], types, **arguments).iloc[-1]
    return row["ci_low"] <= share <= row["ci_high"]


def test_coverage_of_independent_outcomes():
    """200 records, one perturbation each, Bernoulli(0.7): the 95 % interval covers 0.7 about 95 % of the time."""
    rng = np.random.default_rng(2024)
    covered = [
        _covers(*_bernoulli_outcomes(200, 0.7, rng), types=["typo"], share=0.7, seed=seed) for seed in range(REPLICATIONS)
    ]
    assert 0.91 <= np.mean(covered) <= 0.98


def test_coverage_of_clustered_outcomes_needs_the_design_effect():
    """150 records x 4 types (each type skips a record with probability 0.2); a record's outcomes share its
    probability p_r ~ Beta(0.7, 0.3) (mean 0.7, intra-record correlation 0.5). The interval on the
    perturbations over the design effect estimated from the records covers the pooled share 0.7 near the
    nominal rate; taking the perturbations as independent (every perturbation its own record: design
    effect 1) under-covers (true design effect about 2.5: expected coverage near 0.78)."""
    rng = np.random.default_rng(99)
    types = ["punctuation", "casing", "typo", "paraphrase"]
    n_records = 150
    order = [f"r{i}" for i in range(n_records)]
    records = np.repeat(np.array(order), len(types))
    type_column = np.tile(np.array(types), n_records)
    cluster, naive = [], []
    for seed in range(REPLICATIONS):
        share = np.repeat(rng.beta(0.7, 0.3, size=n_records), len(types))
        exists = rng.random(share.size) >= 0.2
        same = rng.random(share.size) < share
        outcomes = pd.DataFrame({"record": records[exists], "type": type_column[exists], "same": same[exists]})
        cluster.append(_covers(order, outcomes, types, 0.7, seed))
        singletons = outcomes.assign(record=[f"p{i}" for i in range(len(outcomes))], type="typo")
        naive.append(_covers(singletons["record"].tolist(), singletons, ["typo"], 0.7, seed))
    assert 0.90 <= np.mean(cluster) <= 0.98
    assert np.mean(naive) <= 0.88
