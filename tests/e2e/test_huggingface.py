"""Bring-your-own models through Snakemake: the tiny MarianMT (kind huggingface) and the tiny BERT classifier
(sentiment.models) the tests build, in the shared small run, in every branch that takes them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from tests.e2e.workflow_runner import TINY_CLASSIFIER, TINY_TRANSLATOR

pytestmark = [pytest.mark.e2e, pytest.mark.apertium]

TESTSETS = ("wmt14", "wmt15", "iwslt17", "bio18")


def test_the_translator_translates_every_test_set_and_records_its_model(finished_run: Path, tiny_models: Path) -> None:
    model = tiny_models / "marian"
    for testset in TESTSETS:
        table = pd.read_csv(finished_run / f"results/testsets/{testset}.tsv", sep="\t", dtype=str, keep_default_na=False)
        lines = (finished_run / f"results/translations/{TINY_TRANSLATOR}/{testset}.txt").read_text(encoding="utf-8").splitlines()
        assert len(lines) == len(table) == 40
        report = json.loads((finished_run / f"results/translations/{TINY_TRANSLATOR}/{testset}.report.json").read_text())
        text = json.dumps(report)
        weights = model / "model.safetensors"
        assert hashlib.sha256(weights.read_bytes()).hexdigest() in text  # the weights it translated with
        assert "marian" in text and str(model) in text
    # a row of the paper study's tables and of its profile group, like any system
    pool = pd.read_csv(finished_run / "results/tables/paper/bleu/robustness_pool.csv", index_col="system")
    assert TINY_TRANSLATOR in pool.index and pool.at[TINY_TRANSLATOR, "whole_pool_Mean"] >= 0
    profile = pd.read_csv(finished_run / "results/tables/profile/mt.csv")
    assert TINY_TRANSLATOR in set(profile.iloc[:, 0])


def test_the_translator_joins_the_perturbation_branches(finished_run: Path) -> None:
    word_order = pd.read_csv(finished_run / "results/tables/perturbations/word_order/bleu/means.csv")
    assert TINY_TRANSLATOR in set(word_order["system"])
    # the natural and paraphrase families: one job per family (one model start-up), then Natural Robustness
    assert (finished_run / f"results/translations/{TINY_TRANSLATOR}/perturbed/natural/typos/pooled.txt").exists()
    scores = pd.read_csv(finished_run / "results/natural_robustness/scores.tsv", sep="\t")
    assert TINY_TRANSLATOR in set(scores.iloc[:, 0]) | set(scores.get("responder", pd.Series(dtype=str)))


def test_the_classifier_is_a_row_of_the_sentiment_study_and_of_natural_robustness(finished_run: Path, tiny_models: Path) -> None:
    predictions = pd.read_csv(finished_run / f"results/sentiment/predictions/{TINY_CLASSIFIER}.tsv", sep="\t")
    assert len(predictions) > 0
    report = json.loads((finished_run / f"results/sentiment/predictions/{TINY_CLASSIFIER}.report.json").read_text())
    weights = tiny_models / "classifier" / "model.safetensors"
    assert hashlib.sha256(weights.read_bytes()).hexdigest() in json.dumps(report)
    pool = pd.read_csv(finished_run / "results/tables/sentiment/robustness_pool.csv")
    assert TINY_CLASSIFIER in set(pool.iloc[:, 0])
    accuracy = pd.read_csv(finished_run / "results/tables/sentiment/accuracy.csv")
    assert TINY_CLASSIFIER in set(accuracy.iloc[:, 0])
    assert (finished_run / f"results/natural_robustness/responses/sentiment/{TINY_CLASSIFIER}.tsv").exists()
