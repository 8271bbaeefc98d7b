"""Robustness of evaluation metrics to character-level attacks (paper 002): conditions, metric variants,
the choice of BERTScore's best layer, DARR agreement as the units of one more engine study.

**Conditions.** A condition is the clean references (:data:`CLEAN`, p = 0) or one attack at one level
(``<attack>-p<level>``, the names of :mod:`nlp_robustness.perturbations.character_attacks`). Every
system output of a pair is scored against the references of every condition.

**Metric variants** (the rows of the study): the sacrebleu sentence metrics (``bleu``, ``chrf``) and
BERTScore F1 at the configured layers: ``bertscore_first`` (hidden layer 1, the output of the first
transformer layer), ``bertscore_last`` (the top layer), ``bertscore_mean`` (embeddings averaged over the
layers) and ``bertscore_best``.

**Best layer** (paper: BERTScore picks its default layer on WMT16, data other than the test set). Here
the best layer *of one pair* is the hidden layer (1 .. L) whose tau, averaged over the **other**
configured pairs on the **clean** references, is highest (ties: the lower layer). So no pair's own
judgements choose its layer, and the choice never sees an attack. It needs two pairs or more.

**Units for the engine.** WMT19's DARR tau is (Concordant - Discordant) / (Concordant + Discordant) over
a pair's relative-ranking judgements (a metric tie is Discordant): the mean of +1 / -1 agreements, one
per DARR judgement (:mod:`nlp_robustness.statistics.darr`). A condition is a domain, and its sample
value is its tau over the judgements of every configured pair pooled (weighted by their numbers of
judgements; the per-pair taus are in the tau table). Metrics I-III across conditions then say how
consistent a metric's agreement with humans stays under attack. ``bagging_unit`` says what blocks are
drawn over:

* ``condition`` (default): one unit per condition, scored by its tau (engine aggregation ``unit``);
  blocks of conditions, as the sentiment study's ``bagging_unit: domain``.
* ``judgement``: one unit per judgement and condition, scored +1 / -1 (aggregation ``domain``: a
  condition's mean is its tau); blocks of judgements. Exact, but the block file holds about
  2 x (conditions + 1) x blocks x 0.6 x judgements x conditions rows: tens of millions at the default
  sample, so it is for paper-scale runs with few conditions.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio import read_table
from nlp_robustness.statistics.pools import UNIT_COLUMNS
from nlp_robustness.statistics.study_design import StudyDesign, replicate_units_by_cluster

__all__ = [
    "has_variance_components",
    "AGREEMENT_KEY_COLUMNS",
    "BOOTSTRAP_UNIT_COLUMNS",
    "bootstrap_units",
    "resampling_design",
    "DARR_COLUMNS",
    "aggregation_of",
    "HYPOTHESIS_COLUMNS",
    "REFERENCE_COLUMNS",
    "SCORE_KEY_COLUMNS",
    "SEGMENT_COLUMNS",
    "attack_references",
    "sample_pair",
    "score_level",
    "tau_tables",
    "BERTSCORE_LAYERS",
    "CLEAN",
    "best_layers",
    "complete_metric_robustness",
    "condition_attack_level",
    "conditions",
    "level_name",
    "levels_of",
    "metric_variants",
    "pair_downloads",
    "unit_keys",
    "units",
]

#: The condition of the unattacked references.
CLEAN = "clean"
#: BERTScore layer choices (config ``metric_robustness.bertscore.layers``).
BERTSCORE_LAYERS: tuple[str, ...] = ("first", "last", "best", "mean")
#: Key columns of the agreement table (one row per condition and DARR judgement); a column per variant follows.
AGREEMENT_KEY_COLUMNS: tuple[str, ...] = ("condition", "pair", "line", "sid", "unit_id")
#: Columns of :func:`bootstrap_units`: a unit, its resampling cluster (the segment) and its score.
BOOTSTRAP_UNIT_COLUMNS: tuple[str, ...] = ("domain", "unit_id", "cluster", "score")


def _attacks_module() -> Any:
    from nlp_robustness.perturbations import character_attacks

    return character_attacks


def pair_downloads(pair: str, downloads: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The manifest downloads of one WMT19 pair: its reference, and its system outputs by system name
    (keys ``wmt19-<pair>-ref`` and ``wmt19-<pair>-system-<SYSTEM>``)."""
    prefix = f"wmt19-{pair}-system-"
    return f"wmt19-{pair}-ref", {key[len(prefix):]: key for key in downloads if key.startswith(prefix)}


def complete_metric_robustness(config: MutableMapping[str, Any], downloads: Sequence[str]) -> None:
    """Fill the ``metric_robustness`` section's remaining defaults and check it (in place; no-op without one).

    Raises:
        InputError: naming the first offending key.
    """
    from nlp_robustness.perturbations.configuration import fill_schema_defaults

    section = config.get("metric_robustness")
    if section is None:
        return
    attacks = _attacks_module()
    key = "metric_robustness"
    section.setdefault("attacks", {name: {} for name in attacks.FUNCTIONS})
    for attack, settings in section["attacks"].items():
        if attack not in attacks.FUNCTIONS:
            raise InputError(
                f"invalid configuration at key '{key}.attacks.{attack}': unknown attack (known: {', '.join(attacks.FUNCTIONS)})"
            )
        fill_schema_defaults(settings, attacks.FUNCTIONS[attack], f"{key}.attacks.{attack}")
    try:  # the family's own check: every level must name its condition uniquely (p written with :g)
        attacks.expand_functions(section["attacks"], {"levels": section["levels"]})
    except InputError as error:
        raise InputError(f"invalid configuration at key '{key}.levels': {error}") from None
    for pair in section["pairs"]:
        reference, systems = pair_downloads(pair, downloads)
        if reference not in downloads or not systems:
            raise InputError(
                f"invalid configuration at key '{key}.pairs': the dataset manifest has no {reference} download or no "
                f"wmt19-{pair}-system-* downloads for pair {pair}"
            )
    if section["darr"] not in downloads:
        raise InputError(f"invalid configuration at key '{key}.darr': no download {section['darr']!r} in the dataset manifest")
    if "best" in section["bertscore"]["layers"] and len(section["pairs"]) < 2:
        raise InputError(
            f"invalid configuration at key '{key}.bertscore.layers': 'best' chooses a pair's layer on the other pairs, "
            "so it needs two pairs or more (add a pair or drop 'best')"
        )
    if not section["sentence_metrics"] and not section["bertscore"]["layers"]:
        raise InputError(f"invalid configuration at key '{key}.sentence_metrics': no metric to evaluate")
    names = conditions(section)
    section.setdefault("leave_out", list(names))
    for index, name in enumerate(section["leave_out"]):
        if name not in names:
            raise InputError(f"invalid configuration at key '{key}.leave_out[{index}]': '{name}' is not a condition (known: {', '.join(names)})")
    if section["epsilon"]["stop"] < section["epsilon"]["start"]:
        raise InputError(f"invalid configuration at key '{key}.epsilon.stop': must be >= start")


def conditions(section: Mapping[str, Any]) -> list[str]:
    """Every condition: clean, then each attack at each level (attack-major, levels in config order)."""
    attacks = _attacks_module()
    return [CLEAN] + [attacks.instance_name(attack, p) for attack in section["attacks"] for p in section["levels"]]


def condition_attack_level(condition: str) -> tuple[str, float]:
    """``(attack, p)`` of a condition; ``("none", 0.0)`` for the clean references."""
    if condition == CLEAN:
        return "none", 0.0
    return _attacks_module().parse_instance(condition)


def level_name(p: float) -> str:
    """The file name of one level's scores: ``p0`` (clean), ``p0.1``, ..."""
    return f"p{p:g}"


def levels_of(section: Mapping[str, Any]) -> dict[str, list[str]]:
    """Level name -> the conditions scored at that level (one scoring job each: editing a level reruns only its jobs)."""
    grouped: dict[str, list[str]] = {level_name(0.0): [CLEAN]}
    for condition in conditions(section)[1:]:
        grouped.setdefault(level_name(condition_attack_level(condition)[1]), []).append(condition)
    return grouped


def metric_variants(section: Mapping[str, Any]) -> list[str]:
    """The study's rows: sentence metrics, then ``bertscore_<layer>`` for every configured layer choice."""
    return list(section["sentence_metrics"]) + [f"bertscore_{layer}" for layer in section["bertscore"]["layers"]]


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


def _read_agreement(path: str, segments: bool = False) -> pd.DataFrame:
    """The agreement table; its ``sid`` column is required only where the segments are (``segments``)."""
    keys = [column for column in AGREEMENT_KEY_COLUMNS if segments or column != "sid"]
    return read_table(path, keys, "agreement table")


def aggregation_of(bagging_unit: str) -> str:
    """The engine aggregation of a ``bagging_unit``: ``condition`` -> ``unit``, ``judgement`` -> ``domain``."""
    aggregations = {"condition": "unit", "judgement": "domain"}
    if bagging_unit not in aggregations:
        raise InputError(f"unknown bagging unit {bagging_unit!r} (known: {', '.join(aggregations)})")
    return aggregations[bagging_unit]


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    With ``bagging_unit: judgement`` a condition's tau is the mean of its +1 / -1 judgements, which
    decompose by condition; with ``condition`` each condition is one unit (its tau) and there is no
    within-condition part.
    """
    return options["bagging_unit"] == "judgement"


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """Unit keys ``domain, unit_id`` of the agreement table (``files["agreement"]``), by ``options["bagging_unit"]``."""
    table = _read_agreement(files["agreement"])
    if options["bagging_unit"] == "condition":
        conditions_found = list(dict.fromkeys(table["condition"]))
        return _in_domain_order(pd.DataFrame({"domain": conditions_found, "unit_id": conditions_found}), domains)
    return _in_domain_order(pd.DataFrame({"domain": table["condition"], "unit_id": table["unit_id"]}), domains)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The units of one metric variant (``row``): its tau per condition, or its +1 / -1 agreement with every
    judgement under every condition (``options["bagging_unit"]``)."""
    table = _read_agreement(files["agreement"])
    if row not in table.columns:
        raise InputError(f"{files['agreement']}: no column for metric {row!r}")
    frame = pd.DataFrame({"domain": table["condition"], "unit_id": table["unit_id"], "score": table[row].astype(float)})
    if options["bagging_unit"] == "condition":
        tau = frame.groupby("domain", sort=False)["score"].mean()
        frame = pd.DataFrame({"domain": tau.index, "unit_id": tau.index, "score": tau.to_numpy()})
    return _in_domain_order(frame, domains)[list(UNIT_COLUMNS)]


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a metric variant's units: the judgements of :func:`bootstrap_units` in their place,
    in both bagging units (a condition's tau is the mean of its judgements' +1 / -1 either way), by segment; a
    segment's judgements appear under every condition, so segments are drawn across conditions (crossed).
    ``files`` None (the plan, before any file exists): the judgements are not read."""
    return replicate_units_by_cluster(None if files is None else bootstrap_units(files, domains, row, score, options),
                                      crossed=True)


def bootstrap_units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The resampling units of one metric variant (``row``) for the uncertainty layer, whatever ``bagging_unit``:
    :data:`BOOTSTRAP_UNIT_COLUMNS`, one row per judgement and condition, scored +1 / -1 (engine aggregation
    ``domain``), so a condition's mean score is exactly its tau as :func:`units` gives it with
    ``bagging_unit: condition`` (judgements of every pair pooled); ``cluster`` is the segment
    (``<pair>/<SID>``), which brings all its judgements, in every condition, into a resample.

    Raises:
        InputError: as :func:`units`, or an agreement table without the ``sid`` column (one written before it
            had one: rerun ``metric_tau``).
    """
    table = _read_agreement(files["agreement"], segments=True)
    if row not in table.columns:
        raise InputError(f"{files['agreement']}: no column for metric {row!r}")
    frame = pd.DataFrame({
        "domain": table["condition"], "unit_id": table["unit_id"],
        "cluster": table["pair"].astype(str) + "/" + table["sid"].astype(str), "score": table[row].astype(float),
    })
    return _in_domain_order(frame, domains)[list(BOOTSTRAP_UNIT_COLUMNS)]


def _in_domain_order(frame: pd.DataFrame, domains: Sequence[str]) -> pd.DataFrame:
    present = set(frame["domain"])  # once: a set per domain was most of a metric row's start
    missing = [domain for domain in domains if domain not in present]
    if missing:
        raise InputError(f"agreement table has no judgements for condition(s) {', '.join(missing)}")
    order = {domain: index for index, domain in enumerate(domains)}
    frame = frame[frame["domain"].isin(order)]
    return frame.iloc[np.argsort(frame["domain"].map(order).to_numpy(), kind="stable")].reset_index(drop=True)



# ---- the branch's steps (one rule each; the scripts are thin adapters) --------------------------------

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
    from nlp_robustness.scoring.unknown_tokens import unknown_tokens_per_segment
    from nlp_robustness.sampling import rng_for

    attacks = _attacks_module()
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

    * ``agreement``: :data:`AGREEMENT_KEY_COLUMNS` (``sid``: the judgement's segment, the bootstrap's
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
