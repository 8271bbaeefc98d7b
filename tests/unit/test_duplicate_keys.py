"""A key written twice in a config file is an error naming the file, the line and the key path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from nlp_robustness.config.files import check_duplicate_keys
from nlp_robustness.errors import InputError
from tests.paths import REPOSITORY


def _write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_test_set_written_twice_names_file_line_and_key(tmp_path: Path) -> None:
    path = _write(tmp_path, (
        "testsets:\n"
        "  wmt14:\n"
        "    dataset: wmt14-newstest2014-enfr\n"
        "    domain: news\n"
        "  bio18:\n"
        "    dataset: wmt18-biomedical-medline-enfr\n"
        "    domain: biomedical\n"
        "  wmt14:\n"
        "    dataset: wmt15-newsdiscusstest2015-enfr\n"
        "    domain: discussion\n"
    ))
    assert list(yaml.safe_load(path.read_text(encoding="utf-8"))["testsets"]) == ["wmt14", "bio18"]  # what PyYAML does
    with pytest.raises(InputError) as raised:
        check_duplicate_keys([path])
    assert str(raised.value).startswith(f"{path}: line 8: key 'testsets.wmt14' is written twice (first on line 2)")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("systems:\n  a: {kind: apertium, modes: [x]}\n  a: {kind: apertium, modes: [y]}\n", "line 3: key 'systems.a'"),
        ("systems:\n  a:\n    kind: apertium\n    kind: fairseq\n", "line 4: key 'systems.a.kind'"),
        ("max_segments: 10\nmirror_dir: x\nmax_segments: 20\n", "line 3: key 'max_segments'"),
        ("robustness:\n  leave_out: [a]\nhuman:\n  domains:\n    - {x: 1, x: 2}\n", "line 5: key 'human.domains[0].x'"),
        ('testsets:\n  wmt14: {domain: a}\n  "wmt14": {domain: b}\n', "line 3: key 'testsets.wmt14'"),  # quoting makes no difference
        ('{"testsets": {"a": {"domain": "x"}, "a": {"domain": "y"}}}\n', "line 1: key 'testsets.a'"),  # JSON config
    ],
)
def test_duplicates_anywhere_are_found(tmp_path: Path, text: str, where: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match="^" + re.escape(f"{path}: {where}")):
        check_duplicate_keys([path])


def test_what_is_not_a_duplicate(tmp_path: Path) -> None:
    good = _write(tmp_path, (
        "a: 1\n"
        "'1': x\n"
        "1: y\n"                   # the integer 1 and the string '1' are two keys of the config dict
        "list: [1, 1]\n"           # repeated values are fine
        "base: &base {k: 1, j: 2}\n"
        "derived:\n"
        "  <<: *base\n"
        "  k: 3\n"                 # a merge key's value may be overridden
        "again: *base\n"
        "nested: {a: {a: {a: 1}}}\n"  # the same key at different depths
    ))
    empty = _write(tmp_path, "", "empty.yaml")
    check_duplicate_keys([good, empty])


def test_the_second_file_is_checked_and_named(tmp_path: Path) -> None:
    first = _write(tmp_path, "a: 1\n", "first.yaml")
    second = _write(tmp_path, "b: 1\nc:\n  d: 1\n  d: 2\n", "second.yaml")
    with pytest.raises(InputError, match="^" + re.escape(f"{second}: line 4: key 'c.d'")):
        check_duplicate_keys([first, second])


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read config file .*absent.yaml"):
        check_duplicate_keys([tmp_path / "absent.yaml"])


def test_the_shipped_configs_have_no_duplicate_keys() -> None:
    shipped = sorted({*REPOSITORY.glob("config*.yaml"), *REPOSITORY.glob("config/*.yaml"), *REPOSITORY.glob("tests/config/*.yaml")})
    assert any(path.name == "config.yaml" for path in shipped), shipped
    check_duplicate_keys(shipped)
