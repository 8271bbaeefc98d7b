"""Human studies of format mtme and metric scores from files (nlp_robustness.studies.human_files), their planning
checks (bad metric files named with file, line and config key before any job), and the WMT22 zh-en mirror's data
checks: the workflow's own sentence BLEU/chrF equal the Metrics task's BLEU-refA/chrF-refA files, and the MQM
per-domain means recomputed from the segment tables equal the published ones."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from nlp_robustness.data.mtme import read_mtme_documents, read_mtme_segment_scores, system_scores
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines
from nlp_robustness.planning import prepare_config
from nlp_robustness.scoring.sentence_scores import sentence_scores
from nlp_robustness.studies.human_files import add_file_metrics, check_mtme_study, mtme_domain_segments
from nlp_robustness.studies.plan import study_plan
from nlp_robustness.studies.study_settings import human_score_directions, human_scores
from tests.e2e.workflow_runner import small_config
from tests.paths import MIRROR, REPOSITORY

ZHEN = MIRROR / "wmt22-zhen-mqm-metrics"
needs_zhen = pytest.mark.skipif(not ZHEN.is_dir(), reason=f"the mirror lacks {ZHEN}")

#: A tiny MTME study: 6 segments in two domains (3 documents), systems A and B; B is not rated on segment 2.
DOCS = "news\tn1\nnews\tn1\nnews\tn2\nsocial\ts1\nsocial\ts1\nsocial\ts1\n"
HUMAN = "".join(f"A\t{-i}\n" for i in range(6)) + "B\t-1\nB\tNone\n" + "".join(f"B\t{-i}\n" for i in range(2, 6)) \
    + "".join("refA\t0\n" for _ in range(6))
METRIC = "".join(f"A\t0.{i}\n" for i in range(6)) + "".join(f"B\t0.{i}\n" for i in range(6))


def _study(tmp_path: Path, metric_text: str = METRIC, human_text: str = HUMAN) -> dict:
    files = {"docs": DOCS, "human.seg.score": human_text, "metric.seg.score": metric_text,
             "src.txt": "".join(f"source {i}\n" for i in range(6)), "ref.txt": "".join(f"the reference {i}\n" for i in range(6)),
             "A.txt": "".join(f"the output {i}\n" for i in range(6)), "B.txt": "".join(f"an output {i}\n" for i in range(6))}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return {
        "format": "mtme", "scores": str(tmp_path / "human.seg.score"), "documents": str(tmp_path / "docs"),
        "source": str(tmp_path / "src.txt"), "reference": str(tmp_path / "ref.txt"), "domains": ["news", "social"],
        "systems": {"A": str(tmp_path / "A.txt"), "B": str(tmp_path / "B.txt")}, "epsilon": {"start": 0.1, "stop": 5, "step": 0.1},
        "metric_files": {"toy-metric": {"format": "mtme", "file": str(tmp_path / "metric.seg.score"), "higher_is_better": True,
                                        "epsilon": {"start": 0.01, "stop": 0.5, "step": 0.01}}},
    }


def _tables(spec: dict) -> dict:
    documents = read_mtme_documents(spec["documents"])
    human = system_scores(read_mtme_segment_scores(spec["scores"], len(documents)), {"A": "A", "B": "B"}, spec["scores"], "scores")
    outputs = {row: read_text_lines(path, segments=True) for row, path in spec["systems"].items()}
    source, reference = read_text_lines(spec["source"], segments=True), read_text_lines(spec["reference"], segments=True)
    tables = {}
    for domain in spec["domains"]:
        table = mtme_domain_segments(human, documents, source, reference, outputs, domain, "human_studies.toy")
        add_file_metrics(table, spec, {spec["metric_files"]["toy-metric"]["file"]: spec["metric_files"]["toy-metric"]["file"]},
                         "human_studies.toy", len(documents), domain)
        tables[domain] = table
    return tables


def test_each_system_keeps_its_own_rated_segments_with_their_documents_and_metric_scores(tmp_path: Path) -> None:
    tables = _tables(_study(tmp_path))
    news = tables["news"]
    assert news[news["system"] == "A"]["segment_id"].tolist() == ["1", "2", "3"]
    assert news[news["system"] == "B"]["segment_id"].tolist() == ["1", "3"]  # segment 2 not rated for B
    assert news["document"].tolist() == ["n1", "n1", "n2", "n1", "n2"]
    assert news[news["system"] == "B"]["human"].tolist() == [-1.0, -2.0]
    assert news[news["system"] == "B"]["toy-metric"].tolist() == [0.0, 0.2]
    assert tables["social"]["hypothesis"].tolist()[:1] == ["the output 3"]


def test_a_metric_none_on_a_rated_segment_is_named_with_file_line_and_key(tmp_path: Path) -> None:
    spec = _study(tmp_path, METRIC.replace("B\t0.3", "B\tNone"))  # B's segment 4 (line 10 of the file)
    with pytest.raises(InputError, match=r"metric\.seg\.score: line 10: no score \(None\) for system B, segment 4, which people "
                                         r"rated \(human_studies\.toy\.metric_files\.toy-metric\.file; 1 such segments\)"):
        _tables(spec)
    # None where nobody rated (B, segment 2) is fine
    spec = _study(tmp_path, METRIC.replace("B\t0.1", "B\tNone"))
    assert len(_tables(spec)["news"]) == 5


@pytest.mark.parametrize(("metric_text", "expected"), [
    (METRIC.replace("B\t", "C\t"), r"human_studies\.toy\.metric_files\.toy-metric\.file: system 'B' \(called 'B' in the file\) "
                                   r"has no scores in .*metric\.seg\.score"),
    (METRIC + "A\t0.9\n", r"metric\.seg\.score: line 13: system 'A' appears again"),
    (METRIC.rsplit("B", 1)[0], r"metric\.seg\.score: system 'A' has 6 lines, but the test set's segments number 6|"
                               r"metric\.seg\.score: system 'B' has 5 lines, but the test set's segments number 6"),
    (METRIC.replace("A\t0.2", "A\t0,2"), r"metric\.seg\.score: line 3: score '0,2' is not a number"),
    (METRIC.replace("B\t0.3", "B\tNone"), r"metric\.seg\.score: line 10: no score \(None\) for system B, segment 4"),
])
def test_planning_names_a_bad_metric_file(tmp_path: Path, metric_text: str, expected: str) -> None:
    spec = _study(tmp_path, metric_text)
    with pytest.raises(InputError, match=expected):
        check_mtme_study(spec, "human_studies.toy", {value: value for value in _values(spec)})


def _values(spec: dict) -> list[str]:
    return [spec["scores"], spec["documents"], spec["source"], spec["reference"], *spec["systems"].values(),
            spec["metric_files"]["toy-metric"]["file"]]


def test_planning_names_a_missing_system_and_an_unknown_domain(tmp_path: Path) -> None:
    spec = _study(tmp_path, human_text=HUMAN.replace("B\t", "Z\t"))
    with pytest.raises(InputError, match=r"human_studies\.toy\.scores: system 'B' .* has no scores in .*human\.seg\.score"):
        check_mtme_study(spec, "human_studies.toy", {value: value for value in _values(spec)})
    spec = _study(tmp_path) | {"domains": ["news", "sports"]}
    with pytest.raises(InputError, match=r"human_studies\.toy\.domains: 'sports' is not a domain of .*docs \(its domains: news, social\)"):
        check_mtme_study(spec, "human_studies.toy", {value: value for value in _values(spec)})


def _config_with(spec: dict) -> dict:
    config = small_config()
    config["human_studies"] = {"toy": spec}
    return config


def test_a_bad_metric_file_fails_in_planning_before_any_job(tmp_path: Path) -> None:
    config = _config_with(_study(tmp_path, METRIC.replace("A\t0.4", "A\tNone")))
    with pytest.raises(InputError, match=r"metric\.seg\.score: line 5: no score \(None\) for system A, segment 5, which people "
                                         r"rated \(human_studies\.toy\.metric_files\.toy-metric\.file"):
        prepare_config(config, REPOSITORY)


@pytest.mark.parametrize(("name", "expected"), [("human", "metric_files"), ("bleu", "metric_files")])
def test_a_file_metric_may_not_take_a_taken_name(tmp_path: Path, name: str, expected: str) -> None:
    spec = _study(tmp_path)
    spec["metric_files"] = {name: spec["metric_files"]["toy-metric"]}
    with pytest.raises(InputError, match=expected):
        prepare_config(_config_with(spec), REPOSITORY)


def test_the_plan_has_a_row_per_system_under_human_each_metric_and_each_file_metric(tmp_path: Path) -> None:
    spec = _study(tmp_path)
    for row in ("A", "B"):
        (tmp_path / f"{row}.errors").write_text("".join(f"{i}\n" for i in range(6)), encoding="utf-8")
    spec["metric_files"]["lower-metric"] = {"format": "plain", "files": {row: str(tmp_path / f"{row}.errors") for row in ("A", "B")},
                                            "higher_is_better": False, "epsilon": {"start": 1, "stop": 2, "step": 1}}
    config = _config_with(spec)
    prepare_config(config, REPOSITORY)
    study = config["human_studies"]["toy"]
    assert human_scores(study, config["metrics"]) == ["human", *config["metrics"], "toy-metric", "lower-metric"]
    assert human_score_directions(study, config["metrics"])["lower-metric"] is False
    plan = study_plan(config, {"domains": "", "sentiment": "", "human": "", "natural": "", "metric_robustness": "",
                               **{family: "" for family in config.get("perturbations", {}).get("families", {})}})
    rows = {stem: row for stem, row in plan.statistics.items() if row.study == "human/toy"}
    assert sorted({row.score for row in rows.values()}) == sorted(["human", *config["metrics"], "toy-metric", "lower-metric"])
    assert rows["human/toy/robustness/toy-metric/B"].epsilon == {"start": 0.01, "stop": 0.5, "step": 0.01}
    assert "human/toy/lower-metric" in plan.tables


# --- the WMT22 zh-en mirror -----------------------------------------------------------------------------------------

@needs_zhen
def test_the_workflows_sentence_bleu_and_chrf_equal_the_metrics_tasks_refa_files() -> None:
    """All 19 outputs the -refA files score (sacrebleu's defaults: 13a BLEU with effective order, chrF2); the
    mtme segment job uses this same sentence_scores without a tokenizer (English target)."""
    reference = read_text_lines(ZHEN / "references" / "zh-en.refA.txt", segments=True)
    published = {metric: read_mtme_segment_scores(str(ZHEN / "metric-scores" / f"zh-en.{name}-refA.seg.score"), len(reference))
                 for metric, name in (("bleu", "BLEU"), ("chrf", "chrF"))}
    assert len(published["bleu"]) == 19 and "refA" not in published["bleu"]
    largest = {}
    for metric, scores in published.items():
        hypotheses, expected = [], []
        for system, values in scores.items():
            hypotheses += read_text_lines(ZHEN / "system-outputs" / f"{system}.txt", segments=True)
            expected.append(values)
        ours = np.asarray(sentence_scores(hypotheses, reference * len(scores), metric), dtype=np.float64)
        largest[metric] = float(np.max(np.abs(ours - np.concatenate(expected))))
    assert largest["bleu"] <= 1e-9 and largest["chrf"] <= 1e-9, largest


@needs_zhen
def test_mqm_domain_means_of_the_segment_tables_equal_the_published_ones() -> None:
    documents = read_mtme_documents(str(ZHEN / "documents" / "zh-en.docs"))
    every = read_mtme_segment_scores(str(ZHEN / "human-scores" / "zh-en.mqm.seg.score"), len(documents))
    rated = [system for system, values in every.items() if np.isfinite(values).all()]
    assert len(rated) == 16  # fully crossed: 14 MT outputs, refA and refB on every segment
    human = system_scores(every, {system: system for system in rated}, "mqm", "scores")
    texts = ["x"] * len(documents)
    published = {}
    for line in read_text_lines(ZHEN / "human-scores" / "zh-en.mqm.domain.score", segments=False):
        domain, system, score = line.split("\t")
        published[(domain, system)] = None if score == "None" else float(score)
    largest, compared = 0.0, 0
    for domain in dict.fromkeys(documents["domain"]):
        table = mtme_domain_segments(human, documents, texts, texts, {system: texts for system in rated}, domain, "zh-en")
        assert table.groupby("system")["segment_id"].count().nunique() == 1  # every system on every segment, paired
        for system, mean in table.groupby("system")["human"].mean().items():
            largest = max(largest, abs(mean - published[(domain, system)]))
            compared += 1
    assert compared == 64 and largest <= 1e-9, largest
    assert all(published[key] is None for key in published if key[1] not in rated)


@needs_zhen
def test_the_default_study_plans_every_file_metric() -> None:
    import yaml

    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    config["mirror_dir"] = str(MIRROR)
    spec = copy.deepcopy(config["human_studies"]["wmt22-zh-en"])
    assert len(spec["systems"]) == 14 and "refA" not in spec["systems"] and "refB" not in spec["systems"]
    assert len(spec["metric_files"]) == 10
    for name, metric in spec["metric_files"].items():
        steps = (metric["epsilon"]["stop"] - metric["epsilon"]["start"]) / metric["epsilon"]["step"]
        assert steps <= 100, name
