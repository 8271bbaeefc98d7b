"""The SLURM profile's per-rule memory and runtime from measured maxima, with safety factors and floors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from nlp_robustness.errors import InputError
from nlp_robustness.outputs.slurm_resources import (
    END_MARKER,
    MEMORY_FLOOR_MB,
    RUNTIME_FLOOR_MINUTES,
    RuleResources,
    existing_set_resources,
    main,
    replace_generated_block,
    rule_resources,
    set_resources_block,
)

REPOSITORY = Path(__file__).resolve().parents[2]

SUMMARY = pd.DataFrame({
    "rule": ["fairseq_train", "score_sentences", "dataset_summary"],
    "branch": ["translation", "scoring", "data"],
    "wall_s_max": [380.2, 1.3, 0.4],
    "max_rss_mb": [2710.0, 301.0, float("nan")],
})


def test_limits_are_measured_maxima_times_the_factors_rounded_up_with_floors() -> None:
    resources = rule_resources(SUMMARY)
    assert resources["fairseq_train"] == RuleResources(mem_mb=4100, runtime=13)  # 2710 x 1.5 = 4065; 380.2 s x 2 = 12.7 min
    assert resources["score_sentences"] == RuleResources(mem_mb=500, runtime=RUNTIME_FLOOR_MINUTES)  # 451.5 -> 500
    assert resources["dataset_summary"].mem_mb == MEMORY_FLOOR_MB  # never sampled: the floor
    assert rule_resources(SUMMARY, memory_factor=2.0)["score_sentences"].mem_mb == 700  # 602 -> 700


def test_a_summary_without_its_columns_is_rejected() -> None:
    with pytest.raises(InputError, match="lacks the columns \\['max_rss_mb'\\]"):
        rule_resources(SUMMARY.drop(columns="max_rss_mb"))


def test_block_keeps_the_partitions_and_the_rules_only_the_profile_names() -> None:
    existing = {"fairseq_train": {"slurm_partition": "gpu", "mem_mb": 1}, "translate_fairseq": {"slurm_partition": "gpu"}}
    block = set_resources_block(rule_resources(SUMMARY), existing)
    parsed = yaml.safe_load(block)["set-resources"]
    assert parsed["fairseq_train"] == {"mem_mb": 4100, "runtime": 13, "slurm_partition": "gpu"}  # measured wins
    assert parsed["translate_fairseq"] == {"slurm_partition": "gpu"}
    assert list(parsed) == sorted(parsed)
    assert block.endswith(END_MARKER + "\n")


def test_the_repositorys_profile_has_one_generated_block_that_is_replaced_in_place(tmp_path: Path) -> None:
    profile = (REPOSITORY / "profiles" / "slurm" / "config.yaml").read_text(encoding="utf-8")
    existing = existing_set_resources(profile)
    # generated from the default run's measurements, the partition kept
    assert existing["translate_fairseq"]["slurm_partition"] == "gpu"
    assert existing["translate_fairseq"]["mem_mb"] >= 500 and existing["translate_fairseq"]["runtime"] >= 5
    summary_path = tmp_path / "summary.tsv"
    SUMMARY.to_csv(summary_path, sep="\t", index=False)
    profile_path = tmp_path / "config.yaml"
    profile_path.write_text(profile, encoding="utf-8")
    assert main([str(summary_path), "--profile", str(profile_path), "--write"]) == 0
    written = profile_path.read_text(encoding="utf-8")
    parsed = yaml.safe_load(written)
    assert parsed["set-resources"]["score_sentences"] == {"mem_mb": 500, "runtime": 5}
    assert parsed["set-resources"]["translate_huggingface"] == {"slurm_partition": "gpu"}
    assert parsed["executor"] == "slurm" and parsed["default-resources"] == yaml.safe_load(profile)["default-resources"]
    # a second run gives the same file (the block is found again by its markers)
    assert main([str(summary_path), "--profile", str(profile_path), "--write"]) == 0
    assert profile_path.read_text(encoding="utf-8") == written
    with pytest.raises(InputError, match="one generated block"):
        replace_generated_block("set-resources:\n", "x")
