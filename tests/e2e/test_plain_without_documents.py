"""A study of plain test sets without document ids, run as a user runs it (issue 52, item 7): the run's log and the
caption of every table built on them say that their segments were resampled as independent units and how to give
document ids; the corpus table counts no documents.

The files are the plain export of the WMT'22 de-fr XML file (the second worked config's, config/own-data/), written
by the test with the document column of the domain file cut off: the same segments, no ids. 15 segments per test
set, 100 resamples, BLEU only; and a metric read from files (issue 53, item 1): each system's plain score file, one
score per line of the whole source (a deterministic function of the hypothesis's length), whose segments the study's
test sets pick by segment id after select and max_segments; the engine's whole-pool mean equals the mean computed here
from the translations the run scored.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from nlp_robustness.data.testset_formats import read_plain_lines
from tests.e2e.workflow_runner import REPOSITORY, SNAKEMAKE

pytestmark = pytest.mark.e2e

STUDY = "wmt22-de-fr-plain"
NOTE = "have no document ids: their segments were resampled as independent units"


def test_a_plain_study_without_document_ids_says_so_in_its_log_and_captions(tmp_path: Path, mirror_dir: Path) -> None:
    data = tmp_path / "data"
    export = subprocess.run(
        [sys.executable, "-m", "nlp_robustness.data.plain_export",
         str(mirror_dir / "wmt22-general-defr-frde" / "xml" / "wmttest2022.de-fr.all.xml"), str(data)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
    )
    assert export.returncode == 0, export.stdout
    domains = data / "domains.tsv"
    domains.write_text("".join(line.split("\t")[0] + "\n" for line in domains.read_text(encoding="utf-8").splitlines()),
                       encoding="utf-8")
    config = yaml.safe_load((REPOSITORY / "config" / "own-data" / "plain-with-domains.yaml").read_text(encoding="utf-8"))
    for spec in config["testsets"].values():
        spec.update({side: str(data / Path(spec[side]).name) for side in ("source", "reference", "domain_file")})
    for spec in config["systems"].values():
        spec["files"] = {testset: str(data / "hypotheses" / Path(path).name) for testset, path in spec["files"].items()}
    config |= {"run_directory": ".", "max_segments": 15, "metrics": ["bleu"], "uncertainty": {"resamples": 100}}
    study = config["mt_studies"][STUDY]
    score_files = {}
    for system, spec in config["systems"].items():  # one file per system, serving every domain's test set
        lines = read_plain_lines(spec["files"]["news"])  # as the run reads them (stripped)
        score_files[system] = str(data / f"{system}.length")
        Path(score_files[system]).write_text("".join(f"{_length_score(line)!r}\n" for line in lines), encoding="utf-8")
    study["metric_files"] = {"length": {"higher_is_better": False, "description": "characters / 10", "decimals": 2,
                                        "epsilon": {"start": 0.5, "stop": 5, "step": 0.5},
                                        "testsets": {testset: {"format": "plain", "files": score_files} for testset in study["testsets"]}}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    tables = f"results/tables/{STUDY}"
    targets = [f"{tables}/bleu/robustness_pool.md", f"{tables}/bleu/robustness_pool.html", f"{tables}/bleu/comparisons.md",
               f"{tables}/corpus_scores.md", f"{tables}/corpus_scores.csv", f"{tables}/corpus_comparisons.md",
               "results/testsets/news.provenance.json", f"{tables}/length/robustness_pool.md", f"{tables}/length/comparisons.md",
               f"results/figures/{STUDY}/length/gamma_curves.png"]
    run = subprocess.run(
        [str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--configfile", "config.yaml", "--cores", "1", *targets],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-5000:]
    # the run's log, when planned
    assert f"study {STUDY}: Test sets conversation, news, social {NOTE}" in run.stdout
    assert "domain_file" in run.stdout
    for target in targets[:4] + targets[5:6]:
        text = " ".join((tmp_path / target).read_text(encoding="utf-8").split())
        assert f"Test sets conversation, news, social {NOTE}" in text, target
    corpus = pd.read_csv(tmp_path / f"{tables}/corpus_scores.csv")
    assert (corpus["documents"] == 0).all() and (corpus["resampled_units"] == corpus["segments"]).all()
    assert "| 15 | 15 |" not in (tmp_path / targets[3]).read_text(encoding="utf-8")  # before: segments 15, documents 15
    provenance = yaml.safe_load((tmp_path / targets[6]).read_text(encoding="utf-8"))
    assert provenance["documents"] == 0 and provenance["document_ids"] is False
    assert NOTE.replace("have", "has").replace("their", "its") in (tmp_path / "logs" / "prepare_testset" / "news.log").read_text(encoding="utf-8")
    # the metric read from files: the engine's whole-pool mean is the mean of the function over the scored translations
    for system in config["systems"]:
        translations = [line for testset in study["testsets"]
                        for line in read_plain_lines(tmp_path / "results" / "translations" / system / f"{testset}.txt")]
        assert len(translations) == 45  # 15 segments of each domain
        summary = pd.read_csv(tmp_path / "results" / "robustness" / STUDY / "length" / f"{system}.summary.tsv", sep="\t",
                              keep_default_na=False)
        pool = summary[(summary["left_out"] == "none") & (summary["method"] == "pool")].iloc[0]
        assert pool["units"] == 45 and pool["mean"] == pytest.approx(sum(map(_length_score, translations)) / 45, rel=1e-12)
    comparisons = (tmp_path / f"{tables}/length/comparisons.md").read_text(encoding="utf-8")
    assert "for the mean, lower is better" in comparisons and "characters / 10; read from files; lower is better" in comparisons


def _length_score(line: str) -> float:
    """The test's metric: a deterministic function of a hypothesis (its length in characters / 10)."""
    return len(line) / 10
