"""Which metric's consistency agrees with people's (issue 53), run end to end from the mirror by config alone.

One small run (module fixture): a config holding only a WMT22 zh-en study of format ``mtme`` (six of the fourteen
MQM-rated systems, the workflow's own BLEU and chrF, COMET-22 read from the Metrics task's file, and a metric file
the test writes itself: a config edit, nothing else), no test set, no translation. Then:

* independently written code in this test recomputes one metric's tau with people and both ends of its interval
  from the mirror's files (its own MTME parsing, document resampling, interaction SD, Kendall tau and interval):
  equal to the workflow's table;
* the metric the test wrote is in every table, and the run's verdicts agree with their intervals (verdict check);
* a second human score of the same pair (the sparse DA z of the same MTME release) is a config edit: its study plans.
"""

from __future__ import annotations

import copy
import math
import subprocess
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from tests.e2e.workflow_runner import DEFAULT_CONFIG, REPOSITORY, SNAKEMAKE, run_workflow

pytestmark = pytest.mark.e2e

SYSTEMS = ["HuaweiTSC", "JDExploreAcademy", "Lan-Bridge", "M2M100_1.2B-B4", "Online-B", "Online-W"]
STUDY = "zh-en-small"
RESAMPLES = 200
SEED = 7
#: The metric this test writes itself: minus the relative length difference of output and reference (higher = better).
LENGTH_METRIC = "length-agreement"


def _study_config(mirror_dir: Path, metric_file: Path) -> dict[str, Any]:
    study = copy.deepcopy(DEFAULT_CONFIG["human_studies"]["wmt22-zh-en"])
    study["systems"] = {name: study["systems"][name] for name in SYSTEMS}
    study["metric_files"] = {
        "COMET-22": study["metric_files"]["COMET-22"],
        LENGTH_METRIC: {"format": "mtme", "file": str(metric_file), "higher_is_better": True,
                        "epsilon": {"start": 0.01, "stop": 1.0, "step": 0.01}},
    }
    return {"mirror_dir": str(mirror_dir), "uncertainty": {"resamples": RESAMPLES, "seed": SEED},
            "human_studies": {STUDY: study}}


def _write_length_metric(mirror_dir: Path, path: Path) -> None:
    """An MTME score file of every MQM-rated output of the release (more systems than the study: the file's other
    systems are ignored), one line per system and segment."""
    folder = mirror_dir / "wmt22-zhen-mqm-metrics"
    reference = (folder / "references" / "zh-en.refA.txt").read_text(encoding="utf-8").split("\n")[:-1]
    lines = []
    for output in sorted((folder / "system-outputs").glob("*.txt")):
        hypotheses = output.read_text(encoding="utf-8").split("\n")[:-1]
        lines += [f"{output.stem}\t{-abs(len(h) - len(r)) / max(len(r), 1)!r}" for h, r in zip(hypotheses, reference)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def zh_en_run(tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Path:
    if not (mirror_dir / "wmt22-zhen-mqm-metrics").is_dir():
        pytest.skip("the mirror has no wmt22-zhen-mqm-metrics")
    workdir = tmp_path_factory.mktemp("zh-en")
    _write_length_metric(mirror_dir, workdir / "length.seg.score")
    result = run_workflow(workdir, _study_config(mirror_dir, workdir / "length.seg.score"))
    assert result.returncode == 0, result.stdout[-6000:]
    return workdir


# --- the independent recomputation --------------------------------------------------------------------------------

def _mtme(path: Path) -> dict[str, np.ndarray]:
    scores: dict[str, list[float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        system, value = line.split("\t")
        scores.setdefault(system, []).append(math.nan if value == "None" else float(value))
    return {system: np.array(values) for system, values in scores.items()}


def _generator(seed: int, *labels: str) -> np.random.Generator:
    """The workflow's documented seeding (nlp_robustness.sampling.rng_for): CRC-32 of each label as spawn key."""
    key = tuple(zlib.crc32(label.encode("utf-8")) for label in labels)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=seed, spawn_key=key)))


def _document_counts(documents_by_domain: list[list[str]], resamples: int, seed: int, labels: list[str]) -> np.ndarray:
    """(B, documents) how often each document is drawn, documents of each domain drawn with replacement within it, the
    documents in domain order and by name inside a domain; replicates in chunks of 50, each from its own generator."""
    total = sum(len(names) for names in documents_by_domain)
    counts = np.zeros((resamples, total))
    for chunk, start in enumerate(range(0, resamples, 50)):
        rows = min(50, resamples - start)
        generator = _generator(seed, *labels, "bootstrap", str(chunk))
        offset = 0
        for names in documents_by_domain:
            picks = generator.integers(0, len(names), size=(rows, len(names)), dtype=np.int32)
            for row in range(rows):
                counts[start + row, offset:offset + len(names)] += np.bincount(picks[row], minlength=len(names))
            offset += len(names)
    return counts


def _interaction_sd(domain_means: np.ndarray) -> np.ndarray:
    """(..., systems, domains) -> (..., systems): SD over domains of the double-centred domain means (D - 1)."""
    residual = (domain_means - domain_means.mean(axis=-2, keepdims=True) - domain_means.mean(axis=-1, keepdims=True)
                + domain_means.mean(axis=(-2, -1), keepdims=True))
    return np.sqrt((residual**2).sum(axis=-1) / (domain_means.shape[-1] - 1))


def test_one_metrics_tau_and_interval_recomputed_independently(zh_en_run: Path, mirror_dir: Path) -> None:
    folder = mirror_dir / "wmt22-zhen-mqm-metrics"
    docs = pd.read_csv(folder / "documents" / "zh-en.docs", sep="\t", header=None, names=["domain", "document"], dtype=str)
    domains = DEFAULT_CONFIG["human_studies"]["wmt22-zh-en"]["domains"]
    documents_by_domain = [sorted(set(docs.loc[docs["domain"] == domain, "document"])) for domain in domains]
    keys = [(domain, name) for domain, names in zip(domains, documents_by_domain) for name in names]
    document_of_segment = docs.apply(lambda row: keys.index((row["domain"], row["document"])), axis=1).to_numpy()
    counts = np.vstack([np.ones(len(keys)), _document_counts(documents_by_domain, RESAMPLES, SEED, [f"human/{STUDY}", "none"])])
    domain_of_document = np.array([domains.index(domain) for domain, _ in keys])

    def interaction(scores: dict[str, np.ndarray]) -> np.ndarray:
        """(1 + B, systems): the interaction SD in the data (row 0) and in every replicate."""
        per_system = []
        for system in SYSTEMS:
            sums = np.bincount(document_of_segment, weights=scores[system], minlength=len(keys))
            sizes = np.bincount(document_of_segment, minlength=len(keys)).astype(float)
            indicator = np.eye(len(domains))[domain_of_document]
            per_system.append(((counts * sums) @ indicator) / ((counts * sizes) @ indicator))
        return _interaction_sd(np.stack(per_system, axis=1))

    people = interaction(_mtme(folder / "human-scores" / "zh-en.mqm.seg.score"))
    comet = interaction(_mtme(folder / "metric-scores" / "zh-en.COMET-22-refA.seg.score"))
    taus = np.array([stats.kendalltau(comet[row], people[row]).statistic for row in range(counts.shape[0])])
    tau, replicates = taus[0], taus[1:]
    smallest = min(len(names) for names in documents_by_domain)
    degrees = min(RESAMPLES - 1, len(keys) - len(domains))
    half = stats.t.ppf(0.975, degrees) * math.sqrt(smallest / (smallest - 1)) * np.std(replicates, ddof=1)

    table = pd.read_csv(zh_en_run / "results" / "tables" / "human" / STUDY / "metric_consistency.csv")
    row = table[(table["metric"] == "COMET-22") & (table["measure"] == "interaction_sd")].iloc[0]
    assert row["tau"] == pytest.approx(tau, abs=1e-12)
    assert row["tau_lo"] == pytest.approx(max(tau - half, -1.0), abs=1e-9)
    assert row["tau_hi"] == pytest.approx(min(tau + half, 1.0), abs=1e-9)


def test_the_metric_file_the_test_wrote_is_measured_and_the_verdicts_hold(zh_en_run: Path) -> None:
    tables = zh_en_run / "results" / "tables" / "human" / STUDY
    agreement = pd.read_csv(tables / "metric_consistency.csv")
    assert set(agreement["metric"]) == {"bleu", "chrf", "COMET-22", LENGTH_METRIC}
    assert set(agreement["measure"]) == {"between_sd", "interaction_sd", "gamma_area", "quality"}
    assert (agreement["systems"] == len(SYSTEMS)).all()
    pairs = pd.read_csv(tables / "metric_consistency_pairs.csv")
    assert len(pairs) == 4 * 6  # every pair of 4 metrics, per measure
    assert (tables.parent.parent.parent / "figures" / "human" / STUDY / "metric_consistency.png").stat().st_size > 10_000
    # the engine's own tables cover the file metric too
    assert (tables / LENGTH_METRIC / "comparisons.csv").is_file()
    from nlp_robustness.outputs.verdict_check import check_run
    assert check_run(zh_en_run, 0.05) == []


def test_a_second_human_score_of_the_pair_is_a_config_edit(zh_en_run: Path, mirror_dir: Path) -> None:
    config = yaml.safe_load((zh_en_run / "config.yaml").read_text(encoding="utf-8"))
    da = copy.deepcopy(config["human_studies"][STUDY])
    da |= {"scores": "wmt22-zhen-wmt-z-seg-scores", "score_label": "DA z", "epsilon": {"start": 0.01, "stop": 2.5, "step": 0.01}}
    da["systems"] = {name: path for name, path in da["systems"].items() if name != "M2M100_1.2B-B4"}  # not in the DA
    config["human_studies"]["zh-en-da"] = da
    path = zh_en_run / "edited.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    result = subprocess.run([str(SNAKEMAKE), "--snakefile", str(REPOSITORY / "Snakefile"), "--directory", str(zh_en_run),
                             "--configfile", str(path), "--cores", "1", "--dry-run", "--quiet", "rules"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:]
    planned = dict(line.split()[:2] for line in result.stdout.splitlines() if len(line.split()) == 2 and line.split()[1].isdigit())
    assert planned.get("human_mtme_segments") == "4" and planned.get("metric_consistency") == "1"
    assert int(planned["robustness_statistics"]) == 5 * 5  # five systems x (human, bleu, chrf, COMET-22, the length metric)
