"""Config validation: the shipped config is valid; every mistake names its key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from nlp_robustness.config import leave_out_labels, pool_testsets, validate_config
from nlp_robustness.errors import InputError

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA = REPOSITORY / "schemas" / "config.schema.yaml"
DEFAULT = yaml.safe_load((REPOSITORY / "config" / "config.yaml").read_text(encoding="utf-8"))


def config_with(edit) -> dict:
    config = copy.deepcopy(DEFAULT)
    edit(config)
    return config


def test_default_config_is_valid() -> None:
    validate_config(DEFAULT, SCHEMA)
    assert leave_out_labels(DEFAULT) == ["none", "wmt14", "wmt15", "iwslt17", "bio18"]
    assert pool_testsets(DEFAULT, "iwslt17") == ["wmt14", "wmt15", "bio18"]
    assert pool_testsets(DEFAULT, "none") == ["wmt14", "wmt15", "iwslt17", "bio18"]


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda c: c["systems"]["apertium-en-es-fr"].update(kind="fairseqq"), "systems.apertium-en-es-fr.kind"),
        (lambda c: c["systems"]["apertium-en-es-fr"].update(pivot=["eng-spa"]), "systems.apertium-en-es-fr"),
        (lambda c: c["robustness"]["bagging"].update(fraction=1.5), "robustness.bagging.fraction"),
        (lambda c: c["robustness"]["bagging"].update(blocks="30"), "robustness.bagging.blocks"),
        (lambda c: c["robustness"].update(seeds=1), "robustness"),
        (lambda c: c.update(metrics=["bleu", "ter"]), "metrics.1"),
        (lambda c: c["testsets"]["wmt14"].update(source="x.en"), "testsets.wmt14"),
        (lambda c: c["testsets"].update(none={"dataset": "x", "domain": "y"}), "testsets.none"),
        (lambda c: c["robustness"].update(leave_out=["wmt14", "mtnt"]), "robustness.leave_out[1]"),
        (lambda c: c["robustness"]["epsilon"].update(start=10, stop=5), "robustness.epsilon.stop"),
        (lambda c: c["systems"].update(mine={"kind": "hypotheses", "files": {"wmt14": "a.txt"}}), "systems.mine.files"),
    ],
)
def test_mistakes_name_their_key(edit, key: str) -> None:
    with pytest.raises(InputError) as error:
        validate_config(config_with(edit), SCHEMA)
    assert f"'{key}" in str(error.value)
