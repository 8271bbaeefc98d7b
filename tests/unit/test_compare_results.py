"""The results-tree comparison used to show that a refactoring leaves the results as they were."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.paths import REPOSITORY
from tests.tools.compare_results import JOB_DETAILS_ONLY, JOB_LOG_FILES, TIMED_FILES, compare_trees, holds_timings, report


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_the_comparison_tells_last_digits_timings_and_real_changes_apart(tmp_path: Path) -> None:
    before = _tree(tmp_path / "before", {
        "same.txt": "a\n", "scores.tsv": "id\tbleu\n1\t12.345679\n2\t0.5\n", "labels.csv": "system,rank\nx,1\n",
        "translations/x/run.report.json": json.dumps({"lines": 3, "seconds": 1.5}),
        "translations/x/other.report.json": json.dumps({"lines": 3}), "profile.json": json.dumps({"seconds": 1}),
        "benchmarks/jobs.tsv": "rule\ts\nx\t1.0\n", "means.md": "| x | -0.00 |\n", "notes.md": "| x | n/a |\n", "gone.tsv": "a\n",
    })
    after = _tree(tmp_path / "after", {
        "same.txt": "a\n", "scores.tsv": "id\tbleu\n1\t12.3456789012\n2\t0.5\n", "labels.csv": "system,rank\ny,1\n",
        "translations/x/run.report.json": json.dumps({"lines": 3, "seconds": 9.0}),
        "translations/x/other.report.json": json.dumps({"lines": 4}), "profile.json": json.dumps({"seconds": 2}),
        "benchmarks/jobs.tsv": "rule\ts\nx\t2.0\n", "means.md": "| x | 0.00 |\n", "notes.md": "| x | – |\n", "new.blocks.tsv": "a\n",
    })
    comparison = compare_trees(before, after)
    assert comparison.identical == 1 and comparison.only_before == ["gone.tsv"] and comparison.only_after == ["new.blocks.tsv"]
    difference, text_cells = comparison.tables["scores.tsv"]
    assert abs(difference - 9.88e-8) < 1e-12 and text_cells == 0
    assert comparison.tables["labels.csv"] == (0.0, 1)  # a name changed: not a last-digit difference
    assert comparison.others["translations/x/run.report.json"] == "only wall-clock timings differ"
    assert comparison.others["translations/x/other.report.json"] == "differs beyond wall-clock timings"
    assert comparison.others["benchmarks/jobs.tsv"] == "only wall-clock timings differ"  # a timing file: not a table
    assert comparison.others["profile.json"] == "differs (it holds no timings)"  # a timing key outside the timing files
    assert comparison.others["means.md"] == "1 lines differ (numbers only)"
    assert comparison.others["notes.md"] == "1 lines differ"
    text = report(comparison)
    assert "largest absolute numeric difference 9.88e-08" in text and "non-numeric cells that differ: 1" in text


def test_fairseqs_preprocessing_log_compares_without_its_staging_folder_and_workers(tmp_path: Path) -> None:
    """fairseq-preprocess's log in the binarized data names the job's staging folder and --workers; the rest counts."""
    log = ("Namespace(trainpref='results/models/m/.data-bin.{name}.part/text/train', workers={workers}, dict_only=False)\n"
           "[en] results/models/m/.data-bin.{name}.part/text/train.en: {sentences} sents\n")
    written = {"before": ("163af634", 2, 1100), "after": ("d9cb4847", 1, 1100), "changed": ("d9cb4847", 1, 1101)}
    trees = {side: _tree(tmp_path / side, {"models/m/data-bin/preprocess.log": log.format(name=name, workers=workers, sentences=sentences)})
             for side, (name, workers, sentences) in written.items()}
    assert compare_trees(trees["before"], trees["after"]).others == {"models/m/data-bin/preprocess.log": JOB_DETAILS_ONLY}
    assert compare_trees(trees["before"], trees["changed"]).others == {"models/m/data-bin/preprocess.log": "2 lines differ"}
    assert "1 job logs: only the job's staging folder" in report(compare_trees(trees["before"], trees["after"]))


def test_the_docs_list_the_timing_files_the_comparison_knows() -> None:
    """docs/reliability.md's "Timings" names exactly the files compare_results treats as holding timings."""
    text = (REPOSITORY / "docs" / "reliability.md").read_text(encoding="utf-8")
    section = text.split("\n## Timings\n", 1)[1].split("\n## ", 1)[0]
    listed = [path for row in re.findall(r"^\| (`results/.*?) \|", section, flags=re.MULTILINE)
              for path in re.findall(r"`results/([^`]+)`", row)]
    assert sorted(listed) == sorted(TIMED_FILES)
    for pattern in JOB_LOG_FILES:  # named below the table, as a file in its folder (an output of the workflow)
        folder, name = pattern.rsplit("/", 1)
        assert f"`{name}`" in section and f"`results/{folder}/`" in section, pattern
    assert holds_timings("translations/apertium-en-es-fr/perturbed/word_order/Reversed/pooled.report.json")
    assert holds_timings("models/convs2s-tatoeba/training.json") and not holds_timings("tables/models.csv")
