"""The README's three "bring your own data" configs (config/own-data/), run as a user runs them, so the recipes
cannot rot; and two of them as two configs in one checkout (docs/own-data.md, "Several configs in one checkout").

Laid out as a checkout: a temporary ``checkout/`` beside ``shared/data`` (a link to the mirror), so the configs'
relative paths mean what they mean in the repository; snakemake is launched there with the repository's
Snakefile and no ``--directory``, so each config's ``run_directory`` decides where its results go. Each config
runs on a small slice: its first 15 segments per test set (``max_segments``: bagging's 30 blocks need 30 units
once a test set is left out) and 100 bootstrap resamples, the only keys the tests change (checked); the Hugging
Face one with the tiny MarianMT the tests build in place of the hub model (this machine has no model hub).

In order, in one checkout: the WMT XML config (A), the plain-text config (B) on the files the README's export
command writes, A again (nothing to do; A's files untouched), B pointed at A's run directory (refused), then the
Hugging Face config.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from nlp_robustness.outputs.verdict_check import check_run
from tests.e2e.workflow_runner import REPOSITORY, SNAKEMAKE

pytestmark = pytest.mark.e2e

CONFIGS = REPOSITORY / "config" / "own-data"
#: What the tests change in a worked config: a slice of the data, fewer resamples.
SLICE = {"max_segments": 15, "uncertainty": {"resamples": 100}}
XML_STUDY, PLAIN_STUDY, HF_STUDY = "wmt22-de-fr-xml", "wmt22-de-fr-plain", "own-en-fr"


def _sliced(name: str, **replace: Any) -> dict[str, Any]:
    """The worked config ``name`` with :data:`SLICE` (and ``replace``) applied."""
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    assert not set(SLICE) & set(config), f"config/own-data/{name}.yaml sets a key the tests slice"
    return {**config, **copy.deepcopy(SLICE), **replace}


def _snakemake(checkout: Path, configfile: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--configfile", configfile, "--cores", "2", *arguments]
    return subprocess.run(command, cwd=checkout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)


def _files(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``directory`` but Snakemake's records: its bytes and modification time."""
    return {str(path.relative_to(directory)): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(directory.rglob("*")) if path.is_file() and ".snakemake" not in path.parts}


def _write(checkout: Path, name: str, config: dict[str, Any]) -> str:
    path = checkout / "config" / "own-data" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return str(path.relative_to(checkout))


def _table(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("own-data")
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(mirror_dir, target_is_directory=True)
    (root / "checkout").mkdir()
    yield root / "checkout"


def test_the_worked_configs_differ_from_the_repositorys_only_by_the_slice() -> None:
    for name in ("wmt-xml", "plain-with-domains", "huggingface"):
        written = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
        assert {key: value for key, value in _sliced(name).items() if key not in SLICE} == written
        assert written["run_directory"] == f"runs/{name}"


def test_wmt_xml_then_plain_text_then_wmt_xml_again_in_one_checkout(checkout: Path) -> None:
    xml_config = _write(checkout, "wmt-xml", _sliced("wmt-xml"))
    first = _snakemake(checkout, xml_config)
    assert first.returncode == 0, first.stdout[-5000:]
    run_a = checkout / "runs" / "wmt-xml"
    assert not (checkout / "results").exists() and (run_a / ".snakemake" / "metadata").is_dir()
    pool = pd.read_csv(run_a / "results" / "tables" / XML_STUDY / "bleu" / "robustness_pool.csv", index_col="system")
    assert list(pool.index) == ["LT22", "Online-A", "Online-B", "Online-G", "Online-W", "Online-Y"]
    corpus = pd.read_csv(run_a / "results" / "tables" / XML_STUDY / "corpus_scores.csv")
    assert set(corpus["pool"]) == {"conversation", "ecommerce", "news", "social", "all"} and len(corpus) == 5 * 6
    news = _table(run_a / "results" / "testsets" / "news.tsv")
    assert len(news) == 15 and (news["doc_id"] != "").all()
    before = _files(run_a)

    # B: the README's export command, then the plain-text config
    export = subprocess.run(
        [sys.executable, "-m", "nlp_robustness.data.plain_export",
         "../shared/data/wmt22-general-defr-frde/xml/wmttest2022.de-fr.all.xml", "data/wmt22-defr-plain"],
        cwd=checkout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
    )
    assert export.returncode == 0, export.stdout
    plain_config = _write(checkout, "plain-with-domains", _sliced("plain-with-domains"))
    second = _snakemake(checkout, plain_config)
    assert second.returncode == 0, second.stdout[-5000:]
    run_b = checkout / "runs" / "plain-with-domains"
    assert _files(run_a) == before  # byte for byte, and not rewritten
    # the same segments, documents, translations and scores by either route (plain: ids are the export's lines,
    # which are the XML's segment positions)
    for domain in ("conversation", "news", "social"):
        xml_table, plain_table = (_table(run / "results" / "testsets" / f"{domain}.tsv") for run in (run_a, run_b))
        pd.testing.assert_frame_equal(plain_table, xml_table)
        for system in ("Online-B", "Online-W", "LT22"):
            xml_scores, plain_scores = (_table(run / "results" / "scores" / system / f"{domain}.tsv") for run in (run_a, run_b))
            pd.testing.assert_frame_equal(plain_scores, xml_scores)

    again = _snakemake(checkout, xml_config, "--dry-run")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout, again.stdout[-3000:]
    assert "holds the results of config file" not in again.stdout
    for run in (run_a, run_b):  # one truth: every verdict, interval and Holm p, and the profile's reading, agree
        assert check_run(run, 0.05) == [], run
    # the worked config's report opens with its profile (issue 52, item 8: a one-test-set study crashed the profile,
    # and then --report)
    report = _snakemake(checkout, xml_config, "--report", str(run_a / "report.html"))
    assert report.returncode == 0, report.stdout[-3000:]
    assert "Robustness profile" in (run_a / "report.html").read_text(encoding="utf-8", errors="replace")
    # B pointed at A's run directory would replace A's results: refused before any job, naming both configs and the
    # way to allow it (nlp_robustness.run_owner); a dry run of it replaces nothing and says nothing
    before = _files(run_a)
    mixed = _snakemake(checkout, plain_config, "--config", "run_directory=runs/wmt-xml")
    assert mixed.returncode != 0, mixed.stdout[-3000:]
    assert ("InputError: run directory runs/wmt-xml holds the results of config file config/own-data/wmt-xml.yaml; this "
            "run's config (config/own-data/plain-with-domains.yaml) is another one") in mixed.stdout, mixed.stdout[-3000:]
    assert "--config allow_mixed_run_directory=True" in mixed.stdout
    assert _files(run_a) == before


def test_a_hugging_face_model_on_own_test_sets(checkout: Path, tiny_models: Path) -> None:
    config = _sliced("huggingface")
    config["systems"]["opus-mt-en-fr"]["model"] = str(tiny_models / "marian")
    result = _snakemake(checkout, _write(checkout, "huggingface", config))
    assert result.returncode == 0, result.stdout[-5000:]
    results = checkout / "runs" / "huggingface" / "results"
    pool = pd.read_csv(results / "tables" / HF_STUDY / "bleu" / "robustness_pool.csv", index_col="system")
    assert list(pool.index) == ["opus-mt-en-fr", "apertium-en-es-fr"]
    for testset in ("news", "biomedical", "ted"):
        assert len((results / "translations" / "opus-mt-en-fr" / f"{testset}.txt").read_text(encoding="utf-8").splitlines()) == 15
    assert check_run(results.parent, 0.05) == []
