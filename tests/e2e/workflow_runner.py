"""Run the real workflow in a temporary directory (helpers shared by the end-to-end tests)."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPOSITORY = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
DEFAULT_CONFIG = yaml.safe_load((REPOSITORY / "config" / "config.yaml").read_text(encoding="utf-8"))

#: Plain-text copies of the four default test sets' English sources: the "copy the input" baseline system.
COPY_SOURCE_FILES = {
    "wmt14": "wmt14-newstest2014-enfr/derived/newstest2014.en-fr.en",
    "wmt15": "opus-mt-testsets-enfr/testsets/en-fr/newsdiscusstest2015.en",
    "iwslt17": "iwslt17-ted-enfr/derived/IWSLT17.TED.tst2017.en-fr.en",
    "bio18": "wmt-biomedical-enfr/medline18_en2fr.en",
}


#: The default in-house ConvS2S cut down to seconds of training (1200 Tatoeba pairs, 1 epoch, tiny fconv).
SMALL_TRAINING: dict[str, Any] = {
    "max_segments": 1200,
    "dev": {"holdout": 100},
    "bpe_merges": 1000,
    "max_epoch": 1,
    "train_args_update": {
        "encoder-embed-dim": 64, "encoder-layers": "[(64, 3)] * 2", "decoder-embed-dim": 64,
        "decoder-layers": "[(64, 3)] * 2", "decoder-out-embed-dim": 64,
    },
}


def small_config(mirror_dir: Path, max_segments: int = 40) -> dict[str, Any]:
    """The default config on the first ``max_segments`` segments of each test set, plus a copy-source
    system; its in-house ConvS2S is trained for seconds instead of minutes (:data:`SMALL_TRAINING`)."""
    config = copy.deepcopy(DEFAULT_CONFIG)
    config["mirror_dir"] = str(mirror_dir)
    config["max_segments"] = max_segments
    for spec in config["systems"].values():
        if spec["kind"] == "fairseq" and "training" in spec:
            small = copy.deepcopy(SMALL_TRAINING)
            spec["training"]["train_args"].update(small.pop("train_args_update"))
            spec["training"].update(small)
    config["systems"]["copy-source"] = {
        "kind": "hypotheses",
        "files": {testset: str(mirror_dir / path) for testset, path in COPY_SOURCE_FILES.items()},
    }
    return config


def run_workflow(
    workdir: Path, config: dict[str, Any], *arguments: str, cores: int | None = 2, config_name: str = "config.yaml"
) -> subprocess.CompletedProcess[str]:
    """Write ``config`` into ``workdir`` (as ``config_name``: edited configs of dry runs go beside the run's
    own config.yaml, which later tests reuse) and run the repository's Snakefile there (stderr merged into stdout)."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path = workdir / config_name
    config_path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    command = [
        str(SNAKEMAKE),
        "--snakefile", str(REPOSITORY / "Snakefile"),
        "--directory", str(workdir),
        "--configfile", str(config_path),
        *(["--cores", str(cores)] if cores is not None else []),  # None: a cluster profile sets the jobs
        *arguments,
    ]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200)
