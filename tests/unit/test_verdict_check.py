"""The cross-check of a run's tables (nlp_robustness.outputs.verdict_check): each kind of contradiction between a
verdict, its Holm-adjusted interval and its Holm p is found when planted, and tables that agree pass."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.outputs.verdict_check import check_tables, main

HEADER = "statistic,row_a,row_b,estimate_a,estimate_b,difference,lo,hi,p_holm,verdict\n"
AGREEING = (
    "between_sd,a,b,1.0,3.0,-2.0,-3.5,-0.5,0.01,more consistent\n"
    "between_sd,a,c,1.0,1.5,-0.5,-1.5,0.5,0.40,not distinguishable\n"
    "mean,a,b,20.0,25.0,-5.0,-7.0,-3.0,0.001,lower\n"
)


def _run(tmp_path: Path, text: str, name: str = "results/tables/study/bleu/comparisons.csv") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return tmp_path


def test_agreeing_tables_pass(tmp_path: Path) -> None:
    run = _run(tmp_path, HEADER + AGREEING)
    assert check_tables(run / "results" / "tables", 0.05) == []


@pytest.mark.parametrize("row, message", [
    # an unadjusted interval beside a Holm verdict (issue 52, tau differences)
    ("clean,x,y,0.3,0.4,-0.104,-0.193,-0.015,0.423,not distinguishable\n", "excludes 0 but Holm p = 0.423 is not below"),
    # a verdict that the Holm p does not support
    ("between_sd,a,d,1.0,2.0,-1.0,-2.0,0.1,0.2,more consistent\n", "verdict 'more consistent' with Holm p = 0.2"),
    # a zero difference printed as significant (issue 52, character attacks: replicate noise 1e-15)
    ("between_sd,a,e,2.5,2.5,4.4e-16,4.0e-16,4.8e-16,1e-40,less consistent\n", "a zero difference"),
])
def test_each_planted_contradiction_is_named(tmp_path: Path, row: str, message: str) -> None:
    run = _run(tmp_path, HEADER + AGREEING + row)
    problems = check_tables(run / "results" / "tables", 0.05)
    assert problems and all("results/tables/study/bleu/comparisons.csv, line 5" in problem for problem in problems)
    assert any(message in problem for problem in problems)


def test_corpus_and_perturbation_layouts_are_checked(tmp_path: Path) -> None:
    corpus = ("pool,metric,system_a,system_b,difference,standard_error,p_value,p_holm,pairs,lo,hi,separated\n"
              "whole,bleu,a,b,1.0,0.2,0.001,0.003,3,0.3,1.7,True\n"
              "whole,bleu,a,c,0.2,0.2,0.3,0.6,3,-0.5,0.9,True\n")
    means = ("system,function,beta1,beta2,beta2_minus_beta1,beta2_minus_beta1_lo,beta2_minus_beta1_hi,p,p_holm\n"
             "s,f,30.0,30.0,0.0,0.0,0.0,1e-71,1e-70\n")
    _run(tmp_path, corpus, "results/tables/study/corpus_comparisons.csv")
    run = _run(tmp_path, means, "results/tables/perturbations/word_order/bleu/means.csv")
    problems = check_tables(run / "results" / "tables", 0.05)
    assert any("corpus_comparisons.csv, line 3: separated 'True'" in problem for problem in problems)
    assert any("means.csv, line 2: a zero difference" in problem for problem in problems)


def test_a_holm_table_of_an_unknown_layout_is_reported(tmp_path: Path) -> None:
    run = _run(tmp_path, "system,gap,gap_low,gap_high,holm\ns,1,0.5,1.5,0.01\n", "results/tables/new/gaps.csv")
    problems = check_tables(run / "results" / "tables", 0.05)
    assert len(problems) == 1 and "layout the check does not know" in problems[0]


def test_the_command_line_exits_1_on_a_contradiction(tmp_path: Path) -> None:
    run = _run(tmp_path, HEADER + AGREEING)
    assert main([str(run)]) == 0
    frame = pd.read_csv(run / "results/tables/study/bleu/comparisons.csv")
    frame.loc[1, "p_holm"] = 0.001
    frame.to_csv(run / "results/tables/study/bleu/comparisons.csv", index=False)
    assert main([str(run)]) == 1
