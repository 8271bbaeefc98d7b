"""The plan made from a config before any job: the canonical config and the study plan."""

from __future__ import annotations

import copy
import re

import pytest
import yaml
from snakemake.utils import validate

from nlp_robustness.errors import InputError
from nlp_robustness.planning import canonical_config, fill_schema_defaults, prepare_config
from nlp_robustness.statistics.pools import WHOLE_POOL
from nlp_robustness.studies.plan import study_plan
from tests.e2e.workflow_runner import DEFAULT_CONFIG, small_config
from tests.paths import REPOSITORY

SCHEMA_PATH = REPOSITORY / "schemas" / "config.schema.yaml"
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))
SECTIONS = {"domains": "D", "sentiment": "S", "human": "H", "natural": "N", "metric_robustness": "M",
            "word_order": "W", "character_attacks": "C", "paraphrase": "P"}


def _prepared(config: dict) -> dict:
    config = copy.deepcopy(config)
    prepare_config(config, REPOSITORY)
    return config


def _sections(config: dict) -> dict:
    return {**SECTIONS, **{family: family for family in config.get("perturbations", {}).get("families", {})}}


def test_defaults_are_filled_as_snakemake_fills_them() -> None:
    ours, snakemakes = copy.deepcopy(DEFAULT_CONFIG), copy.deepcopy(DEFAULT_CONFIG)
    fill_schema_defaults(ours, SCHEMA)
    validate(snakemakes, str(SCHEMA_PATH), set_default=True)
    assert ours == snakemakes


def test_reordering_a_records_keys_or_writing_out_a_default_gives_the_same_config() -> None:
    prepared = _prepared(DEFAULT_CONFIG)
    swapped = copy.deepcopy(DEFAULT_CONFIG)
    train_args = swapped["systems"]["convs2s-tatoeba"]["training"]["train_args"]
    dropout, optimizer = train_args.pop("dropout"), train_args.pop("optimizer")
    train_args["optimizer"], train_args["dropout"] = optimizer, dropout  # the two keys swapped, at the end
    classifier = swapped["sentiment"]["classifier"]
    del classifier["sublinear_tf"]  # equals its schema default
    swapped["sentiment"]["classifier"] = dict(reversed(list(classifier.items())))
    # Snakemake compares a job's params by their repr: equal reprs rerun nothing
    assert repr(_prepared(swapped)) == repr(prepared)


def test_a_whole_number_written_as_int_or_float_gives_the_same_config() -> None:
    """``lenpen: 1`` against its default ``1.0`` reran 102 jobs (issue 39): numbers are compared as JSON Schema does."""
    prepared = _prepared(DEFAULT_CONFIG)
    written = copy.deepcopy(DEFAULT_CONFIG)
    written["systems"]["convs2s-tatoeba"]["generation"]["lenpen"] = 1  # the schema's default is 1.0
    written["robustness"]["epsilon"]["start"] = float(written["robustness"]["epsilon"]["start"])  # 1 -> 1.0
    written["systems"]["convs2s-tatoeba"]["training"]["max_epoch"] = 10.0  # an integer key: fairseq wants "10"
    assert repr(_prepared(written)) == repr(prepared)
    generation = prepared["systems"]["convs2s-tatoeba"]["generation"]
    assert generation["lenpen"] == 1 and type(generation["lenpen"]) is int
    assert type(prepared["systems"]["convs2s-tatoeba"]["training"]["max_epoch"]) is int
    assert prepared["systems"]["convs2s-tatoeba"]["generation"]["max_len_a"] == 1.5  # a fraction stays a float


def test_the_users_order_of_systems_test_sets_and_functions_is_kept() -> None:
    edited = copy.deepcopy(DEFAULT_CONFIG)
    edited["systems"] = dict(reversed(list(edited["systems"].items())))
    edited["testsets"] = dict(reversed(list(edited["testsets"].items())))
    functions = edited["perturbations"]["families"]["word_order"]["functions"]
    edited["perturbations"]["families"]["word_order"]["functions"] = dict(reversed(list(functions.items())))
    prepared = _prepared(edited)
    assert list(prepared["systems"]) == list(edited["systems"])
    assert list(prepared["testsets"]) == list(edited["testsets"])
    assert list(prepared["perturbations"]["families"]["word_order"]["functions"]) == list(reversed(list(functions)))
    assert list(prepared["robustness"]) == sorted(prepared["robustness"])  # a record: sorted


def test_canonical_config_sorts_records_and_unordered_maps_only() -> None:
    schema = {"type": "object", "properties": {
        "record": {"type": "object", "properties": {"b": {}, "a": {}}},
        "names": {"type": "object", "additionalProperties": {"type": "object", "properties": {"y": {}, "x": {}}}},
        "options": {"type": "object", "additionalProperties": {"type": "string"}, "x-unordered": True},
        "free": {"type": "object"},
    }}
    config = {"record": {"b": 1, "a": 2}, "names": {"z": {"y": 1, "x": 2}, "m": {}}, "options": {"q": "1", "p": "2"},
              "free": {"d": {"c": 1, "b": 2}}}
    canonical = canonical_config(config, schema)
    assert list(canonical) == ["free", "names", "options", "record"]
    assert list(canonical["record"]) == ["a", "b"] and list(canonical["names"]) == ["z", "m"]
    assert list(canonical["names"]["z"]) == ["x", "y"] and list(canonical["options"]) == ["p", "q"]
    assert list(canonical["free"]["d"]) == ["b", "c"]
    assert canonical == config  # the same values


HUMAN_TABLES = [f"human/{study}/{score}" for study in ("wmt21-mqm", "wmt22-de-en", "wmt22-ja-en") for score in ("human", "bleu", "chrf")]
HUMAN_TABLES += [f"human/{study}/{metric}-all" for study in ("wmt22-de-en", "wmt22-ja-en") for metric in ("bleu", "chrf")]
#: the WMT22 zh-en MTME study: human, bleu, chrf and its ten metrics scored from files
HUMAN_TABLES += [f"human/wmt22-zh-en/{score}" for score in ("human", "bleu", "chrf", "BERTScore", "BLEURT-20", "COMET-20", "COMET-22",
                                                            "MS-COMET-22", "metricx_xxl_MQM_2020", "YiSi-1", "UniTE", "COMETKiwi", "COMET-QE")]


def test_the_study_plan_of_the_default_config_keeps_every_branchs_paths() -> None:
    config = _prepared(DEFAULT_CONFIG)
    plan = study_plan(config, _sections(config))
    assert list(plan.studies) == ["domains/paper", "domains/wmt22-de-fr", "domains/wmt22-fr-de", "sentiment", "human/wmt21-mqm", "human/wmt22-de-en",
                                  "human/wmt22-de-en/all", "human/wmt22-ja-en", "human/wmt22-ja-en/all", "human/wmt22-zh-en", "perturbations/word_order", "perturbations/character_attacks",
                                  "perturbations/natural", "perturbations/paraphrase", "perturbations/structure", "metric_attacks",
                                  "natural_robustness/mt", "natural_robustness/sentiment"]
    systems = config["mt_studies"]["paper"]["systems"]
    assert plan.table_summaries("paper/bleu") == {system: f"results/robustness/paper/bleu/{system}.summary.tsv" for system in systems}
    wmt22 = config["mt_studies"]["wmt22-de-fr"]
    assert plan.table_summaries("wmt22-de-fr/chrf") == {
        system: f"results/robustness/wmt22-de-fr/chrf/{system}.summary.tsv" for system in wmt22["systems"]}
    assert wmt22["language_pair"] == "de-fr" and len(wmt22["systems"]) == 6 and len(config["mt_studies"]["wmt22-fr-de"]["systems"]) == 7
    assert plan.table_summaries("sentiment") == {
        domain: f"results/sentiment/robustness/{domain}.summary.tsv" for domain in config["sentiment"]["training"]["domains"]}
    assert set(plan.tables) == {f"{study}/{metric}" for study in config["mt_studies"] for metric in ("bleu", "chrf")} | {"sentiment", *HUMAN_TABLES,
                                "perturbations/word_order/bleu", "perturbations/word_order/chrf",
                                "perturbations/word_order/levenshtein", "perturbations/character_attacks/bleu",
                                "perturbations/character_attacks/chrf", "perturbations/character_attacks/levenshtein",
                                "metric_robustness", "natural_robustness"} - _families_without_reports(config)
    human_studies = {f"human/{study}" for study in config["human_studies"]}
    assert set(plan.gamma_figures) == (set(plan.tables) - set(HUMAN_TABLES)) | human_studies
    da = plan.statistics_job("human/wmt22-ja-en/robustness/human/NT5")
    assert da["unit_files"]["news"] == "results/human/wmt22-ja-en/segments/news.tsv" and da["options"] == {"format": "wmt-da"}
    assert da["epsilon"] == config["human_studies"]["wmt22-ja-en"]["epsilon"] and da["label"] == "human/wmt22-ja-en"
    assert list(plan.table_summaries("human/wmt22-de-en/bleu"))[-1] == "HUMAN-B"  # the rated reference joins as a row
    # the job of one MT row: its score tables by test set, the study's pools and the metric's epsilon grid
    job = plan.statistics_job("robustness/paper/bleu/apertium-en-es-fr")
    paper = config["mt_studies"]["paper"]["testsets"]
    assert job["unit_files"] == {testset: f"results/scores/apertium-en-es-fr/{testset}.tsv" for testset in paper}
    assert job["leave_out"] == [WHOLE_POOL, *paper] and job["epsilon"] == config["robustness"]["epsilon"]
    assert plan.statistics_inputs("robustness/paper/bleu/apertium-en-es-fr")["blocks"] == "results/blocks/domains/paper.tsv"
    # the metric-robustness study draws its own number and size of blocks
    assert plan.block_set_job("metric_attacks", 7)["blocks"] == config["metric_robustness"]["bagging"]["blocks"]
    assert plan.block_set_job("domains/paper", 7)["blocks"] == config["robustness"]["bagging"]["blocks"]
    # Natural Robustness rows: each MT system under both criteria, each classifier under its label
    natural = plan.tables["natural_robustness"].rows
    assert [row for row in natural if row.endswith("(exact)")] == [f"{system} (exact)" for system in config["natural_robustness"]["systems"]]
    assert len(plan.outputs()) == len(plan.tables) * 3 * 4 + len(plan.gamma_figures) * 2 + len(plan.tables) * 2
    # every row's statistics job is seeded by its study's bootstrap settings, the same for every row of a study
    assert job["uncertainty"] == {"confidence": 0.95, "resamples": 1000, "seed": 0, "resample_domains": False}
    assert plan.table_replicates("paper/bleu")["apertium-en-es-fr"] == "results/robustness/paper/bleu/apertium-en-es-fr.replicates.npz"


def test_resampled_domains_name_a_study_with_nested_units() -> None:
    config = _prepared(DEFAULT_CONFIG)
    config["uncertainty"]["resample_domains"] = ["domains/paper"]
    plan = study_plan(config, _sections(config))
    assert plan.statistics_job("robustness/paper/bleu/apertium-en-es-fr")["uncertainty"]["resample_domains"] is True
    for name, message in (("domains/nope", "unknown study 'domains/nope'"), ("perturbations/word_order", "shared across its domains")):
        config["uncertainty"]["resample_domains"] = [name]
        with pytest.raises(InputError, match=re.escape(message)):
            study_plan(config, _sections(config))


def _families_without_reports(config: dict) -> set[str]:
    """Tables of family metrics the config does not write (a family's ``metrics`` may leave some out)."""
    families = config["perturbations"]["families"]
    return {f"perturbations/{family}/{metric}" for family in ("word_order", "character_attacks")
            for metric in ("bleu", "chrf", "levenshtein") if metric not in families[family]["metrics"]}


@pytest.mark.parametrize("name", ["small", "default"])
def test_every_statistics_job_reads_files_of_its_own_study(name: str) -> None:
    config = _prepared(small_config() if name == "small" else DEFAULT_CONFIG)
    plan = study_plan(config, _sections(config))
    for stem, row in plan.statistics.items():
        assert plan.block_sets[row.block_set].study == row.study
        assert plan.statistics_inputs(stem)["units"] == list(row.unit_files.values())
    # every table's rows and every figure's rows are statistics jobs of the plan
    assert all(stem in plan.statistics for table in plan.tables.values() for stem in table.rows.values())
    assert all(stem in plan.statistics for figure in plan.gamma_figures.values() for stem in figure.rows.values())
