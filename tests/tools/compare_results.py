"""Compare two results/ trees of the workflow (say, before and after a refactoring that should not change them).

    .venv/bin/python -m tests.tools.compare_results BEFORE/results AFTER/results    (from the repository root)

Prints the files found on one side only (grouped by pattern), how many are byte-identical, and for each file
that differs what differs:

* the files that hold wall-clock timings (:data:`TIMED_FILES`, listed in docs/reliability.md, "Timings"), which
  differ between any two runs: JSON records compared without their timing keys (:data:`TIMING_KEYS`), the others
  (benchmark tables and figures, a fairseq checkpoint, Snakemake's report) named as timing files;
* fairseq-preprocess's own log (:data:`JOB_LOG_FILES`, also in "Timings"), which names its job's staging folder and
  worker count: compared with those masked;
* CSV/TSV tables: parsed on both sides; the largest absolute difference of their numeric cells, and how many
  non-numeric cells differ (a refactoring that only moves the last digits shows 0 of those);
* other JSON files: compared whole;
* text (Markdown, LaTeX, HTML, logs): the number of lines that differ, and whether only numbers differ;
* anything else: that its bytes differ.

The exit status is 0 whatever it finds: it reports, the reader judges.
"""

from __future__ import annotations

import fnmatch
import io
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Keys of the workflow's JSON records that hold wall-clock timings (at any depth: Apertium's reports have one per stage).
TIMING_KEYS = frozenset({"seconds", "sentences_per_second", "wall_seconds", "load_seconds"})
#: The files under results/ (patterns relative to it; ``*`` spans directories) that hold wall-clock timings. Every
#: other file of two runs of one config is the same bytes; docs/reliability.md ("Timings") lists these, and a test
#: keeps the two lists equal.
TIMED_FILES = (
    "benchmarks/*",  # the benchmark files, which exist to hold them
    "tables/benchmarks/*",
    "figures/benchmarks/*",
    "models/*/training.json",  # seconds: the in-house model's record of its training
    "models/*/dev_scores.json",  # training.json's copy; the development set's translation report
    "models/*/checkpoint_best.pt",  # fairseq's own meters (train_wall, wps, previous_training_time)
    "translations/*.report.json",  # every translation job's report
    "sentiment/predictions/*.report.json",  # a Hugging Face classifier's report
    "report.html",  # Snakemake's report (--report results/report.html): every job's runtime, start and end
)
#: What :func:`compare_trees` says of a timing file that differs in its timings only.
TIMINGS_ONLY = "only wall-clock timings differ"
#: Files under results/ (patterns as in :data:`TIMED_FILES`) that name how their job ran besides what it made:
#: fairseq-preprocess writes its log into the binarized data's folder, and its command line there names the job's
#: staging folder (a fresh random name on every run: ``nlp_robustness.fileio.atomic.staging_path``) and ``--workers`` (the
#: job's threads, so its --cores). Compared with those two masked (:data:`_JOB_DETAILS`).
JOB_LOG_FILES = ("models/*/data-bin/preprocess.log",)
#: What :func:`compare_trees` says of a job log of :data:`JOB_LOG_FILES` that differs in those two details only.
JOB_DETAILS_ONLY = "only the job's staging folder and worker count differ"
_JOB_DETAILS = re.compile(r"\.data-bin\.\w{8}\.part|workers=\d+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
_TEXT_SUFFIXES = (".md", ".tex", ".html", ".rst", ".txt", ".log")


@dataclass
class Comparison:
    """What two trees share and how their shared files differ."""

    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    identical: int = 0
    tables: dict[str, tuple[float, int]] = field(default_factory=dict)  # path -> (max |numeric diff|, non-numeric cells differing)
    others: dict[str, str] = field(default_factory=dict)  # path -> what differs


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_timings(item) for key, item in value.items() if key not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(item) for item in value]
    return value


def holds_timings(relative: str | Path) -> bool:
    """Whether a file (its path relative to results/) is one of :data:`TIMED_FILES`."""
    return any(fnmatch.fnmatch(Path(relative).as_posix(), pattern) for pattern in TIMED_FILES)


def names_job_details(relative: str | Path) -> bool:
    """Whether a file (its path relative to results/) is one of :data:`JOB_LOG_FILES`."""
    return any(fnmatch.fnmatch(Path(relative).as_posix(), pattern) for pattern in JOB_LOG_FILES)


def _table_difference(before: bytes, after: bytes, separator: str) -> tuple[float, int] | str:
    frames = [pd.read_csv(io.BytesIO(data), sep=separator, keep_default_na=False, dtype=str) for data in (before, after)]
    if list(frames[0].columns) != list(frames[1].columns) or frames[0].shape != frames[1].shape:
        return f"columns or shape differ: {frames[0].shape} vs {frames[1].shape}"
    largest, text_cells = 0.0, 0
    for column in frames[0].columns:
        values = [pd.to_numeric(frame[column], errors="coerce") for frame in frames]
        numeric = values[0].notna() & values[1].notna()
        text_cells += int(((frames[0][column] != frames[1][column]) & ~numeric).sum())
        if numeric.any():
            difference = np.abs(values[0][numeric].to_numpy(float) - values[1][numeric].to_numpy(float))
            difference = difference[np.isfinite(difference)]
            largest = max(largest, float(difference.max()) if difference.size else 0.0)
    return largest, text_cells


def _text_difference(before: bytes, after: bytes) -> str:
    lines = [data.decode("utf-8", "replace").splitlines() for data in (before, after)]
    changed = [(old, new) for old, new in zip(*lines) if old != new]
    numbers_only = len(lines[0]) == len(lines[1]) and all(_NUMBER.sub("#", old) == _NUMBER.sub("#", new) for old, new in changed)
    extra = abs(len(lines[0]) - len(lines[1]))
    return f"{len(changed) + extra} lines differ" + (" (numbers only)" if numbers_only else "")


def compare_trees(before: Path, after: Path) -> Comparison:
    """Compare every file under ``before`` with the file at the same path under ``after``."""
    files = [{path.relative_to(root) for path in root.rglob("*") if path.is_file()} for root in (before, after)]
    comparison = Comparison(sorted(map(str, files[0] - files[1])), sorted(map(str, files[1] - files[0])))
    for relative in sorted(files[0] & files[1]):
        old, new = (before / relative).read_bytes(), (after / relative).read_bytes()
        if old == new:
            comparison.identical += 1
            continue
        name, suffix = str(relative), relative.suffix
        if names_job_details(relative):
            masked = [_JOB_DETAILS.sub("#", data.decode("utf-8", "replace")) for data in (old, new)]
            comparison.others[name] = JOB_DETAILS_ONLY if masked[0] == masked[1] else _text_difference(old, new)
        elif holds_timings(relative):
            if suffix == ".json":
                same = _without_timings(json.loads(old)) == _without_timings(json.loads(new))
                comparison.others[name] = TIMINGS_ONLY if same else "differs beyond wall-clock timings"
            else:
                comparison.others[name] = TIMINGS_ONLY  # benchmarks, a checkpoint, the report: their bytes are not compared
        elif suffix in (".csv", ".tsv"):
            result = _table_difference(old, new, "\t" if suffix == ".tsv" else ",")
            if isinstance(result, str):
                comparison.others[name] = result
            else:
                comparison.tables[name] = result
        elif suffix == ".json":
            comparison.others[name] = "differs (it holds no timings)"
        elif suffix in _TEXT_SUFFIXES:
            comparison.others[name] = _text_difference(old, new)
        else:
            comparison.others[name] = "bytes differ"
    return comparison


def _pattern_counts(paths: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in paths:
        pattern = re.sub(r"[^/]+?((?:\.[a-z]+)+)$", r"*\1", path)
        counts[pattern] = counts.get(pattern, 0) + 1
    return counts


def report(comparison: Comparison) -> str:
    """The comparison as text, for a reader."""
    lines = [f"only before: {_pattern_counts(comparison.only_before)}", f"only after: {_pattern_counts(comparison.only_after)}",
             f"identical: {comparison.identical}"]
    largest = max((difference for difference, _ in comparison.tables.values()), default=0.0)
    cells = sum(text for _, text in comparison.tables.values())
    lines.append(f"tables that differ: {len(comparison.tables)}; largest absolute numeric difference {largest:.3g}; "
                 f"non-numeric cells that differ: {cells}")
    for path, (difference, text) in sorted(comparison.tables.items(), key=lambda item: -item[1][0])[:8]:
        lines.append(f"  {path}: max |diff| {difference:.3g}, non-numeric cells differing {text}")
    timings = [path for path, what in comparison.others.items() if what == TIMINGS_ONLY]
    job_logs = [path for path, what in comparison.others.items() if what == JOB_DETAILS_ONLY]
    lines.append(f"other files that differ: {len(comparison.others)} ({len(timings)} timing files: only wall-clock timings; "
                 f"{len(job_logs)} job logs: {JOB_DETAILS_ONLY})")
    lines += [f"  {path}: {what}" for path, what in comparison.others.items() if what not in (TIMINGS_ONLY, JOB_DETAILS_ONLY)]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m tests.tools.compare_results BEFORE AFTER")
    print(report(compare_trees(Path(sys.argv[1]), Path(sys.argv[2]))))
