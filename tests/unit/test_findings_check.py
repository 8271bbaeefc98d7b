"""The docs' numbers against the run (nlp_robustness.outputs.findings_check, number_sources): the check on planted
contradictions of every kind of source, the structure check that fails when a page prints a number the sources do not
list, and README.md and docs/*.md as they stand fully listed in docs/numbers-sources.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from nlp_robustness.outputs.findings_check import check, draft, main, repository_pages
from nlp_robustness.outputs.number_sources import RunFiles, printed, source_text
from tests.paths import REPOSITORY

README = """# Title

## What the default run finds

Intro with 95 % and 1,000 that are not findings.

- **Systems A and B differ.** The SD differs by −6.8 [−9.4, −4.2] points (Holm p = 0.004), 2 of 3 pairs
  separated across 3 systems on WMT22 and WMT'14. [More](docs/x.md#section-2)
- **Config.** 1,000 resamples.
"""

PAGE = """# A page

The run took 16 min on 2 cores.

| system | score | floor |
|---|---|---|
| a | 0.59 [0.55, 0.64] | 0.05 [0.02, 0.11] |
| b | 0.13 [0.10, 0.18] | 0.00 [0.00, 0.04] |

Pooled: 0.47 [0.41, 0.52]. The model's weights: 7095f5cf4f4320c5, 6,596,561 parameters.
"""

COMPARISONS = """statistic,row_a,row_b,difference,lo,hi,p_holm,verdict
between_sd,a,b,-6.8123,-9.41,-4.249,0.0041,more consistent
between_sd,a,c,-1.0,-3.0,1.0,0.2,not distinguishable
between_sd,b,c,5.0,1.0,9.0,0.01,less consistent
mean,a,b,1.0,0.5,1.5,0.001,higher
"""

SCORES = """responder,type,score,ci_low,ci_high
a,all,0.5931,0.5456,0.6386
a,control,0.95,0.888,0.982
b,all,0.1341,0.0963,0.1837
b,control,1.0,0.963,1.0
pooled,all,0.4712,0.4105,0.5233
"""

DIGEST = "7095f5cf4f4320c5cadf09323418c52d48e60b96790df34bbe9d1399d5c2410e"
CONFIG = {"uncertainty": {"resamples": 1000, "confidence": 0.95}}
ROW_AB = {"statistic": "between_sd", "row_a": "a", "row_b": "b"}

SOURCES_TEXT = """
pages:
  - file: README.md
    passages:
      - lead: Intro with 95 %
        excluded: config values
        numbers: ["95 1,000"]
      - lead: Systems A and B differ. The
        from: {file: t.csv, where: {statistic: between_sd}}
        numbers:
          - {text: "−6.8", cell: {where: {row_a: a, row_b: b}, column: difference}, format: .1f}
          - {text: "−9.4", cell: {where: {row_a: a, row_b: b}, column: lo}, format: .1f}
          - {text: "−4.2", cell: {where: {row_a: a, row_b: b}, column: hi}, format: .1f}
          - {text: "0.004", cell: {where: {row_a: a, row_b: b}, column: p_holm}, format: p}
          - {text: "2", count: {where: {verdict: [more consistent, less consistent]}}}
          - {text: "3", count: {}}
          - {text: "3", distinct: {columns: [row_a, row_b]}}
      - lead: Config.
        numbers: [{text: "1,000", config: uncertainty.resamples, format: ",d"}]
  - file: docs/page.md
    passages:
      - lead: The run took
        excluded: a timing
        numbers: ["16 2"]
      - lead: system | score | floor
        numbers:
          - table: {file: scores.csv, key: responder}
            cells:
              - {where: {type: all}, print: "{score:.2f} [{ci_low:.2f}, {ci_high:.2f}]"}
              - {where: {type: control}, print: "{1 - score:.2f} [{1 - ci_high:.2f}, {1 - ci_low:.2f}]"}
            rows: [a, b]
      - lead: "Pooled:"
        numbers:
          - {text: "0.47 [0.41, 0.52]", cell: {file: scores.csv, where: {responder: pooled}}, print: "{score:.2f} [{ci_low:.2f}, {ci_high:.2f}]"}
          - {text: "7095f5cf4f4320c5", json: {file: results/models/m/training.json, key: weights_sha256}, prefix: true}
          - {text: "6,596,561", json: {file: results/models/m/training.json, key: model.parameters}, format: ",d"}
"""


def _pages(readme: str = README, page: str = PAGE) -> dict[str, str]:
    return {"README.md": readme, "docs/page.md": page}


def _sources(text: str = SOURCES_TEXT) -> dict:
    return yaml.safe_load(text)


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    (tmp_path / "t.csv").write_text(COMPARISONS, encoding="utf-8")
    (tmp_path / "scores.csv").write_text(SCORES, encoding="utf-8")
    model = tmp_path / "results" / "models" / "m"
    model.mkdir(parents=True)
    (model / "training.json").write_text(json.dumps({"weights_sha256": DIGEST, "model": {"parameters": 6596561}}),
                                         encoding="utf-8")
    return tmp_path


def test_pages_that_say_what_the_run_says_pass(run: Path) -> None:
    assert check(_pages(), _sources(), run, CONFIG) == []
    assert check(_pages(), _sources(), None) == []


@pytest.mark.parametrize(("old", "new", "entry", "message"), [
    ("−4.2", "−4.3", ('"−4.2"', '"−4.3"'), "prints −4.3 where the run says −4.2"),  # cell
    ("0.004", "0.005", ('"0.004"', '"0.005"'), "prints 0.005 where the run says 0.004"),  # cell, a p-value
    ("0.52]", "0.53]", ("0.52]", "0.53]"), "prints 0.47 [0.41, 0.53] where the run says 0.47 [0.41, 0.52]"),  # print
    ("2 of 3", "1 of 3", ('"2", count', '"1", count'), "prints 1 where the run says 2"),  # count
    ("across 3", "across 4", ('"3", distinct', '"4", distinct'), "prints 4 where the run says 3"),  # distinct
    ("1,000 resamples", "2,000 resamples", ('"1,000", config', '"2,000", config'),
     "prints 2,000 where the run says 1,000"),  # config
    ("6,596,561", "6,596,562", ('"6,596,561"', '"6,596,562"'), "prints 6,596,562 where the run says 6,596,561"),  # json
    ("7095f5cf4f4320c5", "7095f5cf4f4320c6", ('"7095f5cf4f4320c5"', '"7095f5cf4f4320c6"'),
     "prints 7095f5cf4f4320c6 where the run says 7095f5cf4f4320c5"),  # json, a digest printed by its first digits
])
def test_a_planted_contradiction_of_each_kind_is_named(run: Path, old: str, new: str, entry: tuple[str, str],
                                                       message: str) -> None:
    """The page and its entry both print the planted number, so the structure holds and only the run tells."""
    assert SOURCES_TEXT.count(entry[0]) == 1
    sources = _sources(SOURCES_TEXT.replace(*entry))
    pages = {file: page.replace(old, new) for file, page in _pages().items()}
    assert check(pages, sources, None) == []
    problems = check(pages, sources, run, CONFIG)
    assert len(problems) == 1 and message in problems[0], problems


def test_a_planted_contradiction_in_a_table_names_its_row_and_column(run: Path) -> None:
    pages = _pages(page=PAGE.replace("0.05 [0.02, 0.11]", "0.06 [0.02, 0.11]"))
    problems = check(pages, _sources(), run, CONFIG)
    assert problems == ["docs/page.md:5 'system | score | floor a …', row 'a', column 3: prints 0.06 [0.02, 0.11] "
                        "where the run says 0.05 [0.02, 0.11]"]


def test_a_missing_file_row_or_key_is_named(run: Path) -> None:
    (run / "results" / "models" / "m" / "training.json").write_text("{}", encoding="utf-8")
    (run / "scores.csv").write_text(SCORES.replace("pooled,", "other,"), encoding="utf-8")
    problems = check(_pages(), _sources(), run, CONFIG)
    assert any("0 rows where {'responder': 'pooled'}" in problem for problem in problems)
    assert sum("has no key" in problem for problem in problems) == 2


@pytest.mark.parametrize(("readme", "page", "message"), [
    (README.replace("(Holm p = 0.004)", "(Holm p = 0.004, 7 pairs)"), PAGE, "at number 5 the page prints ['7'"),
    (README, PAGE.replace("16 min on 2 cores", "16 min on 2 cores, 3 GB"), "at number 3 the page prints ['3']"),
    (README + "\nA new paragraph with 12 numbers.\n", PAGE, "prints ['12'] and has no entry in the sources"),
    (README, PAGE.replace("| b | 0.13", "| c | 0.1 [0.0, 0.2] | 0.0 [0.0, 0.1] |\n| b | 0.13"),
     "the table has 3 rows, the sources 2"),
    (README, PAGE.replace("0.13 [0.10, 0.18]", "0.13 [0.10]"), "row 'b', column 2: prints '0.13 [0.10]'"),
    (README.replace(" 1,000 resamples.", " resamples."), PAGE, "at number 1 the page prints [], the sources list ['1,000']"),
    (README, PAGE.replace("# A page", "# A page\n\nPooled: or not, 5 times."), "begins 2 passages"),
    (README.replace("Intro with", "An intro with"), PAGE, "the sources name a passage 'Intro with 95 % …'"),
])
def test_a_number_without_a_source_fails_without_a_run(readme: str, page: str, message: str) -> None:
    problems = check(_pages(readme, page), _sources(), None)
    assert any(message in problem for problem in problems), problems


def test_a_new_page_and_malformed_entries_fail_without_a_run() -> None:
    pages = {**_pages(), "docs/new.md": "# New\n\nNo number here.\n"}
    assert check(pages, _sources(), None) == ["docs/new.md: a page the sources do not list"]
    sources = _sources(SOURCES_TEXT.replace("excluded: a timing", "excluded: ''")
                       .replace('{text: "1,000", config: uncertainty.resamples, format: ",d"}',
                                '{text: "1,000", config: uncertainty.resamples, fixed: "twice"}'))
    problems = check(_pages(), sources, None)
    assert any("without an 'excluded' reason" in problem for problem in problems)
    assert any("names ['config', 'fixed'], not one of" in problem for problem in problems)


@pytest.mark.parametrize(("entry", "expected"), [
    ({"cell": {"where": {"responder": {"not": ["pooled"]}, "type": "all"}, "column": "score", "agg": "median"}, "format": ".2f"}, "0.13"),
    ({"cell": {"where": {"type": "all"}, "column": "score", "agg": "median"}, "format": ".2f"}, "0.47"),
    ({"cell": {"where": {"type": "control"}, "column": "score", "agg": "sum"}, "format": ".2f"}, "1.95"),
    ({"cell": {"where": {"type": "control"}, "column": "ci_low", "agg": "range"}, "format": ".3f"}, "0.075"),
    ({"cell": {"where": {"type": "all"}, "column": "ci_high - ci_low", "agg": "max"}, "format": ".2f"}, "0.11"),
    ({"cell": {"where": {"score": {">": 0.5, "<=": 0.95}}, "column": "score", "agg": "min"}, "format": ".2f"}, "0.59"),
    ({"count": {"where": {"score": {"<": 0.5}}}}, "2"),
    ({"cell": {"where": {"responder": "a", "type": "control"}, "column": "score"}, "complement": True, "format": ".2f"}, "0.05"),
    ({"cell": {"where": {"responder": "a", "type": "all"}, "column": "score"}, "scale": 100, "round": -1, "format": ".0f"}, "60"),
    ({"cell": {"where": {"responder": "b", "type": "all"}}, "print": "{score:.1%} of {`ci_high` * 100:.0f}"}, "13.4% of 18"),
])
def test_the_kinds_of_source_select_and_print_as_documented(run: Path, entry: dict, expected: str) -> None:
    entry = {"text": expected, **entry}
    for kind in ("cell", "count"):
        if kind in entry:
            entry[kind] = {"file": "scores.csv", **entry[kind]}
    assert source_text(entry, RunFiles(run), CONFIG) == expected


def test_numbers_are_printed_as_the_tables_print_them() -> None:
    assert printed(-6.8123, ".1f") == "−6.8" and printed(0.0321, ".1f", 100) == "3.2" and printed(4247.0, ",d") == "4,247"
    assert printed(0.0004, "p") == "0.001" and printed(0.0123, "p") == "0.012" and printed(0.02, "+.2f") == "+0.02"


def test_the_command_line_exits_1_on_a_contradiction_and_drafts_a_page(run: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "checkout"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "docs" / "page.md").write_text(PAGE.replace("0.13 [0.10, 0.18]", "0.14 [0.10, 0.18]"), encoding="utf-8")
    sources, config = tmp_path / "sources.yaml", tmp_path / "config.yaml"
    sources.write_text(SOURCES_TEXT, encoding="utf-8")
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    arguments = [str(sources), str(run), "--root", str(root), "--config", str(config)]
    assert main(arguments) == 1
    assert "prints 0.14 [0.10, 0.18] where the run says 0.13 [0.10, 0.18]" in capsys.readouterr().err
    (root / "docs" / "page.md").write_text(PAGE, encoding="utf-8")
    assert main(arguments) == 0
    capsys.readouterr()
    assert main(["--draft", str(root / "docs" / "page.md")]) == 0
    drafted = yaml.safe_load("pages:\n" + capsys.readouterr().out.replace(str(root / "docs" / "page.md"), "docs/page.md"))
    assert [entry["lead"] for entry in drafted["pages"][0]["passages"]] == [
        "The run took 16 min on", "system | score | floor a", "Pooled: 0.47 [0.41, 0.52]. The model's"]
    assert check({"docs/page.md": PAGE}, drafted, None) == []  # a draft lists every number (as not yet sourced)
    assert draft("docs/page.md", PAGE).startswith("  - file: docs/page.md\n    passages:\n")


SOURCES = REPOSITORY / "docs" / "numbers-sources.yaml"


def test_every_number_of_the_readme_and_the_docs_has_an_entry() -> None:
    """README.md and docs/*.md as they stand: every page listed, every passage that prints a number named, and every
    number listed in order, with a source or as deliberately not a result and why (the values are checked against
    the default run by `make run`, which ends with this check)."""
    sources = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    assert check(repository_pages(REPOSITORY), sources, None) == []
    for page in sources["pages"]:
        for passage in page.get("passages", []):
            assert "excluded" not in passage or str(passage["excluded"]).strip() not in ("", "TODO"), passage["lead"]


def test_the_sources_name_files_the_default_run_writes() -> None:
    """Every file a source names is a result of the default run (under results/), so `make run` can check it."""
    sources = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    files = set()
    for page in sources["pages"]:
        for passage in page.get("passages", []):
            files.add((passage.get("from") or {}).get("file"))
            for entry in passage.get("numbers", []):
                if isinstance(entry, dict):
                    table = entry.get("table", {})
                    files |= {table.get("file"), *(row.get("file") for row in entry.get("rows", []) if isinstance(row, dict))}
                    files |= {(entry.get(kind) or {}).get("file") for kind in ("cell", "count", "distinct", "json")}
    files.discard(None)
    assert files and all(file.startswith("results/") for file in files), sorted(files)


@pytest.mark.skipif(not (REPOSITORY / "results" / "report.html").is_file(),
                    reason="no default run in this checkout (make run makes one; CI's clean clone has none)")
def test_the_docs_numbers_are_the_default_runs() -> None:
    """On a checkout where `make run` has run: every number of README.md and docs/*.md is its source's."""
    sources = yaml.safe_load(SOURCES.read_text(encoding="utf-8"))
    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    assert check(repository_pages(REPOSITORY), sources, REPOSITORY, config) == []


def test_the_repository_check_reads_the_readme_and_every_docs_page() -> None:
    pages = repository_pages(REPOSITORY)
    assert "README.md" in pages and "docs/paper-001-natural-robustness.md" in pages
    assert all(file == "README.md" or (file.startswith("docs/") and file.endswith(".md")) for file in pages)
    assert pd.Series(list(pages)).is_unique
