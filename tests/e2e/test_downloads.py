"""Data acquisition end to end: the workflow downloads from a real HTTP server on loopback.

The server serves archives built in each source's real layout from the mirror files (WMT14
``test-full.tgz``, the Amazon ``domain_sentiment_data.tar.gz``), the real mirrored WIT3 archives of
IWSLT'17 (verified against sacrebleu's md5 sums) and the raw biomedical files. A clean download must
give tables identical to those read from the mirror; every failure (HTTP 404, a 500 followed by
success, a truncated body, a checksum mismatch, a tar member with ``../``, a stalled server) must end
with a clear error or a success and never leave a partial or unverified file.
"""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from nlp_robustness.data.manifest import load_manifest
from tests.e2e.workflow_runner import DEFAULT_CONFIG, REPOSITORY, run_workflow
from tests.loopback import LoopbackServer, serving, tar_archive

pytestmark = pytest.mark.e2e

MANIFEST_PATH = REPOSITORY / "resources" / "datasets.yaml"
SCHEMA_PATH = REPOSITORY / "schemas" / "datasets.schema.yaml"
AMAZON_DOMAINS = ["books", "dvd", "electronics", "kitchen_&_housewares"]

#: Datasets of the clean-download run, and the test sets that use them.
DATASETS = ["wmt14-newstest2014-enfr", "iwslt17-tst2017-enfr", "wmt18-biomedical-medline-enfr", "amazon-sentiment-acl"]
TESTSETS = {"wmt14": "wmt14-newstest2014-enfr", "iwslt17": "iwslt17-tst2017-enfr", "bio18": "wmt18-biomedical-medline-enfr"}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Sources:
    """The loopback server and what it serves, in the layout of each canonical source."""

    def __init__(self, server: LoopbackServer, mirror: Path) -> None:
        self.server = server
        self.mirror = mirror
        wmt14 = mirror / "wmt14-newstest2014-enfr"
        self.wmt14_archive = tar_archive({
            "test-full/newstest2014-fren-src.en.sgm": (wmt14 / "newstest2014-fren-src.en.sgm").read_bytes(),
            "test-full/newstest2014-fren-ref.fr.sgm": (wmt14 / "newstest2014-fren-ref.fr.sgm").read_bytes(),
            "test-full/newstest2014-fren-src.fr.sgm": (wmt14 / "newstest2014-fren-src.fr.sgm").read_bytes(),
        })
        acl = mirror / "amazon-multidomain-sentiment" / "sorted_data_acl"
        self.amazon_archive = tar_archive({
            f"sorted_data_acl/{domain}/{label}.review": (acl / domain / f"{label}.review").read_bytes()
            for domain in AMAZON_DOMAINS for label in ("positive", "negative")
        })
        self.medline = {side: (mirror / f"wmt-biomedical-enfr/medline18_en2fr.{side}").read_bytes() for side in ("en", "fr")}
        server.add("/statmt/wmt14/test-full.tgz", self.wmt14_archive)
        server.add("/WIT3/2017-01-ted-test/texts/en/fr/en-fr.tgz", (mirror / "iwslt17-ted-enfr/en-fr.tgz").read_bytes())
        server.add("/WIT3/2017-01-ted-test/texts/fr/en/fr-en.tgz", (mirror / "iwslt17-ted-enfr/fr-en.tgz").read_bytes())
        server.add("/jhu/sentiment/domain_sentiment_data.tar.gz", self.amazon_archive)
        for side, data in self.medline.items():
            server.add(f"/fyvo/medline18_en2fr.{side}", data)

    def manifest(self, workdir: Path, medline_fr_path: str = "/fyvo/medline18_en2fr.fr",
                 wmt14_path: str = "/statmt/wmt14/test-full.tgz", wmt14_sha256: str | None = None) -> Path:
        """The real manifest with its downloads pointed at the loopback server (same datasets, same members)."""
        document = yaml.safe_load(MANIFEST_PATH.read_text(encoding="utf-8"))
        real = load_manifest(MANIFEST_PATH, SCHEMA_PATH)
        downloads = document["downloads"]
        # built archive: its own sha256; the real WIT3 archives keep sacrebleu's md5 sums
        downloads["wmt14-test-full"] = {"url": self.server.url(wmt14_path), "sha256": wmt14_sha256 or _sha256(self.wmt14_archive)}
        for key, suffix in (("iwslt17-test-en-fr", "en/fr/en-fr.tgz"), ("iwslt17-test-fr-en", "fr/en/fr-en.tgz")):
            downloads[key] = {"url": self.server.url(f"/WIT3/2017-01-ted-test/texts/{suffix}"), "md5": real.downloads[key].checksum.hexdigest}
        downloads["biomedical-medline18-en"]["url"] = self.server.url("/fyvo/medline18_en2fr.en")
        downloads["biomedical-medline18-fr"]["url"] = self.server.url(medline_fr_path)
        downloads["amazon-domain-sentiment-data"]["url"] = self.server.url("/jhu/sentiment/domain_sentiment_data.tar.gz")
        for entry in downloads.values():
            entry.pop("mirror", None)
        path = workdir / "datasets.yaml"
        workdir.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        return path


@pytest.fixture(scope="module")
def sources(mirror_dir: Path):
    with serving() as server:
        yield Sources(server, mirror_dir)


def _config(manifest: Path | None, workdir: Path, mirror_dir: Path | None, **download: Any) -> dict[str, Any]:
    config = copy.deepcopy(DEFAULT_CONFIG)
    config["mirror_dir"] = str(mirror_dir) if mirror_dir is not None else None
    if manifest is not None:
        config["dataset_manifest"] = str(manifest)
    config["download"] = {"checksum_lock": str(workdir / "checksums.lock.yaml"), "timeout_seconds": 5, "retries": 2,
                          "retry_wait_seconds": 0, **download}
    config["testsets"] = {name: {"dataset": key, "domain": "x"} for name, key in TESTSETS.items()}
    # the in-house ConvS2S would add its training data to the datasets acquired (test_fairseq covers it)
    config["systems"] = {name: spec for name, spec in config["systems"].items() if spec["kind"] == "apertium"}
    config["mt_studies"] = {"paper": {"leave_out": list(TESTSETS)}}  # every test set and system
    config["extra_datasets"] = ["amazon-sentiment-acl"]
    # the human-judgement files are plain downloads copied from the mirror (test_workflow runs them)
    config.pop("human_studies")
    return config


def _files(directory: Path) -> list[str]:
    """Files under ``directory`` (Snakemake's marker in directory outputs, .snakemake_timestamp, left out)."""
    if not directory.exists():
        return []
    return sorted(
        str(path.relative_to(directory)) for path in directory.rglob("*")
        if path.is_file() and path.name != ".snakemake_timestamp"
    )


def _logs(workdir: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((workdir / "logs").rglob("*.log")))


DATASET_TARGETS = [f"results/datasets/{key}.tsv" for key in DATASETS] + ["results/tables/datasets.csv"]


@pytest.fixture(scope="module")
def downloaded(sources: Sources, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("download")
    config = _config(sources.manifest(workdir), workdir, None)
    result = run_workflow(workdir, config, *DATASET_TARGETS, *[f"results/testsets/{name}.tsv" for name in TESTSETS])
    assert result.returncode == 0, result.stdout[-5000:]
    return workdir


@pytest.fixture(scope="module")
def from_mirror(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("mirror")
    result = run_workflow(workdir, _config(None, workdir, mirror_dir), *DATASET_TARGETS)
    assert result.returncode == 0, result.stdout[-5000:]
    return workdir


def test_clean_download_gives_the_mirror_tables(downloaded: Path, from_mirror: Path) -> None:
    for key in DATASETS:
        downloaded_table = (downloaded / f"results/datasets/{key}.tsv").read_bytes()
        assert downloaded_table == (from_mirror / f"results/datasets/{key}.tsv").read_bytes(), key
    summary = (downloaded / "results/tables/datasets.csv").read_text(encoding="utf-8")
    assert summary.count(",download,") == len(DATASETS)
    assert (from_mirror / "results/tables/datasets.csv").read_text(encoding="utf-8").count(",mirror,") == len(DATASETS)
    assert "3003" in summary and "8000" in summary
    # nothing was downloaded in mirror mode
    assert not (from_mirror / "resources").exists()


def test_downloads_are_verified_extracted_and_recorded(downloaded: Path, sources: Sources) -> None:
    downloads = downloaded / "resources/downloads"
    assert _files(downloads) == sorted([
        "amazon-domain-sentiment-data/domain_sentiment_data.tar.gz",
        *[f"amazon-domain-sentiment-data/extracted/sorted_data_acl/{d}/{l}.review" for d in AMAZON_DOMAINS for l in ("positive", "negative")],
        "biomedical-medline18-en/medline18_en2fr.en",
        "biomedical-medline18-fr/medline18_en2fr.fr",
        "iwslt17-test-en-fr/en-fr.tgz",
        "iwslt17-test-en-fr/extracted/en-fr/IWSLT17.TED.tst2017.en-fr.en.xml",
        "iwslt17-test-fr-en/fr-en.tgz",
        "iwslt17-test-fr-en/extracted/fr-en/IWSLT17.TED.tst2017.fr-en.fr.xml",
        "wmt14-test-full/extracted/test-full/newstest2014-fren-ref.fr.sgm",
        "wmt14-test-full/extracted/test-full/newstest2014-fren-src.en.sgm",
        "wmt14-test-full/test-full.tgz",
    ])  # only the members the manifest reads are extracted; no temporary file is left
    logs = _logs(downloaded)
    assert "md5 1849bcc3b006dc0642a8843b11aa7192 verified" in logs  # sacrebleu's md5 of the real archive
    # the Amazon archive has no published checksum: recorded on first use
    lock = yaml.safe_load((downloaded / "checksums.lock.yaml").read_text(encoding="utf-8"))
    assert list(lock) == ["amazon-domain-sentiment-data"]
    assert lock["amazon-domain-sentiment-data"]["sha256"] == _sha256(sources.amazon_archive)
    provenance = yaml.safe_load((downloaded / "results/datasets/iwslt17-tst2017-enfr.provenance.json").read_text(encoding="utf-8"))
    assert provenance["origin"] == "download" and provenance["rows"] == 1455


def test_rerun_downloads_nothing(downloaded: Path, sources: Sources) -> None:
    before = dict(sources.server.requests)
    config = yaml.safe_load((downloaded / "config.yaml").read_text(encoding="utf-8"))
    result = run_workflow(downloaded, config, *DATASET_TARGETS, "--dry-run")
    assert result.returncode == 0 and "Nothing to be done" in result.stdout, result.stdout[-3000:]
    assert dict(sources.server.requests) == before


def _fetch_medline(sources: Sources, workdir: Path, path: str, **download: Any):
    config = _config(sources.manifest(workdir, medline_fr_path=path), workdir, None, **download)
    return run_workflow(workdir / "run", config, "results/datasets/wmt18-biomedical-medline-enfr.tsv")


def _assert_failed_cleanly(result, workdir: Path, sources: Sources, *messages: str) -> None:
    assert result.returncode != 0
    logs = _logs(workdir / "run")
    for message in messages:
        assert re.search(message, logs), (message, logs[-3000:])
    # nothing of the failed download, no temporary file: at most the other file, complete and verified
    # (it is fetched in parallel and may or may not have finished when the workflow stopped)
    english = "downloads/biomedical-medline18-en/medline18_en2fr.en"
    assert set(_files(workdir / "run" / "resources")) <= {english}
    if (workdir / "run" / "resources" / english).exists():
        assert (workdir / "run" / "resources" / english).read_bytes() == sources.medline["en"]
    assert _files(workdir / "run" / "results") == []


def test_http_404_fails_cleanly(sources: Sources, tmp_path: Path) -> None:
    result = _fetch_medline(sources, tmp_path, "/fyvo/absent.fr")
    _assert_failed_cleanly(result, tmp_path, sources, r"download of http://127\.0\.0\.1:\d+/fyvo/absent\.fr failed: HTTP 404")
    assert sources.server.requests["/fyvo/absent.fr"] == 1


def test_http_500_then_success(sources: Sources, tmp_path: Path) -> None:
    sources.server.add("/fyvo/flaky/medline18_en2fr.fr", sources.medline["fr"], ["500", "ok"])
    result = _fetch_medline(sources, tmp_path, "/fyvo/flaky/medline18_en2fr.fr")
    assert result.returncode == 0, result.stdout[-3000:]
    assert sources.server.requests["/fyvo/flaky/medline18_en2fr.fr"] == 2
    assert "attempt 1 failed (HTTP 500" in _logs(tmp_path / "run")
    assert (tmp_path / "run/resources/downloads/biomedical-medline18-fr/medline18_en2fr.fr").read_bytes() == sources.medline["fr"]
    assert (tmp_path / "run/results/datasets/wmt18-biomedical-medline-enfr.tsv").exists()


def test_truncated_body_fails_cleanly(sources: Sources, tmp_path: Path) -> None:
    sources.server.add("/fyvo/cut/medline18_en2fr.fr", sources.medline["fr"], ["truncate"])
    result = _fetch_medline(sources, tmp_path, "/fyvo/cut/medline18_en2fr.fr")
    _assert_failed_cleanly(result, tmp_path, sources, r"failed after 3 attempt\(s\): truncated body")


def test_checksum_mismatch_fails_cleanly(sources: Sources, tmp_path: Path) -> None:
    tampered = sources.medline["fr"].replace(b"psoriasis", b"psoriasys", 1)
    sources.server.add("/fyvo/tampered/medline18_en2fr.fr", tampered)
    result = _fetch_medline(sources, tmp_path, "/fyvo/tampered/medline18_en2fr.fr")
    expected_sha256 = _sha256(sources.medline["fr"])
    _assert_failed_cleanly(
        result, tmp_path, sources,
        rf"checksum mismatch for http://127\.0\.0\.1:\d+/fyvo/tampered/medline18_en2fr\.fr: expected sha256 {expected_sha256} "
        rf"\(sha256 pinned in the manifest \(downloads\.biomedical-medline18-fr\)\), got {_sha256(tampered)}",
    )


def test_stalled_server_times_out(sources: Sources, tmp_path: Path) -> None:
    sources.server.add("/fyvo/stall/medline18_en2fr.fr", sources.medline["fr"], ["stall"])
    result = _fetch_medline(sources, tmp_path, "/fyvo/stall/medline18_en2fr.fr", timeout_seconds=1, retries=1)
    _assert_failed_cleanly(result, tmp_path, sources, r"failed after 2 attempt\(s\): no data for 1 s \(timed out\)")


def test_tar_member_escaping_the_target_is_refused(sources: Sources, tmp_path: Path) -> None:
    wmt14 = sources.mirror / "wmt14-newstest2014-enfr"
    evil = tar_archive({
        "test-full/newstest2014-fren-src.en.sgm": (wmt14 / "newstest2014-fren-src.en.sgm").read_bytes(),
        "test-full/newstest2014-fren-ref.fr.sgm": (wmt14 / "newstest2014-fren-ref.fr.sgm").read_bytes(),
        "test-full/../../../../escaped.txt": b"written outside the target\n",
    })
    sources.server.add("/statmt/evil/test-full.tgz", evil)
    workdir = tmp_path / "run"
    manifest = sources.manifest(tmp_path, wmt14_path="/statmt/evil/test-full.tgz", wmt14_sha256=_sha256(evil))
    result = run_workflow(workdir, _config(manifest, tmp_path, None), "results/datasets/wmt14-newstest2014-enfr.tsv")
    assert result.returncode != 0
    assert "refusing the archive: member 'test-full/../../../../escaped.txt' would be written outside" in _logs(workdir)
    # the verified archive stays (it is what the server published); nothing was extracted, nothing escaped
    assert _files(workdir / "resources") == ["downloads/wmt14-test-full/test-full.tgz"]
    assert not any(path.name == "escaped.txt" for path in tmp_path.rglob("*"))
    assert _files(workdir / "results") == []


def _paper_dry_run(tmp_path: Path, mirror_dir: Path | None) -> str:
    config = yaml.safe_load((REPOSITORY / "config" / "paper.yaml").read_text(encoding="utf-8"))
    config["mirror_dir"] = str(mirror_dir) if mirror_dir is not None else None
    result = run_workflow(tmp_path, config, "--dry-run")
    assert result.returncode == 0, result.stdout[-5000:]
    return result.stdout


def _jobs(output: str, rule: str, wildcard: str) -> set[str]:
    blocks = output.split("\nrule ")
    return {
        match.group(1)
        for block in blocks if block.startswith(f"{rule}:")
        for match in [re.search(rf"wildcards: .*\b{wildcard}=([^,\s]+)", block)] if match
    }


def test_paper_config_dry_runs_offline_and_lists_every_dataset(tmp_path: Path, mirror_dir: Path) -> None:
    paper = yaml.safe_load((REPOSITORY / "config" / "paper.yaml").read_text(encoding="utf-8"))
    every_dataset = {spec["dataset"] for spec in paper["testsets"].values()} | set(paper["extra_datasets"])
    every_dataset |= {paper["sentiment"]["training"]["dataset"], paper["sentiment"]["test"]["dataset"]}
    assert len(every_dataset) == 14
    # the in-house ConvS2S models' training data (their dev sets are among the 14 already)
    every_dataset |= {"iwslt17-train-enfr", "mtnt18-train-enfr"}
    output = _paper_dry_run(tmp_path / "mirror", mirror_dir)
    assert _jobs(output, "prepare_dataset", "dataset") == every_dataset
    # what the mirror lacks is downloaded; what it holds is not, except the human-judgement files, which
    # are fetched from the mirror's copy (checksummed) into resources/downloads/
    human = {download for spec in paper["human_studies"]["wmt21-mqm"]["domains"].values()
             for download in [spec["scores"], *(spec[key] for key in ("source", "reference", "errors") if key in spec),
                              *spec.get("outputs", {}).values()]}
    assert len(human) == 13 and list(paper["human_studies"]) == ["wmt21-mqm"]
    fetched = _jobs(output, "fetch_download", "download")
    # metric robustness: WMT19 references and outputs of 3 pairs (37 files), the DARR judgements (the
    # mirror's recovered substitute) and the two Zeroe attack resources; Zeroe's natural typos (natural
    # perturbations); all from the mirror
    metric = {download for download in fetched if download.startswith(("wmt19-", "zeroe-"))}
    assert len(metric) == 37 + 1 + 2 + 1 and "zeroe-en-natural" in metric
    assert f"input: {mirror_dir}/wmt19-darr-subset/RR-seglevel.recovered.csv" in output
    assert fetched - human - metric == {
        "mtnt-1.1", "mtnt-2019", "iwslt17-train-dev-en-fr", "iwslt17-train-dev-fr-en", "khresmoi-summary-2.0",
        "amazon-unprocessed", "fairseq-wmt14-enfr-fconv",
    }
    assert human <= fetched and f"input: {mirror_dir}/wmt21-news-humaneval/" in output
    rules = set(re.findall(r"^rule (\w+):", output, re.M))
    assert {"translate_apertium", "translate_fairseq", "fairseq_train", "robustness_tables", "gamma_curves"} <= rules
    # the sentiment branch trains on the 4 labelled domains and tests on the 21 unprocessed others
    assert _jobs(output, "sentiment_train", "classifier") == {"dvd", "books", "kitchen_&_housewares", "electronics"}
    assert len(paper["sentiment"]["test"]["domains"]) == 21
    assert "sentiment_accuracy_table" in rules
    # without a mirror, every dataset is downloaded from its canonical source
    output = _paper_dry_run(tmp_path / "online", None)
    assert _jobs(output, "prepare_dataset", "dataset") == every_dataset
    assert len(_jobs(output, "fetch_download", "download")) == 16 + 13 + 41
