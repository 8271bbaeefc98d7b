"""The ``huggingface`` system kind on a tiny MarianMT the tests build (tests/tiny_models/marian.py): loading
from a directory, batching that keeps input order, determinism, device choice, the report's hashes, the
errors a user meets, and a whole translation job as scripts/translate.py runs it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testsets import write_testset_table
from nlp_robustness.errors import InputError
from nlp_robustness.systems.huggingface import HuggingfaceTranslator, is_local_model
from nlp_robustness.systems.registry import SystemContext, TranslationBatch, system_kind
from tests.paths import MANIFEST, MANIFEST_SCHEMA, REPOSITORY
from tests.tiny_models.m2m100 import build_tiny_m2m100, build_tiny_m2m100_config
from tests.tiny_models.marian import tatoeba_pairs

SCHEMA = REPOSITORY / "schemas" / "config.schema.yaml"
CONTEXT = SystemContext(load_manifest(MANIFEST, MANIFEST_SCHEMA), "resources/downloads", None)
#: Ten English sources of different lengths (the mirror's Tatoeba lines, past those the model trained on).
SOURCES = [english for english, _ in tatoeba_pairs(4010)[4000:]]


def system_entry(**entry: object) -> dict:
    """A ``huggingface`` system's config entry with the schema's defaults filled in, as rules/common.smk fills them."""
    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    config["systems"] = {"tiny": {"kind": "huggingface", **entry}}
    validate(config, str(SCHEMA), set_default=True)
    return config["systems"]["tiny"]


def test_the_schema_fills_the_defaults_and_rejects_a_bad_dtype() -> None:
    entry = system_entry(model="Helsinki-NLP/opus-mt-en-fr")
    assert {key: entry[key] for key in ("revision", "source_language", "prefix", "batch_size", "beam", "dtype", "device", "gpus")} == {
        "revision": None, "source_language": None, "prefix": "", "batch_size": 16, "beam": 4, "dtype": "float32",
        "device": "auto", "gpus": 1}
    with pytest.raises(Exception, match="float8"):
        system_entry(model="Helsinki-NLP/opus-mt-en-fr", dtype="float8")


def test_a_path_is_a_local_model_and_an_id_is_a_hub_model(tmp_path: Path) -> None:
    assert [is_local_model(name) for name in ("Helsinki-NLP/opus-mt-en-fr", "t5-small", "./m", "/abs/m", "a/b/c", str(tmp_path))] == [
        False, False, True, True, True, True]


def test_batches_sorted_by_length_give_the_one_by_one_translations_in_input_order(tiny_marian_dir: Path) -> None:
    batched = HuggingfaceTranslator.load(system_entry(model=str(tiny_marian_dir), batch_size=3, beam=2, max_length=20), "systems.tiny")
    translations = batched.translate(SOURCES)
    one_by_one = [batched.translate([source])[0] for source in SOURCES]
    assert translations == one_by_one
    assert len(set(translations)) >= 3  # the model tells sentences apart, so a shuffled order would show
    assert all(translation and "\n" not in translation for translation in translations)


def test_the_same_config_gives_the_same_translations(tiny_marian_dir: Path) -> None:
    entry = system_entry(model=str(tiny_marian_dir), batch_size=4, max_length=20)
    first = HuggingfaceTranslator.load(entry, "systems.tiny").translate(SOURCES)
    second = HuggingfaceTranslator.load(entry, "systems.tiny").translate(SOURCES)
    assert first == second


def test_a_source_longer_than_the_models_positions_is_cut_and_counted(tiny_marian_dir: Path) -> None:
    translator = HuggingfaceTranslator.load(system_entry(model=str(tiny_marian_dir), beam=1, max_length=500), "systems.tiny")
    positions = translator.model.config.max_position_embeddings
    assert translator.max_source_tokens == positions == 128 and translator.max_new_tokens == positions - 1
    long_source = " ".join(["the cat is on the table"] * 60)  # far more than 128 subwords
    translations = translator.translate([SOURCES[0], long_source, SOURCES[1]])
    assert len(translations) == 3 and translations[0] == translator.translate([SOURCES[0]])[0]
    report = translator.report(3, 1.0)
    assert report["truncated_sources"] == 1 and report["max_source_tokens"] == 128


def test_device_auto_is_the_cpu_here_and_cuda_without_a_gpu_is_a_named_error(tiny_marian_dir: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert HuggingfaceTranslator.load(system_entry(model=str(tiny_marian_dir)), "systems.tiny").device == "cpu"
    with pytest.raises(InputError, match=r"systems\.tiny\.device: device 'cuda' asked for, but torch sees no GPU"):
        HuggingfaceTranslator.load(system_entry(model=str(tiny_marian_dir), device="cuda"), "systems.tiny")


def test_a_bad_dtype_is_a_named_error_at_run_time(tiny_marian_dir: Path) -> None:
    entry = {**system_entry(model=str(tiny_marian_dir)), "dtype": "float8"}
    with pytest.raises(InputError, match=r"systems\.tiny\.dtype: dtype must be one of auto, float32, float16, bfloat16, not 'float8'"):
        HuggingfaceTranslator.load(entry, "systems.tiny")


def test_an_unknown_model_directory_is_a_named_error_at_plan_and_run_time(tmp_path: Path) -> None:
    kind = system_kind("huggingface")
    missing = system_entry(model=str(tmp_path / "no-such-model"))
    with pytest.raises(InputError, match=r"systems\.tiny\.model: no model directory .*no-such-model"):
        kind.needs("tiny", missing, ["t"], CONTEXT)
    with pytest.raises(InputError, match=r"systems\.tiny\.model: no model directory"):
        HuggingfaceTranslator.load(missing, "systems.tiny")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"systems\.tiny\.model: .*empty has no config\.json"):
        kind.needs("tiny", system_entry(model=str(tmp_path / "empty")), ["t"], CONTEXT)


def test_a_model_needing_language_codes_without_them_is_a_named_error(tmp_path: Path) -> None:
    directory = build_tiny_m2m100_config(tmp_path / "m2m")
    expected = rf"systems\.tiny\.source_language: model {directory} \(m2m_100\) needs a source language code"
    with pytest.raises(InputError, match=expected):
        system_kind("huggingface").needs("tiny", system_entry(model=str(directory)), ["t"], CONTEXT)
    with pytest.raises(InputError, match=expected):
        HuggingfaceTranslator.load(system_entry(model=str(directory)), "systems.tiny")
    with pytest.raises(InputError, match=r"systems\.tiny\.target_language: .* needs a target language code"):
        HuggingfaceTranslator.load(system_entry(model=str(directory), source_language="en"), "systems.tiny")


@pytest.fixture(scope="module")
def tiny_m2m100_dir(tiny_marian_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_m2m100(tmp_path_factory.mktemp("tiny-m2m100") / "model", tiny_marian_dir)


def test_language_codes_mark_the_source_and_force_the_first_target_token(tiny_m2m100_dir: Path) -> None:
    entry = system_entry(model=str(tiny_m2m100_dir), source_language="en", target_language="fr", max_length=6)
    to_french = HuggingfaceTranslator.load(entry, "systems.tiny")
    tokenizer = to_french.tokenizer
    assert to_french.forced_bos_token_id == tokenizer.get_lang_id("fr")
    assert tokenizer(["Hello."])["input_ids"][0][0] == tokenizer.get_lang_id("en")
    to_german = HuggingfaceTranslator.load({**entry, "target_language": "de"}, "systems.tiny")
    assert to_french.translate(SOURCES[:3]) != to_german.translate(SOURCES[:3])  # the forced code steers the decoder
    for side in ("source", "target"):
        with pytest.raises(InputError, match=rf"systems\.tiny\.{side}_language: model .* \(m2m_100\) has no language code 'xx'"):
            HuggingfaceTranslator.load({**entry, f"{side}_language": "xx"}, "systems.tiny")


def test_a_hub_model_not_cached_while_offline_says_how_to_fetch_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    entry = system_entry(model="Helsinki-NLP/opus-mt-en-fr", revision="v1", cache_dir=str(tmp_path / "cache"))
    with pytest.raises(InputError, match=r"systems\.tiny\.model: Helsinki-NLP/opus-mt-en-fr .*`hf download Helsinki-NLP/opus-mt-en-fr --revision v1`"):
        HuggingfaceTranslator.load(entry, "systems.tiny")


def test_a_local_model_is_an_input_of_its_job_file_by_file_and_a_hub_id_is_not(tiny_marian_dir: Path) -> None:
    kind = system_kind("huggingface")
    local = kind.needs("tiny", system_entry(model=str(tiny_marian_dir), cpu_threads=3, gpus=0), ["a", "b"], CONTEXT)
    assert local.inputs["model_dir"] == str(tiny_marian_dir)
    assert {name for name in local.inputs if name != "model_dir"} == {
        f"model_file:{name}" for name in ("config.json", "generation_config.json", "model.safetensors", "source.spm",
                                          "target.spm", "tokenizer_config.json", "vocab.json")}
    assert (local.threads, local.gpus, local.params["model"]) == (3, 0, str(tiny_marian_dir))
    hub = kind.needs("tiny", system_entry(model="Helsinki-NLP/opus-mt-en-fr", revision="abc"), ["a"], CONTEXT)
    assert hub.inputs == {} and (hub.params["model"], hub.params["revision"], hub.gpus) == ("Helsinki-NLP/opus-mt-en-fr", "abc", 1)


def _testset(path: Path, sources: list[str]) -> str:
    write_testset_table(pd.DataFrame({"segment_id": [str(index) for index in range(len(sources))], "doc_id": "d",
                                      "source": sources, "reference": sources}), path)
    return str(path)


def _job(tmp_path: Path, model: Path, testsets: dict[str, list[str]], family: str | None = None, joint: bool = False) -> TranslationBatch:
    """A translation job as rules/translate.smk and scripts/translate.py build it."""
    needs = system_kind("huggingface").needs("tiny", system_entry(model=str(model), batch_size=3, max_length=20), list(testsets), CONTEXT)
    return TranslationBatch(
        system="tiny", testsets=tuple(testsets),
        testset_files=tuple(_testset(tmp_path / f"{name}.tsv", sources) for name, sources in testsets.items()),
        translation_files=tuple(str(tmp_path / f"{name}.txt") for name in testsets),
        report_files=tuple(str(tmp_path / f"{name}.report.json") for name in testsets),
        inputs=needs.inputs, params=needs.params, log=str(tmp_path / "log"), family=family, joint=joint)


def test_a_translation_job_writes_the_translations_and_a_report_with_the_file_hashes(tiny_marian_dir: Path, tmp_path: Path) -> None:
    job = _job(tmp_path, tiny_marian_dir, {"tatoeba": SOURCES})
    system_kind("huggingface").translate(job)
    translations = Path(job.translation_files[0]).read_text(encoding="utf-8").splitlines()
    assert translations == HuggingfaceTranslator.load(job.params, "systems.tiny").translate(SOURCES)
    report = json.loads(Path(job.report_files[0]).read_text(encoding="utf-8"))
    files = sorted(path for path in tiny_marian_dir.iterdir())
    assert report["files"] == {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}
    assert {key: report[key] for key in ("system", "testset", "model", "revision", "commit", "model_type", "dtype", "device",
                                         "beam", "batch_size", "segments")} == {
        "system": "tiny", "testset": "tatoeba", "model": str(tiny_marian_dir), "revision": None, "commit": None,
        "model_type": "marian", "dtype": "float32", "device": "cpu", "beam": 4, "batch_size": 3, "segments": 10}
    assert report["seconds"] >= 0 and report["load_seconds"] > 0


def test_a_joint_family_job_translates_its_sets_in_one_run_and_slices_them_back(tiny_marian_dir: Path, tmp_path: Path) -> None:
    job = _job(tmp_path, tiny_marian_dir, {"typos-1": SOURCES[:4], "typos-2": SOURCES[4:]}, family="typos", joint=True)
    system_kind("huggingface").translate(job)
    expected = HuggingfaceTranslator.load(job.params, "systems.tiny").translate(SOURCES)
    assert [Path(path).read_text(encoding="utf-8").splitlines() for path in job.translation_files] == [expected[:4], expected[4:]]
    first = json.loads(Path(job.report_files[0]).read_text(encoding="utf-8"))
    assert (first["segments"], first["translated_with"], first["job"]["segments"]) == (4, ["typos-1", "typos-2"], 10)


def test_a_family_job_translates_each_set_as_a_job_of_its_own_would(tiny_marian_dir: Path, tmp_path: Path) -> None:
    job = _job(tmp_path, tiny_marian_dir, {"typos-1": SOURCES[:4], "typos-2": SOURCES[4:]}, family="typos")
    system_kind("huggingface").translate(job)
    translator = HuggingfaceTranslator.load(job.params, "systems.tiny")
    assert [Path(path).read_text(encoding="utf-8").splitlines() for path in job.translation_files] == [
        translator.translate(SOURCES[:4]), translator.translate(SOURCES[4:])]
    first = json.loads(Path(job.report_files[0]).read_text(encoding="utf-8"))
    assert (first["testset"], first["segments"], "translated_with" in first) == ("typos-1", 4, False)


def test_an_edited_model_changes_the_report_hashes(tiny_marian_dir: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(tiny_marian_dir, tmp_path / "copy"))
    config = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    (copy / "config.json").write_text(json.dumps({**config, "note": "edited"}), encoding="utf-8")
    report = HuggingfaceTranslator.load(system_entry(model=str(copy)), "systems.tiny").report(0, 0.0)
    original = HuggingfaceTranslator.load(system_entry(model=str(tiny_marian_dir)), "systems.tiny").report(0, 0.0)
    assert report["files"]["config.json"] != original["files"]["config.json"]
    assert report["files"]["model.safetensors"] == original["files"]["model.safetensors"]


def test_the_docs_entry_for_opus_mt_is_a_valid_system() -> None:
    readme = (REPOSITORY / "docs" / "systems.md").read_text(encoding="utf-8")
    snippet = next(block for block in readme.split("```yaml\n")[1:]
                   if "kind: huggingface" in block.split("```")[0] and block.lstrip().startswith("systems:"))
    (name, entry), = yaml.safe_load(snippet.split("```")[0])["systems"].items()
    assert (name, system_entry(**{key: value for key, value in entry.items() if key != "kind"})["model"]) == (
        "opus-mt-en-fr", "Helsinki-NLP/opus-mt-en-fr")


def _per_family_families(node: object) -> set[str]:
    """Names of the mappings anywhere in a config with ``translation_jobs: per_family`` or ``per_family_joint``."""
    if isinstance(node, dict):
        found = {key for key, value in node.items()
                 if isinstance(value, dict) and value.get("translation_jobs") in ("per_family", "per_family_joint")}
        return found.union(*(_per_family_families(value) for value in node.values()))
    return set().union(*(_per_family_families(value) for value in node)) if isinstance(node, list) else set()


def test_the_slurm_profile_sends_every_translation_job_of_a_gpu_kind_to_the_gpu_partition() -> None:
    profile = yaml.safe_load((REPOSITORY / "profiles" / "slurm" / "config.yaml").read_text(encoding="utf-8"))
    families = _per_family_families(yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8")))
    assert families  # the default config batches at least one family
    for kind in ("fairseq", "huggingface"):
        module = system_kind(kind)
        assert module.GPU and module.BATCHES_FAMILIES
        for rule in [module.RULE, *(f"{module.RULE}_{family}" for family in sorted(families))]:
            assert profile["set-resources"][rule]["slurm_partition"] == "gpu", rule


def test_the_tiny_marian_is_built_to_the_same_bytes(tiny_marian_dir: Path, tmp_path: Path) -> None:
    from tests.tiny_models.marian import build_tiny_marian

    first, second = (build_tiny_marian(tmp_path / name, train=False) for name in ("first", "second"))
    assert {path.name: path.read_bytes() for path in first.iterdir()} == {path.name: path.read_bytes() for path in second.iterdir()}
    assert (first / "source.spm").read_bytes() == (tiny_marian_dir / "source.spm").read_bytes()  # the trained one's vocabulary
