"""Human judgements: MQM parsers on the real WMT'21 files, the join, rankings, agreement and Kendall tau."""

from __future__ import annotations

import csv
import itertools
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines
from nlp_robustness.data.mqm import error_file_texts, read_mqm_error_texts, read_mqm_segment_scores
from nlp_robustness.statistics.rankings import agreement_table, kendall_tau, rank_values
from nlp_robustness.studies.human_mqm import domain_segments
from nlp_robustness.studies.human_rankings import gamma_name, gamma_summary, ranking_tables
from tests.paths import MIRROR, REPOSITORY

HUMANEVAL = MIRROR / "wmt21-news-humaneval"
NEWS_SCORES = HUMANEVAL / "google-mqm/newstest2021/ende/mqm_newstest2021_ende.avg_seg_scores.tsv"
TED_SCORES = HUMANEVAL / "google-mqm/ted/ende/mqm_ted_ende.avg_seg_scores.tsv"
TED_ERRORS = HUMANEVAL / "google-mqm/ted/ende/mqm_ted_ende.tsv"
needs_mirror = pytest.mark.skipif(not HUMANEVAL.is_dir(), reason=f"offline data mirror not found at {MIRROR}")
DEFAULT = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------
# real files
# --------------------------------------------------------------------------------------------


@needs_mirror
def test_real_segment_counts() -> None:
    news, ted = read_mqm_segment_scores(str(NEWS_SCORES)), read_mqm_segment_scores(str(TED_SCORES))
    assert set(news.groupby("system").size()) == {1002} and news["system"].nunique() == 17
    assert set(ted.groupby("system").size()) == {606} and ted["system"].nunique() == 14
    # MQM rated the same 527 news and 529 TED segments of every system; None marks the others
    for frame, rated in ((news, 527), (ted, 529)):
        per_system = frame[frame["mqm"].notna()].groupby("system")["segment_id"].apply(frozenset)
        assert per_system.nunique() == 1 and len(per_system.iloc[0]) == rated
        assert (frame["mqm"].dropna() <= 0).all()  # published sign: minus the penalty, 0 = perfect


@needs_mirror
def test_every_configured_system_is_mapped_in_both_domains() -> None:
    mapping = DEFAULT["human_studies"]["wmt21-mqm"]["systems"]
    news, ted = read_mqm_segment_scores(str(NEWS_SCORES)), read_mqm_segment_scores(str(TED_SCORES))
    texts = read_mqm_error_texts(str(TED_ERRORS))
    for frame in (news, ted, texts):
        assert set(mapping.values()) <= set(frame["system"])
    assert mapping["NVIDIA-NeMo"] == "Nemo"  # the one name that differs between output files and MQM
    # the output files of the news domain: one line per segment of the source
    for system in mapping:
        path = HUMANEVAL / f"txt/system-outputs/newstest2021.en-de.hyp.{system}.de"
        assert len(read_text_lines(path, segments=True)) == 1002


def _mqm_weight(severity: str, category: str) -> float:
    """Google's MQM weighting (google/wmt-mqm-human-evaluation README): Major 5, Minor 1, Minor
    Fluency/Punctuation 0.1, Non-translation 25."""
    if severity == "No-error":
        return 0.0
    if category.startswith("Non-translation"):
        return 25.0
    if severity == "Major":
        return 5.0
    return 0.1 if category == "Fluency/Punctuation" else 1.0


@needs_mirror
def test_ted_error_rows_reproduce_the_published_segment_scores() -> None:
    """The join of per-error rows (texts) and segment scores is right: the scores recomputed from the error
    rows equal the published ones for every rated (system, segment); MQM's TED reference is 'ref' there and
    'ref-A' in the score file."""
    penalty: dict[tuple[str, str], float] = defaultdict(float)
    raters: dict[tuple[str, str], set[str]] = defaultdict(set)
    with open(TED_ERRORS, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            key = (row["system"], row["seg_id"])
            penalty[key] += _mqm_weight(row["severity"], row["category"])
            raters[key].add(row["rater"])
    scores = read_mqm_segment_scores(str(TED_SCORES)).dropna()
    scores["system"] = scores["system"].replace({"ref-A": "ref"})
    recomputed = [-penalty[(system, segment)] / len(raters[(system, segment)]) for system, segment in
                  zip(scores["system"], scores["segment_id"])]
    assert len(recomputed) == 14 * 529
    np.testing.assert_allclose(recomputed, scores["mqm"], atol=1e-9)
    texts = read_mqm_error_texts(str(TED_ERRORS))
    assert len(texts) == 14 * 529 and not texts["target"].str.contains("<v>|</v>").any()
    assert not texts["source"].str.contains("<v>|</v>").any()


@needs_mirror
def test_real_domains_join_texts_and_scores() -> None:
    systems = {"Facebook-AI": "Facebook-AI", "NVIDIA-NeMo": "Nemo"}
    news_scores = read_mqm_segment_scores(str(NEWS_SCORES))
    outputs = {name: read_text_lines(HUMANEVAL / f"txt/system-outputs/newstest2021.en-de.hyp.{name}.de", segments=True) for name in systems}
    source = read_text_lines(HUMANEVAL / "txt/sources/newstest2021.en-de.src.en", segments=True)
    reference = read_text_lines(HUMANEVAL / "txt/references/newstest2021.en-de.ref.A.de", segments=True)
    news = domain_segments(news_scores, systems, source, reference, outputs, "news")
    assert len(news) == 2 * 527
    first = news.iloc[0]
    assert first["segment_id"] == "1" and first["source"] == source[0] and first["hypothesis"] == outputs["Facebook-AI"][0]
    assert first["human"] == -5.0  # the file's first line: Facebook-AI -5.000000 1
    nemo = news[news["system"] == "NVIDIA-NeMo"].set_index("segment_id")["human"]
    published = news_scores[news_scores["system"] == "Nemo"].set_index("segment_id")["mqm"]
    assert nemo.equals(published.loc[nemo.index])
    source_ted, reference_ted, outputs_ted = error_file_texts(read_mqm_error_texts(str(TED_ERRORS)), systems, "ref", "ted")
    ted = domain_segments(read_mqm_segment_scores(str(TED_SCORES)), systems, source_ted, reference_ted, outputs_ted, "ted")
    assert len(ted) == 2 * 529 and ted["reference"].ne(ted["hypothesis"]).mean() > 0.95
    assert ted.iloc[0]["source"].startswith("I want to ask you all to consider for a second")


# --------------------------------------------------------------------------------------------
# parsers and join on constructed files
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sys score seg\n", "line 1: expected the header"),
        ("system mqm_avg_score seg_id\nA\t-1.0\n", "line 2: expected 3 fields"),
        ("system mqm_avg_score seg_id\nA\tbad 1\n", "line 2: score 'bad' is neither a number nor None"),
        ("system mqm_avg_score seg_id\nA\t-1.0 1\nA -2.0 1\n", "line 3: system A segment 1 is scored twice"),
    ],
)
def test_malformed_score_files_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "scores.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_mqm_segment_scores(str(path))


def test_error_rows_must_agree_on_the_text(tmp_path: Path) -> None:
    path = tmp_path / "errors.tsv"
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"
    path.write_text(header + "A\td\t1\t1\tr\tHello\tHa<v>llo</v>\tX\tMinor\t\n"
                    + "A\td\t1\t1\tr\tHello\tHallo!\tY\tMinor\t\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3: system A segment 1 has another text than on line 2"):
        read_mqm_error_texts(str(path))


def _scores(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["system", "segment_id", "mqm"])


def test_domain_keeps_segments_rated_for_every_system_and_names_missing_mappings() -> None:
    scores = _scores([("a", "1", -1.0), ("a", "2", np.nan), ("a", "3", 0.0), ("b", "1", -5.0), ("b", "2", -2.0), ("b", "3", -0.1)])
    table = domain_segments(scores, {"A": "a", "B": "b"}, ["s1", "s2", "s3"], ["r1", "r2", "r3"],
                            {"A": ["a1", "a2", "a3"], "B": ["b1", "b2", "b3"]}, "news")
    assert table["segment_id"].tolist() == ["1", "3", "1", "3"]
    assert table["hypothesis"].tolist() == ["a1", "a3", "b1", "b3"] and table["human"].tolist() == [-1.0, 0.0, -5.0, -0.1]
    with pytest.raises(InputError, match="system C is called 'c' in the MQM scores, which have no such system"):
        domain_segments(scores, {"A": "a", "C": "c"}, [], [], {}, "news")
    with pytest.raises(InputError, match="the output of B has 2 lines; rated segment 3 is beyond them"):
        domain_segments(scores, {"A": "a", "B": "b"}, ["s1", "s2", "s3"], ["r1", "r2", "r3"],
                        {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}, "news")


# --------------------------------------------------------------------------------------------
# rankings and agreement
# --------------------------------------------------------------------------------------------


def test_gamma_summaries() -> None:
    curve = pd.DataFrame({"epsilon": [1.0, 2.0, 3.0, 4.0], "gamma": [0.1, 0.4, 0.3, 0.0]})
    assert gamma_summary(curve, "area") == pytest.approx(0.2)
    assert gamma_summary(curve, "at", 2.2) == 0.4
    assert gamma_name("bleu", "area") == "mean_gamma_bleu" and gamma_name("human", "at") == "gamma_at_human"
    with pytest.raises(ValueError):
        gamma_summary(curve, "at")


def test_ranks_best_first_with_shared_ties() -> None:
    assert rank_values({"a": 30.0, "b": 25.0, "c": 30.0}, higher_is_better=True) == {"a": 1, "b": 3, "c": 1}
    assert rank_values({"a": 0.2, "b": 0.1, "c": 0.3}, higher_is_better=False) == {"a": 2, "b": 1, "c": 3}


@needs_mirror
def test_hand_checked_ranking_on_a_small_real_subset() -> None:
    """Three systems on the first four (rated) news segments, checked by hand from the published file.

    MQM scores, segments 1-4: Facebook-AI -5 -5 0 0 (mean -2.5, Var 6.25), Nemo -6 -5 -1 -1 (mean -3.25,
    Var 5.1875), UEdin -10 -10 -15 -5 (mean -10, Var 12.5). By mean: Facebook-AI, NVIDIA-NeMo, UEdin; by
    Var (lower = more consistent): NVIDIA-NeMo, Facebook-AI, UEdin. Only UEdin keeps its rank (1/3);
    pairs (FB, NeMo) disagree, (FB, UEdin) and (NeMo, UEdin) agree (2/3); Kendall tau = (2 - 1) / 3.
    """
    systems = {"Facebook-AI": "Facebook-AI", "NVIDIA-NeMo": "Nemo", "UEdin": "UEdin"}
    scores = read_mqm_segment_scores(str(NEWS_SCORES))
    scores = scores[scores["segment_id"].isin(["1", "2", "3", "4"])]
    texts = ["x"] * 4
    table = domain_segments(scores, systems, texts, texts, {name: texts for name in systems}, "news")
    by_system = table.groupby("system", sort=False)["human"]
    means = by_system.mean().to_dict()
    variances = by_system.apply(lambda values: float(np.var(values))).to_dict()
    assert means == {"Facebook-AI": -2.5, "NVIDIA-NeMo": -3.25, "UEdin": -10.0}
    assert variances == {"Facebook-AI": 6.25, "NVIDIA-NeMo": 5.1875, "UEdin": 12.5}
    assert rank_values(means, higher_is_better=True) == {"Facebook-AI": 1, "NVIDIA-NeMo": 2, "UEdin": 3}
    assert rank_values(variances, higher_is_better=False) == {"NVIDIA-NeMo": 1, "Facebook-AI": 2, "UEdin": 3}
    agreement = agreement_table({"mean_human": (means, True), "var_human": (variances, False)},
                                [("mean_human", "var_human")], n_resamples=1000, seed=0).iloc[0]
    assert agreement["position_agreement"] == pytest.approx(100 / 3)
    assert agreement["pairwise_agreement"] == pytest.approx(200 / 3)
    assert agreement["kendall_tau"] == pytest.approx(1 / 3)
    assert agreement["p_value"] == pytest.approx(1.0)  # of the 6 pairings, every one has |tau| >= 1/3


def test_kendall_tau_matches_scipy_and_an_exhaustive_permutation_count() -> None:
    x = [29.3, 29.31, 27.9, 29.0, 27.6, 28.6, 29.5]
    y = [-1.05, -1.44, -1.74, -1.29, -1.64, -1.49, -1.27]
    tau, p_value = kendall_tau(x, y, n_resamples=100000, seed=0)
    assert tau == pytest.approx(stats.kendalltau(x, y).statistic)
    taus = np.array([stats.kendalltau(np.array(x)[list(order)], y).statistic for order in itertools.permutations(range(7))])
    assert p_value == pytest.approx(np.mean(np.abs(taus) >= abs(tau) - 1e-12))
    # with ties, and Monte Carlo when n! exceeds the budget: seeded, hence repeatable
    ties = ([1, 1, 2, 3, 4, 5, 5, 6], [2, 1, 1, 4, 3, 6, 5, 5])
    assert kendall_tau(*ties, n_resamples=500, seed=3) == kendall_tau(*ties, n_resamples=500, seed=3)
    assert np.isnan(kendall_tau([1, 2], [2, 1], 100, 0)[1])


def _synthetic_study(noise: float):
    """Three systems scored by bleu and human: whole-pool summaries, paired replicates around them, and the paired
    verdicts a comparisons table would hold."""
    rng = np.random.default_rng(0)
    point = {  # statistic -> score -> system -> value
        "mean": {"bleu": {"A": 30.0, "B": 20.0, "C": 25.0}, "human": {"A": 0.1, "B": -0.2, "C": 0.0}},
        "cov": {"bleu": {"A": 0.5, "B": 0.7, "C": 0.6}, "human": {"A": 9.0, "B": -3.0, "C": 50.0}},
        "gamma_area": {"bleu": {"A": 0.2, "B": 0.4, "C": 0.3}, "human": {"A": 0.3, "B": 0.1, "C": 0.2}},
        "between_sd": {"bleu": {"A": 1.0, "B": 3.0, "C": 2.0}, "human": {"A": 0.05, "B": 0.02, "C": 0.04}},
    }
    summaries, replicates = {}, {}
    for score in ("bleu", "human"):
        summaries[score] = {s: pd.DataFrame({"left_out": ["none"], "method": ["pool"],
                                             **{stat: [point[stat][score][s]] for stat in point}}) for s in "ABC"}
        replicates[score] = {s: {"none": {stat: point[stat][score][s] + noise * rng.standard_normal(200) for stat in point}}
                             for s in "ABC"}
    rows = [("bleu", "gamma_area", "A", "B", "more consistent"), ("bleu", "gamma_area", "A", "C", "not distinguishable"),
            ("bleu", "gamma_area", "B", "C", "less consistent"), ("bleu", "cov", "A", "B", "more consistent"),
            ("bleu", "cov", "A", "C", "not distinguishable"), ("bleu", "cov", "B", "C", "not distinguishable"),
            ("human", "gamma_area", "A", "B", "less consistent"), ("human", "gamma_area", "A", "C", "less consistent"),
            ("human", "gamma_area", "B", "C", "more consistent")]
    comparisons = {score: pd.DataFrame([{"left_out": "none", "statistic": stat, "row_a": a, "row_b": b, "verdict": v}
                                        for sc, stat, a, b, v in rows if sc == score]) for score in ("bleu", "human")}
    ranking = {"gamma": "area", "permutations": 1000}
    return summaries, replicates, comparisons, ranking


def test_tables_7_and_8_from_paired_replicates_and_verdicts() -> None:
    summaries, replicates, comparisons, ranking = _synthetic_study(noise=1e-9)
    table, pairwise, agreement = ranking_tables(summaries, {}, replicates, comparisons, ["bleu"], ranking, 0, 0.95)
    table = table.set_index("system")
    # Table 7: ranks (1 = best / most consistent) with rank intervals; noise-free replicates pin every rank
    assert table["mean_bleu_rank"].tolist() == [1, 3, 2] and table["mean_gamma_human_rank"].tolist() == [3, 1, 2]
    assert table["between_sd_human_rank"].tolist() == [3, 1, 2] and "cov_human" not in table
    assert (table["mean_gamma_bleu_rank_lo"] == table["mean_gamma_bleu_rank"]).all()
    assert (table["mean_gamma_bleu_rank_hi"] == table["mean_gamma_bleu_rank"]).all()
    # Table 8: a side agrees or disagrees with people only where both verdicts separate the pair
    pairs = pairwise.set_index(["system_a", "system_b"])
    assert pairs.loc[("A", "B"), "mean_gamma_bleu_verdict"] == "A" and pairs.loc[("A", "B"), "mean_gamma_human_verdict"] == "B"
    assert pairs["mean_gamma_bleu_vs_people"].tolist() == ["disagree", "undetermined", "disagree"]
    assert pairs["cov_bleu_vs_people"].tolist() == ["disagree", "undetermined", "undetermined"]
    assert pairs["mean_gamma_bleu_point_agrees"].tolist() == [False, False, False]
    rows = agreement.set_index(["ranking", "reference"])
    gamma = rows.loc[("mean_gamma_bleu", "mean_gamma_human")]
    assert (gamma["pairs_agree"], gamma["pairs_disagree"], gamma["pairs_undetermined"]) == (0, 2, 1)
    assert gamma["kendall_tau"] == pytest.approx(-1.0) and gamma["tau_lo"] == gamma["tau_hi"] == pytest.approx(-1.0)
    assert np.isnan(rows.loc[("mean_bleu", "mean_human"), "pairs_agree"])


def test_noisy_replicates_widen_rank_and_tau_intervals() -> None:
    summaries, replicates, comparisons, ranking = _synthetic_study(noise=1.0)
    table, _, agreement = ranking_tables(summaries, {}, replicates, comparisons, ["bleu"], ranking, 0, 0.95)
    assert (table["mean_gamma_human_rank_lo"] == 1).all() and (table["mean_gamma_human_rank_hi"] == 3).all()
    gamma = agreement.set_index("ranking").loc["mean_gamma_bleu"]
    assert gamma["tau_hi"] - gamma["tau_lo"] > 0.5  # three systems whose values the noise reorders: tau is not determined
