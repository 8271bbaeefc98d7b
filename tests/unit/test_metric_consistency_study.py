"""A human study's segment tables as the meta-evaluation's arrays, the documents a pair would need, quality tracking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.studies.human import SEGMENT_COLUMNS
from nlp_robustness.studies.metric_consistency import (
    segment_arrays, with_documents_to_detect, with_quality_tracking)


def _table(path: Path, rows: list[tuple[str, str, str, float, float]]) -> str:
    frame = pd.DataFrame([{"system": s, "segment_id": i, "document": d, "source": "", "reference": "", "hypothesis": "",
                           "human": h, "bleu": b} for s, i, d, h, b in rows], columns=[*SEGMENT_COLUMNS, "bleu"])
    frame.to_csv(path, sep="\t", index=False)
    return str(path)


def test_segments_of_two_domains_with_the_same_ids_stay_apart_and_sparse_rows_are_nan(tmp_path: Path) -> None:
    files = {
        "news": _table(tmp_path / "news.tsv", [("A", "1", "", -1.0, 10.0), ("B", "1", "", -2.0, 20.0), ("A", "2", "", 0.0, 30.0)]),
        "ted": _table(tmp_path / "ted.tsv", [("A", "1", "", -3.0, 40.0), ("B", "1", "", -4.0, 50.0)]),
    }
    arrays = segment_arrays(files, ["human", "bleu"], ["A", "B"])
    assert arrays.domains.tolist() == ["news", "news", "ted"]
    np.testing.assert_array_equal(arrays.scores["human"], [[-1.0, 0.0, -3.0], [-2.0, np.nan, -4.0]])
    np.testing.assert_array_equal(arrays.scores["bleu"], [[10.0, 30.0, 40.0], [20.0, np.nan, 50.0]])
    # no documents: every segment is its own, named so that domains never share one
    assert len(set(arrays.documents)) == 3


def test_documents_are_kept_and_a_missing_column_or_system_is_named(tmp_path: Path) -> None:
    path = _table(tmp_path / "news.tsv", [("A", "1", "d1", -1.0, 1.0), ("B", "1", "d1", -2.0, 2.0)])
    assert segment_arrays({"news": path}, ["human"], ["A", "B"]).documents.tolist() == ["d1"]
    with pytest.raises(InputError, match="no column 'chrf'"):
        segment_arrays({"news": path}, ["human", "chrf"], ["A", "B"])
    with pytest.raises(InputError, match="system 'C' has no rated segment in domain news"):
        segment_arrays({"news": path}, ["human"], ["A", "C"])


def test_documents_to_detect_only_where_a_pair_is_not_separated() -> None:
    pairs = pd.DataFrame({"measure": ["m", "m"], "metric_a": ["x", "x"], "separated": [True, False],
                          "difference": [0.5, 0.2], "standard_error": [0.1, 0.2]})
    table = with_documents_to_detect(pairs, documents=100, confidence=0.95, power=0.8)
    assert np.isnan(table["documents_to_detect"].iloc[0])
    # n ((z_{1 - 0.05/4} + z_0.8) SE / |d|)^2 with alpha / 2 pairs: 100 * ((2.2414 + 0.8416) * 0.2 / 0.2)^2
    assert table["documents_to_detect"].iloc[1] == pytest.approx(100 * (2.2414 + 0.8416) ** 2, rel=1e-3)


def test_quality_tracking_reads_each_scores_own_quality_ranking() -> None:
    consistency = pd.DataFrame([
        {"score": score, "system": system, "measure": measure, "value": value}
        for score, sign in (("human", 1.0), ("m", -1.0))
        for system, level in (("A", 1.0), ("B", 2.0), ("C", 3.0))
        for measure, value in (("quality", sign * level), ("between_sd", level))])
    agreement = pd.DataFrame({"metric": ["m", "m"], "measure": ["between_sd", "quality"]})
    # m is lower-is-better: its quality ranking is reversed, so its between SD runs against quality
    table = with_quality_tracking(agreement, consistency, {"human": True, "m": False})
    assert table["human_tau_with_quality"].iloc[0] == pytest.approx(1.0)
    assert table["metric_tau_with_quality"].iloc[0] == pytest.approx(1.0)
    assert np.isnan(table["metric_tau_with_quality"].iloc[1])
