"""The system-kind registry: every kind resolves and describes its jobs from real config entries; an unknown
kind names its config key; the hypotheses and Apertium kinds write the files their rules always wrote."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testsets import write_testset_table
from nlp_robustness.errors import InputError
from nlp_robustness.systems.kinds.fairseq import FairseqModels
from nlp_robustness.systems.registry import (
    KINDS,
    JobNeeds,
    SystemContext,
    TranslationBatch,
    TranslationJobs,
    system_kind,
)
from tests.e2e.workflow_runner import SMALL_CONFIG_FILE
from tests.paths import MANIFEST, MANIFEST_SCHEMA, REPOSITORY

SCHEMA = REPOSITORY / "schemas" / "config.schema.yaml"
CONTEXT = SystemContext(load_manifest(MANIFEST, MANIFEST_SCHEMA), "resources/downloads", 40, frozenset({"natural-pooled-typos"}))


def systems_of(path: Path) -> dict:
    """The systems section of a config file, defaults filled in as rules/common.smk fills them."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    validate(config, str(SCHEMA), set_default=True)
    return config["systems"]


DEFAULT = systems_of(REPOSITORY / "config.yaml")
SMALL = systems_of(SMALL_CONFIG_FILE)
PAPER = systems_of(REPOSITORY / "config" / "paper.yaml")


def wildcards(**values: str) -> SimpleNamespace:
    return SimpleNamespace(**values)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_module_has_the_interface(kind: str) -> None:
    module = system_kind(kind)
    assert isinstance(module.RULE, str) and (REPOSITORY / "envs" / module.CONDA_ENV).is_file()
    assert isinstance(module.BATCHES_FAMILIES, bool) and isinstance(module.GPU, bool)
    assert list(inspect.signature(module.needs).parameters) == ["system", "spec", "testsets", "context"]
    assert list(inspect.signature(module.translate).parameters) == ["batch"]


def test_the_rules_of_the_kinds_keep_their_names() -> None:
    """Rule names and log folders are what the workflow always had (profiles, tests and logs name them)."""
    kinds = {kind: system_kind(kind) for kind in ("apertium", "hypotheses", "fairseq")}
    assert {kind: module.RULE for kind, module in kinds.items()} == {
        "apertium": "translate_apertium", "hypotheses": "import_hypotheses", "fairseq": "translate_fairseq"}
    assert [kind for kind, module in kinds.items() if module.BATCHES_FAMILIES] == ["apertium", "fairseq"]
    assert [kind for kind, module in kinds.items() if module.GPU] == ["fairseq"]
    assert len({system_kind(kind).RULE for kind in KINDS}) == len(KINDS)  # one rule name per kind


def test_the_schema_knows_exactly_the_registered_kinds() -> None:
    systems = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["properties"]["systems"]["additionalProperties"]
    assert systems["properties"]["kind"]["enum"] == list(KINDS)
    assert [rule["if"]["properties"]["kind"]["const"] for rule in systems["allOf"]] == list(KINDS)


def test_an_unknown_kind_names_its_config_key() -> None:
    known = re.escape(f"(known: {', '.join(KINDS)})")
    assert known.startswith(re.escape("(known: apertium, hypotheses, fairseq"))
    with pytest.raises(InputError, match=rf"invalid configuration at key 'systems.opus-mt.kind': unknown system kind 'marian' {known}"):
        TranslationJobs({"opus-mt": {"kind": "marian"}}, CONTEXT).kind("opus-mt")
    with pytest.raises(InputError, match=r"^unknown system kind 'marian'"):
        system_kind("marian")


def test_an_apertium_job_from_the_default_config() -> None:
    jobs = TranslationJobs(DEFAULT, CONTEXT)
    assert jobs.needs(wildcards(system="apertium-en-ca-fr", testset="wmt14")) == JobNeeds(
        inputs={}, params={"modes": ["eng-cat", "cat-fra"], "mark_unknown": False}, threads=1, mem_mb=2000, runtime=60, gpus=0)
    assert list(jobs.resources("apertium")) == ["mem_mb", "runtime"]  # no gpu resource, as before


def test_an_inhouse_fairseq_job_from_the_default_config() -> None:
    jobs = TranslationJobs(DEFAULT, CONTEXT)
    prefix = "results/models/convs2s-tatoeba"
    needs = jobs.needs(wildcards(system="convs2s-tatoeba", testset="wmt14"))
    assert needs.inputs == {"checkpoint": f"{prefix}/checkpoint_best.pt", "data_bin": f"{prefix}/data-bin", "bpe_codes": f"{prefix}/bpecodes"}
    assert needs.params == {
        "bundle": {"checkpoint": f"{prefix}/checkpoint_best.pt", "source_dictionary": f"{prefix}/data-bin/dict.en.txt",
                   "target_dictionary": f"{prefix}/data-bin/dict.fr.txt", "bpe_codes": f"{prefix}/bpecodes",
                   "source_language": "en", "target_language": "fr"},
        "generation": {"beam": 5, "batch_size": 128, "lenpen": 1.0, "max_len_a": 1.5, "max_len_b": 10, "max_tokens_per_side": 1000},
        "device": "auto",
        "cpu_threads": 1,  # translation_cpu_threads; training keeps cpu_threads (2)
    }
    assert (needs.threads, needs.mem_mb, needs.runtime, needs.gpus) == (1, 4000, 120, 1)
    resources = jobs.resources("fairseq", ["natural-pooled-typos"])
    assert {name: value(wildcards(system="convs2s-tatoeba")) for name, value in resources.items()} == {"mem_mb": 4000, "gpu": 1, "runtime": 120}


def test_a_pretrained_fairseq_job_from_the_paper_config() -> None:
    needs = TranslationJobs(PAPER, CONTEXT).needs(wildcards(system="convs2s-wmt14", testset="wmt14"))
    extracted = "resources/downloads/fairseq-wmt14-enfr-fconv/extracted"
    assert needs.inputs == {"model_dir": extracted}
    assert needs.params["bundle"] == {
        "checkpoint": f"{extracted}/wmt14.en-fr.fconv-py/model.pt",
        "source_dictionary": f"{extracted}/wmt14.en-fr.fconv-py/dict.en.txt",
        "target_dictionary": f"{extracted}/wmt14.en-fr.fconv-py/dict.fr.txt",
        "bpe_codes": f"{extracted}/wmt14.en-fr.fconv-py/bpecodes",
        "source_language": "en", "target_language": "fr",
    }
    assert (needs.mem_mb, needs.gpus) == (16000, 1)
    assert needs.threads == needs.params["cpu_threads"] == PAPER["convs2s-wmt14"]["cpu_threads"]  # no translation_cpu_threads


def test_a_hypotheses_job_from_the_small_config() -> None:
    jobs = TranslationJobs(SMALL, CONTEXT)
    test_set = jobs.needs(wildcards(system="copy-source", testset="wmt15"))
    # the whole file is checked against the whole test set, whose size the prepared test set's provenance gives
    assert test_set.inputs == {"hypotheses": "../shared/data/opus-mt-testsets-enfr/testsets/en-fr/newsdiscusstest2015.en",
                               "testset_provenance": "results/testsets/wmt15.provenance.json"}
    assert test_set.params == {"max_segments": 40} and (test_set.threads, test_set.mem_mb, test_set.runtime) == (1, 1000, 10)
    hypotheses_of_perturbed = {**SMALL["copy-source"], "files": {"natural-pooled-typos": "typos.txt"}}
    perturbed = TranslationJobs({"copy-source": hypotheses_of_perturbed}, CONTEXT).needs(
        wildcards(system="copy-source", testset="natural-pooled-typos"))
    assert perturbed.params == {"max_segments": None}  # one line per kept row: the whole file
    assert perturbed.inputs == {"hypotheses": "typos.txt"}


def test_only_a_batching_kind_leaves_family_sets_to_the_family_job() -> None:
    jobs = TranslationJobs(SMALL, CONTEXT, {"natural": ["natural-a", "natural-b"]})
    testsets = ["wmt14", "natural-a", "natural-b", "word_order-c"]
    assert jobs.single_testsets("fairseq", testsets) == ["wmt14", "word_order-c"]
    assert jobs.single_testsets("apertium", testsets) == ["wmt14", "word_order-c"]  # each set its own run, in one job
    assert jobs.single_testsets("hypotheses", testsets) == testsets
    assert jobs.systems_of_kind("apertium") == ["apertium-en-es-fr", "apertium-en-ca-fr"]
    assert jobs.systems_of_kind("hypotheses")[0] == "copy-source"
    assert all(name.startswith("defr-") for name in jobs.systems_of_kind("hypotheses")[1:])  # the WMT22 submissions


def test_fairseq_training_jobs_from_the_default_config() -> None:
    models = FairseqModels(DEFAULT, CONTEXT)
    system = wildcards(system="convs2s-tatoeba")
    assert models.inhouse() == ["convs2s-tatoeba"]
    assert models.training_corpus_inputs(system) == {"training": ["results/datasets/tatoeba-v2021-08-07-enfr.tsv"], "dev": []}
    corpus = models.training_corpus_params(system)
    assert corpus["dataset_languages"] == {"tatoeba-v2021-08-07-enfr": ["en", "fr"]}
    assert (corpus["holdout"], corpus["bpe_merges"], corpus["bpe_min_frequency"], corpus["max_segments"]) == (500, 8000, 2, None)
    assert models.training_params(system)["arch"] == "fconv" and models.languages(system) == ("en", "fr")


def test_allowed_code_in_train_args_reaches_fairseq_train_and_the_default_reruns_nothing() -> None:
    """``allow_code_in_train_args`` reaches the training job (its params) only when true, as scripts/fairseq_train.py
    hands it to train_command; false, the default, leaves the params of every trained model as they were."""
    from nlp_robustness.systems.fairseq.training import TrainingOptions, train_command

    system = wildcards(system="convs2s-tatoeba")
    assert "allow_code_in_train_args" not in FairseqModels(DEFAULT, CONTEXT).training_params(system)
    systems = copy.deepcopy(DEFAULT)
    training = systems["convs2s-tatoeba"]["training"]
    training["train_args"]["user-dir"] = "plugins"
    training["allow_code_in_train_args"] = True
    params = FairseqModels(systems, CONTEXT).training_params(system)
    options = TrainingOptions(arch=params["arch"], train_args=params["train_args"],
                              allow_code=params.get("allow_code_in_train_args", False))  # as scripts/fairseq_train.py
    command = train_command("data-bin", "checkpoints", options, "cpu")
    assert command[command.index("--user-dir") + 1] == "plugins"


def _testset(path: Path, sources: list[str]) -> str:
    write_testset_table(pd.DataFrame({"segment_id": [str(i) for i in range(len(sources))], "doc_id": "d",
                                      "source": sources, "reference": sources}), path)
    return str(path)


def _batch(tmp_path: Path, system: str, testset: str, inputs: dict, params: dict) -> TranslationBatch:
    return TranslationBatch(system=system, testsets=(testset,), testset_files=(str(tmp_path / f"{testset}.tsv"),),
                            translation_files=(str(tmp_path / f"{testset}.txt"),), report_files=(str(tmp_path / f"{testset}.report.json"),),
                            inputs=inputs, params=params, log=str(tmp_path / "log"))


def test_hypotheses_are_imported_with_the_report_they_always_had(tmp_path: Path) -> None:
    _testset(tmp_path / "wmt14.tsv", ["un", "deux"])
    (tmp_path / "hyps.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    # the test set has 3 segments, cut to 2 by max_segments (its provenance counts them)
    provenance = tmp_path / "wmt14.provenance.json"
    provenance.write_text(json.dumps({"segments_read": 3, "dropped_source_equals_reference": 0, "segments_before_cut": 3}))
    inputs = {"hypotheses": str(tmp_path / "hyps.txt"), "testset_provenance": str(provenance)}
    batch = _batch(tmp_path, "copy", "wmt14", inputs, {"max_segments": 2})
    system_kind("hypotheses").translate(batch)
    assert (tmp_path / "wmt14.txt").read_text(encoding="utf-8") == "one\ntwo\n"
    assert (tmp_path / "wmt14.report.json").read_text(encoding="utf-8") == json.dumps(
        {"system": "copy", "testset": "wmt14", "hypotheses_file": str(tmp_path / "hyps.txt"), "segments": 2}, indent=2)
    with pytest.raises(InputError, match=r"hyps.txt: 3 lines but test set wmt14 has 2 segments"):
        system_kind("hypotheses").translate(dataclasses.replace(batch, params={"max_segments": None}))
    # a file one line short of the whole test set is refused, although the 2 lines kept would be there
    provenance.write_text(json.dumps({"segments_read": 4, "dropped_source_equals_reference": 0, "segments_before_cut": 4}))
    with pytest.raises(InputError, match=r"hyps.txt: 3 lines but test set wmt14 has 4 segments \(max_segments 2 keeps"):
        system_kind("hypotheses").translate(batch)


def test_a_batch_of_misaligned_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2 test sets, 1 test set files"):
        TranslationBatch(system="s", testsets=("a", "b"), testset_files=("a.tsv",), translation_files=("a.txt", "b.txt"),
                         report_files=("a.json", "b.json"), inputs={}, params={}, log="log")


@pytest.mark.apertium
@pytest.mark.skipif(shutil.which("apertium") is None, reason="needs the apertium command")
def test_apertium_writes_the_chain_report_with_non_ascii_kept(tmp_path: Path) -> None:
    from nlp_robustness.systems.apertium import translate_with_apertium

    _testset(tmp_path / "wmt14.tsv", ["The house is red.", "Café"])
    params = {"modes": ["eng-spa", "es-fr"], "mark_unknown": False}
    system_kind("apertium").translate(_batch(tmp_path, "apertium-en-es-fr", "wmt14", {}, params))
    translations, report = translate_with_apertium(["The house is red.", "Café"], params["modes"], mark_unknown=False)
    assert (tmp_path / "wmt14.txt").read_text(encoding="utf-8") == "".join(f"{line}\n" for line in translations)
    written = json.loads((tmp_path / "wmt14.report.json").read_text(encoding="utf-8"))
    expected = {"system": "apertium-en-es-fr", "testset": "wmt14", **report.as_dict()}
    assert _untimed(written) == _untimed(expected) and written["segments"] == 2 and written["modes"] == ["eng-spa", "es-fr"]


def _untimed(record):
    """A report without its wall-clock times (the only values two runs do not share)."""
    if isinstance(record, dict):
        return {key: _untimed(value) for key, value in record.items() if key != "seconds"}
    return [_untimed(value) for value in record] if isinstance(record, list) else record
