"""The README's findings against the run's tables (nlp_robustness.outputs.findings_check): the check on planted
contradictions, and the README's own findings fully sourced (every number of every bullet listed, in order, in
docs/findings-sources.yaml, each source naming a file of the default run's plan)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nlp_robustness.outputs.findings_check import check, findings, main, number_tokens, printed
from tests.paths import REPOSITORY

README = """# Title

## What the default run finds

Intro with 95 % and 1,000 that are not bullets.

- **Systems A and B differ.** The SD differs by −6.8 [−9.4, −4.2] points (Holm p = 0.004), 2 of 3 pairs
  separated on WMT22 and WMT'14. [More](docs/x.md#section-2)
- **Config.** 1,000 resamples.

## Read on
"""

COMPARISONS = """statistic,row_a,row_b,difference,lo,hi,p_holm,verdict
between_sd,a,b,-6.8123,-9.41,-4.249,0.0041,more consistent
between_sd,a,c,-1.0,-3.0,1.0,0.2,not distinguishable
between_sd,b,c,5.0,1.0,9.0,0.01,less consistent
mean,a,b,1.0,0.5,1.5,0.001,higher
"""


def _sources(**overrides: str) -> dict:
    numbers = [
        {"text": "−6.8", "cell": {"file": "t.csv", "where": {"statistic": "between_sd", "row_a": "a", "row_b": "b"}, "column": "difference"}, "format": ".1f"},
        {"text": "−9.4", "cell": {"file": "t.csv", "where": {"statistic": "between_sd", "row_a": "a", "row_b": "b"}, "column": "lo"}, "format": ".1f"},
        {"text": "−4.2", "cell": {"file": "t.csv", "where": {"statistic": "between_sd", "row_a": "a", "row_b": "b"}, "column": "hi"}, "format": ".1f"},
        {"text": "0.004", "cell": {"file": "t.csv", "where": {"statistic": "between_sd", "row_a": "a", "row_b": "b"}, "column": "p_holm"}, "format": ".3f"},
        {"text": "2", "count": {"file": "t.csv", "where": {"statistic": "between_sd", "verdict": ["more consistent", "less consistent"]}}},
        {"text": "3", "count": {"file": "t.csv", "where": {"statistic": "between_sd"}}},
    ]
    for number in numbers:
        if number["text"] in overrides:
            number["text"] = overrides[number["text"]]
    return {"findings": [{"lead": "Systems A and B differ. The", "numbers": numbers},
                         {"lead": "Config. 1,000 resamples.", "numbers": [{"text": "1,000", "config": "uncertainty.resamples", "format": ",d"}]}]}


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    (tmp_path / "t.csv").write_text(COMPARISONS, encoding="utf-8")
    return tmp_path


CONFIG = {"uncertainty": {"resamples": 1000}}


def test_numbers_are_read_as_printed_and_names_are_not_numbers() -> None:
    bullets = findings(README)
    assert [finding.lead for finding in bullets] == ["Systems A and B differ. The", "Config. 1,000 resamples."]
    assert number_tokens(bullets[0].text) == ["−6.8", "−9.4", "−4.2", "0.004", "2", "3"]
    assert printed(-6.8123, ".1f") == "−6.8" and printed(0.0321, ".1f", 100) == "3.2" and printed(4247.0, ",d") == "4,247"


def test_a_readme_that_says_what_its_tables_say_passes(run: Path) -> None:
    assert check(README, _sources(), run, CONFIG) == []


def test_a_planted_wrong_number_is_named(run: Path) -> None:
    wrong = README.replace("−4.2]", "−4.3]")
    problems = check(wrong, _sources(**{"−4.2": "−4.3"}), run, CONFIG)
    assert problems == ["finding 'Systems A and B differ. The …': prints −4.3 where the run's table says −4.2"]


def test_a_wrong_count_and_a_wrong_config_value_are_named(run: Path) -> None:
    wrong = README.replace("2 of 3", "3 of 3").replace("1,000 resamples", "2,000 resamples")
    sources = _sources(**{"2": "3"})
    sources["findings"][1]["numbers"][0]["text"] = "2,000"
    sources["findings"][1]["lead"] = "Config. 2,000 resamples."
    problems = check(wrong, sources, run, CONFIG)
    assert any("prints 3 where the run's table says 2" in problem for problem in problems)
    assert any("prints 2,000 where the run's table says 1,000" in problem for problem in problems)


def test_a_number_without_a_source_fails_the_structure_check() -> None:
    added = README.replace("(Holm p = 0.004)", "(Holm p = 0.004, 7 pairs)")
    problems = check(added, _sources(), None)
    assert len(problems) == 1 and "the text prints" in problems[0] and "'7'" in problems[0]


def test_a_missing_row_and_an_unlisted_finding_are_named(run: Path) -> None:
    sources = _sources()
    sources["findings"][0]["numbers"][0]["cell"]["where"]["row_b"] = "z"
    problems = check(README + "\n", sources, run, CONFIG)
    assert any("0 rows where" in problem for problem in problems)
    extra = README.replace("- **Config.**", "- **Another finding** with 5 things.\n- **Config.**")
    assert any("has no entry in the sources" in problem for problem in check(extra, _sources(), None))


def test_the_command_line_exits_1_on_a_contradiction(run: Path, tmp_path: Path) -> None:
    readme, sources, config = tmp_path / "README.md", tmp_path / "sources.yaml", tmp_path / "config.yaml"
    readme.write_text(README.replace("0.004)", "0.003)"), encoding="utf-8")
    sources.write_text(yaml.safe_dump(_sources(**{"0.004": "0.003"}), allow_unicode=True), encoding="utf-8")
    config.write_text(yaml.safe_dump(CONFIG), encoding="utf-8")
    assert main([str(readme), str(sources), str(run), "--config", str(config)]) == 1
    readme.write_text(README, encoding="utf-8")
    sources.write_text(yaml.safe_dump(_sources(), allow_unicode=True), encoding="utf-8")
    assert main([str(readme), str(sources), str(run), "--config", str(config)]) == 0


def test_every_number_of_the_readme_findings_has_a_source() -> None:
    """The README's findings as they stand: every printed number listed, in order, with a source (the values are
    checked against the default run by ``make run``, which ends with this check)."""
    sources = yaml.safe_load((REPOSITORY / "docs" / "findings-sources.yaml").read_text(encoding="utf-8"))
    assert check((REPOSITORY / "README.md").read_text(encoding="utf-8"), sources, None) == []
    for finding in sources["findings"]:
        for number in finding["numbers"]:
            kinds = {"cell", "count", "distinct", "config", "fixed"} & set(number)
            assert len(kinds) == 1, f"{finding['lead']}: {number}"
            if "fixed" in number:
                assert str(number["fixed"]).strip(), "a fixed number says why it is not a result"


@pytest.mark.skipif(not (REPOSITORY / "results" / "report.html").is_file(),
                    reason="no default run in this checkout (make run makes one; CI's clean clone has none)")
def test_the_readme_findings_are_the_default_runs_tables() -> None:
    """On a checkout where `make run` has run: every number of the README's findings is its table cell's (the README
    is regenerated from a run; a drifted number names itself here)."""
    sources = yaml.safe_load((REPOSITORY / "docs" / "findings-sources.yaml").read_text(encoding="utf-8"))
    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    assert check((REPOSITORY / "README.md").read_text(encoding="utf-8"), sources, REPOSITORY, config) == []
