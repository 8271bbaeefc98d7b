"""WMT19 DARR: the newstest2019 and DARR readers on the real mirror, their errors, and the Kendall-like tau."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu

from nlp_robustness.data.wmt19 import (
    DARR_COLUMNS,
    check_darr_systems,
    darr_system_name,
    read_darr,
    read_lines,
    system_of_output_file,
)
from nlp_robustness.errors import InputError
from nlp_robustness.sampling import sample_sids
from nlp_robustness.statistics.darr import darr_tau, pair_agreement, tau_table
from tests.paths import MIRROR

NEWSTEST = MIRROR / "wmt19-newstest2019-to-en"
DARR_FILE = MIRROR / "wmt19-darr-subset" / "RR-seglevel.recovered.csv"
needs_mirror = pytest.mark.skipif(not DARR_FILE.is_file(), reason=f"offline data mirror not found at {MIRROR}")

HEADER = "LP DATA SID BETTER WORSE\n"


def reference_file(pair: str) -> Path:
    source, target = pair.split("-")
    return NEWSTEST / "references" / f"newstest2019-{source}{target}-ref.{target}"


def output_files(pair: str) -> dict[str, Path]:
    return {system_of_output_file(path, pair): path for path in sorted((NEWSTEST / "system-outputs" / pair).iterdir())}


@pytest.fixture(scope="module")
def darr() -> pd.DataFrame:
    if not DARR_FILE.is_file():
        pytest.skip(f"offline data mirror not found at {MIRROR}")
    return read_darr(DARR_FILE)


def write(tmp_path: Path, text: str, name: str = "RR-seglevel.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# --- segment files and system names ---------------------------------------------------------------------


@needs_mirror
def test_every_output_file_name_of_the_mirror_parses_and_matches_its_reference():
    for pair_dir in sorted((NEWSTEST / "system-outputs").iterdir()):
        pair = pair_dir.name
        reference = read_lines(reference_file(pair))
        for system, path in output_files(pair).items():
            assert path.name == f"newstest2019.{system}.{pair}"
            assert len(read_lines(path, expected=len(reference))) == len(reference)
    assert system_of_output_file(NEWSTEST / "system-outputs/lt-en/newstest2019.MSRA.MASS.6945.lt-en", "lt-en") == "MSRA.MASS.6945"
    assert len(read_lines(reference_file("lt-en"))) == 1000
    assert read_lines(reference_file("lt-en"))[2] == "The hearing started with testifying by the defendants."


@pytest.mark.parametrize("name", ["newstest2019.online-A.0.de-en", "newstest2018.online-A.0.lt-en",
                                  "newstest2019..lt-en", "online-A.0.lt-en", "newstest2019.lt-en"])
def test_an_output_file_name_of_another_form_is_an_error_naming_it(name):
    with pytest.raises(InputError, match=rf"{name}: not a lt-en system output file name"):
        system_of_output_file(f"/data/{name}", "lt-en")


def test_read_lines_removes_only_the_line_break(tmp_path):
    path = write(tmp_path, " one \r\ntwo\u2028still two\n\nlast without break", "lines.txt")
    assert read_lines(path) == [" one ", "two\u2028still two", "", "last without break"]
    assert read_lines(write(tmp_path, "", "empty.txt")) == []
    assert read_lines(write(tmp_path, "a\n", "one.txt"), expected=1) == ["a"]


def test_read_lines_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    with pytest.raises(InputError, match=r"bad\.txt: line 3: invalid UTF-8"):
        read_lines(path)
    with pytest.raises(InputError, match=r"two\.txt: 2 lines, expected 3"):
        read_lines(write(tmp_path, "a\nb\n", "two.txt"), expected=3)


# --- the DARR file --------------------------------------------------------------------------------------


@needs_mirror
def test_read_darr_on_the_mirror(darr):
    assert tuple(darr.columns) == DARR_COLUMNS
    assert darr.groupby("pair").size().to_dict() == {"gu-en": 20110, "kk-en": 9728, "lt-en": 21862}
    assert darr["sid"].dtype == np.int64 and darr["sid"].min() >= 1
    first = darr.iloc[0]
    assert (first["pair"], first["sid"], first["better"], first["worse"], first["line"]) == (
        "gu-en", 452, "CUNI-T2T-transfer-guen.6431", "UEDIN.6534", 2)
    assert darr["line"].tolist() == list(range(2, len(darr) + 2))
    assert (darr["better"] != darr["worse"]).all()
    lithuanian = read_darr(DARR_FILE, ["lt-en"])
    assert len(lithuanian) == 21862 and set(lithuanian["pair"]) == {"lt-en"}
    assert lithuanian["line"].iloc[0] == int(darr.loc[darr["pair"] == "lt-en", "line"].iloc[0])


@needs_mirror
def test_a_requested_pair_without_rows_is_an_error_naming_pair_and_file():
    with pytest.raises(InputError, match=r"RR-seglevel\.recovered\.csv: no DARR rows for pair\(s\) de-en"):
        read_darr(DARR_FILE, ["lt-en", "de-en"])


@pytest.mark.parametrize(("body", "message"), [
    ("lt-en newstest2019 3 online-A.0\n", r"line 3: 4 fields, expected 5"),
    ("lt-en newstest2019 3 online-A.0 online-B.0 extra\n", r"line 3: 6 fields, expected 5"),
    ("lt-en newstest2019 three online-A.0 online-B.0\n", r"line 3: SID 'three' is not an integer >= 1"),
    ("lt-en newstest2019 0 online-A.0 online-B.0\n", r"line 3: SID '0' is not an integer >= 1"),
    ("lt-en newstest2019 -2 online-A.0 online-B.0\n", r"line 3: SID '-2' is not an integer >= 1"),
    ("lt-en newstest2019 2.5 online-A.0 online-B.0\n", r"line 3: SID '2.5' is not an integer >= 1"),
    ("lt-en newstest2019 3 online-A.0 online-A.0\n", r"line 3: BETTER and WORSE are the same system 'online-A.0'"),
    ("lt-en newstest2018 3 online-A.0 online-B.0\n", r"line 3: DATA is 'newstest2018', expected 'newstest2019'"),
    ("\n", r"line 3: 0 fields, expected 5"),
])
def test_a_bad_darr_line_is_an_error_naming_file_and_line(tmp_path, body, message):
    path = write(tmp_path, HEADER + "lt-en newstest2019 1 online-A.0 online-B.0\n" + body)
    with pytest.raises(InputError, match=r"RR-seglevel\.csv: " + message):
        read_darr(path)


@pytest.mark.parametrize("header", ["LP DATA SID WORSE BETTER\n", "lt-en newstest2019 1 online-A.0 online-B.0\n", ""])
def test_a_bad_darr_header_is_an_error_naming_line_1(tmp_path, header):
    path = write(tmp_path, header + "lt-en newstest2019 2 online-A.0 online-B.0\n")
    with pytest.raises(InputError, match=r"RR-seglevel\.csv: line 1: header is .*expected 'LP DATA SID BETTER WORSE'"):
        read_darr(path)


def test_darr_system_names_with_the_pair_appended_are_output_file_names(tmp_path):
    # The official WMT19 RR-seglevel.csv writes zh-en systems as "<SYSTEM>.zh-en", other pairs as "<SYSTEM>".
    assert darr_system_name("online-A.0.zh-en", "zh-en") == "online-A.0"
    assert darr_system_name("MSRA.MASS.6942.zh-en", "zh-en") == "MSRA.MASS.6942"
    assert darr_system_name("online-A.0", "zh-en") == "online-A.0"
    assert darr_system_name("online-A.0.zh-en", "lt-en") == "online-A.0.zh-en"
    path = write(tmp_path, HEADER + "zh-en newstest2019 7 KSAI-system.6927.zh-en online-A.0.zh-en\n"
                 "lt-en newstest2019 3 online-A.0 JUMT.6616\n")
    frame = read_darr(path)
    assert frame[["pair", "sid", "better", "worse", "line"]].values.tolist() == [
        ["zh-en", 7, "KSAI-system.6927", "online-A.0", 2], ["lt-en", 3, "online-A.0", "JUMT.6616", 3]]
    check_darr_systems(frame, {"zh-en": {"KSAI-system.6927", "online-A.0"}, "lt-en": {"online-A.0", "JUMT.6616"}},
                       {"zh-en": 2000, "lt-en": 1000}, path)


# --- consistency of DARR with the outputs ---------------------------------------------------------------


@needs_mirror
def test_check_darr_systems_passes_for_lt_en_and_names_a_withheld_system(darr):
    lithuanian = darr[darr["pair"] == "lt-en"]
    outputs = output_files("lt-en")
    segments = {"lt-en": len(read_lines(reference_file("lt-en")))}
    check_darr_systems(lithuanian, {"lt-en": outputs}, segments, DARR_FILE)
    check_darr_systems(lithuanian, {"lt-en": set(outputs)}, segments, DARR_FILE)

    withheld = "tilde-c-nmt.6876"
    partial = {system: path for system, path in outputs.items() if system != withheld}
    # The first lt-en row naming the withheld system, found by a plain loop over the file.
    expected_line = None
    with open(DARR_FILE, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if fields[0] == "lt-en" and withheld in fields[3:]:
                expected_line = number
                break
    assert expected_line is not None
    with pytest.raises(InputError) as caught:
        check_darr_systems(lithuanian, {"lt-en": partial}, segments, DARR_FILE)
    message = str(caught.value)
    assert message.startswith(f"{DARR_FILE}: line {expected_line}: ")
    assert f"'{withheld}' of lt-en has no output file" in message


@needs_mirror
def test_check_darr_systems_names_an_sid_beyond_the_reference_and_a_pair_without_outputs(darr):
    lithuanian = darr[darr["pair"] == "lt-en"]
    outputs = {"lt-en": set(output_files("lt-en"))}
    first = lithuanian[lithuanian["sid"] > 500].iloc[0]
    with pytest.raises(InputError, match=rf"line {first['line']}: SID {first['sid']} is beyond the 500 lines of the lt-en reference"):
        check_darr_systems(lithuanian, outputs, {"lt-en": 500}, DARR_FILE)
    with pytest.raises(InputError, match=rf"line {lithuanian['line'].iloc[0]}: pair lt-en has no system outputs"):
        check_darr_systems(lithuanian, {}, {"lt-en": 1000}, DARR_FILE)


# --- sampling -------------------------------------------------------------------------------------------


@needs_mirror
def test_sample_sids_is_seeded_nested_sorted_and_distinct(darr):
    lithuanian = darr[darr["pair"] == "lt-en"]
    every = sample_sids(lithuanian, None, 1, "lt-en")
    assert every == sorted(set(lithuanian["sid"])) and len(every) == 974
    assert sample_sids(lithuanian, 5000, 1, "lt-en") == every
    small, large = sample_sids(lithuanian, 50, 1, "lt-en"), sample_sids(lithuanian, 200, 1, "lt-en")
    assert len(small) == 50 and len(large) == 200 and small == sorted(small)
    assert set(small) <= set(large)
    assert sample_sids(lithuanian.iloc[::-1], 50, 1, "lt-en") == small  # row order does not matter
    assert sample_sids(lithuanian, 50, 2, "lt-en") != small
    assert sample_sids(lithuanian, 0, 1, "lt-en") == []
    with pytest.raises(ValueError, match="other pairs"):
        sample_sids(darr, 50, 1, "lt-en")


# --- the Kendall-like tau -------------------------------------------------------------------------------


def scores_frame(values: dict[tuple[str, int], float]) -> pd.DataFrame:
    return pd.DataFrame([(system, sid, score) for (system, sid), score in values.items()],
                        columns=["system", "sid", "score"])


def test_a_metric_tie_is_discordant_and_tau_is_conc_minus_disc_over_all():
    darr = pd.DataFrame({"sid": [1, 1, 2, 2], "better": ["A", "A", "B", "C"], "worse": ["B", "C", "A", "A"]})
    scores = scores_frame({("A", 1): 0.5, ("B", 1): 0.2, ("C", 1): 0.5, ("A", 2): 0.1, ("B", 2): 0.9, ("C", 2): 0.0})
    # rows: A>B concordant, A=C tie -> discordant, B>A concordant, C<A discordant
    assert pair_agreement(darr, scores).tolist() == [1.0, -1.0, 1.0, -1.0]
    assert darr_tau(darr, scores) == 0.0
    assert darr_tau(darr.iloc[:1], scores) == 1.0
    assert darr_tau(darr.iloc[1:2], scores) == -1.0


def test_missing_duplicated_or_undefined_scores_are_errors_naming_system_and_sid():
    darr = pd.DataFrame({"sid": [1, 2], "better": ["A", "A"], "worse": ["B", "B"], "line": [2, 3]})
    with pytest.raises(InputError, match=r"no score for system B, sid 2 \(DARR line 3\)"):
        pair_agreement(darr, scores_frame({("A", 1): 1.0, ("B", 1): 0.0, ("A", 2): 1.0}))
    duplicated = pd.concat([scores_frame({("A", 1): 1.0, ("B", 1): 0.0}), scores_frame({("A", 1): 2.0})])
    with pytest.raises(InputError, match=r"two scores for system A, sid 1"):
        pair_agreement(darr, duplicated)
    with pytest.raises(InputError, match=r"score of system B, sid 2 is not a number"):
        pair_agreement(darr, scores_frame({("A", 1): 1.0, ("B", 1): 0.0, ("A", 2): 1.0, ("B", 2): float("nan")}))
    with pytest.raises(ValueError, match="undefined"):
        darr_tau(darr.iloc[:0], scores_frame({("A", 1): 1.0}))


def test_scores_are_looked_up_by_pair_when_both_tables_have_one():
    darr = pd.DataFrame({"pair": ["lt-en", "kk-en"], "sid": [1, 1], "better": ["online-B.0", "online-B.0"],
                         "worse": ["online-G.0", "online-G.0"]})
    scores = pd.DataFrame({"pair": ["lt-en", "lt-en", "kk-en", "kk-en"], "system": ["online-B.0", "online-G.0"] * 2,
                           "sid": [1, 1, 1, 1], "score": [0.9, 0.1, 0.1, 0.9]})
    assert pair_agreement(darr, scores).tolist() == [1.0, -1.0]
    with pytest.raises(ValueError, match="pair column"):
        pair_agreement(darr, scores.drop(columns="pair"))
    table = tau_table(darr, {"m": scores})
    assert table[["pair", "metric", "tau", "concordant", "discordant", "pairs"]].values.tolist() == [
        ["lt-en", "m", 1.0, 1, 0, 1], ["kk-en", "m", -1.0, 0, 1, 1]]


def sentence_scores(darr: pd.DataFrame, pair: str, metric) -> pd.DataFrame:
    """``metric(hypothesis, reference)`` of every (system, SID) the DARR rows use."""
    reference = read_lines(reference_file(pair))
    outputs = {system: read_lines(path, len(reference)) for system, path in output_files(pair).items()}
    used = pd.concat([darr[["better", "sid"]].set_axis(["system", "sid"], axis=1),
                      darr[["worse", "sid"]].set_axis(["system", "sid"], axis=1)]).drop_duplicates()
    used["score"] = [metric(outputs[system][sid - 1], reference[sid - 1]) for system, sid in zip(used["system"], used["sid"])]
    return used.reset_index(drop=True)


@needs_mirror
def test_tau_by_hand_on_the_first_30_lt_en_rows(darr):
    rows = darr[darr["pair"] == "lt-en"].iloc[:30]
    # A simple score: the share of reference word types the hypothesis contains.
    def overlap(hypothesis: str, reference: str) -> float:
        words = set(reference.split())
        return len(words & set(hypothesis.split())) / len(words)

    scores = sentence_scores(rows, "lt-en", overlap)
    lookup = {(system, sid): score for system, sid, score in scores[["system", "sid", "score"]].itertuples(index=False)}
    concordant = discordant = 0
    for sid, better, worse in rows[["sid", "better", "worse"]].itertuples(index=False):
        if lookup[(better, sid)] > lookup[(worse, sid)]:
            concordant += 1
        else:
            discordant += 1
    assert concordant + discordant == 30 and discordant > 0
    assert darr_tau(rows, scores) == pytest.approx((concordant - discordant) / (concordant + discordant), abs=1e-12)
    # Shuffling the score table's rows changes nothing: scores are matched by key.
    assert darr_tau(rows, scores.sample(frac=1.0, random_state=0)) == darr_tau(rows, scores)


# Reproduction of the taus of sacrebleu 2.x defaults stated in the mirror's SOURCES.md (lt-en is WMT19's
# complete lt-en DARR; gu-en and kk-en are subsets of it).
@needs_mirror
@pytest.mark.parametrize(("pair", "bleu", "chrf"), [("lt-en", 0.251, 0.304), ("gu-en", 0.190, 0.240), ("kk-en", 0.285, 0.323)])
def test_sentence_bleu_and_chrf_taus_reproduce_the_recorded_values(darr, pair, bleu, chrf):
    rows = darr[darr["pair"] == pair]
    check_darr_systems(rows, {pair: output_files(pair)}, {pair: len(read_lines(reference_file(pair)))}, DARR_FILE)
    scores = {
        "sentbleu": sentence_scores(rows, pair, lambda h, r: sacrebleu.sentence_bleu(h, [r]).score),
        "chrf": sentence_scores(rows, pair, lambda h, r: sacrebleu.sentence_chrf(h, [r]).score),
    }
    table = tau_table(rows, scores).set_index("metric")
    assert table.loc["sentbleu", "tau"] == pytest.approx(bleu, abs=0.005)
    assert table.loc["chrf", "tau"] == pytest.approx(chrf, abs=0.005)
    assert (table["pairs"] == len(rows)).all()
