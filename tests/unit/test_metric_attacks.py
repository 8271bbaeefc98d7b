"""The metric-robustness branch (paper 002): the config section, the conditions and their levels, the best
BERTScore layer chosen on the other pairs, the DARR sample of real lt-en data, attacked real references,
the tau tables of a small case worked out by hand, the engine's units, and the tables and figures."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.wmt19 import system_of_output_file
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import write_table
from nlp_robustness.outputs.metric_robustness import (
    attack_rate_table,
    frame_markdown,
    plot_tau_by_layer,
    plot_tau_vs_level,
    plot_unknown_tokens,
    tau_latex,
    tau_markdown,
    unknown_token_latex,
    unknown_token_table,
)
from nlp_robustness.perturbations import character_attacks
from nlp_robustness.perturbations.attack_calibration import PAPER_RATES
from nlp_robustness.scoring.unknown_tokens import load_wordpiece_tokenizer
from nlp_robustness.studies.metric_attack_conditions import (
    CLEAN,
    complete_metric_robustness,
    condition_attack_level,
    conditions,
    level_name,
    levels_of,
    metric_variants,
)
from nlp_robustness.studies.metric_attack_scoring import (
    DARR_COLUMNS,
    HYPOTHESIS_COLUMNS,
    REFERENCE_COLUMNS,
    SCORE_KEY_COLUMNS,
    SEGMENT_COLUMNS,
    attack_references,
    best_layers,
    sample_pair,
    score_level,
    tau_tables,
)
from nlp_robustness.studies.metric_attacks import AGREEMENT_KEY_COLUMNS, aggregation_of, unit_keys, units
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

TO_ENGLISH = MIRROR / "wmt19-newstest2019-to-en"
DARR_FILE = MIRROR / "wmt19-darr-subset" / "RR-seglevel.recovered.csv"
LT_EN_REFERENCE = TO_ENGLISH / "references" / "newstest2019-lten-ref.en"
LT_EN_OUTPUTS = TO_ENGLISH / "system-outputs" / "lt-en"
RESOURCE_FOLDER = MIRROR / "zeroe-attack-resources"
ATTACKS = ["intrude", "disemvowel", "keyboard", "phonetic", "visual"]

needs_mirror = pytest.mark.skipif(
    not (DARR_FILE.is_file() and LT_EN_REFERENCE.is_file() and LT_EN_OUTPUTS.is_dir() and RESOURCE_FOLDER.is_dir()),
    reason=f"offline data mirror not found at {MIRROR}",
)


# ---- the config section --------------------------------------------------------------------------------


@functools.cache
def manifest_downloads() -> tuple[str, ...]:
    return tuple(load_manifest(MANIFEST, MANIFEST_SCHEMA).downloads)


def section(**changes) -> dict:
    """A metric_robustness section with the schema's defaults filled by hand (no attacks: the code's default)."""
    values = {
        "seed": 0, "darr": "wmt19-darr-seglevel", "pairs": ["lt-en", "gu-en"], "sample_size": None,
        "levels": [0.1, 0.3], "sentence_metrics": ["bleu", "chrf"],
        "bertscore": {"layers": ["first", "last", "best", "mean"], "batch_size": 64, "device": "auto", "threads": 2},
        "bagging_unit": "condition", "bagging": {"blocks": 10, "fraction": 0.6},
        "epsilon": {"start": 0.005, "stop": 0.5, "step": 0.005},
    }
    values.update(changes)
    return values


def completed(downloads=None, **changes) -> dict:
    config = {"metric_robustness": section(**changes)}
    complete_metric_robustness(config, list(manifest_downloads() if downloads is None else downloads))
    return config["metric_robustness"]


def test_the_five_attacks_are_filled_with_their_defaults_and_conditions_are_clean_then_attack_major() -> None:
    spec = completed()
    assert list(spec["attacks"]) == ATTACKS
    assert spec["attacks"]["intrude"]["symbols"] == character_attacks.DEFAULT_SYMBOLS
    assert spec["attacks"]["phonetic"] == {"max_tries": 10}
    assert spec["attacks"]["visual"] == {"source": "descriptions", "neighbours": 20, "weighting": "uniform"}
    assert spec["attacks"]["disemvowel"] == {} and spec["attacks"]["keyboard"] == {}
    expected = [CLEAN] + [f"{attack}-p{p}" for attack in ATTACKS for p in ("0.1", "0.3")]
    assert conditions(spec) == expected
    assert spec["leave_out"] == expected  # default: every condition left out in turn
    assert levels_of(spec) == {
        "p0": [CLEAN],
        "p0.1": [f"{attack}-p0.1" for attack in ATTACKS],
        "p0.3": [f"{attack}-p0.3" for attack in ATTACKS],
    }
    assert metric_variants(spec) == ["bleu", "chrf", "bertscore_first", "bertscore_last", "bertscore_best", "bertscore_mean"]
    # completing again changes nothing
    config = {"metric_robustness": copy.deepcopy(spec)}
    complete_metric_robustness(config, list(manifest_downloads()))
    assert config["metric_robustness"] == spec


def test_configured_attacks_keep_their_order_and_levels_their_config_order() -> None:
    spec = completed(attacks={"visual": {"source": "confusables"}, "keyboard": {}}, levels=[0.3, 0.05])
    assert conditions(spec) == [CLEAN, "visual-p0.3", "visual-p0.05", "keyboard-p0.3", "keyboard-p0.05"]
    assert spec["attacks"]["visual"] == {"source": "confusables", "neighbours": 20, "weighting": "uniform"}
    assert levels_of(spec) == {"p0": [CLEAN], "p0.3": ["visual-p0.3", "keyboard-p0.3"], "p0.05": ["visual-p0.05", "keyboard-p0.05"]}
    assert [condition_attack_level(name) for name in conditions(spec)] == [
        ("none", 0.0), ("visual", 0.3), ("visual", 0.05), ("keyboard", 0.3), ("keyboard", 0.05),
    ]
    assert [level_name(p) for p in (0.0, 0.1, 0.25, 1.0)] == ["p0", "p0.1", "p0.25", "p1"]


@pytest.mark.parametrize(
    ("changes", "downloads", "key", "message"),
    [
        ({"attacks": {"typo": {}}}, None, "metric_robustness.attacks.typo", "unknown attack"),
        ({"attacks": {"phonetic": {"max_tries": 0}}}, None, "metric_robustness.attacks.phonetic.max_tries", "minimum"),
        ({"attacks": {"visual": {"source": "fonts"}}}, None, "metric_robustness.attacks.visual.source", "fonts"),
        ({"attacks": {"keyboard": {"layout": "azerty"}}}, None, "metric_robustness.attacks.keyboard", "layout"),
        ({"pairs": ["lt-en"]}, None, "metric_robustness.bertscore.layers", "two pairs or more"),
        ({"pairs": ["lt-en", "de-en"]}, None, "metric_robustness.pairs", "wmt19-de-en-ref"),
        # a reference but no system outputs
        ({}, [key for key in manifest_downloads() if not key.startswith("wmt19-gu-en-system-")], "metric_robustness.pairs", "gu-en"),
        ({"darr": "wmt19-darr-full"}, None, "metric_robustness.darr", "wmt19-darr-full"),
        ({"sentence_metrics": [], "bertscore": {"layers": []}}, None, "metric_robustness.sentence_metrics", "no metric"),
        ({"leave_out": ["clean", "visual-p0.2"]}, None, "metric_robustness.leave_out[1]", "visual-p0.2"),
        ({"leave_out": ["none"]}, None, "metric_robustness.leave_out[0]", "not a condition"),
        ({"epsilon": {"start": 0.5, "stop": 0.1, "step": 0.01}}, None, "metric_robustness.epsilon.stop", ">= start"),
    ],
)
def test_config_mistakes_name_their_key(changes: dict, downloads, key: str, message: str) -> None:
    with pytest.raises(InputError) as error:
        completed(downloads, **changes)
    assert f"'{key}'" in str(error.value) and message in str(error.value)


def test_one_pair_without_the_best_layer_and_no_section_are_fine() -> None:
    spec = completed(pairs=["lt-en"], bertscore={"layers": ["first", "mean"], "batch_size": 8, "device": "cpu", "threads": 1})
    assert metric_variants(spec) == ["bleu", "chrf", "bertscore_first", "bertscore_mean"]
    config: dict = {}
    complete_metric_robustness(config, list(manifest_downloads()))
    assert config == {}


def test_levels_that_name_the_same_condition_are_an_error() -> None:
    # 0.1 and 0.1000001 are unique levels for the schema, but both are named '<attack>-p0.1' (and the second is
    # scored at p = 0.1, parsed back from the name); the perturbation family refuses such a level.
    with pytest.raises(InputError, match="levels"):
        completed(levels=[0.1, 0.1000001])


def test_aggregation_of_each_bagging_unit() -> None:
    assert aggregation_of("condition") == "unit" and aggregation_of("judgement") == "domain"
    with pytest.raises(InputError, match="unknown bagging unit 'segment'"):
        aggregation_of("segment")


# ---- the best layer ------------------------------------------------------------------------------------


def test_each_pair_gets_the_best_layer_of_the_other_pairs() -> None:
    # own best: de-en 3, lt-en 1, gu-en 2. Mean tau of the others: for de-en (0.40, 0.50, 0.30) -> 2, for lt-en
    # (0.05, 0.45, 0.70) -> 3, for gu-en (0.45, 0.25, 0.50) -> 3; over all three pairs layer 3 would win everywhere
    taus = {
        "de-en": {1: 0.10, 2: 0.20, 3: 0.90},
        "lt-en": {1: 0.80, 2: 0.30, 3: 0.10},
        "gu-en": {1: 0.00, 2: 0.70, 3: 0.50},
    }
    table = pd.DataFrame([{"pair": pair, "layer": layer, "tau": tau} for pair, row in taus.items() for layer, tau in row.items()])
    assert best_layers(table) == {"de-en": 2, "lt-en": 3, "gu-en": 3}
    # rows in another order choose the same
    assert best_layers(table.iloc[::-1].reset_index(drop=True)) == {"gu-en": 3, "lt-en": 3, "de-en": 2}


def test_best_layer_ties_go_to_the_lower_layer_and_one_pair_is_an_error() -> None:
    table = pd.DataFrame({
        "pair": ["a", "a", "a", "b", "b", "b"], "layer": [3, 2, 1, 3, 2, 1], "tau": [0.5, 0.5, 0.1, 0.25, 0.25, 0.25],
    })
    assert best_layers(table) == {"a": 1, "b": 2}
    with pytest.raises(InputError, match="two pairs or more"):
        best_layers(table[table["pair"] == "a"])


# ---- the DARR sample of real lt-en data -----------------------------------------------------------------


@functools.cache
def lt_en_outputs() -> dict[str, str]:
    return {system_of_output_file(path, "lt-en"): str(path) for path in sorted(LT_EN_OUTPUTS.iterdir())}


@functools.cache
def lt_en_darr_rows() -> tuple[tuple[int, int, str, str], ...]:
    """(line, sid, better, worse) of every lt-en row of the DARR file, read here without the package."""
    rows = []
    for number, line in enumerate(DARR_FILE.read_text(encoding="utf-8").split("\n"), start=1):
        fields = line.split()
        if number > 1 and fields and fields[0] == "lt-en":
            rows.append((number, int(fields[2]), fields[3], fields[4]))
    return tuple(rows)


def file_lines(path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").split("\n")


def sample(sample_size: int | None, outputs: dict | None = None, seed: int = 0):
    return sample_pair("lt-en", str(DARR_FILE), str(LT_EN_REFERENCE), outputs or lt_en_outputs(), sample_size, seed)


@needs_mirror
def test_the_lt_en_sample_holds_every_judgement_of_its_segments_and_every_judged_output() -> None:
    assert len(lt_en_outputs()) == 11 and "MSRA.MASS.6945" in lt_en_outputs()
    darr, segments, hypotheses = sample(5)
    assert list(darr.columns) == list(DARR_COLUMNS)
    assert list(segments.columns) == list(SEGMENT_COLUMNS) and list(hypotheses.columns) == list(HYPOTHESIS_COLUMNS)
    sids = list(segments["sid"])
    assert len(sids) == 5 and sids == sorted(sids)
    expected = sorted(row for row in lt_en_darr_rows() if row[1] in set(sids))
    found = sorted(zip(darr["line"], darr["sid"], darr["better"], darr["worse"]))
    assert found == expected and len(expected) > 5
    assert set(darr["pair"]) == {"lt-en"}
    references = file_lines(LT_EN_REFERENCE)
    assert list(segments["reference"]) == [references[sid - 1] for sid in sids]
    named = {(system, sid) for _, sid, better, worse in expected for system in (better, worse)}
    assert {(system, sid) for system, sid in zip(hypotheses["system"], hypotheses["sid"])} == named
    assert len(hypotheses) == len(named)  # one row per judged output
    for record in hypotheses.itertuples():
        assert record.hypothesis == file_lines(lt_en_outputs()[record.system])[record.sid - 1]


@needs_mirror
def test_lt_en_samples_are_nested_and_seeded() -> None:
    darr3, segments3, hypotheses3 = sample(3)
    darr5, segments5, hypotheses5 = sample(5)
    assert set(segments3["sid"]) < set(segments5["sid"])
    assert set(darr3["line"]) < set(darr5["line"])
    assert set(zip(hypotheses3["system"], hypotheses3["sid"])) < set(zip(hypotheses5["system"], hypotheses5["sid"]))
    again = sample(5)
    assert again[0].equals(darr5) and again[1].equals(segments5) and again[2].equals(hypotheses5)
    assert set(sample(5, seed=1)[1]["sid"]) != set(segments5["sid"])
    everything = sample(None)[1]
    assert list(everything["sid"]) == sorted({sid for _, sid, _, _ in lt_en_darr_rows()})


@needs_mirror
def test_a_judged_system_without_its_output_file_names_the_darr_file_line_and_system() -> None:
    withheld = "tilde-nc-nmt.6881"
    outputs = {system: path for system, path in lt_en_outputs().items() if system != withheld}
    first = min(line for line, _, better, worse in lt_en_darr_rows() if withheld in (better, worse))
    with pytest.raises(InputError) as error:
        sample(5, outputs)
    message = str(error.value)
    assert message.startswith(f"{DARR_FILE}: line {first}: ") and f"'{withheld}'" in message


# ---- attacked real references ---------------------------------------------------------------------------


@functools.cache
def attack_context() -> character_attacks.AttackResources:
    return character_attacks.load_context({name: RESOURCE_FOLDER / file for name, file in character_attacks.RESOURCES.items()})


@functools.cache
def tokenizer():
    return load_wordpiece_tokenizer()


def lt_en_segments(sids=(1, 2, 3, 4, 5, 6)) -> pd.DataFrame:
    references = file_lines(LT_EN_REFERENCE)
    return pd.DataFrame({"pair": "lt-en", "sid": list(sids), "reference": [references[sid - 1] for sid in sids]})


def settings_of(condition: str) -> dict:
    spec = completed()
    return spec["attacks"][condition_attack_level(condition)[0]] if condition != CLEAN else {}


def attacked(condition: str, segments: pd.DataFrame | None = None, seed: int = 0) -> pd.DataFrame:
    segments = lt_en_segments() if segments is None else segments
    return attack_references(segments, condition, settings_of(condition), seed, attack_context(), tokenizer())


@needs_mirror
def test_clean_references_are_kept_with_nothing_changed() -> None:
    table = attacked(CLEAN)
    assert list(table.columns) == list(REFERENCE_COLUMNS)
    assert list(table["reference"]) == list(table["original"]) == list(lt_en_segments()["reference"])
    assert (table["attack"] == "none").all() and (table["p"] == 0.0).all() and (table["condition"] == CLEAN).all()
    assert (table["words_changed"] == 0).all() and (table["characters_changed"] == 0).all()
    assert list(table["words"]) == [len([piece for piece in text.split(" ") if piece]) for text in table["original"]]
    # Algorithm 1 on the tokens: "Gustainis" (gu ##stain ##is) is one unknown word of the first reference
    assert table["unknown_tokens"].iloc[0] >= 1


@needs_mirror
@pytest.mark.parametrize("condition", ["visual-p0.3", "keyboard-p0.3", "intrude-p0.5"])
def test_attacked_references_are_seeded_per_segment(condition: str) -> None:
    table = attacked(condition)
    attack, p = condition_attack_level(condition)
    assert (table["attack"] == attack).all() and (table["p"] == p).all()
    assert list(table["original"]) == list(lt_en_segments()["reference"])
    assert (table["reference"] != table["original"]).sum() >= 5
    assert table["words_changed"].sum() > 0 and (table["words_changed"] <= table["words"]).all()
    # whitespace is untouched: the same space-separated pieces
    assert [len(text.split(" ")) for text in table["reference"]] == [len(text.split(" ")) for text in table["original"]]
    assert table.equals(attacked(condition))
    assert list(attacked(condition, seed=1)["reference"]) != list(table["reference"])
    # a segment gets the same text alone, with others, or in another order
    for position in (0, 4):
        sid = int(table["sid"].iloc[position])
        alone = attacked(condition, lt_en_segments((sid,)))
        assert alone["reference"].iloc[0] == table["reference"].iloc[position]
        assert alone["unknown_tokens"].iloc[0] == table["unknown_tokens"].iloc[position]
    reordered = attacked(condition, lt_en_segments((6, 5, 4, 3, 2, 1)))
    assert list(reordered["reference"])[::-1] == list(table["reference"])
    # the same SID of another pair is attacked otherwise
    other_pair = attacked(condition, lt_en_segments().assign(pair="gu-en"))
    assert list(other_pair["reference"]) != list(table["reference"])


@needs_mirror
def test_visual_attacks_raise_the_unknown_tokens() -> None:
    clean, visual = attacked(CLEAN), attacked("visual-p0.3")
    assert visual["unknown_tokens"].sum() > clean["unknown_tokens"].sum() + len(clean)


@needs_mirror
def test_every_judged_output_is_scored_against_the_references_of_every_condition() -> None:
    segments = lt_en_segments((1, 2))
    references = {CLEAN: attacked(CLEAN, segments), "disemvowel-p0.5": attacked("disemvowel-p0.5", segments.iloc[::-1])}
    hypotheses = pd.DataFrame({
        "pair": "lt-en", "system": ["copy", "online-B.0", "copy"], "sid": [1, 1, 2],
        "hypothesis": [segments["reference"].iloc[0], file_lines(lt_en_outputs()["online-B.0"])[0], segments["reference"].iloc[1]],
    })
    scores = score_level(references, hypotheses, ["bleu", "chrf"], None, 1)
    assert list(scores.columns) == [*SCORE_KEY_COLUMNS, "bleu", "chrf"]
    assert list(scores["condition"]) == [CLEAN] * 3 + ["disemvowel-p0.5"] * 3
    assert list(zip(scores["system"], scores["sid"])) == [("copy", 1), ("online-B.0", 1), ("copy", 2)] * 2
    clean, attacked_scores = scores.iloc[:3], scores.iloc[3:]
    # a copy of the reference scores 100 against it, and less against its attacked version (matched by SID)
    assert list(clean.loc[clean["system"] == "copy", "bleu"]) == pytest.approx([100.0, 100.0])
    assert list(clean.loc[clean["system"] == "copy", "chrf"]) == pytest.approx([100.0, 100.0])
    assert (attacked_scores.loc[attacked_scores["system"] == "copy", "chrf"] < 90).all()
    assert 0 < clean["bleu"].iloc[1] < 100
    with pytest.raises(InputError, match="condition disemvowel-p0.5: the references lack segments of 2 judged outputs"):
        score_level({**references, "disemvowel-p0.5": references["disemvowel-p0.5"].iloc[:1]}, hypotheses, ["bleu"], None, 1)


# ---- tau tables of a small case worked out by hand ------------------------------------------------------

ATTACKED = "visual-p0.1"
LAYER_COLUMNS = ["bertscore_layer_0", "bertscore_layer_1", "bertscore_layer_2", "bertscore_layer_3"]
SCORE_COLUMNS = ["bleu", "chrf", *LAYER_COLUMNS, "bertscore_mean"]
#: de-en judgements (lines 2-4): X > Y and X > Z on SID 1, Y > Z on SID 2; lt-en (lines 5, 6): X > Y on 1, Z > X on 2.
HAND_DARR = {
    "de-en": pd.DataFrame({"pair": "de-en", "line": [2, 3, 4], "sid": [1, 1, 2], "better": ["X", "X", "Y"], "worse": ["Y", "Z", "Z"]}),
    "lt-en": pd.DataFrame({"pair": "lt-en", "line": [5, 6], "sid": [1, 2], "better": ["X", "Z"], "worse": ["Y", "X"]}),
}
HAND_OUTPUTS = {"de-en": [("X", 1), ("Y", 1), ("Z", 1), ("Y", 2), ("Z", 2)], "lt-en": [("X", 1), ("Y", 1), ("Z", 2), ("X", 2)]}
#: (condition, pair) -> column -> the scores of HAND_OUTPUTS[pair]; the agreement each gives is in the comment.
HAND_SCORES = {
    (CLEAN, "de-en"): {
        "bleu": [50, 40, 50, 30, 20],            # +1, -1 (a tie), +1
        "chrf": [60, 70, 10, 30, 40],            # -1, +1, -1
        "bertscore_layer_0": [1, 0, 0, 1, 0],    # +1, +1, +1: the embeddings are never a layer choice
        "bertscore_layer_1": [0.9, 0.1, 0.2, 0.1, 0.5],  # +1, +1, -1
        "bertscore_layer_2": [0.9, 0.5, 0.1, 0.6, 0.2],  # +1, +1, +1 (de-en's own best)
        "bertscore_layer_3": [0.1, 0.5, 0.5, 0.2, 0.6],  # -1, -1, -1
        "bertscore_mean": [0.5, 0.4, 0.5, 0.3, 0.2],     # +1, -1, +1
    },
    (CLEAN, "lt-en"): {
        "bleu": [10, 10, 5, 20],                 # -1 (a tie), -1
        "chrf": [20, 10, 30, 20],                # +1, +1
        "bertscore_layer_0": [1, 0, 1, 0],       # +1, +1
        "bertscore_layer_1": [0.9, 0.1, 0.9, 0.1],  # +1, +1 (lt-en's own best)
        "bertscore_layer_2": [0.9, 0.1, 0.1, 0.9],  # +1, -1
        "bertscore_layer_3": [0.1, 0.9, 0.1, 0.9],  # -1, -1
        "bertscore_mean": [0.1, 0.9, 0.9, 0.1],     # -1, +1
    },
    (ATTACKED, "de-en"): {  # were the attack seen, lt-en's best layer would be 1 (mean tau 2/3 against 0)
        **{column: [0] * 5 for column in SCORE_COLUMNS},
        "bertscore_layer_1": [0.9, 0.5, 0.1, 0.6, 0.2],  # +1, +1, +1
        "bertscore_layer_2": [0.1, 0.5, 0.5, 0.2, 0.6],  # -1, -1, -1
        "bertscore_layer_3": [0.1, 0.5, 0.5, 0.2, 0.6],  # -1, -1, -1
    },
    (ATTACKED, "lt-en"): {column: [0] * 4 for column in SCORE_COLUMNS},  # ties: -1 everywhere
}
#: The expected agreement of every variant, by (condition, pair); best: de-en layer 1, lt-en layer 2.
HAND_AGREEMENT = {
    (CLEAN, "de-en"): {"bleu": [1, -1, 1], "chrf": [-1, 1, -1], "bertscore_first": [1, 1, -1], "bertscore_last": [-1, -1, -1],
                       "bertscore_best": [1, 1, -1], "bertscore_mean": [1, -1, 1]},
    (CLEAN, "lt-en"): {"bleu": [-1, -1], "chrf": [1, 1], "bertscore_first": [1, 1], "bertscore_last": [-1, -1],
                       "bertscore_best": [1, -1], "bertscore_mean": [-1, 1]},
    (ATTACKED, "de-en"): {"bleu": [-1] * 3, "chrf": [-1] * 3, "bertscore_first": [1] * 3, "bertscore_last": [-1] * 3,
                          "bertscore_best": [1] * 3, "bertscore_mean": [-1] * 3},
    (ATTACKED, "lt-en"): {variant: [-1] * 2 for variant in ("bleu", "chrf", "bertscore_first", "bertscore_last", "bertscore_best", "bertscore_mean")},
}
VARIANTS = ["bleu", "chrf", "bertscore_first", "bertscore_last", "bertscore_best", "bertscore_mean"]


def hand_scores() -> pd.DataFrame:
    rows = []
    for (condition, pair), columns in HAND_SCORES.items():
        for index, (system, sid) in enumerate(HAND_OUTPUTS[pair]):
            rows.append({"condition": condition, "pair": pair, "system": system, "sid": sid,
                         **{column: values[index] for column, values in columns.items()}})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=3)  # the order of the score rows does not matter


@functools.cache
def hand_tables():
    return tau_tables(HAND_DARR, hand_scores(), [CLEAN, ATTACKED], ["bleu", "chrf"], ["first", "last", "best", "mean"])


def test_agreement_has_one_row_per_judgement_and_condition_scored_by_hand() -> None:
    agreement, _, _, best = hand_tables()
    assert best.to_dict("records") == [{"pair": "de-en", "best_layer": 1}, {"pair": "lt-en", "best_layer": 2}]
    assert list(agreement.columns) == [*AGREEMENT_KEY_COLUMNS, *VARIANTS]
    assert len(agreement) == 2 * (3 + 2)
    assert list(agreement["condition"]) == [CLEAN] * 5 + [ATTACKED] * 5
    assert list(agreement["unit_id"]) == ["de-en/2", "de-en/3", "de-en/4", "lt-en/5", "lt-en/6"] * 2
    assert list(agreement["line"]) == [2, 3, 4, 5, 6] * 2
    assert list(agreement["sid"]) == [1, 1, 2, 1, 2] * 2  # the segment: the bootstrap draws it with all its judgements
    for variant in VARIANTS:
        expected = [value for key in HAND_AGREEMENT for value in HAND_AGREEMENT[key][variant]]
        assert list(agreement[variant]) == expected, variant


def test_tau_rows_are_the_pairs_taus_and_their_mean() -> None:
    _, tau, _, _ = hand_tables()
    assert list(tau.columns) == ["condition", "attack", "p", "pair", "metric", "tau", "judgements"]
    assert len(tau) == 2 * 3 * len(VARIANTS)
    indexed = tau.set_index(["condition", "pair", "metric"])
    for (condition, pair), variants in HAND_AGREEMENT.items():
        for variant, values in variants.items():
            assert indexed.loc[(condition, pair, variant), "tau"] == pytest.approx(np.mean(values))
            assert indexed.loc[(condition, pair, variant), "judgements"] == len(values)
    expected_average = {
        (CLEAN, "bleu"): (1 / 3 - 1) / 2, (CLEAN, "chrf"): (-1 / 3 + 1) / 2, (CLEAN, "bertscore_first"): (1 / 3 + 1) / 2,
        (CLEAN, "bertscore_last"): -1.0, (CLEAN, "bertscore_best"): (1 / 3 + 0) / 2, (CLEAN, "bertscore_mean"): (1 / 3 + 0) / 2,
        (ATTACKED, "bleu"): -1.0, (ATTACKED, "bertscore_first"): 0.0, (ATTACKED, "bertscore_best"): 0.0,
    }
    for (condition, variant), value in expected_average.items():
        assert indexed.loc[(condition, "average", variant), "tau"] == pytest.approx(value), (condition, variant)
    assert (tau.loc[tau["pair"] == "average", "judgements"] == 0).all()
    assert set(zip(tau["condition"], tau["attack"], tau["p"])) == {(CLEAN, "none", 0.0), (ATTACKED, "visual", 0.1)}


def test_tau_by_layer_covers_the_hidden_layers_and_the_mean_only() -> None:
    _, _, by_layer, _ = hand_tables()
    assert len(by_layer) == 2 * 2 * 4
    clean_de = by_layer[(by_layer["condition"] == CLEAN) & (by_layer["pair"] == "de-en")]
    assert dict(zip(clean_de["layer"], clean_de["tau"])) == pytest.approx({"1": 1 / 3, "2": 1.0, "3": -1.0, "mean": 1 / 3})
    attacked_de = by_layer[(by_layer["condition"] == ATTACKED) & (by_layer["pair"] == "de-en")]
    assert dict(zip(attacked_de["layer"], attacked_de["tau"])) == pytest.approx({"1": 1.0, "2": -1.0, "3": -1.0, "mean": -1.0})


def test_tau_tables_without_the_best_layer_and_with_missing_scores() -> None:
    _, tau, _, best = tau_tables(HAND_DARR, hand_scores(), [CLEAN], ["chrf"], ["last"])
    assert best.empty and list(best.columns) == ["pair", "best_layer"]
    assert set(tau["metric"]) == {"chrf", "bertscore_last"}
    scores = hand_scores()
    with pytest.raises(InputError, match="no scores for condition keyboard-p0.1 of pair de-en"):
        tau_tables(HAND_DARR, scores, [CLEAN, "keyboard-p0.1"], ["bleu"], [])
    without = scores[~((scores["pair"] == "lt-en") & (scores["system"] == "Z") & (scores["condition"] == CLEAN))]
    with pytest.raises(InputError, match=r"no score for .*system Z, sid 2 \(DARR line 6\)"):
        tau_tables(HAND_DARR, without, [CLEAN], ["bleu"], [])


# ---- units of the engine study --------------------------------------------------------------------------


@pytest.fixture
def agreement_files(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "agreement.tsv"
    write_table(hand_tables()[0], path, AGREEMENT_KEY_COLUMNS)
    return {"agreement": str(path)}


def test_condition_units_are_the_pooled_agreement_of_each_condition(agreement_files) -> None:
    options = {"bagging_unit": "condition"}
    keys = unit_keys(agreement_files, [ATTACKED, CLEAN], options)
    assert keys.to_dict("list") == {"domain": [ATTACKED, CLEAN], "unit_id": [ATTACKED, CLEAN]}
    bleu = units(agreement_files, [CLEAN, ATTACKED], "bleu", "tau", options)
    assert list(bleu.columns) == ["domain", "unit_id", "score"]
    assert list(bleu["domain"]) == [CLEAN, ATTACKED] and list(bleu["unit_id"]) == [CLEAN, ATTACKED]
    # pooled over the 5 judgements of both pairs: (1 - 1 + 1 - 1 - 1) / 5, not the mean of the pair taus (-1/3)
    assert list(bleu["score"]) == pytest.approx([-0.2, -1.0])
    first = units(agreement_files, [ATTACKED, CLEAN], "bertscore_first", "tau", options)
    assert list(first["domain"]) == [ATTACKED, CLEAN] and list(first["score"]) == pytest.approx([0.2, 0.6])
    assert units(agreement_files, [CLEAN], "bertscore_best", "tau", options).to_dict("list") == {
        "domain": [CLEAN], "unit_id": [CLEAN], "score": pytest.approx([0.2]),
    }


def test_judgement_units_are_one_per_row_in_the_given_domain_order(agreement_files) -> None:
    options = {"bagging_unit": "judgement"}
    keys = unit_keys(agreement_files, [ATTACKED, CLEAN], options)
    ids = ["de-en/2", "de-en/3", "de-en/4", "lt-en/5", "lt-en/6"]
    assert list(keys["domain"]) == [ATTACKED] * 5 + [CLEAN] * 5 and list(keys["unit_id"]) == ids * 2
    chrf = units(agreement_files, [ATTACKED, CLEAN], "chrf", "tau", options)
    assert list(chrf["unit_id"]) == ids * 2
    assert list(chrf["score"]) == [-1.0] * 5 + [-1.0, 1.0, -1.0, 1.0, 1.0]
    assert chrf.groupby("domain", sort=False)["score"].mean().to_dict() == pytest.approx({ATTACKED: -1.0, CLEAN: 0.2})
    assert len(units(agreement_files, [CLEAN], "chrf", "tau", options)) == 5


def test_units_errors(agreement_files) -> None:
    with pytest.raises(InputError, match="no judgements for condition.*keyboard-p0.1"):
        unit_keys(agreement_files, [CLEAN, "keyboard-p0.1"], {"bagging_unit": "condition"})
    with pytest.raises(InputError, match="no column for metric 'meteor'"):
        units(agreement_files, [CLEAN], "meteor", "tau", {"bagging_unit": "judgement"})


# ---- tables and figures ---------------------------------------------------------------------------------


def test_tau_markdown_and_latex_show_every_condition_pair_and_value() -> None:
    _, tau, _, best = hand_tables()
    markdown = tau_markdown(tau, best)
    lines = markdown.split("\n")
    assert lines[0] == "| condition | metric | de-en | lt-en | average |"
    assert "| clean | sentBLEU | 0.333 | -1.000 | -0.333 |" in lines
    assert f"| {ATTACKED} | BERTScore (first layer) | 1.000 | -1.000 | 0.000 |" in lines
    assert "| clean | BERTScore (best layer) | 0.333 | 0.000 | 0.167 |" in lines
    assert sum(line.startswith(f"| {ATTACKED} |") for line in lines) == len(VARIANTS)
    assert "de-en 1, lt-en 2" in markdown
    assert "Best layer" not in tau_markdown(tau, best.iloc[0:0])
    latex = tau_latex(tau)
    assert r"clean & sentBLEU & 0.333 & -1.000 & -0.333 \\" in latex
    assert rf"{ATTACKED} & chrF & -1.000 & -1.000 & -1.000 \\" in latex
    assert "de-en & lt-en & average" in latex and latex.count(r"\midrule") >= 1


def hand_references() -> pd.DataFrame:
    """References as the pipeline reads them (every column a string), levels configured as [0.3, 0.1]."""
    rows = [
        # attack, p, pair, sid, unknown tokens, words, words changed, characters, characters changed
        ("none", "0", "lt-en", 1, 1, 10, 0, 50, 0), ("none", "0", "lt-en", 2, 3, 10, 0, 50, 0), ("none", "0", "gu-en", 1, 2, 20, 0, 100, 0),
        ("visual", "0.3", "lt-en", 1, 5, 10, 4, 50, 15), ("visual", "0.3", "lt-en", 2, 7, 10, 2, 50, 14),
        ("visual", "0.3", "gu-en", 1, 10, 20, 6, 100, 31),
        ("visual", "0.1", "lt-en", 1, 2, 10, 1, 50, 5), ("visual", "0.1", "lt-en", 2, 2, 10, 2, 50, 5),
        ("visual", "0.1", "gu-en", 1, 4, 20, 1, 100, 10),
        ("keyboard", "0.3", "lt-en", 1, 3, 10, 3, 50, 16), ("keyboard", "0.3", "lt-en", 2, 4, 10, 3, 50, 15),
        ("keyboard", "0.3", "gu-en", 1, 1, 20, 6, 100, 29),
        ("keyboard", "0.1", "lt-en", 1, 1, 10, 1, 50, 5), ("keyboard", "0.1", "lt-en", 2, 2, 10, 1, 50, 5),
        ("keyboard", "0.1", "gu-en", 1, 0, 20, 0, 100, 0),
    ]
    frame = pd.DataFrame(rows, columns=["attack", "p", "pair", "sid", "unknown_tokens", "words", "words_changed", "characters", "characters_changed"])
    frame.insert(0, "condition", [CLEAN if attack == "none" else f"{attack}-p{p}" for attack, p in zip(frame["attack"], frame["p"])])
    return frame.astype(str)


def test_unknown_token_table_puts_clean_first_sorts_levels_and_averages_the_pairs() -> None:
    table = unknown_token_table(hand_references())
    assert list(table.columns) == ["attack", "p", "pair", "segments", "unknown_tokens"]
    expected = [
        ("none", 0.0, "lt-en", 2, 2.0), ("none", 0.0, "gu-en", 1, 2.0), ("none", 0.0, "average", 3, 2.0),
        ("visual", 0.1, "lt-en", 2, 2.0), ("visual", 0.1, "gu-en", 1, 4.0), ("visual", 0.1, "average", 3, 3.0),
        ("visual", 0.3, "lt-en", 2, 6.0), ("visual", 0.3, "gu-en", 1, 10.0), ("visual", 0.3, "average", 3, 8.0),
        ("keyboard", 0.1, "lt-en", 2, 1.5), ("keyboard", 0.1, "gu-en", 1, 0.0), ("keyboard", 0.1, "average", 3, 0.75),
        ("keyboard", 0.3, "lt-en", 2, 3.5), ("keyboard", 0.3, "gu-en", 1, 1.0), ("keyboard", 0.3, "average", 3, 2.25),
    ]
    assert [tuple(row) for row in table.itertuples(index=False)] == expected
    latex = unknown_token_latex(table)
    assert r"visual & 0.3 & 6.00 & 10.00 & 8.00 \\" in latex and r"none & 0 & 2.00 & 2.00 & 2.00 \\" in latex
    markdown = frame_markdown(table, "Unknown tokens")
    assert "| keyboard | 0.100 | average | 3 | 0.750 |" in markdown.split("\n")


def test_attack_rate_table_rates_are_changed_over_total() -> None:
    rates = attack_rate_table(hand_references())
    assert list(rates.columns) == ["attack", "p", "segments", "word_rate", "character_rate", "edits_per_changed_word",
                                   "paper_word_rate", "paper_edits_per_changed_word", "paper_wordpiece_kept"]
    indexed = rates.set_index(["attack", "p"])
    assert indexed.loc[("none", 0.0)].tolist()[:3] == [3, 0.0, 0.0] and indexed.loc[("none", 0.0)].isna().sum() == 4
    assert indexed.loc[("keyboard", 0.1), "edits_per_changed_word"] == pytest.approx(10 / 2)
    assert indexed.loc[("keyboard", 0.1), "paper_word_rate"] == PAPER_RATES["keyboard", 0.1][0]
    assert indexed.loc[("visual", 0.3), "word_rate"] == pytest.approx(12 / 40)
    assert indexed.loc[("visual", 0.3), "character_rate"] == pytest.approx(60 / 200)
    assert indexed.loc[("keyboard", 0.1), "word_rate"] == pytest.approx(2 / 40)
    assert indexed.loc[("keyboard", 0.1), "character_rate"] == pytest.approx(10 / 200)
    assert (indexed["segments"] == 3).all()


@needs_mirror
def test_rates_and_unknown_tokens_of_real_attacked_references() -> None:
    references = pd.concat([attacked(CLEAN), attacked("keyboard-p0.3")], ignore_index=True).astype(str)
    rates = attack_rate_table(references, load_wordpiece_tokenizer()).set_index("attack")
    keyboard = attacked("keyboard-p0.3")
    assert rates.loc["keyboard", "wordpiece_kept"] == 0  # a key typo always changes the word's pieces
    assert rates.loc["keyboard", "word_rate"] == pytest.approx(keyboard["words_changed"].sum() / keyboard["words"].sum())
    assert rates.loc["none", "character_rate"] == 0.0
    unknown = unknown_token_table(references)
    assert list(unknown["pair"]) == ["lt-en", "average", "lt-en", "average"] and list(unknown["attack"]) == ["none"] * 2 + ["keyboard"] * 2
    assert unknown["unknown_tokens"].iloc[2] == pytest.approx(keyboard["unknown_tokens"].mean())


def assert_figures(png: Path, pdf: Path) -> None:
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png.stat().st_size > 1000
    assert pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 1000


def test_figures_are_written_as_png_and_pdf(tmp_path: Path) -> None:
    _, tau, by_layer, _ = hand_tables()
    # a second attack, so that the figures have two panels
    keyboard = tau[tau["condition"] == ATTACKED].assign(condition="keyboard-p0.2", attack="keyboard", p=0.2)
    tau = pd.concat([tau, keyboard], ignore_index=True)
    unknown = unknown_token_table(hand_references())
    for name, plot, frame in (("tau", plot_tau_vs_level, tau), ("layers", plot_tau_by_layer, by_layer),
                              ("unknown", plot_unknown_tokens, unknown)):
        png, pdf = tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"
        plot(frame, str(png), str(pdf))
        assert_figures(png, pdf)
        first = pdf.read_bytes()
        plot(frame, str(png), str(pdf))
        assert pdf.read_bytes() == first, name  # no creation date: same data, same bytes
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        f"{name}.{suffix}" for name in ("tau", "layers", "unknown") for suffix in ("png", "pdf")
    )  # written atomically: no temporary file left
    # with the segment bootstrap's intervals every tau point gets an error bar: another figure
    intervals = tau.assign(tau_lo=tau["tau"] - 0.05, tau_hi=tau["tau"] + 0.05)[["condition", "pair", "metric", "tau_lo", "tau_hi"]]
    plain = (tmp_path / "tau.pdf").read_bytes()
    plot_tau_vs_level(tau, str(tmp_path / "tau.png"), str(tmp_path / "tau.pdf"), intervals)
    assert_figures(tmp_path / "tau.png", tmp_path / "tau.pdf")
    assert (tmp_path / "tau.pdf").read_bytes() != plain


def test_attacked_source_rates_sum_over_segments() -> None:
    from nlp_robustness.outputs.metric_robustness import attacked_source_rates
    from nlp_robustness.perturbations import character_attacks

    derived = {"visual-p0.3": pd.DataFrame({"original_source": ["the cat sat", "a dog"], "source": ["the cαt sat", "a dog"]})}
    rates = attacked_source_rates(derived, character_attacks.attack_rate, character_attacks.parse_instance)
    row = rates.iloc[0]
    assert (row["function"], row["attack"], row["p"], row["segments"]) == ("visual-p0.3", "visual", 0.3, 2)
    assert row["word_rate"] == pytest.approx(1 / 5) and row["character_rate"] == pytest.approx(1 / 13)
