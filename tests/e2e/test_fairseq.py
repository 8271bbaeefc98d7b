"""fairseq ConvS2S systems end to end, with real fairseq training and generation on real data.

* in-house: a tiny fconv trained by the workflow on 1500 real Tatoeba pairs of the mirror (2 epochs,
  early stopping on the real Medline'18 set as a separate dev dataset; the default config's seeded
  holdout is run by test_workflow), then every test set (first 25 segments of newstest2014 and Medline'18) translated with it;
* pretrained: that model packed in the exact layout of fairseq's published
  ``wmt14.v2.en-fr.fconv-py.tar.bz2`` (``wmt14.en-fr.fconv-py/{model.pt, dict.en.txt, dict.fr.txt,
  bpecodes, README.md}``), served by a real HTTP server on loopback, downloaded through the manifest
  (sha256 checked), extracted and used: its translations must be exactly the in-house ones;
* a corrupt ``model.pt`` in that archive stops the workflow with an error that names the file.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.e2e.workflow_runner import DEFAULT_CONFIG, REPOSITORY, run_workflow
from tests.loopback import LoopbackServer, serving, tar_archive

pytest.importorskip("fairseq")
pytestmark = [pytest.mark.e2e, pytest.mark.fairseq]

MANIFEST_PATH = REPOSITORY / "resources" / "datasets.yaml"
TESTSETS = ["wmt14", "bio18"]
SEGMENTS = 25
INHOUSE = "convs2s-tiny"
PRETRAINED = "convs2s-wmt14"
GENERATION = {"beam": 2, "batch_size": 16, "max_len_a": 1.5, "max_len_b": 10}

#: A tiny in-house model: enough to translate (badly) after a few seconds of training.
TINY_TRAINING: dict[str, Any] = {
    "datasets": ["tatoeba-v2021-08-07-enfr"],
    "max_segments": 1500,
    "dev": {"datasets": ["wmt18-biomedical-medline-enfr"]},
    "bpe_merges": 1000,
    "arch": "fconv",
    "train_args": {
        "encoder-embed-dim": 64, "encoder-layers": "[(64, 3)] * 2", "decoder-embed-dim": 64,
        "decoder-layers": "[(64, 3)] * 2", "decoder-out-embed-dim": 64, "dropout": 0.1,
        "optimizer": "adam", "lr": 0.005, "clip-norm": 0.5, "max-tokens": 2000,
    },
    "max_epoch": 2,
    "patience": 2,
    "seed": 1,
}


def fairseq_config(mirror_dir: Path, systems: dict[str, Any], manifest: Path | None = None) -> dict[str, Any]:
    config = copy.deepcopy(DEFAULT_CONFIG)
    config["mirror_dir"] = str(mirror_dir)
    config["max_segments"] = SEGMENTS
    config["testsets"] = {name: DEFAULT_CONFIG["testsets"][name] for name in TESTSETS}
    config["systems"] = systems
    config["metrics"] = ["bleu"]
    config["extra_datasets"] = []
    config["mt_studies"] = {"paper": {"leave_out": ["bio18"]}}  # every test set and system
    config["robustness"]["bagging"]["blocks"] = 10  # a pool needs at least as many units as blocks (25 here)
    # a --configfile is the whole config: these tests need the MT branch only (the shared small run has the
    # ConvS2S translate perturbed test sets; the metric branch has no MT system)
    for branch in ("sentiment", "human_studies", "perturbations", "metric_robustness", "natural_robustness", "robustness_profile"):
        config.pop(branch, None)
    if manifest is not None:
        config["dataset_manifest"] = str(manifest)
    return config


def inhouse_system() -> dict[str, Any]:
    return {"kind": "fairseq", "training": TINY_TRAINING, "generation": GENERATION, "device": "cpu", "cpu_threads": 2}


def inhouse_bundle(workdir: Path) -> dict[str, str]:
    """The files of the in-house model a run trained (ModelBundle fields)."""
    model_dir = workdir / "results/models" / INHOUSE
    return {
        "checkpoint": str(model_dir / "checkpoint_best.pt"),
        "source_dictionary": str(model_dir / "data-bin/dict.en.txt"),
        "target_dictionary": str(model_dir / "data-bin/dict.fr.txt"),
        "bpe_codes": str(model_dir / "bpecodes"),
    }


def documented_digest(system: str) -> str:
    """The ``weights_sha256`` that docs/reliability.md states for ``system`` (its table of digests)."""
    import re

    text = (REPOSITORY / "docs/reliability.md").read_text(encoding="utf-8")
    found = re.findall(rf"^\|[^|\n]*\(`{re.escape(system)}`\)[^\n]*`([0-9a-f]{{64}})` \|$", text, flags=re.MULTILINE)
    assert len(found) == 1, f"docs/reliability.md states {len(found)} digests of {system}"
    return found[0]


def translations(workdir: Path, system: str, testset: str) -> list[str]:
    return (workdir / f"results/translations/{system}/{testset}.txt").read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def inhouse_run(tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Path:
    workdir = tmp_path_factory.mktemp("inhouse")
    result = run_workflow(workdir, fairseq_config(mirror_dir, {INHOUSE: inhouse_system()}), cores=2)
    assert result.returncode == 0, result.stdout[-5000:]
    return workdir


def test_inhouse_translations_align_with_the_test_sets(inhouse_run: Path) -> None:
    for testset in TESTSETS:
        table = pd.read_csv(inhouse_run / f"results/testsets/{testset}.tsv", sep="\t", dtype=str, keep_default_na=False)
        lines = translations(inhouse_run, INHOUSE, testset)
        assert len(lines) == len(table) == SEGMENTS
        assert sum(bool(line.strip()) for line in lines) >= SEGMENTS - 2
        assert sum(line != source for line, source in zip(lines, table["source"])) >= SEGMENTS - 2
        report = yaml.safe_load((inhouse_run / f"results/translations/{INHOUSE}/{testset}.report.json").read_text(encoding="utf-8"))
        assert report["segments"] == report["translated"] == SEGMENTS
        assert report["device"] == "cpu" and report["model"]["arch"] == "fconv"
        assert "@@" not in "".join(lines) and "&apos;" not in "".join(lines)  # BPE joined, Moses unescaped


def test_inhouse_training_is_recorded(inhouse_run: Path) -> None:
    from nlp_robustness.systems.fairseq.checkpoints import checkpoint_weights_sha256

    model_dir = inhouse_run / "results/models" / INHOUSE
    corpus = yaml.safe_load((model_dir / "corpus.json").read_text(encoding="utf-8"))
    assert corpus["development_pairs"] == 321  # the whole Medline'18 dataset
    assert corpus["training_pairs"] + corpus["dropped_training_pairs"] == 1500
    assert sorted(path.name for path in model_dir.iterdir()) == [
        "bpecodes", "checkpoint_best.pt", "corpus.json", "data-bin", "dev.tsv", "dev_scores.json", "training.json",
    ]  # no scratch checkpoint directory left behind
    training = yaml.safe_load((model_dir / "training.json").read_text(encoding="utf-8"))
    assert training["epochs"] == 2 and len(training["valid_loss_by_epoch"]) == 2
    assert training["best_valid_loss"] == min(training["valid_loss_by_epoch"])
    assert training["allocator"] == "tcmalloc"  # part of the environment, like the device (systems/fairseq/runtime.py)
    digest = checkpoint_weights_sha256(model_dir / "checkpoint_best.pt")
    assert training["weights_sha256"] == digest  # the weights that translate are the weights trained
    # the weights the docs state: another machine that trains to other bits fails here (issue 54)
    assert digest == documented_digest(INHOUSE), "the tiny model trained to other weights than docs/reliability.md states"
    assert training["cpu_kernels"]["torch_cpu_capability"] == "AVX2"
    for testset in TESTSETS:
        report = yaml.safe_load((inhouse_run / f"results/translations/{INHOUSE}/{testset}.report.json").read_text(encoding="utf-8"))
        assert report["model"]["weights_sha256"] == digest
        assert report["environment"] == {key: training[key] for key in ("allocator", "cpu_kernels")}
    summary = pd.read_csv(inhouse_run / "results/tables/models.csv")
    assert summary["system"].tolist() == [INHOUSE]
    assert summary.at[0, "epochs"] == 2 and summary.at[0, "training_pairs"] == corpus["training_pairs"]
    # two epochs on Tatoeba translate Medline badly, but not into nothing
    assert 0 <= summary.at[0, "dev_bleu"] <= 100 and 0 < summary.at[0, "dev_chrf"] <= 100
    robustness = pd.read_csv(inhouse_run / "results/tables/paper/bleu/robustness_pool.csv", index_col="system")
    assert list(robustness.index) == [INHOUSE]


# --------------------------------------------------------------------------------------------
# The pretrained path, through a loopback copy of fairseq's published archive
# --------------------------------------------------------------------------------------------


def published_archive(model_dir: Path, checkpoint: bytes | None = None) -> bytes:
    """``wmt14.v2.en-fr.fconv-py.tar.bz2`` as fairseq publishes it, holding the in-house model."""
    members = {
        "wmt14.en-fr.fconv-py/model.pt": checkpoint if checkpoint is not None else (model_dir / "checkpoint_best.pt").read_bytes(),
        "wmt14.en-fr.fconv-py/dict.en.txt": (model_dir / "data-bin/dict.en.txt").read_bytes(),
        "wmt14.en-fr.fconv-py/dict.fr.txt": (model_dir / "data-bin/dict.fr.txt").read_bytes(),
        "wmt14.en-fr.fconv-py/bpecodes": (model_dir / "bpecodes").read_bytes(),
        "wmt14.en-fr.fconv-py/README.md": b"Convolutional sequence to sequence model, WMT'14 English-French.\n",
    }
    return tar_archive(members, compression="bz2", directories=("wmt14.en-fr.fconv-py",))


def loopback_manifest(workdir: Path, url: str, archive: bytes) -> Path:
    """The real manifest with the pretrained model's download pointed at the loopback server."""
    document = yaml.safe_load(MANIFEST_PATH.read_text(encoding="utf-8"))
    download = document["downloads"]["fairseq-wmt14-enfr-fconv"]
    assert download["url"] == "https://dl.fbaipublicfiles.com/fairseq/models/wmt14.v2.en-fr.fconv-py.tar.bz2"
    download.pop("checksum")
    download.update(url=url, sha256=hashlib.sha256(archive).hexdigest())
    path = workdir / "datasets.yaml"
    workdir.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server():
    with serving() as loopback:
        yield loopback


PRETRAINED_SYSTEM = {"kind": "fairseq", "pretrained": "wmt14-enfr-fconv", "generation": GENERATION, "device": "cpu"}


@pytest.fixture(scope="module")
def pretrained_run(inhouse_run: Path, server: LoopbackServer, tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Path:
    archive = published_archive(inhouse_run / "results/models" / INHOUSE)
    server.add("/fairseq/models/wmt14.v2.en-fr.fconv-py.tar.bz2", archive)
    workdir = tmp_path_factory.mktemp("pretrained")
    manifest = loopback_manifest(workdir, server.url("/fairseq/models/wmt14.v2.en-fr.fconv-py.tar.bz2"), archive)
    result = run_workflow(workdir, fairseq_config(mirror_dir, {PRETRAINED: PRETRAINED_SYSTEM}, manifest), cores=2)
    assert result.returncode == 0, result.stdout[-5000:]
    return workdir


def test_the_published_archive_layout_is_downloaded_verified_and_extracted(pretrained_run: Path) -> None:
    download = pretrained_run / "resources/downloads/fairseq-wmt14-enfr-fconv"
    assert (download / "wmt14.v2.en-fr.fconv-py.tar.bz2").is_file()
    extracted = sorted(str(path.relative_to(download / "extracted")) for path in (download / "extracted").rglob("*")
                       if path.is_file() and path.name != ".snakemake_timestamp")
    # only the four files the manifest reads; the README stays in the archive
    assert extracted == [f"wmt14.en-fr.fconv-py/{name}" for name in ("bpecodes", "dict.en.txt", "dict.fr.txt", "model.pt")]
    fetch_log = (pretrained_run / "logs/fetch_download/fairseq-wmt14-enfr-fconv/wmt14.v2.en-fr.fconv-py.tar.bz2.log").read_text(encoding="utf-8")
    assert "verified" in fetch_log
    assert not (pretrained_run / "results/models").exists()  # nothing is trained for a pretrained system


def test_the_pretrained_path_translates_exactly_like_the_same_model_inhouse(pretrained_run: Path, inhouse_run: Path) -> None:
    for testset in TESTSETS:
        assert translations(pretrained_run, PRETRAINED, testset) == translations(inhouse_run, INHOUSE, testset)
        pretrained_report = yaml.safe_load(
            (pretrained_run / f"results/translations/{PRETRAINED}/{testset}.report.json").read_text(encoding="utf-8"))
        inhouse_report = yaml.safe_load((inhouse_run / f"results/translations/{INHOUSE}/{testset}.report.json").read_text(encoding="utf-8"))
        assert pretrained_report["model"]["weights_sha256"] == inhouse_report["model"]["weights_sha256"]  # the same weights
    pool = pd.read_csv(pretrained_run / "results/tables/paper/bleu/robustness_pool.csv", index_col="system")
    inhouse_pool = pd.read_csv(inhouse_run / "results/tables/paper/bleu/robustness_pool.csv", index_col="system")
    # equal values, NaN where both are NaN (the between-domain part of a pool of one test set)
    assert np.array_equal(pool.loc[PRETRAINED].to_numpy(), inhouse_pool.loc[INHOUSE].to_numpy(), equal_nan=True)


def test_a_corrupt_checkpoint_stops_with_a_clear_error(
    inhouse_run: Path, server: LoopbackServer, tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path
) -> None:
    good = (inhouse_run / "results/models" / INHOUSE / "checkpoint_best.pt").read_bytes()
    archive = published_archive(inhouse_run / "results/models" / INHOUSE, checkpoint=good[: len(good) // 3])
    server.add("/corrupt/wmt14.v2.en-fr.fconv-py.tar.bz2", archive)
    workdir = tmp_path_factory.mktemp("corrupt")
    manifest = loopback_manifest(workdir, server.url("/corrupt/wmt14.v2.en-fr.fconv-py.tar.bz2"), archive)
    config = fairseq_config(mirror_dir, {PRETRAINED: PRETRAINED_SYSTEM}, manifest)
    result = run_workflow(workdir, config, f"results/translations/{PRETRAINED}/wmt14.txt", cores=1)
    assert result.returncode != 0
    logs = (workdir / f"logs/translate_fairseq/{PRETRAINED}/wmt14.log").read_text(encoding="utf-8")
    assert "wmt14.en-fr.fconv-py/model.pt: not a readable fairseq checkpoint" in logs
    assert not (workdir / f"results/translations/{PRETRAINED}").exists() or not any(
        (workdir / f"results/translations/{PRETRAINED}").iterdir()
    )


def test_training_gives_one_digest_whatever_cpu_level_the_machine_offers(
    inhouse_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 54: the same weights on any machine. Two trainings with the same seed, thread count and allocator
    (tcmalloc, as make setup installs it), torch's CPU level forced from outside to this machine's best and to
    no vectorisation at all (as a machine with other instruction sets would pick), give bit-identical weights,
    because fairseq's environment pins the CPU code paths (systems/fairseq/runtime.py). Unpinned, the forced
    level reaches the arithmetic (the third training), so the first two agree because of the pins."""
    import torch

    from nlp_robustness.systems.fairseq import training
    from nlp_robustness.systems.fairseq.checkpoints import weights_sha256
    from nlp_robustness.systems.fairseq.runtime import tcmalloc_library

    assert tcmalloc_library() is not None, "make setup installs tcmalloc (libtcmalloc-minimal4)"
    options = training.TrainingOptions(arch="fconv", train_args={**TINY_TRAINING["train_args"]}, seed=1, max_epoch=1, patience=1)
    data_bin = inhouse_run / "results/models" / INHOUSE / "data-bin"
    weights, digests = [], []
    for level in ("avx512", "default"):  # the machine's best where it has AVX-512; none
        monkeypatch.setenv("ATEN_CPU_CAPABILITY", level)
        record = training.train_model(data_bin, tmp_path / level, options, device="cpu", cpu_threads=2)
        assert record["allocator"] == "tcmalloc"
        assert record["cpu_kernels"]["torch_cpu_capability"] == "AVX2"  # the pinned level, not the one forced
        state = torch.load(tmp_path / level / "checkpoint_best.pt", map_location="cpu", weights_only=False)["model"]
        weights.append(state)
        digests.append(record["weights_sha256"])
        assert record["weights_sha256"] == weights_sha256(state)  # the record is the checkpoint's
    assert weights[0].keys() == weights[1].keys()
    differing = [name for name in weights[0] if not torch.equal(weights[0][name], weights[1][name])]
    assert not differing, f"{len(differing)} of {len(weights[0])} tensors differ: {differing[:5]}"
    assert digests[0] == digests[1]

    unpinned = training.train_model(data_bin, tmp_path / "unpinned", options, device="cpu", cpu_threads=2, pin_cpu_kernels=False)
    assert unpinned["cpu_kernels"]["torch_cpu_capability"] == "DEFAULT"
    assert unpinned["weights_sha256"] != digests[0], "the CPU level did not change the weights: this test shows nothing here"


def test_config_edits_rerun_exactly_what_they_touch(inhouse_run: Path) -> None:
    """Beam size: translations and dev scores only; max_epoch: training onwards; BPE merges: the corpus onwards."""
    config = yaml.safe_load((inhouse_run / "config.yaml").read_text(encoding="utf-8"))

    def rules_rerun(edit) -> set[str]:
        edited = copy.deepcopy(config)
        edit(edited["systems"][INHOUSE])
        result = run_workflow(inhouse_run, edited, "--dry-run", "--quiet", "rules")
        assert result.returncode == 0, result.stdout[-3000:]
        return {rule for rule in ("fairseq_training_data", "fairseq_train", "fairseq_dev_scores", "translate_fairseq")
                if rule in result.stdout}

    assert rules_rerun(lambda spec: spec["generation"].update(beam=3)) == {"fairseq_dev_scores", "translate_fairseq"}
    assert rules_rerun(lambda spec: spec["training"].update(max_epoch=3)) == {
        "fairseq_train", "fairseq_dev_scores", "translate_fairseq"}
    assert rules_rerun(lambda spec: spec["training"].update(bpe_merges=900)) == {
        "fairseq_training_data", "fairseq_train", "fairseq_dev_scores", "translate_fairseq"}


def test_several_test_sets_in_one_process_translate_as_each_alone(inhouse_run: Path, tmp_path: Path) -> None:
    """One fairseq start-up for several lists (a family's job) gives each list what fairseq-generate gives it alone."""
    from nlp_robustness.data.testsets import read_testset_table
    from nlp_robustness.systems.fairseq.checkpoints import ModelBundle
    from nlp_robustness.systems.fairseq.generate import GenerationOptions
    from nlp_robustness.systems.fairseq.translate import translate_lists_with_settings, translate_segment_lists

    bundle = inhouse_bundle(inhouse_run)
    tables = [read_testset_table(inhouse_run / f"results/testsets/{name}.tsv") for name in TESTSETS]
    lists = [(list(table["source"]), list(table["reference"])) for table in tables] + [(["", "The cat."], ["", "Le chat."])]
    together = translate_lists_with_settings(lists, bundle, GENERATION, device="cpu", cpu_threads=2, log_path=tmp_path / "log")
    alone = translate_segment_lists(lists, ModelBundle(**bundle), GenerationOptions(**GENERATION), tmp_path,
                                    device="cpu", cpu_threads=2, one_process=False)
    assert [output for output, _ in together] == [output for output, _ in alone]
    assert [report.runs_in_process for _, report in together] == [3, 3, 3]
    # and with the workflow's own jobs, one per test set
    assert [output for output, _ in together[:2]] == [translations(inhouse_run, INHOUSE, name) for name in TESTSETS]


def test_empty_and_overlong_sources_keep_their_lines(inhouse_run: Path, tmp_path: Path) -> None:
    """Empty sources never reach the model; a source over the length limit is cut, counted, and still translated."""
    from nlp_robustness.systems.fairseq.translate import translate_with_settings

    bundle = inhouse_bundle(inhouse_run)
    sources = ["I like the cat.", "", "   ", "The dog sleeps in the garden and the cat sleeps in the house.", "Thank you."]
    references = ["J'aime le chat.", "", "", "Le chien dort dans le jardin et le chat dort dans la maison.", ""]
    translations, report = translate_with_settings(
        sources, references, bundle, {**GENERATION, "max_tokens_per_side": 8}, device="cpu", cpu_threads=2,
        log_path=tmp_path / "log",
    )
    assert len(translations) == len(sources)
    assert translations[1] == translations[2] == ""
    assert all(translations[index] for index in (0, 3, 4))
    assert (report.segments, report.translated, report.empty_sources, report.truncated_sources) == (5, 3, 2, 1)
    assert "fairseq-generate" in (tmp_path / "log").read_text(encoding="utf-8")
