"""Tests of BERTScore F1 at every MiniLM hidden layer and on the mean of layers 1..6 (real WMT'19 lt-en lines)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from nlp_robustness.errors import InputError
from nlp_robustness.scoring.bertscore import (
    LAYER_COLUMNS,
    MEAN_COLUMN,
    MEAN_LAYERS,
    BertScoreModel,
    bertscore_f1,
    bertscore_signature,
    layer_column,
    load_bertscore_model,
)

SEGMENTS = 20
COLUMNS = [*LAYER_COLUMNS, MEAN_COLUMN]


@pytest.fixture(scope="module")
def model() -> BertScoreModel:
    return load_bertscore_model("cpu")


@pytest.fixture(scope="module")
def pairs(mirror_dir: Path) -> tuple[list[str], list[str]]:
    """The first 20 lines of online-A's lt-en output and of the reference of WMT'19 newstest."""
    testset = mirror_dir / "wmt19-newstest2019-to-en"
    references = (testset / "references" / "newstest2019-lten-ref.en").read_text(encoding="utf-8").splitlines()
    hypotheses = (testset / "system-outputs" / "lt-en" / "newstest2019.online-A.0.lt-en").read_text(encoding="utf-8").splitlines()
    return hypotheses[:SEGMENTS], references[:SEGMENTS]


@pytest.fixture(scope="module")
def scores(model: BertScoreModel, pairs: tuple[list[str], list[str]]) -> pd.DataFrame:
    hypotheses, references = pairs
    return bertscore_f1(hypotheses, references, model, threads=2)


def test_columns_and_range(scores: pd.DataFrame) -> None:
    assert list(scores.columns) == COLUMNS
    assert list(scores.index) == list(range(SEGMENTS))
    assert all(scores.dtypes == np.float64)
    assert ((scores.to_numpy() > 0) & (scores.to_numpy() <= 100 + 1e-4)).all()


@pytest.mark.parametrize("layer", [1, 6])
def test_layers_match_bert_score(layer: int, model: BertScoreModel, pairs: tuple[list[str], list[str]], scores: pd.DataFrame) -> None:
    import bert_score

    hypotheses, references = pairs
    _, _, f1 = bert_score.score(hypotheses, references, model_type=model.path, num_layers=layer, lang="en", device="cpu")
    np.testing.assert_allclose(scores[layer_column(layer)].to_numpy() / 100, f1.double().numpy(), rtol=0, atol=1e-5)


def _mean_state(model: BertScoreModel, text: str) -> torch.Tensor:
    """Normalised mean of the hidden states of layers 1..6 of every word piece ([CLS] and [SEP] included), unpadded."""
    ids = model.tokenizer.encode(text.strip(), add_special_tokens=True, truncation=True, max_length=512)
    encoder = model.model.encoder  # the plain transformers BertModel inside the wrapper
    with torch.no_grad():
        states = encoder(torch.tensor([ids]), output_hidden_states=True).hidden_states
    mean = torch.stack([states[index][0] for index in MEAN_LAYERS]).mean(dim=0).double()
    return mean / mean.norm(dim=-1, keepdim=True)


def test_mean_matches_hand_computation(model: BertScoreModel, pairs: tuple[list[str], list[str]], scores: pd.DataFrame) -> None:
    expected = []
    for hypothesis, reference in zip(*pairs):
        similarity = _mean_state(model, hypothesis) @ _mean_state(model, reference).T
        # Greedy matching over all word pieces; [CLS]/[SEP] (first/last row and column) weigh 0 (no idf).
        precision = similarity.max(dim=1).values[1:-1].mean()
        recall = similarity.max(dim=0).values[1:-1].mean()
        expected.append(float(2 * precision * recall / (precision + recall)))
    np.testing.assert_allclose(scores[MEAN_COLUMN].to_numpy() / 100, expected, rtol=0, atol=1e-5)


def test_mean_differs_from_every_layer(scores: pd.DataFrame) -> None:
    for column in LAYER_COLUMNS:
        assert not np.allclose(scores[MEAN_COLUMN], scores[column], atol=1e-3)


def test_identical_pairs_score_100(model: BertScoreModel, pairs: tuple[list[str], list[str]]) -> None:
    references = pairs[1][:5]
    np.testing.assert_allclose(bertscore_f1(references, references, model).to_numpy(), 100.0, atol=1e-3)


def test_order_of_pairs_does_not_matter(model: BertScoreModel, pairs: tuple[list[str], list[str]], scores: pd.DataFrame) -> None:
    hypotheses, references = pairs
    order = np.random.default_rng(0).permutation(SEGMENTS)
    shuffled = bertscore_f1([hypotheses[i] for i in order], [references[i] for i in order], model)
    np.testing.assert_array_equal(shuffled.to_numpy(), scores.to_numpy()[order])


def test_small_chunks_give_the_same_scores(model: BertScoreModel, pairs: tuple[list[str], list[str]], scores: pd.DataFrame) -> None:
    hypotheses, references = pairs
    chunked = bertscore_f1(hypotheses, references, model, batch_size=3, sentences_per_chunk=5)
    np.testing.assert_allclose(chunked.to_numpy(), scores.to_numpy(), rtol=0, atol=1e-4)


def test_every_unique_sentence_is_embedded_once(model: BertScoreModel, pairs: tuple[list[str], list[str]]) -> None:
    hypotheses, references = pairs
    hypotheses, references = hypotheses[:5], references[:5]
    versions = [[reference + suffix for reference in references] for suffix in ("", " Yes.", " No.", " Maybe.")]
    embedded: list[int] = []
    hook = model.model.register_forward_hook(lambda module, inputs, output: embedded.append(len(inputs[0])))
    try:
        repeated = bertscore_f1(hypotheses * 4, [r for version in versions for r in version], model)
    finally:
        hook.remove()
    assert sum(embedded) == 5 + 20
    single = bertscore_f1(hypotheses, versions[1], model)
    np.testing.assert_allclose(repeated.iloc[5:10].to_numpy(), single.to_numpy(), rtol=0, atol=1e-4)


def test_empty_segments_score_zero(model: BertScoreModel) -> None:
    scores = bertscore_f1(["", "  ", "A cat.", ""], ["A cat.", "A dog.", "", ""], model)
    np.testing.assert_array_equal(scores.to_numpy(), 0.0)
    assert bertscore_f1([], [], model).shape == (0, len(COLUMNS))


def test_length_mismatch_is_an_input_error(model: BertScoreModel) -> None:
    with pytest.raises(InputError, match="length mismatch"):
        bertscore_f1(["a", "b"], ["a"], model)
    with pytest.raises(InputError, match="hypotheses"):
        bertscore_f1("a", "a", model)
    with pytest.raises(InputError, match=r"references\[1\]"):
        bertscore_f1(["a", "b"], ["a", None], model)  # type: ignore[list-item]
    with pytest.raises(InputError, match="batch_size"):
        bertscore_f1(["a"], ["a"], model, batch_size=0)


def test_layer_column() -> None:
    assert layer_column(0) == "layer_0" and layer_column(6) == "layer_6"
    assert LAYER_COLUMNS == tuple(f"layer_{index}" for index in range(7))
    for bad in (-1, 7, 1.0, True):
        with pytest.raises(InputError, match="layer"):
            layer_column(bad)  # type: ignore[arg-type]


def test_loader_is_cached_and_checks_device(model: BertScoreModel) -> None:
    assert load_bertscore_model("cpu") is model and model.num_layers == 6
    threads = torch.get_num_threads()
    assert load_bertscore_model("cpu", threads=1) is model and torch.get_num_threads() == 1
    torch.set_num_threads(threads)
    with pytest.raises(InputError, match="threads"):
        load_bertscore_model("cpu", threads=0)
    with pytest.raises(InputError, match="device"):
        load_bertscore_model("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="device"):
            load_bertscore_model("cuda")
    assert "idf:no|rescale:no|scale:100" in bertscore_signature(model)
