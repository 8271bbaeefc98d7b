"""A study of plain test sets without document ids, run as a user runs it (issue 52, item 7): the run's log and the
caption of every table built on them say that their segments were resampled as independent units and how to give
document ids; the corpus table counts no documents.

The files are the plain export of the WMT'22 de-fr XML file (the second worked config's, config/own-data/), written
by the test with the document column of the domain file cut off: the same segments, no ids. 15 segments per test
set, 100 resamples, BLEU only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

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
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    tables = f"results/tables/{STUDY}"
    targets = [f"{tables}/bleu/robustness_pool.md", f"{tables}/bleu/robustness_pool.html", f"{tables}/bleu/comparisons.md",
               f"{tables}/corpus_scores.md", f"{tables}/corpus_scores.csv", f"{tables}/corpus_comparisons.md",
               "results/testsets/news.provenance.json"]
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
    provenance = yaml.safe_load((tmp_path / targets[-1]).read_text(encoding="utf-8"))
    assert provenance["documents"] == 0 and provenance["document_ids"] is False
    assert NOTE.replace("have", "has").replace("their", "its") in (tmp_path / "logs" / "prepare_testset" / "news.log").read_text(encoding="utf-8")
