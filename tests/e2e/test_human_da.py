"""The WMT22 direct-assessment studies of the shared small run (de-en, ja-en at full size), recomputed by independent
code: the organisers' system z from the DA file with a parse of its own (all rows kept) to 1e-9, and each system's
per-domain mean z and mean sentence BLEU on its rated segments (placeholder rows dropped), with the domain of every
segment from the mirror's derived domain files and BLEU from sacrebleu itself; then the tables built on them."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

DA = "wmt22-general-toen-da"
PAIRS = {"wmt22-de-en": "de-en", "wmt22-ja-en": "ja-en"}
DOMAINS = ["conversation", "ecommerce", "news", "social"]


def _rows(path: Path) -> list[list[str]]:
    """The rows of a space-separated DA file (a trailing space on every line), header dropped."""
    return [line.split() for line in path.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]


def _name(system: str) -> str:
    head, _, tail = system.rpartition(".")
    return head if head and tail.isdigit() else system


@pytest.mark.parametrize("study", list(PAIRS))
def test_the_organisers_scores_and_the_domain_means_are_recomputed(finished_run: Path, mirror_dir: Path, study: str) -> None:
    pair = PAIRS[study]
    folder = mirror_dir / DA
    table = pd.read_csv(finished_run / f"results/tables/human/{study}/domain_means.csv").set_index("system")
    # the organisers' system z: the plain mean of Z.SCR over every row of the system, placeholders included
    by_system = defaultdict(list)
    for system, _sid, _raw, z, _n in _rows(folder / f"humaneval/DA/newstest2022-toen/ad-seg-scores-{pair}.csv"):
        by_system[_name(system)].append(float(z))
    published = {_name(row[3]): float(row[1]) for row in _rows(folder / f"humaneval/DA/newstest2022-toen/ad-sys-scores-{pair}.csv")}
    assert set(table.index) == set(by_system)
    for system, values in by_system.items():
        assert abs(table.at[system, "z_all_rows"] - float(np.mean(values))) < 1e-9
        assert abs(float(np.mean(values)) - published[system]) < 1e-9
        assert abs(table.at[system, "z_published"] - published[system]) < 1e-9
    # per domain, on each system's rated segments without the placeholder rows (raw 0 and z 0 exactly)
    lines = (folder / f"derived/generaltest2022.{pair}.domains.tsv").read_text(encoding="utf-8").splitlines()
    line_of_sid = {int(fields[3]): index for index, fields in enumerate(line.split("\t") for line in lines)}
    domain_of_line = [line.split("\t")[0] for line in lines]
    txt = folder / "txt"
    reference = (txt / f"references/generaltest2022.{pair}.ref.A.en").read_text(encoding="utf-8").splitlines()
    z = defaultdict(list)
    rated = defaultdict(list)
    for system, sid, raw, score, _n in _rows(folder / f"humaneval/DA/newstest2022-toen/ad-seg-scores-{pair}.csv"):
        if float(raw) == 0 and float(score) == 0:
            continue
        line = line_of_sid[int(sid)]
        z[(_name(system), domain_of_line[line])].append(float(score))
        rated[_name(system)].append(line)
    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    for system in table.index:
        output = (txt / (f"references/generaltest2022.{pair}.ref.B.en" if system == "HUMAN-B"
                         else f"system-outputs/generaltest2022.{pair}.hyp.{system}.en")).read_text(encoding="utf-8").splitlines()
        scores = defaultdict(list)
        for line in rated[system]:
            scores[domain_of_line[line]].append(bleu.sentence_score(output[line], [reference[line]]).score)
        for domain in DOMAINS:
            assert table.at[system, f"{domain}_segments"] == len(z[(system, domain)])
            assert table.at[system, f"{domain}_human"] == pytest.approx(np.mean(z[(system, domain)]), abs=1e-12)
            assert table.at[system, f"{domain}_bleu"] == pytest.approx(np.mean(scores[domain]), abs=1e-9)


@pytest.mark.parametrize("study", list(PAIRS))
def test_tables_7_and_8_and_tau_are_built_on_those_segments(finished_run: Path, study: str) -> None:
    from scipy import stats

    means = pd.read_csv(finished_run / f"results/tables/human/{study}/domain_means.csv").set_index("system")
    rankings = pd.read_csv(finished_run / f"results/tables/human/{study}/rankings.csv").set_index("system")
    assert list(rankings.index) == list(means.index)
    for system in rankings.index:  # the whole pool's mean: every rated segment of the four domains
        segments = [means.at[system, f"{domain}_segments"] for domain in DOMAINS]
        pooled = sum(means.at[system, f"{domain}_human"] * n for domain, n in zip(DOMAINS, segments)) / sum(segments)
        assert rankings.at[system, "mean_human"] == pytest.approx(pooled, abs=1e-9)
        for measure in ("mean_gamma_human", "between_sd_bleu", "cov_bleu"):
            assert rankings.at[system, f"{measure}_rank_lo"] <= rankings.at[system, f"{measure}_rank"] <= rankings.at[system, f"{measure}_rank_hi"]
    agreement = pd.read_csv(finished_run / f"results/tables/human/{study}/agreement.csv").set_index(["ranking", "reference"])
    row = agreement.loc[("mean_gamma_bleu", "mean_gamma_human")]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(rankings["mean_gamma_bleu"], rankings["mean_gamma_human"]).statistic)
    assert row["tau_lo"] <= row["kendall_tau"] <= row["tau_hi"]
    pairwise = pd.read_csv(finished_run / f"results/tables/human/{study}/pairwise.csv")
    n = len(rankings)
    assert len(pairwise) == n * (n - 1) // 2
    counts = pairwise["mean_gamma_bleu_vs_people"].value_counts()
    assert (row["pairs_agree"], row["pairs_disagree"], row["pairs_undetermined"]) == tuple(
        counts.get(outcome, 0) for outcome in ("agree", "disagree", "undetermined"))
    # a pair is decided only where both paired verdicts separate it
    decided = pairwise[pairwise["mean_gamma_bleu_vs_people"] != "undetermined"]
    assert (decided["mean_gamma_bleu_verdict"] != "not distinguishable").all()
    assert (decided["mean_gamma_human_verdict"] != "not distinguishable").all()
