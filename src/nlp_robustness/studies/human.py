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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.engine import WHOLE_POOL, units_from_tables
from nlp_robustness.statistics.rankings import agreement_table, pairwise_table, rank_values

__all__ = ["crossed_units", "has_variance_components", "replicate_units", 
    "SEGMENT_COLUMNS",
    "domain_segments",
    "gamma_name",
    "gamma_summary",
    "ranking_tables",
    "read_segments",
    "unit_keys",
    "units",
    "units_of_system",
]

#: Columns of a domain's segment table (one row per system and rated segment).
SEGMENT_COLUMNS = ("system", "segment_id", "source", "reference", "hypothesis", "human")


def read_segments(path: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A domain's segment table (written by the ``human_segments`` rule), or some of its columns."""
    return pd.read_csv(path, sep="\t", usecols=list(columns) if columns else None,
                       dtype={"system": str, "segment_id": str}, keep_default_na=False)


def units_of_system(segments: Mapping[str, pd.DataFrame], system: str, score: str | None = None) -> pd.DataFrame:
    """The study's units of one system: its rated segments in every domain (domain order of ``segments``),
    scored by ``score`` (``human`` or a metric; None: keys only). All systems share the same units."""
    return units_from_tables(
        {domain: frame[frame["system"] == system].reset_index(drop=True) for domain, frame in segments.items()},
        "segment_id", score,
    )


def crossed_units(options: Mapping[str, Any]) -> bool:
    """Whether a unit id names the same item in every domain, so the bootstrap resamples ids across domains.

    A rated segment belongs to one domain: segments are resampled within their domain.
    """
    return False


def replicate_units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str,
                    options: Mapping[str, Any]) -> None:
    """Finer units for the bootstrap: none, the study's own units are resampled."""
    return None


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    Segment scores decompose by domain (a pool of one domain has no between part).
    """
    return True


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """The study's unit keys from the domains' segment tables (domain -> path): the first system's segments,
    which are every system's."""
    segments = {domain: read_segments(path, ["system", "segment_id"]) for domain, path in files.items()}
    first = next(iter(segments.values()))["system"].iloc[0]
    return units_of_system(segments, first)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The units of system ``row`` scored by ``score``, from the domains' segment tables (domain -> path)."""
    return units_of_system({domain: read_segments(path, ["system", "segment_id", score]) for domain, path in files.items()}, row, score)


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


def gamma_name(score: str, summary: str) -> str:
    """Name of a gamma ranking for what it holds: ``mean_gamma_<score>`` (the mean of the curve over the
    epsilon grid, ``area``) or ``gamma_at_<score>`` (gamma at the configured epsilon, ``at``)."""
    if summary not in ("area", "at"):
        raise ValueError(f"unknown gamma summary {summary!r} (area or at)")
    return f"mean_gamma_{score}" if summary == "area" else f"gamma_at_{score}"


def ranking_tables(
    summaries: Mapping[str, Mapping[str, pd.DataFrame]],
    gammas: Mapping[str, Mapping[str, pd.DataFrame]],
    metrics: Sequence[str],
    ranking: Mapping[str, Any],
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 7 and 8 analogs and the agreement table, from every score's per-system summary and gamma tables.

    ``summaries[score][system]`` and ``gammas[score][system]`` are the engine's outputs (the whole pool,
    method ``pool``, is used); ``score`` is ``human`` or a metric.

    Rankings: ``mean_<score>`` (higher is better), ``cov_<metric>`` and the gamma summary of each score
    (:func:`gamma_name`; lower is more consistent); the human references are ``mean_human`` and the human
    gamma summary.
    """
    def whole_pool(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[(frame["left_out"] == WHOLE_POOL) & (frame["method"] == "pool")]

    def gamma_value(score: str, frame: pd.DataFrame) -> float:
        return gamma_summary(whole_pool(frame), ranking["gamma"], ranking.get("gamma_at", {}).get(score))

    def gamma_of(score: str) -> str:
        return gamma_name(score, ranking["gamma"])

    systems = list(summaries["human"])
    rankings: dict[str, tuple[dict[str, float], bool]] = {}
    for score in [*metrics, "human"]:
        rankings[f"mean_{score}"] = ({s: float(whole_pool(summaries[score][s])["mean"].iloc[0]) for s in systems}, True)
        if score != "human":  # the human score's mean is negative: its COV does not rank consistency
            rankings[f"cov_{score}"] = ({s: float(whole_pool(summaries[score][s])["cov"].iloc[0]) for s in systems}, False)
        rankings[gamma_of(score)] = ({s: gamma_value(score, gammas[score][s]) for s in systems}, False)

    table = pd.DataFrame({"system": systems})
    for name, (values, higher) in rankings.items():
        ranks = rank_values(values, higher)
        table[name] = [values[s] for s in systems]
        table[f"{name}_rank"] = [ranks[s] for s in systems]

    human_gamma = gamma_of("human")
    comparisons = []
    for metric in metrics:
        comparisons += [(f"mean_{metric}", "mean_human"), (f"mean_{metric}", human_gamma),
                        (f"cov_{metric}", human_gamma), (gamma_of(metric), human_gamma)]
    comparisons.append(("mean_human", human_gamma))
    agreement = agreement_table(rankings, comparisons, n_resamples=int(ranking["permutations"]), seed=seed)

    consistency = {}
    for metric in metrics:
        consistency[f"cov_{metric}"] = rankings[f"cov_{metric}"][0]
        consistency[gamma_of(metric)] = rankings[gamma_of(metric)][0]
    consistency[human_gamma] = rankings[human_gamma][0]
    return table, pairwise_table(consistency, human_gamma), agreement
