"""What a user reads when their input is wrong: a config file's syntax error with its line and column, a planning
error in one line without a traceback, and no scratch folder left by a killed job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlp_robustness.config.files import check_config_syntax
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.atomic import job_scratch_directory
from nlp_robustness.snakemake_messages import config_file_fault, format_input_error, name_config_file_faults, plain_input_errors


def _syntax_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        check_config_syntax(path)
    return str(raised.value)


def test_a_tab_in_the_indentation_is_named_with_file_line_and_column(tmp_path: Path) -> None:
    message = _syntax_error(tmp_path, "max_segments: 40\nrobustness:\n\tconfidence: 0.95\n")
    assert message.startswith(f"{tmp_path / 'config.yaml'}: line 3, column 1: not valid YAML: ")
    assert message.endswith("(a tab in the indentation: YAML indents with spaces only)")


def test_other_yaml_errors_name_line_and_column(tmp_path: Path) -> None:
    assert _syntax_error(tmp_path, "metrics: [bleu, chrf\nmax_segments: 40\n").startswith(
        f"{tmp_path / 'config.yaml'}: line 2, column 13: not valid YAML: while parsing a flow sequence")
    assert "line 2, column 4: not valid YAML: mapping values are not allowed here" in _syntax_error(tmp_path, "a: 1\n  b: 2\n")


def test_valid_yaml_json_and_a_missing_file_pass(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text("a: 1\nb: [1, 2]\n", encoding="utf-8")
    (tmp_path / "good.json").write_text(json.dumps({"a": [1, 2]}), encoding="utf-8")
    check_config_syntax(tmp_path / "good.yaml")
    check_config_syntax(tmp_path / "good.json")
    check_config_syntax(tmp_path / "absent.yaml")  # Snakemake names a missing config file itself
    check_config_syntax(Path(__file__).parents[2] / "config.yaml")


def test_an_input_error_is_one_line_and_anything_else_is_left_to_snakemake() -> None:
    assert format_input_error(InputError("max_segments: 0 is less\nthan the minimum of 1")) == (
        "InputError: max_segments: 0 is less than the minimum of 1")
    assert format_input_error(ValueError("a bug")) is None


def test_snakemake_prints_an_input_error_without_a_traceback() -> None:
    import snakemake.exceptions as exceptions

    plain_input_errors()
    plain_input_errors()  # a Snakefile parsed twice wraps once
    try:
        raise InputError("testsets.mine: empty test set")
    except InputError as error:
        assert exceptions.format_exception_to_string(error, {}) == "InputError: testsets.mine: empty test set"
    try:
        raise ValueError("a bug")
    except ValueError as error:
        assert "Traceback" in exceptions.format_exception_to_string(error, {})  # a bug keeps its traceback


def test_an_unclosed_bracket_or_quote_names_where_it_began(tmp_path: Path) -> None:
    assert "while parsing a flow sequence begun at line 1, column 10, expected ',' or ']'" in _syntax_error(
        tmp_path, "metrics: [bleu, chrf\nmax_segments: 40\n")
    assert "line 3, column 1: not valid YAML: while scanning a quoted scalar begun at line 1, column 4," in _syntax_error(
        tmp_path, 'a: "abc\nb: 1\n')


def test_snakemakes_config_reader_names_a_syntax_error_and_fails_safe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader of --configfile files (Snakemake 9.27.1's _load_configfile), wrapped as the scheduler plugin does."""
    import snakemake.common.configfile as configfile
    from snakemake.exceptions import WorkflowError

    monkeypatch.setattr(configfile, "_load_configfile", getattr(configfile._load_configfile, "__wrapped__", configfile._load_configfile))
    assert name_config_file_faults() and name_config_file_faults()  # a second call wraps once
    assert not hasattr(configfile._load_configfile.__wrapped__, "__wrapped__")
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text("robustness:\n\tseed: 0\n", encoding="utf-8")
    Path("good.yaml").write_text("robustness: {seed: 0}\n", encoding="utf-8")
    Path("list.yaml").write_text("- 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"^bad.yaml: line 2, column 1: not valid YAML: .*\(a tab in the indentation"):
        configfile.load_configfile(Path("bad.yaml"))  # the path as the user wrote it, before Snakemake makes it absolute
    with pytest.raises(InputError, match=r"^absent.yaml: no such config file"):
        configfile.load_configfile(Path("absent.yaml"))
    assert configfile.load_configfile(Path("good.yaml")) == {"robustness": {"seed": 0}}
    # what the second reading finds nothing wrong with, and what is not a config file, stay Snakemake's
    with pytest.raises(WorkflowError, match="keys at top level"):
        configfile.load_configfile("list.yaml")
    with pytest.raises(WorkflowError, match="Schema file is not valid JSON or YAML"):
        configfile._load_configfile("bad.yaml", filetype="Schema")
    with open("bad.yaml", encoding="utf-8") as opened:
        assert config_file_fault(opened) is None  # an open file: no name to give


def test_a_snakemake_without_that_reader_keeps_its_own_message(monkeypatch: pytest.MonkeyPatch) -> None:
    import snakemake.common.configfile as configfile

    monkeypatch.delattr(configfile, "_load_configfile")
    assert name_config_file_faults() is False
    assert not hasattr(configfile, "_load_configfile")


def test_a_scratch_folder_left_by_a_killed_job_is_removed_when_the_job_starts_again(tmp_path: Path) -> None:
    output = tmp_path / "results" / "translations" / "a.txt"
    with job_scratch_directory(output, "nlp-robustness-test-") as scratch:
        (scratch / "part").write_text("x", encoding="utf-8")
        first = scratch
    assert not first.exists()  # removed when the block ends
    first.mkdir()
    (first / "left-by-a-killed-job").write_text("x", encoding="utf-8")  # SIGKILL skips the cleanup
    with job_scratch_directory(output, "nlp-robustness-test-") as scratch:
        assert scratch == first and list(scratch.iterdir()) == []  # the same job: the same folder, emptied
    assert not first.exists()
    with job_scratch_directory(tmp_path / "other.txt", "nlp-robustness-test-") as other:
        assert other != first  # another job's output: another folder
