"""The hypotheses kind's ``submission``: a test set's translation is a dataset submission's output of the test
set's own segments (select, drop and max_segments stay aligned); plan-time and schema checks name their key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sacrebleu
from snakemake.utils import validate

from nlp_robustness.config.validation import validate_config
from nlp_robustness.data.acquisition import plan_dataset, read_dataset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testset_preparation import prepare_testset
from nlp_robustness.data.testsets import write_testset_table
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import write_table
from nlp_robustness.systems.kinds.hypotheses import check_submissions
from nlp_robustness.systems.registry import SystemContext, TranslationBatch, system_kind
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR, REPOSITORY

needs_mirror = pytest.mark.skipif(not (MIRROR / "wmt22-general-defr-frde").is_dir(), reason=f"WMT'22 mirror not found under {MIRROR}")
MANIFEST_LOADED = load_manifest(MANIFEST, MANIFEST_SCHEMA)
TESTSETS = {
    "defr-news": {"domain": "news", "dataset": "wmt22-general-defr", "select": {"domain": "news"}},
    "frde-social": {"domain": "social", "dataset": "wmt22-general-frde", "select": {"domain": "social"}},
    "wmt14": {"domain": "news", "dataset": "wmt14-newstest2014-enfr"},
    "pair": {"domain": "x", "source": "a.txt", "reference": "b.txt", "format": "plain"},
}
CONTEXT = SystemContext(
    MANIFEST_LOADED, "resources/downloads", None, frozenset({"perturbed/x/y/pooled"}),
    testset_datasets={name: spec["dataset"] for name, spec in TESTSETS.items() if "dataset" in spec},
)
SUBMISSION = {"kind": "hypotheses", "submission": "Online-B"}


def test_a_submission_job_reads_its_test_sets_dataset_table() -> None:
    needs = system_kind("hypotheses").needs("online-b", SUBMISSION, ["defr-news"], CONTEXT)
    assert needs.inputs == {"dataset": "results/datasets/wmt22-general-defr.tsv"}
    assert needs.params == {"submission": "Online-B", "dataset": "wmt22-general-defr"}
    with pytest.raises(InputError, match=r"systems\.online-b\.submission: the perturbed test set perturbed/x/y/pooled cannot be translated"):
        system_kind("hypotheses").needs("online-b", SUBMISSION, ["perturbed/x/y/pooled"], CONTEXT)
    with pytest.raises(InputError, match=r"systems\.online-b\.submission: test set pair is not made from a manifest dataset"):
        system_kind("hypotheses").needs("online-b", SUBMISSION, ["pair"], CONTEXT)


def test_plan_time_check_of_submissions() -> None:
    check_submissions("online-b", SUBMISSION, ["defr-news", "frde-social"], TESTSETS, MANIFEST_LOADED)
    check_submissions("lt22", {"kind": "hypotheses", "files": {"wmt14": "x"}}, ["wmt14"], TESTSETS, MANIFEST_LOADED)  # files: not checked here
    cases = [
        ({"kind": "hypotheses", "submission": "LT22"}, ["defr-news", "frde-social"],
         "systems.s.submission: 'LT22' is not a system of dataset wmt22-general-frde (test set frde-social; its systems: "
         "Lan-Bridge, Online-A, Online-B, Online-G, Online-W, Online-Y, eTranslation)"),
        (SUBMISSION, ["wmt14"], "systems.s.submission: dataset wmt14-newstest2014-enfr of test set wmt14 holds no submissions"),
        (SUBMISSION, ["pair"], "systems.s.submission: test set pair is a pair of files, not a manifest dataset or a WMT XML file, so it has no submissions"),
        (SUBMISSION, ["perturbed/x/y/pooled"],
         "systems.s.submission: test set perturbed/x/y/pooled is not a configured test set (a perturbed one?); a submission "
         "translates only the test sets made from its dataset"),
    ]
    for spec, testsets, message in cases:
        with pytest.raises(InputError) as caught:
            check_submissions("s", spec, testsets, TESTSETS, MANIFEST_LOADED)
        assert str(caught.value) == message


def _config_with(system: dict) -> dict:
    import yaml

    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    config["systems"] = {**config["systems"], "sub": system}
    return config


@pytest.mark.parametrize(
    ("system", "message"),
    [
        ({"kind": "hypotheses"}, "a hypotheses system gives either 'files' (a file per test set) or 'submission'"),
        ({"kind": "hypotheses", "submission": "Online-B", "files": {"x": "y"}}, "a hypotheses system gives either 'files'"),
    ],
)
def test_schema_wants_files_or_a_submission(system: dict, message: str) -> None:
    config = _config_with(system)
    with pytest.raises(InputError, match=re.escape(f"invalid configuration at key 'systems.sub': {message}")):
        validate_config(config, REPOSITORY / "schemas" / "config.schema.yaml")


def test_schema_accepts_a_submission() -> None:
    config = _config_with(SUBMISSION)
    validate(config, str(REPOSITORY / "schemas" / "config.schema.yaml"), set_default=True)
    validate_config(config, REPOSITORY / "schemas" / "config.schema.yaml")


def _batch(tmp_path: Path, testset_file: Path, dataset_file: Path, submission: str) -> TranslationBatch:
    return TranslationBatch(
        system="sub", testsets=("t",), testset_files=(str(testset_file),), translation_files=(str(tmp_path / "t.txt"),),
        report_files=(str(tmp_path / "t.report.json"),), inputs={"dataset": str(dataset_file)},
        params={"submission": submission, "dataset": "ds"}, log=str(tmp_path / "log"),
    )


def test_submission_translations_follow_the_test_sets_ids(tmp_path: Path) -> None:
    import pandas as pd

    dataset = pd.DataFrame({
        "segment_id": ["1", "2", "3", "4"], "doc_id": ["a", "a", "b", "b"], "source": ["s1", "s2", "s3", "s4"],
        "reference": ["r1", "s2", "r3", "r4"], "domain": ["news", "news", "social", "news"],
        "hypothesis:A": ["a1", "a2", "a3", "a4"], "hypothesis:B": ["b1", "b2", "b3", "b4"],
    })
    write_table(dataset, tmp_path / "ds.tsv", list(dataset.columns))
    table, _ = prepare_testset(dataset, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=True,
                               select={"domain": "news"})
    write_testset_table(table, tmp_path / "t.tsv")
    system_kind("hypotheses").translate(_batch(tmp_path, tmp_path / "t.tsv", tmp_path / "ds.tsv", "B"))
    assert (tmp_path / "t.txt").read_text(encoding="utf-8") == "b1\nb4\n"  # 2 dropped (source = reference), 3 is social
    report = json.loads((tmp_path / "t.report.json").read_text(encoding="utf-8"))
    assert report == {"system": "sub", "testset": "t", "dataset": "ds", "submission": "B", "dataset_file": str(tmp_path / "ds.tsv"), "segments": 2}
    with pytest.raises(InputError, match=r"ds\.tsv: no submission 'C' \(its submissions: A, B\)"):
        system_kind("hypotheses").translate(_batch(tmp_path, tmp_path / "t.tsv", tmp_path / "ds.tsv", "C"))
    write_testset_table(pd.DataFrame({"segment_id": ["4", "9"], "doc_id": "b", "source": ["s4", "s9"], "reference": "r"}), tmp_path / "u.tsv")
    with pytest.raises(InputError, match=r"ds\.tsv: the test set's segment id\(s\) 9 are not in the dataset"):
        system_kind("hypotheses").translate(_batch(tmp_path, tmp_path / "u.tsv", tmp_path / "ds.tsv", "A"))
    write_testset_table(pd.DataFrame({"segment_id": ["4"], "doc_id": "b", "source": ["other"], "reference": "r"}), tmp_path / "v.tsv")
    with pytest.raises(InputError, match=r"ds\.tsv: segment 4 of the test set has another source than the dataset's"):
        system_kind("hypotheses").translate(_batch(tmp_path, tmp_path / "v.tsv", tmp_path / "ds.tsv", "A"))


@needs_mirror
def test_a_news_test_set_of_wmt22_gets_online_b_s_news_translations(tmp_path: Path) -> None:
    dataset = read_dataset(plan_dataset(MANIFEST_LOADED.datasets["wmt22-general-defr"], MANIFEST_LOADED, MIRROR, "unused"))
    write_table(dataset, tmp_path / "ds.tsv", list(dataset.columns))
    table, _ = prepare_testset(dataset, max_segments=100, allow_empty_segments=False, drop_source_equals_reference=False,
                               select={"domain": "news"})
    write_testset_table(table, tmp_path / "t.tsv")
    system_kind("hypotheses").translate(_batch(tmp_path, tmp_path / "t.tsv", tmp_path / "ds.tsv", "Online-B"))
    translations = (tmp_path / "t.txt").read_text(encoding="utf-8").split("\n")[:-1]
    news = dataset[dataset["domain"] == "news"].head(100)
    assert translations == news["hypothesis:Online-B"].tolist()
    assert sacrebleu.corpus_bleu(translations, [table["reference"].tolist()]).score > 20
