"""BPE-encoded text for fairseq: splits binarized with ``fairseq-preprocess`` (training), or written as the raw
text that ``fairseq-generate --dataset-impl raw`` reads directly (translation: one fairseq start-up per job,
not two; fairseq encodes the raw lines with the same dictionary call as the binarizer)."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Mapping, Sequence

from nlp_robustness.fileio.atomic import staging_path
from nlp_robustness.systems.fairseq.runtime import run_fairseq

__all__ = ["binarize", "write_raw_split"]


def binarize(
    split_files: Mapping[str, tuple[Sequence[str], Sequence[str]]],
    directory: str | os.PathLike[str],
    source_language: str,
    target_language: str,
    *,
    source_dictionary: str | None = None,
    target_dictionary: str | None = None,
    joined_dictionary: bool = False,
    workers: int = 1,
    environment: Mapping[str, str],
    log: io.TextIOBase | None = None,
) -> None:
    """Write BPE-encoded splits as text and binarize them with ``fairseq-preprocess`` into ``directory``.

    ``directory`` appears complete or not at all: fairseq writes into a staging folder beside it, renamed onto
    it once ``fairseq-preprocess`` succeeded (the text it read removed); the staging of a killed run is removed
    by the next (:func:`~nlp_robustness.fileio.atomic.staging_path`), and an earlier ``directory`` is replaced.

    Args:
        split_files: ``{"train" | "valid" | "test": (source lines, target lines)}``.
        source_dictionary, target_dictionary: Existing dictionaries (a model's); otherwise they are
            built from the training split (one joined dictionary if ``joined_dictionary``).
    """
    with staging_path(directory, directory=True) as staging:
        text_dir = staging / "text"
        text_dir.mkdir()
        arguments = ["--source-lang", source_language, "--target-lang", target_language, "--destdir", staging, "--workers", workers]
        for split, (sources, targets) in split_files.items():
            if len(sources) != len(targets):
                raise ValueError(f"split {split}: {len(sources)} source lines but {len(targets)} target lines")
            prefix = text_dir / split
            for language, lines in ((source_language, sources), (target_language, targets)):
                Path(f"{prefix}.{language}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            arguments += [f"--{'valid' if split == 'valid' else split}pref", prefix]
        if source_dictionary is not None:
            arguments += ["--srcdict", source_dictionary]
        if target_dictionary is not None:
            arguments += ["--tgtdict", target_dictionary]
        if joined_dictionary:
            arguments.append("--joined-dictionary")
        run_fairseq("fairseq-preprocess", arguments, log, environment)
        shutil.rmtree(text_dir)  # fairseq's input, not part of the binarized data


def write_raw_split(
    split: str,
    sources: Sequence[str],
    targets: Sequence[str],
    directory: str | os.PathLike[str],
    source_language: str,
    target_language: str,
    *,
    source_dictionary: str,
    target_dictionary: str,
) -> None:
    """Write one split as fairseq's raw text dataset in ``directory``: ``<split>.<src>-<tgt>.<lang>`` and the
    model's dictionaries as ``dict.<lang>.txt`` (what ``--dataset-impl raw`` reads)."""
    if len(sources) != len(targets):
        raise ValueError(f"split {split}: {len(sources)} source lines but {len(targets)} target lines")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for language, lines, dictionary in ((source_language, sources, source_dictionary), (target_language, targets, target_dictionary)):
        Path(directory / f"{split}.{source_language}-{target_language}.{language}").write_text(
            "".join(line + "\n" for line in lines), encoding="utf-8"
        )
        shutil.copyfile(dictionary, directory / f"dict.{language}.txt")
