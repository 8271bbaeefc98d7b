"""The character-attack family in the perturbation workflow: its config (each attack expanded into one
function per level), perturbed test sets of real WMT14 English sources (only the source is attacked, the
reference kept byte for byte), and the dataset manifest's mirror substitute (the recovered DARR file)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from nlp_robustness.config.validation import fill_dependent_defaults, validate_config
from nlp_robustness.data.acquisition import is_mirror_substitute, mirror_download_file
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import character_attacks
from nlp_robustness.perturbations.configuration import derived_testsets, function_category
from tests.config_helpers import complete_perturbations
from nlp_robustness.perturbations.derive import DERIVED_COLUMNS, STATUS_COLUMNS, derive_testset, perturbed_sides
from nlp_robustness.perturbations.pair_scores import pair_scores
from nlp_robustness.perturbations.registry import family_module
from nlp_robustness.scoring.sentence_scores import sentence_scores
from nlp_robustness.studies.domains import read_score_table, write_score_table
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR, REPOSITORY

FAMILY = "character_attacks"
KEY = f"perturbations.families.{FAMILY}"
RESOURCE_FOLDER = MIRROR / "zeroe-attack-resources"
WMT14 = MIRROR / "wmt14-newstest2014-enfr" / "derived"
DARR_SUBSTITUTE = MIRROR / "wmt19-darr-subset" / "RR-seglevel.recovered.csv"
VIPER_DEFAULTS = {"source": "descriptions", "neighbours": 20, "weighting": "uniform"}

needs_mirror = pytest.mark.skipif(
    not (RESOURCE_FOLDER.is_dir() and WMT14.is_dir() and DARR_SUBSTITUTE.is_file()), reason=f"offline data mirror not found at {MIRROR}"
)


# ---- the config: one function per attack and level -----------------------------------------------------


def config_with(family: dict) -> dict:
    """The keys complete_perturbations reads, with one character_attacks family (shaped like config.yaml's)."""
    return {
        "testsets": {"wmt14": {}, "bio18": {}},
        "systems": {"apertium-en-es-fr": {"kind": "apertium"}, "convs2s": {"kind": "fairseq"}, "copy": {"kind": "hypotheses", "files": {}}},
        "robustness": {"epsilon": {"start": 0.005, "stop": 0.5, "step": 0.005}},
        "mt_studies": {"paper": {"language_pair": "en-fr", "systems": ["apertium-en-es-fr", "convs2s"]}},
        "perturbations": {"families": {FAMILY: family}},
    }


def family(**changes) -> dict:
    values = {
        "sample_size": 25, "derived_testsets": "pooled", "options": {"levels": [0.1, 0.3]},
        "functions": {"visual": {}, "intrude": {"symbols": ["#", "~"]}, "disemvowel": {}},
    }
    values.update(changes)
    return values


def completed(**changes) -> dict:
    config = config_with(family(**changes))
    complete_perturbations(config)
    return config


def spec_of(config: dict) -> dict:
    return config["perturbations"]["families"][FAMILY]


def test_each_attack_becomes_one_function_per_level_attack_major() -> None:
    spec = spec_of(completed())
    names = ["visual-p0.1", "visual-p0.3", "intrude-p0.1", "intrude-p0.3", "disemvowel-p0.1", "disemvowel-p0.3"]
    assert list(spec["functions"]) == names
    assert spec["functions"]["visual-p0.3"] == {"attack": "visual", "p": 0.3, **VIPER_DEFAULTS}
    assert spec["functions"]["intrude-p0.1"] == {"attack": "intrude", "p": 0.1, "symbols": ["#", "~"]}
    assert spec["functions"]["disemvowel-p0.3"] == {"attack": "disemvowel", "p": 0.3}
    assert spec["configured_functions"] == {"visual": VIPER_DEFAULTS, "intrude": {"symbols": ["#", "~"]}, "disemvowel": {}}
    assert spec["leave_out"] == names
    assert spec["testsets"] == ["wmt14", "bio18"] and spec["systems"] == ["apertium-en-es-fr", "convs2s"]
    assert spec["epsilon"] == {"start": 0.005, "stop": 0.5, "step": 0.005}
    assert derived_testsets(FAMILY, spec) == [f"perturbed/{FAMILY}/{name}/pooled" for name in names]
    # every expanded setting is a valid settings of its instance for perturb: the level comes with it
    assert all(character_attacks.parse_instance(name) == (settings["attack"], settings["p"]) for name, settings in spec["functions"].items())


def test_completing_twice_changes_nothing() -> None:
    config = completed()
    once = copy.deepcopy(config)
    complete_perturbations(config)
    assert config == once
    complete_perturbations(config)
    assert config == once


def test_no_functions_means_every_attack_and_leave_out_takes_expanded_names() -> None:
    config = config_with(family(options={"levels": [0.2]}))
    del spec_of(config)["functions"]
    complete_perturbations(config)
    spec = spec_of(config)
    assert list(spec["functions"]) == [f"{attack}-p0.2" for attack in character_attacks.FUNCTIONS]
    assert spec["functions"]["phonetic-p0.2"] == {"attack": "phonetic", "p": 0.2, "max_tries": 10}
    assert spec_of(completed(leave_out=["visual-p0.3", "intrude-p0.1"]))["leave_out"] == ["visual-p0.3", "intrude-p0.1"]


def test_default_options_give_the_schema_levels() -> None:
    spec = spec_of(completed(options={}, functions={"keyboard": {}}))
    assert spec["options"] == {"levels": [0.1, 0.2, 0.3]}
    assert list(spec["functions"]) == ["keyboard-p0.1", "keyboard-p0.2", "keyboard-p0.3"]


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"functions": {"visual": {}, "typo": {}}}, f"{KEY}.functions.typo", "unknown function"),
        ({"functions": {"visual": {"source": "fonts"}}}, f"{KEY}.functions.visual.source", "fonts"),
        ({"functions": {"intrude": {"symbols": ["a b"]}}}, f"{KEY}.functions.intrude.symbols.0", "does not match"),
        ({"functions": {"keyboard": {"p": 0.5}}}, f"{KEY}.functions.keyboard", "'p'"),
        ({"options": {"levels": [0]}}, f"{KEY}.options.levels.0", "less than or equal to the minimum of 0"),
        ({"options": {"levels": [0.1, 1.5]}}, f"{KEY}.options.levels.1", "greater than the maximum of 1"),
        ({"options": {"levels": []}}, f"{KEY}.options.levels", "should be non-empty"),
        ({"options": {"p": [0.1]}}, f"{KEY}.options", "'p'"),
        ({"leave_out": ["visual"]}, f"{KEY}.leave_out[0]", "not a function of this family"),
        ({"testsets": ["wmt14", "wmt99"]}, f"{KEY}.testsets[1]", "not a test set"),
    ],
)
def test_bad_settings_name_their_key(changes: dict, key: str, message: str) -> None:
    with pytest.raises(InputError) as error:
        completed(**changes)
    assert f"'{key}'" in str(error.value) and message in str(error.value)


def test_a_level_with_too_many_digits_is_an_error() -> None:
    with pytest.raises(InputError, match="more than 6 significant digits"):
        completed(options={"levels": [0.1, 0.1000001]})


def test_function_category_is_the_attack_category() -> None:
    module = family_module(FAMILY)
    assert function_category(module, "visual-p0.1") == "substitution"
    assert function_category(module, "intrude-p0.3") == "insertion"
    assert function_category(module, "disemvowel-p1") == "deletion"
    assert function_category(module, "phonetic-p0.25") == "substitution"
    assert function_category(family_module("word_order"), "Reversed") == family_module("word_order").CATEGORIES["Reversed"]
    with pytest.raises(InputError, match="not <attack>-p<level>"):
        function_category(module, "visual")


def test_the_default_config_expands_the_five_attacks_through_the_schema() -> None:
    """config.yaml's family, validated and completed as rules/common.smk does."""
    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    schema = REPOSITORY / "schemas" / "config.schema.yaml"
    validate_config(config, schema)
    validate(config, str(schema), set_default=True)
    fill_dependent_defaults(config)
    complete_perturbations(config)
    spec = spec_of(config)
    levels = spec["options"]["levels"]
    assert list(spec["functions"]) == [f"{attack}-p{p:g}" for attack in character_attacks.FUNCTIONS for p in levels]
    assert list(spec["configured_functions"]) == list(character_attacks.FUNCTIONS)


# ---- perturbed test sets of real sources ----------------------------------------------------------------

#: WMT14 en-fr segments: news lines, a French reference with a no-break space before '?' (4), and an
#: English source with two spaces in a row (568).
SEGMENT_IDS = ("1", "2", "3", "4", "5", "6", "15", "568")


@functools.cache
def wmt14_table() -> pd.DataFrame:
    sources = (WMT14 / "newstest2014.en-fr.en").read_text(encoding="utf-8").split("\n")
    references = (WMT14 / "newstest2014.en-fr.fr").read_text(encoding="utf-8").split("\n")
    return pd.DataFrame({
        "segment_id": list(SEGMENT_IDS), "doc_id": "news",
        "source": [sources[int(number) - 1] for number in SEGMENT_IDS],
        "reference": [references[int(number) - 1] for number in SEGMENT_IDS],
    })


@functools.cache
def attack_context() -> character_attacks.AttackResources:
    return character_attacks.load_context({name: RESOURCE_FOLDER / file for name, file in character_attacks.RESOURCES.items()})


def derive(function: str, table: pd.DataFrame | None = None, seed: int = 0):
    spec = spec_of(completed(functions={"visual": {}, "keyboard": {}, "intrude": {}}, options={"levels": [0.3]}))
    samples = {"wmt14": wmt14_table() if table is None else table}
    return derive_testset(character_attacks, FAMILY, function, spec["functions"][function], samples, None, seed, attack_context())


@needs_mirror
@pytest.mark.parametrize("function", ["visual-p0.3", "keyboard-p0.3", "intrude-p0.3"])
def test_only_the_source_is_attacked_and_the_reference_kept_byte_for_byte(function: str) -> None:
    assert perturbed_sides(character_attacks) == ("source",)
    original = wmt14_table()
    assert "\u00a0" in original["reference"].iloc[3] and "  " in original["source"].iloc[7]  # the cases meant
    derived, status = derive(function)
    assert list(derived.columns) == list(DERIVED_COLUMNS) and list(status.columns) == list(STATUS_COLUMNS)
    assert list(status["segment_id"]) == list(SEGMENT_IDS) and status["kept"].all() and (status["reason"] == "").all()
    assert list(derived["segment_id"]) == list(SEGMENT_IDS) and (derived["testset"] == "wmt14").all()
    for column in ("reference", "perturbed_reference"):
        assert [text.encode("utf-8") for text in derived[column]] == [text.encode("utf-8") for text in original["reference"]]
    assert list(derived["original_source"]) == list(original["source"]) == list(derived["source_tokens"])
    assert [len(text.split(" ")) for text in derived["source"]] == [len(text.split(" ")) for text in original["source"]]
    assert (derived["source"] != derived["original_source"]).sum() >= 6  # p = 0.3 changes most sentences
    again, _ = derive(function)
    assert again.equals(derived)
    assert list(derive(function, seed=1)[0]["source"]) != list(derived["source"])


@needs_mirror
def test_a_segment_is_attacked_the_same_alone_and_an_empty_source_is_recorded() -> None:
    derived, _ = derive("keyboard-p0.3")
    alone, _ = derive("keyboard-p0.3", wmt14_table().iloc[[5]])
    assert alone["source"].iloc[0] == derived["source"].iloc[5]
    table = pd.concat([wmt14_table().iloc[:2], pd.DataFrame([{"segment_id": "9", "doc_id": "news", "source": " ", "reference": "Rien."}])],
                      ignore_index=True)
    derived, status = derive("keyboard-p0.3", table)
    assert list(status["kept"]) == [True, True, False] and status["reason"].iloc[2] == "source: empty text"
    assert list(derived["segment_id"]) == ["1", "2"]
    with pytest.raises(InputError, match=r"kept none of the 1 sampled segments"):
        derive("keyboard-p0.3", table.iloc[[2]])


@needs_mirror
def test_beta2_equals_beta1_exactly_when_only_the_source_is_attacked(tmp_path: Path) -> None:
    """beta1 is read from the stored score table of the perturbed test set, beta2 computed against the
    (unchanged) reference: with one precision for stored and computed scores their difference is 0."""
    derived, _ = derive("visual-p0.3")
    # a system's translations: each reference with its first word dropped, so scores are not round numbers
    translations = [text.split(" ", 1)[-1] for text in derived["reference"]]
    metrics = ["bleu", "chrf", "levenshtein"]
    scores = pd.DataFrame({"segment_id": derived["segment_id"]})
    for metric in metrics:
        scores[metric] = sentence_scores(translations, derived["reference"].tolist(), metric)
    write_score_table(scores, tmp_path / "perturbed.tsv")
    stored = read_score_table(str(tmp_path / "perturbed.tsv"))
    testset_scores = {"wmt14": scores.assign(**{metric: 50.0 for metric in metrics})}
    table = pair_scores(derived, stored, translations, testset_scores, metrics)
    for metric in metrics:
        assert (table[f"beta2_{metric}"] - table[f"beta1_{metric}"] == 0.0).all(), metric
        assert table[f"beta1_{metric}"].tolist() == scores[metric].tolist()
    # the scores carry more than 6 decimals, so a table rounded to 6 decimals would not give 0
    assert any(round(value, 6) != value for value in scores["chrf"])


# ---- the manifest's mirror substitute -------------------------------------------------------------------


@functools.cache
def manifest():
    return load_manifest(MANIFEST, MANIFEST_SCHEMA)


@needs_mirror
def test_the_darr_download_has_a_substitute_whose_digest_matches_the_mirror_file() -> None:
    download = manifest().downloads["wmt19-darr-seglevel"]
    substitute = download.mirror_substitute
    assert download.mirror is None and substitute is not None and download.checksum is None
    assert substitute.path == "wmt19-darr-subset/RR-seglevel.recovered.csv" and substitute.description
    assert hashlib.sha256((MIRROR / substitute.path).read_bytes()).hexdigest() == substitute.sha256


@needs_mirror
def test_the_mirror_gives_the_substitute_only_without_a_copy_of_its_own(tmp_path: Path) -> None:
    download = manifest().downloads["wmt19-darr-seglevel"]
    found = mirror_download_file(download, MIRROR)
    assert found == str(MIRROR / "wmt19-darr-subset" / "RR-seglevel.recovered.csv")
    assert is_mirror_substitute(download, found, MIRROR)
    assert mirror_download_file(download, tmp_path) is None and mirror_download_file(download, None) is None
    assert not is_mirror_substitute(download, None, MIRROR)
    # a mirror that holds the download itself gives that copy, which is no substitute
    (tmp_path / "wmt19-darr-subset").mkdir()
    (tmp_path / "wmt19-darr-subset" / "RR-seglevel.recovered.csv").write_text("LP DATA SID BETTER WORSE\n", encoding="utf-8")
    assert is_mirror_substitute(download, mirror_download_file(download, tmp_path), tmp_path)
    (tmp_path / "RR-seglevel.csv").write_text("LP DATA SID BETTER WORSE\n", encoding="utf-8")
    with_copy = dataclasses.replace(download, mirror="RR-seglevel.csv")
    assert mirror_download_file(with_copy, tmp_path) == str(tmp_path / "RR-seglevel.csv")
    assert not is_mirror_substitute(with_copy, str(tmp_path / "RR-seglevel.csv"), tmp_path)
    # an ordinary download
    key = manifest().downloads["zeroe-en-key"]
    assert key.mirror_substitute is None
    assert mirror_download_file(key, MIRROR) == str(MIRROR / "zeroe-attack-resources" / "en.key")
    assert not is_mirror_substitute(key, mirror_download_file(key, MIRROR), MIRROR)


def small_manifest() -> dict:
    """One parallel dataset and the DARR download, copied from the real manifest."""
    document = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    keys = ("biomedical-medline18-en", "biomedical-medline18-fr", "wmt19-darr-seglevel")
    return {
        "downloads": {key: copy.deepcopy(document["downloads"][key]) for key in keys},
        "datasets": {"wmt18-biomedical-medline-enfr": copy.deepcopy(document["datasets"]["wmt18-biomedical-medline-enfr"])},
    }


def load_small(tmp_path: Path, document: dict):
    path = tmp_path / "datasets.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return load_manifest(path, MANIFEST_SCHEMA)


def test_a_small_manifest_with_a_substitute_loads(tmp_path: Path) -> None:
    loaded = load_small(tmp_path, small_manifest())
    assert loaded.downloads["wmt19-darr-seglevel"].mirror_substitute == manifest().downloads["wmt19-darr-seglevel"].mirror_substitute


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda substitute: substitute.pop("sha256"), r"key 'downloads\.wmt19-darr-seglevel\.mirror_substitute': 'sha256' is a required property"),
        (lambda substitute: substitute.pop("description"), r"mirror_substitute': 'description' is a required property"),
        (lambda substitute: substitute.update(sha256="ABC"), r"key 'downloads\.wmt19-darr-seglevel\.mirror_substitute\.sha256'"),
        (lambda substitute: substitute.update(path="../RR.csv"), r"key 'downloads\.wmt19-darr-seglevel\.mirror_substitute\.path'"),
        (lambda substitute: substitute.update(md5="0" * 32), r"key 'downloads\.wmt19-darr-seglevel\.mirror_substitute'.*'md5'"),
    ],
)
def test_a_bad_substitute_fails_validation_naming_its_key(tmp_path: Path, edit, message: str) -> None:
    document = small_manifest()
    edit(document["downloads"]["wmt19-darr-seglevel"]["mirror_substitute"])
    with pytest.raises(InputError, match=message):
        load_small(tmp_path, document)
