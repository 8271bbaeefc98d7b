"""The dataset manifest: its validation, sacrebleu's registry, and where each dataset is read from."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import sacrebleu
import yaml
from sacrebleu.dataset import DATASETS as SACREBLEU_DATASETS

from nlp_robustness.data.acquisition import (
    download_file_path,
    extraction_dir_path,
    mirror_download_file,
    missing_mirror_files,
    plan_dataset,
    plan_from_params,
    read_dataset,
)
from nlp_robustness.errors import InputError
from nlp_robustness.data.manifest import load_manifest, sacrebleu_download, sacrebleu_langpair_files
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

SCHEMA = MANIFEST_SCHEMA
DOCUMENT = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))

#: Every dataset the paper uses (Section 5), by manifest key.
PAPER_DATASETS = {
    "wmt14-newstest2014-enfr", "wmt15-newsdiscusstest2015-enfr", "iwslt17-tst2017-enfr", "mtnt18-test-enfr",
    "mtnt19-test-enfr", "wmt18-biomedical-medline-enfr", "khresmoi-summary-dev-enfr", "iwslt17-tst2014-enfr",
    "iwslt17-tst2015-enfr", "mtnt18-valid-enfr", "amazon-sentiment-acl", "amazon-sentiment-unprocessed",
}

needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason=f"offline data mirror not found at {MIRROR}")


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(MANIFEST, SCHEMA)


def _load(tmp_path: Path, document: dict):
    path = tmp_path / "datasets.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return load_manifest(path, SCHEMA)


def test_every_paper_dataset_is_listed_with_a_canonical_source(manifest) -> None:
    assert PAPER_DATASETS <= set(manifest.datasets)
    for key, dataset in manifest.datasets.items():
        assert dataset.description and dataset.licence and dataset.domain, key
        for ref in dataset.download.files.values():
            download = manifest.downloads[ref.download]
            assert download.url.startswith("https://"), key
            assert download.checksum is not None or "first download" in download.checksum_source
    # Amazon: 4 labelled training domains and the 25 domains of the unprocessed release
    assert len(manifest.datasets["amazon-sentiment-acl"].domains) == 4
    unprocessed = manifest.datasets["amazon-sentiment-unprocessed"]
    assert len(unprocessed.domains) == 25 and set(manifest.datasets["amazon-sentiment-acl"].domains) <= set(unprocessed.domains)
    assert len(unprocessed.download.files) == 50


def test_sacrebleu_registry_supplies_urls_and_md5s(manifest) -> None:
    """URLs and md5 sums of the WMT, IWSLT and MTNT downloads are sacrebleu's own, not copied numbers."""
    via_sacrebleu = {key: entry["sacrebleu"] for key, entry in DOCUMENT["downloads"].items() if "sacrebleu" in entry}
    assert set(via_sacrebleu) == {
        "wmt14-test-full", "wmt15-test", "iwslt17-test-en-fr", "iwslt17-test-fr-en", "iwslt17-train-dev-en-fr",
        "iwslt17-train-dev-fr-en", "mtnt-1.1", "mtnt-2019",
    }
    for key, reference in via_sacrebleu.items():
        entry = SACREBLEU_DATASETS[reference["entry"]]
        download = manifest.downloads[key]
        index = entry.data.index(download.url)
        assert download.checksum.algorithm == "md5" and download.checksum.hexdigest == entry.md5[index]
        assert f"sacrebleu {sacrebleu.__version__}" in download.checksum.source
    assert manifest.downloads["mtnt-2019"].checksum.hexdigest == "78a672e1931f106a8549023c0e8af8f6"


@pytest.mark.parametrize(
    ("dataset", "entry"),
    [
        ("wmt14-newstest2014-enfr", "wmt14/full"),
        ("wmt15-newsdiscusstest2015-enfr", "wmt15"),
        ("iwslt17-tst2017-enfr", "iwslt17"),
        ("iwslt17-tst2014-enfr", "iwslt17/tst2014"),
        ("iwslt17-tst2015-enfr", "iwslt17/tst2015"),
        ("mtnt18-test-enfr", "mtnt1.1/test"),
        ("mtnt18-valid-enfr", "mtnt1.1/valid"),
        ("mtnt19-test-enfr", "mtnt2019"),
    ],
)
def test_members_and_columns_agree_with_sacrebleu(manifest, dataset: str, entry: str) -> None:
    files = manifest.datasets[dataset].download.files
    assert [files["source"].path, files["reference"].path] == sacrebleu_langpair_files(entry, "en-fr")
    metas = SACREBLEU_DATASETS[entry].langpairs["en-fr"]
    if ":" in metas[0]:  # TSV sets: sacrebleu's "column:path"
        assert [files["source"].column, files["reference"].column] == [int(meta.split(":")[0]) for meta in metas]


def test_sacrebleu_lookup_errors() -> None:
    with pytest.raises(InputError, match=r"here: sacrebleu .* has no dataset entry 'wmt99'"):
        sacrebleu_download("wmt99", None, "here")
    with pytest.raises(InputError, match=r"entry 'iwslt17' has 12 URLs ending with None"):
        sacrebleu_download("iwslt17", None, "here")
    url, checksum = sacrebleu_download("iwslt17", "/texts/en/fr/en-fr.tgz", "here")
    assert url.endswith("2017-01-ted-test/texts/en/fr/en-fr.tgz") and checksum.hexdigest == "1849bcc3b006dc0642a8843b11aa7192"


def _edited(edit) -> dict:
    document = copy.deepcopy(DOCUMENT)
    edit(document)
    return document


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["downloads"]["khresmoi-summary-2.0"].pop("checksum"),
         r"key 'downloads\.khresmoi-summary-2\.0': give either 'sacrebleu', or 'url' with exactly one of"),
        (lambda d: d["downloads"]["biomedical-medline18-en"].update(md5="0" * 32),
         r"key 'downloads\.biomedical-medline18-en': give either"),
        (lambda d: d["downloads"]["wmt15-test"].update(url="https://example.org/x.tgz"),
         r"key 'downloads\.wmt15-test'"),
        (lambda d: d["downloads"]["biomedical-medline18-fr"].update(sha256="XYZ"), r"downloads\.biomedical-medline18-fr"),
        (lambda d: d["downloads"]["wmt14-test-full"].update(sacrebleu={"entry": "wmt14/fulll"}),
         r"downloads\.wmt14-test-full: sacrebleu .* has no dataset entry 'wmt14/fulll'"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"].update(segmnets=3003), r"datasets\.wmt14-newstest2014-enfr"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"]["download"].update(format="tmx"),
         r"datasets\.wmt14-newstest2014-enfr\.download\.format"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"]["mirror"]["source"].update(path="../outside.sgm"),
         r"datasets\.wmt14-newstest2014-enfr\.mirror\.source\.path"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"]["download"]["source"].update(download="wmt41"),
         r"datasets\.wmt14-newstest2014-enfr\.download\.source\.download: 'wmt41' is not a key of the downloads"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"]["download"]["source"].pop("member"),
         r"download\.source: download 'wmt14-test-full' is a tar archive; name the 'member'"),
        (lambda d: d["datasets"]["wmt18-biomedical-medline-enfr"]["download"]["source"].update(member="x.en"),
         r"download 'biomedical-medline18-en' is a plain file, not an archive"),
        (lambda d: d["datasets"]["mtnt18-test-enfr"]["download"]["source"].pop("column"),
         r"mtnt18-test-enfr\.download\.source: format 'tsv' needs a 'column'"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"]["download"]["source"].update(column=1),
         r"'column' applies only to the formats tsv"),
        (lambda d: d["datasets"]["amazon-sentiment-acl"]["mirror"]["sha256"].pop("dvd/negative"),
         r"amazon-sentiment-acl\.mirror\.sha256: needs exactly one digest per '<domain>/<label>'; missing dvd/negative"),
        (lambda d: d["datasets"]["amazon-sentiment-acl"]["download"].update(member="sorted_data_acl/{domain}.review"),
         r"must contain both \{domain\} and \{label\}"),
        (lambda d: d["datasets"]["amazon-sentiment-acl"].update(labels=["positive", "great"]),
         r"datasets\.amazon-sentiment-acl\.labels\.1"),
        (lambda d: d["datasets"]["wmt22-general-defr"].pop("reference_translator"),
         r"datasets\.wmt22-general-defr: format 'wmt-xml' needs 'reference_translator'"),
        (lambda d: d["datasets"]["wmt22-general-defr"].pop("domains"), r"datasets\.wmt22-general-defr: format 'wmt-xml' needs 'domains'"),
        (lambda d: d["datasets"]["wmt14-newstest2014-enfr"].update(systems=["X"]),
         r"datasets\.wmt14-newstest2014-enfr\.systems: applies only to a dataset of format 'wmt-xml'"),
        (lambda d: d["datasets"]["wmt22-general-defr"]["mirror"]["reference"].update(path="other.xml"),
         r"datasets\.wmt22-general-defr\.mirror: format 'wmt-xml' reads source and reference from one file"),
        (lambda d: d["datasets"]["wmt22-general-defr"]["mirror"].update(format="plain"),
         r"datasets\.wmt22-general-defr: the download and mirror copies must both be of format 'wmt-xml', or neither"),
        (lambda d: d["models"]["wmt14-enfr-fconv"].update(download="fairseq-wmt14"),
         r"models\.wmt14-enfr-fconv\.download: 'fairseq-wmt14' is not a key of the downloads section"),
        (lambda d: d["models"]["wmt14-enfr-fconv"].update(download="biomedical-medline18-en"),
         r"models\.wmt14-enfr-fconv\.download: 'biomedical-medline18-en' is a plain file"),
        (lambda d: d["models"]["wmt14-enfr-fconv"]["files"].pop("bpe_codes"),
         r"key 'models\.wmt14-enfr-fconv\.files': 'bpe_codes' is a required property"),
        (lambda d: d["models"]["wmt14-enfr-fconv"]["files"].update(checkpoint="/abs/model.pt"),
         r"key 'models\.wmt14-enfr-fconv\.files\.checkpoint'"),
    ],
)
def test_manifest_mistakes_name_their_key(tmp_path: Path, edit, message: str) -> None:
    with pytest.raises(InputError, match=message):
        _load(tmp_path, _edited(edit))


def test_manifest_file_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="dataset manifest not found"):
        load_manifest(tmp_path / "absent.yaml", SCHEMA)
    (tmp_path / "bad.yaml").write_text("downloads: {a: [\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.yaml: line \d+: invalid YAML"):
        load_manifest(tmp_path / "bad.yaml", SCHEMA)


def test_download_files_and_members(manifest) -> None:
    assert manifest.downloads["khresmoi-summary-2.0"].archive == "zip"
    assert manifest.downloads["khresmoi-summary-2.0"].checksum is None
    assert manifest.downloads["biomedical-medline18-en"].filename == "medline18_en2fr.en"  # %20 in the URL path
    assert manifest.members_of("mtnt-1.1") == ["MTNT/test/test.en-fr.tsv", "MTNT/train/train.en-fr.tsv", "MTNT/valid/valid.en-fr.tsv"]
    assert manifest.members_of("khresmoi-summary-2.0") == [
        f"khresmoi-summary-test-set-2.0/khresmoi-summary-{split}.{language}"
        for split in ("dev", "test") for language in ("en", "fr")
    ]
    # the pretrained model's four files, not the README beside them in fairseq's archive
    assert manifest.members_of("fairseq-wmt14-enfr-fconv") == [
        f"wmt14.en-fr.fconv-py/{name}" for name in ("bpecodes", "dict.en.txt", "dict.fr.txt", "model.pt")
    ]
    model = manifest.models["wmt14-enfr-fconv"]
    assert (model.source_language, model.target_language) == ("en", "fr")
    assert manifest.downloads[model.download].url == "https://dl.fbaipublicfiles.com/fairseq/models/wmt14.v2.en-fr.fconv-py.tar.bz2"
    assert manifest.downloads[model.download].archive == "tar"
    download = manifest.downloads["mtnt-1.1"]
    assert download_file_path("resources/downloads", download) == "resources/downloads/mtnt-1.1/MTNT.1.1.tar.gz"
    assert extraction_dir_path("resources/downloads", download) == "resources/downloads/mtnt-1.1/extracted"


@needs_mirror
def test_plans_read_the_mirror_when_it_holds_every_file(manifest) -> None:
    expected_mirror = {
        "wmt14-newstest2014-enfr", "wmt15-newsdiscusstest2015-enfr", "iwslt17-tst2017-enfr",
        "wmt18-biomedical-medline-enfr", "wmt17-biomedical-edp-enfr", "amazon-sentiment-acl", "tatoeba-v2021-08-07-enfr",
        "wmt22-general-defr", "wmt22-general-frde",
    }
    plans = {key: plan_dataset(dataset, manifest, MIRROR, "dl") for key, dataset in manifest.datasets.items()}
    assert {key for key, plan in plans.items() if plan.origin == "mirror"} == expected_mirror
    assert plans["wmt15-newsdiscusstest2015-enfr"].format == "plain"  # the mirror's own format
    assert plans["mtnt19-test-enfr"].inputs == ("dl/mtnt-2019/extracted",)
    assert plans["mtnt19-test-enfr"].files["reference"].path == "dl/mtnt-2019/extracted/MTNT2019/en-fr.final.tsv"
    assert plans["mtnt19-test-enfr"].files["reference"].column == 3
    assert plans["iwslt17-tst2014-enfr"].downloads == ("iwslt17-train-dev-en-fr", "iwslt17-train-dev-fr-en")
    # a plan survives the trip through Snakemake params
    for plan in plans.values():
        rebuilt = plan_from_params(plan.as_params())
        assert (rebuilt.files, rebuilt.origin, rebuilt.format, rebuilt.segments) == (plan.files, plan.origin, plan.format, plan.segments)


@needs_mirror
def test_partial_or_absent_mirror_falls_back_to_downloads(manifest, tmp_path: Path) -> None:
    medline = manifest.datasets["wmt18-biomedical-medline-enfr"]
    partial = tmp_path / "mirror"
    (partial / "wmt-biomedical-enfr").mkdir(parents=True)
    (partial / "wmt-biomedical-enfr" / "medline18_en2fr.en").write_bytes(
        (MIRROR / "wmt-biomedical-enfr" / "medline18_en2fr.en").read_bytes()
    )
    assert missing_mirror_files(medline, partial) == ["wmt-biomedical-enfr/medline18_en2fr.fr"]
    plan = plan_dataset(medline, manifest, partial, "dl")
    assert plan.origin == "download"
    assert plan.inputs == ("dl/biomedical-medline18-en/medline18_en2fr.en", "dl/biomedical-medline18-fr/medline18_en2fr.fr")
    # the download that the mirror does hold is copied from it, the other comes from the network
    assert mirror_download_file(manifest.downloads["biomedical-medline18-en"], partial) is not None
    assert mirror_download_file(manifest.downloads["biomedical-medline18-fr"], partial) is None
    assert plan_dataset(medline, manifest, None, "dl").origin == "download"
    # the IWSLT archives themselves are in the mirror
    assert mirror_download_file(manifest.downloads["iwslt17-test-en-fr"], MIRROR) == str(MIRROR / "iwslt17-ted-enfr/en-fr.tgz")


@needs_mirror
def test_wmt_xml_datasets_read_with_their_declared_columns_and_checked(manifest, tmp_path: Path) -> None:
    plan = plan_dataset(manifest.datasets["wmt22-general-frde"], manifest, MIRROR, "dl")
    assert plan.origin == "mirror" and plan.format == "wmt-xml"
    assert plan.declared == {
        "reference_translator": "A",
        "domains": ["conversation", "ecommerce", "news", "social"],
        "systems": ["Lan-Bridge", "Online-A", "Online-B", "Online-G", "Online-W", "Online-Y", "eTranslation"],
    }
    rebuilt = plan_from_params(plan.as_params())
    assert rebuilt.declared == plan.declared
    table = read_dataset(rebuilt)
    assert len(table) == 2006
    assert list(table.columns) == [
        "segment_id", "doc_id", "source", "reference", "domain",
        *(f"hypothesis:{system}" for system in plan.declared["systems"]),
    ]
    # other datasets' params (and so their jobs) are as they were: no 'declared' key
    assert "declared" not in plan_dataset(manifest.datasets["wmt14-newstest2014-enfr"], manifest, MIRROR, "dl").as_params()
    wrong = plan_from_params({**plan.as_params(), "declared": {**plan.as_params()["declared"], "systems": ["Online-A"]}})
    with pytest.raises(InputError, match=r"dataset wmt22-general-frde: .*wmttest2022\.fr-de\.all\.xml holds the systems .* not declared: Lan-Bridge"):
        read_dataset(wrong)
