"""The steps of the metric-robustness branch (paper 002), one rule each: from DARR judgements to tau.

A pair's DARR judgements are sampled with their segments and judged outputs (:func:`sample_pair`), its
references attacked under every condition (:func:`attack_references`), every judged output scored against
the references of every condition of a level (:func:`score_level`), and the scores turned into each
judgement's +1 / -1 agreement, each metric variant's tau and BERTScore's tau at every layer
(:func:`tau_tables`). The scripts are thin adapters; the conditions and variants are those of
:mod:`nlp_robustness.studies.metric_attack_conditions`, and the agreement table is the engine study's units
(:mod:`nlp_robustness.studies.metric_attacks`).

**Best layer** (paper: BERTScore picks its default layer on WMT16, data other than the test set). Here
the best layer *of one pair* is the hidden layer (1 .. L) whose tau, averaged over the **other**
configured pairs on the **clean** references, is highest (ties: the lower layer). So no pair's own
judgements choose its layer, and the choice never sees an attack. It needs two pairs or more
(:func:`best_layers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.studies.metric_attack_conditions import CLEAN, condition_attack_level

__all__ = [
    "DARR_COLUMNS",
    "HYPOTHESIS_COLUMNS",
    "REFERENCE_COLUMNS",
    "SCORE_KEY_COLUMNS",
    "SEGMENT_COLUMNS",
    "attack_references",
    "best_layers",
    "sample_pair",
    "score_level",
    "tau_tables",
]

#: Columns of a pair's sampled judgements, segments and judged outputs.
DARR_COLUMNS: tuple[str, ...] = ("pair", "line", "sid", "better", "worse")
SEGMENT_COLUMNS: tuple[str, ...] = ("pair", "sid", "reference")
HYPOTHESIS_COLUMNS: tuple[str, ...] = ("pair", "system", "sid", "hypothesis")
#: Columns of one condition's references: the attacked text, what changed, and its unknown tokens.
REFERENCE_COLUMNS: tuple[str, ...] = (
    "condition", "attack", "p", "pair", "sid", "reference", "original",
    "words", "words_changed", "characters", "characters_changed", "unknown_tokens",
)
#: Key columns of a level's score table; one column per metric (and BERTScore layer) follows.
SCORE_KEY_COLUMNS: tuple[str, ...] = ("condition", "pair", "system", "sid")


def sample_pair(
    pair: str, darr_path: str, reference_path: str, output_paths: Mapping[str, str], sample_size: int | None, seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One pair's sampled judgements (:data:`DARR_COLUMNS`), segments and judged outputs.

    Every system a judgement names must have an output file and every SID a reference line; the sample
    is a seeded, nested sample of the judged SIDs with *all* their judgements.

    Raises:
        InputError: naming the DARR file and line of a judgement whose system or segment is missing.
    """
    from nlp_robustness.data.wmt19 import check_darr_systems, read_darr, read_lines
    from nlp_robustness.sampling import sample_sids

    darr = read_darr(darr_path, [pair])
    references = read_lines(reference_path)
    outputs = {system: read_lines(path, expected=len(references)) for system, path in output_paths.items()}
    check_darr_systems(darr, {pair: set(outputs)}, {pair: len(references)}, darr_path)
    sids = sample_sids(darr, sample_size, seed, pair)
    darr = darr[darr["sid"].isin(sids)].reset_index(drop=True)
    segments = pd.DataFrame({"pair": pair, "sid": sids, "reference": [references[sid - 1] for sid in sids]})
    judged = sorted({(system, int(sid)) for column in ("better", "worse") for system, sid in zip(darr[column], darr["sid"])})
    hypotheses = pd.DataFrame(
        [{"pair": pair, "system": system, "sid": sid, "hypothesis": outputs[system][sid - 1]} for system, sid in judged],
        columns=list(HYPOTHESIS_COLUMNS),
    )
    return darr[list(DARR_COLUMNS)], segments[list(SEGMENT_COLUMNS)], hypotheses


def attack_references(
    segments: pd.DataFrame, condition: str, settings: Mapping[str, Any], seed: int, context: Any, tokenizer: Any,
) -> pd.DataFrame:
    """One condition's references (:data:`REFERENCE_COLUMNS`): every segment attacked with a generator
    seeded by (seed, condition = attack and level, pair, SID), so a segment's attacked text depends on
    nothing else; the clean condition keeps the text. Unknown tokens are counted by Algorithm 1 of
    paper 002 on the WordPiece tokens of the (attacked) reference."""
    from nlp_robustness.perturbations import character_attacks as attacks
    from nlp_robustness.scoring.unknown_tokens import unknown_tokens_per_segment
    from nlp_robustness.sampling import rng_for

    attack, level = condition_attack_level(condition)
    rows = []
    for record in segments.itertuples(index=False):
        original = record.reference
        if condition == CLEAN:
            attacked = original
        else:
            rng = rng_for(seed, "metric_attacks", condition, record.pair, str(record.sid))
            attacked = attacks.attack_text(attack, original, level, settings, rng, context)
        rate = attacks.attack_rate(original, attacked)
        rows.append({
            "condition": condition, "attack": attack, "p": level, "pair": record.pair, "sid": int(record.sid),
            "reference": attacked, "original": original, "words": rate.words, "words_changed": rate.words_changed,
            "characters": rate.characters, "characters_changed": rate.characters_changed,
        })
    table = pd.DataFrame(rows, columns=[column for column in REFERENCE_COLUMNS if column != "unknown_tokens"])
    table["unknown_tokens"] = unknown_tokens_per_segment(table["reference"].tolist(), tokenizer)
    return table[list(REFERENCE_COLUMNS)]


def score_level(
    references: Mapping[str, pd.DataFrame], hypotheses: pd.DataFrame, sentence_metrics: Sequence[str],
    bertscore_model: Any | None, batch_size: int,
) -> pd.DataFrame:
    """Every judged output against the references of every condition of one level.

    Columns :data:`SCORE_KEY_COLUMNS`, then each sentence metric (sacrebleu, 0-100) and, with a model,
    ``bertscore_layer_<i>`` for every hidden state and ``bertscore_mean`` (F1; see
    :mod:`nlp_robustness.scoring.bertscore`). All pairs of the level go through BERTScore in one call,
    so every distinct sentence (an output recurs under every condition) is embedded once.
    """
    from nlp_robustness.scoring.sentence_scores import sentence_scores

    frames = []
    for condition, table in references.items():
        merged = hypotheses.merge(table[["pair", "sid", "reference"]], on=["pair", "sid"], how="inner", validate="many_to_one")
        if len(merged) != len(hypotheses):
            raise InputError(f"condition {condition}: the references lack segments of {len(hypotheses) - len(merged)} judged outputs")
        merged.insert(0, "condition", condition)
        frames.append(merged)
    pairs = pd.concat(frames, ignore_index=True)
    scores = pairs[list(SCORE_KEY_COLUMNS)].copy()
    for metric in sentence_metrics:
        scores[metric] = sentence_scores(pairs["hypothesis"].tolist(), pairs["reference"].tolist(), metric)
    if bertscore_model is not None:
        from nlp_robustness.scoring.bertscore import bertscore_f1

        layers = bertscore_f1(pairs["hypothesis"].tolist(), pairs["reference"].tolist(), bertscore_model, batch_size=batch_size)
        for column in layers.columns:
            scores[f"bertscore_{column}"] = layers[column].to_numpy()
    return scores


def best_layers(clean_layer_tau: pd.DataFrame) -> dict[str, int]:
    """The best hidden layer of every pair, chosen on the *other* pairs' clean references.

    ``clean_layer_tau`` has columns ``pair, layer, tau`` (hidden layers 1 .. L, clean condition). For
    each pair, the layer with the highest mean tau over the other pairs wins; ties go to the lower layer.

    Raises:
        InputError: Fewer than two pairs.
    """
    pairs = list(dict.fromkeys(clean_layer_tau["pair"]))
    if len(pairs) < 2:
        raise InputError("the best BERTScore layer is chosen on the other pairs: two pairs or more are needed")
    chosen = {}
    for pair in pairs:
        others = clean_layer_tau[clean_layer_tau["pair"] != pair]
        mean_tau = others.groupby("layer")["tau"].mean().sort_index()
        chosen[pair] = int(mean_tau.index[int(np.argmax(mean_tau.to_numpy()))])
    return chosen


def _layer_columns(scores: pd.DataFrame) -> dict[int, str]:
    """Hidden layer index (1 .. L) -> its BERTScore column (layer 0, the embeddings, is not a layer choice)."""
    found = {}
    for column in scores.columns:
        if column.startswith("bertscore_layer_"):
            index = int(column.rsplit("_", 1)[1])
            if index >= 1:
                found[index] = column
    return dict(sorted(found.items()))


def tau_tables(
    darr: Mapping[str, pd.DataFrame], scores: pd.DataFrame, condition_names: Sequence[str],
    sentence_metrics: Sequence[str], layers: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The agreement units, the tau of every variant, BERTScore's tau at every layer, the best layers.

    Returns ``(agreement, tau, tau_by_layer, best)``:

    * ``agreement``: :data:`~nlp_robustness.studies.metric_attacks.AGREEMENT_KEY_COLUMNS` (``sid``: the judgement's segment, the bootstrap's
      cluster) then one +1 / -1 column per metric variant;
    * ``tau``: ``condition, attack, p, pair, metric, tau, judgements`` (every pair, then ``average``:
      the mean of the pairs' taus, as the paper averages language pairs);
    * ``tau_by_layer``: ``condition, attack, p, pair, layer, tau`` for every hidden layer and ``mean``;
    * ``best``: ``pair, best_layer`` (chosen on the other pairs, clean references; see the module docstring).
    """
    from nlp_robustness.statistics.darr import pair_agreement

    layer_columns = _layer_columns(scores)
    agreements: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    by_layer_rows = []
    for condition in condition_names:
        attack, level = condition_attack_level(condition)
        for pair, judgements in darr.items():
            selected = scores[(scores["condition"] == condition) & (scores["pair"] == pair)]
            if selected.empty:
                raise InputError(f"no scores for condition {condition} of pair {pair}")
            columns = list(sentence_metrics) + list(layer_columns.values())
            if "bertscore_mean" in selected.columns:
                columns.append("bertscore_mean")
            found = {}
            for column in columns:
                frame = pd.DataFrame({"system": selected["system"], "sid": selected["sid"].astype(int), "score": selected[column].astype(float)})
                found[column] = pair_agreement(judgements, frame)
            agreements[(condition, pair)] = found
            for index, column in layer_columns.items():
                by_layer_rows.append({"condition": condition, "attack": attack, "p": level, "pair": pair, "layer": str(index), "tau": float(found[column].mean())})
            if "bertscore_mean" in found:
                by_layer_rows.append({"condition": condition, "attack": attack, "p": level, "pair": pair, "layer": "mean", "tau": float(found["bertscore_mean"].mean())})
    tau_by_layer = pd.DataFrame(by_layer_rows, columns=["condition", "attack", "p", "pair", "layer", "tau"])
    best = {}
    if "best" in layers:
        clean = tau_by_layer[(tau_by_layer["condition"] == CLEAN) & (tau_by_layer["layer"] != "mean")].copy()
        clean["layer"] = clean["layer"].astype(int)
        best = best_layers(clean[["pair", "layer", "tau"]])
    last = max(layer_columns) if layer_columns else None
    variant_columns = {metric: (lambda pair, metric=metric: metric) for metric in sentence_metrics}
    for layer in layers:
        if layer == "first":
            variant_columns["bertscore_first"] = lambda pair: layer_columns[1]
        elif layer == "last":
            variant_columns["bertscore_last"] = lambda pair: layer_columns[last]
        elif layer == "best":
            variant_columns["bertscore_best"] = lambda pair: layer_columns[best[pair]]
        elif layer == "mean":
            variant_columns["bertscore_mean"] = lambda pair: "bertscore_mean"
    agreement_frames, tau_rows = [], []
    for condition in condition_names:
        attack, level = condition_attack_level(condition)
        pair_taus: dict[str, list[float]] = {variant: [] for variant in variant_columns}
        for pair, judgements in darr.items():
            frame = pd.DataFrame({
                "condition": condition, "pair": pair, "line": judgements["line"].astype(int).to_numpy(),
                "sid": judgements["sid"].astype(int).to_numpy(), "unit_id": [f"{pair}/{line}" for line in judgements["line"]],
            })
            for variant, column_of in variant_columns.items():
                values = agreements[(condition, pair)][column_of(pair)]
                frame[variant] = values.astype(int)
                tau = float(values.mean())
                pair_taus[variant].append(tau)
                tau_rows.append({"condition": condition, "attack": attack, "p": level, "pair": pair, "metric": variant, "tau": tau, "judgements": len(values)})
            agreement_frames.append(frame)
        for variant, taus in pair_taus.items():
            tau_rows.append({"condition": condition, "attack": attack, "p": level, "pair": "average", "metric": variant, "tau": float(np.mean(taus)), "judgements": 0})
    agreement = pd.concat(agreement_frames, ignore_index=True)
    tau = pd.DataFrame(tau_rows, columns=["condition", "attack", "p", "pair", "metric", "tau", "judgements"])
    best_table = pd.DataFrame({"pair": list(best), "best_layer": list(best.values())}, columns=["pair", "best_layer"])
    return agreement, tau, tau_by_layer, best_table
