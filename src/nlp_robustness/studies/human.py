"""Human judgements (paper Section 4.2, Tables 7 and 8, Figure 5): robustness on human scores, ranking agreement.

The paper's human data is private; the workflow uses Google's MQM judgements of WMT'21 English->German
(Freitag et al. 2021) on two domains, news (newstest2021) and TED talks, for the same systems.

Sign convention (stated in every output): the *human score* of a segment is the published MQM score,
``mqm_avg_score``, the negated error penalty averaged over raters: **0 = no error, higher = better**,
e.g. -5 for one major error. So mean human score, like mean BLEU, ranks best first. Its COV = sigma/mu
is negative (mu < 0); consistency is therefore ranked by gamma (and Var), which do not depend on the
sign, and never by the human COV.

Choices (documented in the README, tested in tests/unit/test_human.py):

* **Rated segments only.** MQM rated part of each test set (news: 527 of 1002 segments; TED: 529 of
  606); ``None`` marks the others. A domain's segments are those every configured system has a score for.
* **TED texts.** TED outputs, sources and the reference (MQM's system ``ref``) exist only inside the
  per-error MQM file: a segment's source and target text are taken from its rows with the ``<v>...</v>`` error
  marks removed; rows of one system and segment must agree on the text.
* **Rankings by gamma.** A gamma curve is summarised by its mean over the epsilon grid of the score
  (``area``: the normalised area under the curve, threshold-free) or by gamma at one epsilon per score
  (``at``). Lower = more robust = rank 1. Ranks start at 1; tied systems share the best of their ranks.
* **Agreement** of a ranking with a human ranking: position agreement (share of systems at the same
  rank; the paper's "75 % agrees"), pairwise agreement (share of system pairs ordered alike; the paper's
  Table 8) and Kendall's tau-b of the underlying values, with an exact permutation p-value when the
  systems are few (scipy.stats.permutation_test; Monte Carlo, seeded, beyond ``n_resamples``).
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from nlp_robustness.statistics.bagging import draw_blocks, rng_for
from nlp_robustness.errors import InputError
from nlp_robustness.fileio import read_text_lines
from nlp_robustness.statistics.engine import blocks_frame, evaluate_pools, pool_keys

__all__ = [
    "SEGMENT_COLUMNS",
    "agreement_table",
    "domain_blocks",
    "error_file_texts",
    "ranking_tables",
    "system_robustness",
    "domain_segments",
    "gamma_summary",
    "kendall_tau",
    "pairwise_table",
    "rank_values",
    "read_mqm_error_texts",
    "read_mqm_segment_scores",
]

#: Columns of a domain's segment table (one row per system and rated segment).
SEGMENT_COLUMNS = ("system", "segment_id", "source", "reference", "hypothesis", "human")

_ERROR_MARK = re.compile(r"</?v>")


def read_mqm_segment_scores(path: str) -> pd.DataFrame:
    """Read an MQM ``*.avg_seg_scores.tsv``: ``system mqm_avg_score seg_id`` separated by tabs or spaces.

    Returns columns ``system, segment_id, mqm`` (``mqm`` NaN where the file says ``None``: not rated).

    Raises:
        InputError: The header differs, a line has not three fields, a score is not a number or
            ``None``, or a (system, segment) is given twice (each names the file and line).
    """
    lines = read_text_lines(path)
    if not lines or lines[0].split() != ["system", "mqm_avg_score", "seg_id"]:
        raise InputError(f"{path}: line 1: expected the header 'system mqm_avg_score seg_id'")
    rows, seen = [], set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 3:
            raise InputError(f"{path}: line {number}: expected 3 fields (system, score, segment), found {len(fields)}")
        system, score, segment = fields
        if score == "None":
            value = math.nan
        else:
            try:
                value = float(score)
            except ValueError:
                raise InputError(f"{path}: line {number}: score {score!r} is neither a number nor None") from None
        if (system, segment) in seen:
            raise InputError(f"{path}: line {number}: system {system} segment {segment} is scored twice")
        seen.add((system, segment))
        rows.append((system, segment, value))
    return pd.DataFrame(rows, columns=["system", "segment_id", "mqm"])


def read_mqm_error_texts(path: str) -> pd.DataFrame:
    """Source and target text of every (system, segment) of a per-error MQM TSV (``<v>`` marks removed).

    Returns columns ``system, segment_id, source, target`` in order of first appearance.

    Raises:
        InputError: A needed column is missing, or two rows of one system and segment disagree on
            the source or the unmarked target text (names the file and line).
    """
    texts: dict[tuple[str, str], tuple[str, str, int]] = {}
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            missing = [name for name in ("system", "seg_id", "source", "target") if name not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{path}: line 1: missing column(s) {', '.join(missing)}")
            for number, row in enumerate(reader, start=2):
                key = (row["system"], row["seg_id"])
                text = (_ERROR_MARK.sub("", row["source"] or ""), _ERROR_MARK.sub("", row["target"] or ""))
                if key in texts and texts[key][:2] != text:
                    raise InputError(
                        f"{path}: line {number}: system {key[0]} segment {key[1]} has another text than on line {texts[key][2]}"
                    )
                texts.setdefault(key, (*text, number))
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read: {error}") from None
    return pd.DataFrame(
        [(system, segment, source, target) for (system, segment), (source, target, _) in texts.items()],
        columns=["system", "segment_id", "source", "target"],
    )


def domain_segments(
    scores: pd.DataFrame,
    systems: Mapping[str, str],
    source: Sequence[str] | Mapping[str, str],
    reference: Sequence[str] | Mapping[str, str],
    outputs: Mapping[str, Sequence[str] | Mapping[str, str]],
    domain: str,
) -> pd.DataFrame:
    """The segment table of one domain: every configured system on the segments all of them were rated on.

    Args:
        scores: :func:`read_mqm_segment_scores` of the domain.
        systems: Our name of each system -> its name in the MQM files (the explicit mapping).
        source, reference: Texts by segment id: a list (line n = segment n) or a mapping.
        outputs: Our system name -> its output texts, in the same form.
        domain: For messages.

    Returns:
        Columns :data:`SEGMENT_COLUMNS`, systems in config order, segments in numeric order.

    Raises:
        InputError: A system has no MQM scores, a text is missing for a rated segment, or no segment
            is rated for every system.
    """
    def text_of(texts: Sequence[str] | Mapping[str, str], segment: str, what: str) -> str:
        if isinstance(texts, Mapping):
            if segment not in texts:
                raise InputError(f"human domain {domain}: {what} has no text for rated segment {segment}")
            return texts[segment]
        index = int(segment) - 1
        if not 0 <= index < len(texts):
            raise InputError(f"human domain {domain}: {what} has {len(texts)} lines; rated segment {segment} is beyond them")
        return texts[index]

    known = set(scores["system"])
    rated: set[str] | None = None
    for name, mqm_name in systems.items():
        if mqm_name not in known:
            raise InputError(
                f"human domain {domain}: system {name} is called {mqm_name!r} in the MQM scores, which have no such "
                f"system (known: {', '.join(sorted(known))})"
            )
        own = scores[(scores["system"] == mqm_name) & scores["mqm"].notna()]["segment_id"]
        rated = set(own) if rated is None else rated & set(own)
    if not rated:
        raise InputError(f"human domain {domain}: no segment is rated for every system")
    segments = sorted(rated, key=lambda value: (len(value), value))  # numeric order of digit strings
    lookup = scores.set_index(["system", "segment_id"])["mqm"]
    frames = []
    for name, mqm_name in systems.items():
        frames.append(pd.DataFrame({
            "system": name,
            "segment_id": segments,
            "source": [text_of(source, segment, "the source") for segment in segments],
            "reference": [text_of(reference, segment, "the reference") for segment in segments],
            "hypothesis": [text_of(outputs[name], segment, f"the output of {name}") for segment in segments],
            "human": [float(lookup[(mqm_name, segment)]) for segment in segments],
        }))
    return pd.concat(frames, ignore_index=True)[list(SEGMENT_COLUMNS)]


def gamma_summary(curve: pd.DataFrame, summary: str, epsilon: float | None = None) -> float:
    """One number of a gamma curve (columns ``epsilon, gamma``): its mean over the grid (``area``) or
    gamma at ``epsilon`` (``at``; the grid point nearest to it)."""
    if summary == "area":
        return float(curve["gamma"].mean())
    if summary == "at":
        if epsilon is None:
            raise ValueError("gamma summary 'at' needs an epsilon")
        position = int(np.argmin(np.abs(curve["epsilon"].to_numpy() - epsilon)))
        return float(curve["gamma"].iloc[position])
    raise ValueError(f"unknown gamma summary {summary!r} (area or at)")


def rank_values(values: Mapping[str, float], higher_is_better: bool) -> dict[str, int]:
    """Rank 1 = best; ties share the smaller rank (``scipy.stats.rankdata(method="min")``)."""
    names = list(values)
    keyed = np.array([values[name] for name in names], dtype=float)
    ranks = stats.rankdata(-keyed if higher_is_better else keyed, method="min")
    return {name: int(rank) for name, rank in zip(names, ranks)}


def kendall_tau(first: Sequence[float], second: Sequence[float], n_resamples: int, seed: int) -> tuple[float, float]:
    """Kendall's tau-b of two value lists (scipy.stats.kendalltau) and its two-sided permutation p-value.

    The p-value permutes the pairing of the values (scipy.stats.permutation_test, ``pairings``): exact
    when ``n!`` <= ``n_resamples``, else Monte Carlo with a generator seeded by ``seed``. Permuting one
    list keeps the ties within each list, hence tau-b's denominator, so the statistic is evaluated
    vectorised as the concordance sum over that fixed denominator.
    """
    x, y = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    tau = float(stats.kendalltau(x, y).statistic)
    if len(x) < 3 or math.isnan(tau):
        return tau, math.nan
    left, right = np.triu_indices(len(x), k=1)
    sign_y = np.sign(y[left] - y[right])
    sign_x = np.sign(x[left] - x[right])
    denominator = math.sqrt(np.count_nonzero(sign_x) * np.count_nonzero(sign_y))

    def statistic(values: np.ndarray, axis: int = -1) -> np.ndarray:
        values = np.moveaxis(values, axis, -1)
        return (np.sign(values[..., left] - values[..., right]) @ sign_y) / denominator

    result = stats.permutation_test(
        (x,), statistic, permutation_type="pairings", n_resamples=n_resamples, alternative="two-sided",
        vectorized=True, rng=np.random.default_rng(seed),
    )
    return tau, float(result.pvalue)


def _ordered_pairs_agree(first: Mapping[str, float], second: Mapping[str, float], first_higher: bool, second_higher: bool) -> list[bool]:
    """For every system pair (config order), whether both value sets say the same system is better."""
    agreements = []
    for a, b in itertools.combinations(list(first), 2):
        left = np.sign(first[a] - first[b]) * (1 if first_higher else -1)
        right = np.sign(second[a] - second[b]) * (1 if second_higher else -1)
        agreements.append(bool(left == right))
    return agreements


def agreement_table(
    rankings: Mapping[str, tuple[Mapping[str, float], bool]],
    comparisons: Sequence[tuple[str, str]],
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Agreement of pairs of rankings: position and pairwise agreement (%), Kendall tau-b and its p-value.

    ``rankings`` maps a ranking's name to (system -> value, higher_is_better); ``comparisons`` lists
    (ranking, reference ranking) pairs.
    """
    rows = []
    for name, reference in comparisons:
        values, higher = rankings[name]
        reference_values, reference_higher = rankings[reference]
        systems = list(values)
        ranks, reference_ranks = rank_values(values, higher), rank_values(reference_values, reference_higher)
        same_position = np.mean([ranks[system] == reference_ranks[system] for system in systems])
        pairs = _ordered_pairs_agree(values, reference_values, higher, reference_higher)
        oriented = [values[system] * (1 if higher else -1) for system in systems]
        reference_oriented = [reference_values[system] * (1 if reference_higher else -1) for system in systems]
        tau, p_value = kendall_tau(oriented, reference_oriented, n_resamples, seed)
        rows.append({
            "ranking": name, "reference": reference, "systems": len(systems),
            "position_agreement": 100.0 * float(same_position), "pairwise_agreement": 100.0 * float(np.mean(pairs)),
            "kendall_tau": tau, "p_value": p_value,
        })
    return pd.DataFrame(rows)


def pairwise_table(
    consistency: Mapping[str, Mapping[str, float]], reference: str
) -> pd.DataFrame:
    """Table 8 analog: for every system pair, which system is more consistent by each statistic, and whether
    each agrees with ``reference``. ``consistency`` maps a statistic's name to system -> value (lower = more
    consistent); equal values say ``tie``."""
    systems = list(consistency[reference])
    rows = []
    for a, b in itertools.combinations(systems, 2):
        row: dict[str, Any] = {"system_a": a, "system_b": b}
        verdicts = {}
        for name, values in consistency.items():
            verdicts[name] = "tie" if values[a] == values[b] else (a if values[a] < values[b] else b)
            row[f"more_consistent_by_{name}"] = verdicts[name]
        for name in consistency:
            if name != reference:
                row[f"{name}_agrees"] = verdicts[name] == verdicts[reference]
        rows.append(row)
    return pd.DataFrame(rows)


def error_file_texts(
    texts: pd.DataFrame, systems: Mapping[str, str], reference_system: str, source: str
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, str]]]:
    """Source, reference and outputs by segment id from :func:`read_mqm_error_texts` of a per-error file.

    The reference is the target text of ``reference_system``; every system's output is its target text.

    Raises:
        InputError: The reference system or a mapped system is not in the file (``source`` names it).
    """
    by_system = {name: group.set_index("segment_id") for name, group in texts.groupby("system", sort=False)}
    for role, name in [("reference_system", reference_system), *((f"system {table}", mqm) for table, mqm in systems.items())]:
        if name not in by_system:
            raise InputError(f"{source}: no rows of {role} {name!r} (systems: {', '.join(by_system)})")
    reference = by_system[reference_system]
    return (
        reference["source"].to_dict(),
        reference["target"].to_dict(),
        {table: by_system[mqm]["target"].to_dict() for table, mqm in systems.items()},
    )


def domain_blocks(
    segment_ids: Mapping[str, Sequence[str]], domains: Sequence[str], leave_out: Sequence[str],
    *, seed: int, n_blocks: int, fraction: float,
) -> dict[tuple[str, str], pd.DataFrame]:
    """Blocks of Algorithms 5 and 6 over every leave-one-out pool of the domains' segments.

    Seeded by (seed, ``"human"``, method, left-out domain) only: every score and every system is
    measured on the same blocks.
    """
    blocks = {}
    for left_out in leave_out:
        members = [domain for domain in domains if domain != left_out]
        keys = pool_keys(segment_ids, members)
        for method in ("bagging", "design_bagging"):
            indices = draw_blocks(method, len(keys), fraction, n_blocks, rng_for(seed, "human", method, left_out))
            blocks[(method, left_out)] = blocks_frame(indices, keys)
    return blocks


def system_robustness(
    segments: Mapping[str, pd.DataFrame], system: str, score: str, domains: Sequence[str], leave_out: Sequence[str],
    blocks: Mapping[tuple[str, str], pd.DataFrame], epsilons: np.ndarray,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Metrics I-III of one system's ``score`` column over the domains (:func:`.robustness.evaluate_pools`)."""
    scores = {
        domain: segments[domain].loc[segments[domain]["system"] == system, ["segment_id", score]].reset_index(drop=True)
        for domain in domains
    }
    return evaluate_pools(scores, domains, leave_out, blocks, epsilons, score)


def ranking_tables(
    summaries: Mapping[str, Mapping[str, pd.DataFrame]],
    gammas: Mapping[str, Mapping[str, pd.DataFrame]],
    metrics: Sequence[str],
    ranking: Mapping[str, Any],
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 7 and 8 analogs and the agreement table, from every score's per-system summary and gamma tables.

    ``summaries[score][system]`` and ``gammas[score][system]`` are the robustness outputs (whole pool,
    ``left_out == "none"``, method ``pool`` is used); ``score`` is ``human`` or a metric.

    Rankings: ``mean_<score>`` (higher is better), ``cov_<metric>`` and ``gamma_<score>`` (lower is more
    consistent); the human references are ``mean_human`` and ``gamma_human``.
    """
    def whole_pool(frame: pd.DataFrame) -> pd.Series:
        return frame[(frame["left_out"] == "none") & (frame["method"] == "pool")].iloc[0]

    def gamma_value(score: str, frame: pd.DataFrame) -> float:
        curve = frame[(frame["left_out"] == "none") & (frame["method"] == "pool")]
        return gamma_summary(curve, ranking["gamma"], ranking.get("gamma_at", {}).get(score))

    systems = list(summaries["human"])
    rankings: dict[str, tuple[dict[str, float], bool]] = {}
    for score in [*metrics, "human"]:
        rankings[f"mean_{score}"] = ({s: float(whole_pool(summaries[score][s])["mean"]) for s in systems}, True)
        if score != "human":  # the human score's mean is negative: its COV does not rank consistency
            rankings[f"cov_{score}"] = ({s: float(whole_pool(summaries[score][s])["cov"]) for s in systems}, False)
        rankings[f"gamma_{score}"] = ({s: gamma_value(score, gammas[score][s]) for s in systems}, False)

    table = pd.DataFrame({"system": systems})
    for name, (values, higher) in rankings.items():
        ranks = rank_values(values, higher)
        table[f"{name}"] = [values[s] for s in systems]
        table[f"{name}_rank"] = [ranks[s] for s in systems]

    comparisons = []
    for metric in metrics:
        comparisons += [(f"mean_{metric}", "mean_human"), (f"mean_{metric}", "gamma_human"),
                        (f"cov_{metric}", "gamma_human"), (f"gamma_{metric}", "gamma_human")]
    comparisons.append(("mean_human", "gamma_human"))
    agreement = agreement_table(rankings, comparisons, n_resamples=int(ranking["permutations"]), seed=seed)

    consistency = {}
    for metric in metrics:
        consistency[f"cov_{metric}"] = rankings[f"cov_{metric}"][0]
        consistency[f"gamma_{metric}"] = rankings[f"gamma_{metric}"][0]
    consistency["gamma_human"] = rankings["gamma_human"][0]
    return table, pairwise_table(consistency, "gamma_human"), agreement
