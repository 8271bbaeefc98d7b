"""Human judgements (paper Section 4.2, Tables 7 and 8, Figure 5): robustness on human scores, ranking agreement.

The paper's human data is private. A *human study* (config ``human_studies``) is one of two formats of public
judgements: ``mqm``, Google's MQM of WMT'21 English->German (Freitag et al. 2021) on news and TED talks, and ``wmt-da``,
the WMT organisers' direct assessment (WMT22 de-en and ja-en in four domains: rater-standardised z or raw 0-100;
:mod:`nlp_robustness.data.wmt_da` reads its files). Every study becomes one engine study ``human/<name>`` whose rows
are its systems under the human score and each metric.

Sign convention (stated in every output): the *human score* of a segment is the published MQM score,
``mqm_avg_score``, the negated error penalty averaged over raters: **0 = no error, higher = better**,
e.g. -5 for one major error. So mean human score, like mean BLEU, ranks best first. Its COV = sigma/mu
is negative (mu < 0); consistency is therefore ranked by gamma (and Var), which do not depend on the
sign, and never by the human COV.

Choices (documented in docs/human-judgements.md, tested in tests/unit/test_human.py and test_human_da.py):

* **DA: each system keeps its own rated segments** (the segments rated for every ja-en system are only 136 of
  2,008), with their documents; the engine resamples documents within domains from one universe of documents
  (:func:`resampling_design`), so systems rated on different segments of the same documents stay paired.
  Placeholder rows (raw 0 and z 0 exactly: unrated documents) are dropped when ``drop_placeholders``.
* **People's consistency** is gamma on the human score (paper Figure 5, Table 7); the between-domain SD of the
  human score is reported beside it. Table 8's pairs agree or disagree only where both paired verdicts (Holm)
  separate them; otherwise they are undetermined.

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

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.comparisons import verdict_matrix
from nlp_robustness.statistics.pools import WHOLE_POOL, units_from_tables
from nlp_robustness.statistics.rankings import agreement_table, rank_values
from nlp_robustness.statistics.study_design import StudyDesign, documents_in_domains
from nlp_robustness.studies.profile_uncertainty import rank_interval, replicate_ranks, tau_interval

__all__ = ["has_variance_components", "resampling_design", 
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

#: Columns of a domain's segment table (one row per system and rated segment); ``document`` is "" for MQM.
SEGMENT_COLUMNS = ("system", "segment_id", "document", "source", "reference", "hypothesis", "human")


def read_segments(path: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A domain's segment table (written by the ``human_*_segments`` rules), or some of its columns."""
    return pd.read_csv(path, sep="\t", usecols=list(columns) if columns else None,
                       dtype={"system": str, "segment_id": str, "document": str}, keep_default_na=False)


def units_of_system(segments: Mapping[str, pd.DataFrame], system: str, score: str | None = None) -> pd.DataFrame:
    """The study's units of one system: its rated segments in every domain (domain order of ``segments``),
    scored by ``score`` (``human`` or a metric; None: keys only), with their documents."""
    return units_from_tables(
        {domain: frame[frame["system"] == system].reset_index(drop=True) for domain, frame in segments.items()},
        "segment_id", score, document_column="document",
    )


def has_variance_components(options: Mapping[str, Any]) -> bool:
    """Whether the engine decomposes this study's unit scores into between- and within-domain variance.

    Segment scores decompose by domain (a pool of one domain has no between part).
    """
    return True


def unit_keys(files: Mapping[str, str], domains: Sequence[str], options: Mapping[str, Any]) -> pd.DataFrame:
    """The unit keys the bagging blocks are drawn over: the segments *every* system of the study was rated on
    (all of a system's segments under MQM, where the tables hold only those), so every row is measured on the
    same blocks (a DA system is rated on its own ~85 % of the segments; the blocks use their intersection)."""
    frames = {}
    for domain, path in files.items():
        table = read_segments(path, ["system", "segment_id", "document"])
        systems = table["system"].nunique()
        counts = table.groupby("segment_id", sort=False)["system"].transform("nunique")
        shared = table[counts == systems].drop_duplicates("segment_id")
        if shared.empty:
            raise InputError(f"{path}: no segment of domain {domain} is rated for every system, so no bagging block "
                             "can be drawn that every system is measured on")
        frames[domain] = shared.reset_index(drop=True)
    return units_from_tables(frames, "segment_id")


def resampling_design(files: Mapping[str, str] | None, domains: Sequence[str], row: str, score: str,
                      options: Mapping[str, Any]) -> StudyDesign:
    """How the bootstrap draws a system's rated segments: a segment belongs to one domain, so whole documents are
    drawn within their domain, from the universe of the documents any system was rated on (columns ``domain,
    document``), so systems rated on different segments of the same documents are resampled alike (paired). MQM's
    segments have no documents: they are drawn one by one, with no universe. ``files`` None (the plan, before any
    file exists): the segment tables are not read."""
    frames = []
    for domain, path in (files or {}).items():
        documents = read_segments(path, ["document"])["document"]
        if (documents == "").all():
            return documents_in_domains()
        frames.append(pd.DataFrame({"domain": domain, "document": sorted(set(documents))}))
    return documents_in_domains(pd.concat(frames, ignore_index=True) if frames else None)


def units(files: Mapping[str, str], domains: Sequence[str], row: str, score: str, options: Mapping[str, Any]) -> pd.DataFrame:
    """The units of system ``row`` scored by ``score``, from the domains' segment tables (domain -> path)."""
    return units_of_system({domain: read_segments(path, ["system", "segment_id", "document", score])
                            for domain, path in files.items()}, row, score)


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
            "document": "",
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


#: Table 8's pair outcomes: both sides distinguishable and alike, both distinguishable and opposite, otherwise.
PAIR_OUTCOMES = ("agree", "disagree", "undetermined")


@dataclass(frozen=True)
class Measure:
    """One ranking of Table 7: ``score`` (``human`` or a metric), ``statistic`` (a summary column), its name and
    whether higher values rank first."""

    name: str
    score: str
    statistic: str
    higher_is_better: bool


def measures(metrics: Sequence[str], ranking: Mapping[str, Any], directions: Mapping[str, bool] | None = None) -> list[Measure]:
    """Table 7's rankings: mean, COV (metrics only: a human mean near or below 0 makes COV meaningless), gamma
    (:func:`gamma_name`) and between-domain SD of every score; the human ones last. ``directions``: whether a higher
    score is better, by score (default: yes; a file metric says, e.g. an error count), which orders the means."""
    listed = []
    for score in [*metrics, "human"]:
        listed.append(Measure(f"mean_{score}", score, "mean", (directions or {}).get(score, True)))
        if score != "human":
            listed.append(Measure(f"cov_{score}", score, "cov", False))
        listed.append(Measure(gamma_name(score, ranking["gamma"]), score, "gamma_area", False))
        listed.append(Measure(f"between_sd_{score}", score, "between_sd", False))
    return listed


def _whole_pool(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[(frame["left_out"].astype(str) == WHOLE_POOL) & (frame["method"] == "pool")]


def measure_values(measure: Measure, summaries: Mapping[str, Mapping[str, pd.DataFrame]],
                   gammas: Mapping[str, Mapping[str, pd.DataFrame]], ranking: Mapping[str, Any]) -> dict[str, float]:
    """Every system's whole-pool value of one measure (gamma "at": read off its gamma curve)."""
    systems = list(summaries[measure.score])
    if measure.statistic == "gamma_area" and ranking["gamma"] == "at":
        return {s: gamma_summary(_whole_pool(gammas[measure.score][s]), "at", ranking["gamma_at"][measure.score]) for s in systems}
    return {s: float(_whole_pool(summaries[measure.score][s])[measure.statistic].iloc[0]) for s in systems}


def measure_replicates(measure: Measure, replicates: Mapping[str, Mapping[str, Mapping[str, NDArray[np.float64]]]],
                       systems: Sequence[str], ranking: Mapping[str, Any]) -> NDArray[np.float64] | None:
    """The whole-pool bootstrap replicates of one measure, (B, systems), paired across systems and scores (the
    engine draws the same documents for every row of a study); None for gamma "at" (no replicates of it)."""
    if measure.statistic == "gamma_area" and ranking["gamma"] == "at":
        return None
    return np.column_stack([replicates[measure.score][s][WHOLE_POOL][measure.statistic] for s in systems])


def ranking_tables(
    summaries: Mapping[str, Mapping[str, pd.DataFrame]],
    gammas: Mapping[str, Mapping[str, pd.DataFrame]],
    replicates: Mapping[str, Mapping[str, Mapping[str, Mapping[str, NDArray[np.float64]]]]],
    comparisons: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    ranking: Mapping[str, Any],
    seed: int,
    confidence: float,
    directions: Mapping[str, bool] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tables 7 and 8 and the agreement table of one human study.

    ``summaries[score][system]``, ``gammas[score][system]``: the engine's whole-pool tables; ``replicates[score][system]``:
    its replicates (left-out label -> statistic -> array); ``comparisons[score]``: the paired comparisons of the
    score's table (:mod:`.statistics.comparisons`, Holm over the pairs).

    * **Table 7** (``rankings``): every system's value, rank (1 = best or most consistent; ties share the better
      rank) and ``confidence`` rank interval (percentiles of its rank in the paired replicates) by each measure.
    * **Table 8** (``pairwise``): for every pair, the more consistent system by COV and gamma of each metric and by
      gamma of the human score (the paper's people), each as a point order and as the paired verdict (Holm); a
      metric side *agrees* or *disagrees* with people only where both verdicts separate the pair, else the pair
      is *undetermined* for it.
    * **Agreement** (``agreement``): each automatic ranking against a human one: position and pairwise agreement,
      Kendall tau-b with its permutation p-value and a ``confidence`` bootstrap interval (tau in every paired
      replicate: documents resampled within domains, the same resamples for every system and score).

    ``directions``: score -> whether higher is better (:func:`measures`; default: every score).
    """
    systems = list(summaries["human"])
    listed = measures(metrics, ranking, directions)
    values = {m.name: measure_values(m, summaries, gammas, ranking) for m in listed}
    draws = {m.name: measure_replicates(m, replicates, systems, ranking) for m in listed}

    table = pd.DataFrame({"system": systems})
    for m in listed:
        ranks = rank_values(values[m.name], m.higher_is_better)
        table[m.name] = [values[m.name][s] for s in systems]
        table[f"{m.name}_rank"] = [ranks[s] for s in systems]
        if draws[m.name] is None:
            table[f"{m.name}_rank_lo"] = table[f"{m.name}_rank_hi"] = np.nan
            continue
        table[f"{m.name}_rank_lo"], table[f"{m.name}_rank_hi"] = rank_interval(
            replicate_ranks(draws[m.name], m.higher_is_better), confidence)

    human_gamma = gamma_name("human", ranking["gamma"])
    pairs = []
    sides = [(f"cov_{metric}", metric, "cov") for metric in metrics] + [
        (gamma_name(metric, ranking["gamma"]), metric, "gamma_area") for metric in metrics] + [(human_gamma, "human", "gamma_area")]
    verdicts = {name: verdict_matrix(_whole_pool_comparisons(comparisons[score]), statistic, systems)
                for name, score, statistic in sides}
    for a, b in itertools.combinations(systems, 2):
        row: dict[str, Any] = {"system_a": a, "system_b": b}
        said = {}
        for name, score, statistic in sides:
            point = values[name]
            row[f"{name}_more_consistent"] = "tie" if point[a] == point[b] else (a if point[a] < point[b] else b)
            verdict_text = verdicts[name].at[a, b]  # "" where the pair was not compared
            said[name] = a if verdict_text == "more consistent" else b if verdict_text == "less consistent" else None
            row[f"{name}_verdict"] = said[name] or "not distinguishable"
        for name, _score, _statistic in sides[:-1]:
            row[f"{name}_point_agrees"] = row[f"{name}_more_consistent"] == row[f"{human_gamma}_more_consistent"]
            if said[name] is None or said[human_gamma] is None:
                row[f"{name}_vs_people"] = PAIR_OUTCOMES[2]
            else:
                row[f"{name}_vs_people"] = PAIR_OUTCOMES[0] if said[name] == said[human_gamma] else PAIR_OUTCOMES[1]
        pairs.append(row)
    pairwise = pd.DataFrame(pairs)

    comparisons_list = []
    for metric in metrics:
        comparisons_list += [(f"cov_{metric}", human_gamma), (gamma_name(metric, ranking["gamma"]), human_gamma),
                             (f"between_sd_{metric}", "between_sd_human"), (f"mean_{metric}", "mean_human")]
    comparisons_list.append(("mean_human", human_gamma))
    rankings_by_name = {m.name: (values[m.name], m.higher_is_better) for m in listed}
    agreement = agreement_table(rankings_by_name, comparisons_list, n_resamples=int(ranking["permutations"]), seed=seed)
    orientation = {m.name: (1.0 if m.higher_is_better else -1.0) for m in listed}
    intervals = [(np.nan, np.nan) if draws[name] is None or draws[reference] is None
                 else tau_interval(orientation[name] * draws[name], orientation[reference] * draws[reference], confidence)
                 for name, reference in comparisons_list]
    agreement["tau_lo"], agreement["tau_hi"] = [low for low, _ in intervals], [high for _, high in intervals]
    if len(pairwise):
        outcome_columns = [column for column in pairwise.columns if column.endswith("_vs_people")]
        counts = {column[: -len("_vs_people")]: pairwise[column].value_counts() for column in outcome_columns}
        for outcome in PAIR_OUTCOMES:
            agreement[f"pairs_{outcome}"] = [int(counts[name].get(outcome, 0)) if name in counts and reference == human_gamma else np.nan
                                             for name, reference in comparisons_list]
    return table, pairwise, agreement


def _whole_pool_comparisons(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The paired comparisons of the whole pool (a comparisons table holds every pool's)."""
    return comparisons[comparisons["left_out"].astype(str) == WHOLE_POOL]


# --- WMT direct assessment (DA) studies -----------------------------------------------------------------------

#: Columns of a DA study's every-segment table of a domain (all lines, scored by the metrics only).
ALL_SEGMENT_COLUMNS = ("system", "segment_id", "document", "reference", "hypothesis")


def check_da_rows(scores: pd.DataFrame, rows: Sequence[str], ignored: Sequence[str], score_file: str, where: str) -> None:
    """Every system of the DA file is a row of the study or ignored on purpose, and every row has DA rows.

    Raises:
        InputError: A DA system has no output file (the score file's line is named), or a configured row has no
            DA scores (the DA systems are listed).
    """
    known = set(rows) | set(ignored)
    stray = scores[~scores["name"].isin(known)]
    if not stray.empty:
        first = stray.iloc[0]
        raise InputError(
            f"{score_file}: line {int(first['line'])}: system {first['system']!r} ({where}) has no output file: give it "
            f"in {where}.systems (or rated_references), or list {first['name']!r} in {where}.ignore_systems")
    rated = set(scores["name"])
    missing = [row for row in rows if row not in rated]
    if missing:
        raise InputError(f"{where}.systems: {', '.join(missing)} has no rows in {score_file} "
                         f"(its systems, without the .k suffix: {', '.join(sorted(rated))})")


def da_domain_tables(
    scores: pd.DataFrame,
    domains: pd.DataFrame,
    outputs: Mapping[str, Sequence[str]],
    reference: Sequence[str],
    source: Sequence[str],
    domain: str,
    score: str,
    drop_placeholders: bool,
    where: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One domain of a DA study: its rated-segment table (:data:`SEGMENT_COLUMNS`: every row's own rated
    segments, placeholders dropped if asked) and its every-segment table (:data:`ALL_SEGMENT_COLUMNS`).

    ``scores``: :func:`.data.wmt_da.rated_segments` (DA rows with ``line``, ``domain``, ``document``); ``domains``:
    :func:`.data.wmt_da.read_line_domains`; ``outputs``: row name -> its output lines (one per source line);
    ``score``: ``z`` or ``raw``. A segment id is the source line number (1-based), so rows and tables agree.

    Raises:
        InputError: An output has another number of lines than the source, or ``domain`` is not a domain of
            the domain file (its domains are listed).
    """
    known = sorted(set(domains["domain"]))
    if domain not in known:
        raise InputError(f"{where}.domains: {domain!r} is not a domain of the domain file (its domains: {', '.join(known)})")
    for row, lines in outputs.items():
        if len(lines) != len(source):
            raise InputError(f"{where}: the output of {row} has {len(lines)} lines, the source {len(source)}")
    lines = domains[domains["domain"] == domain].sort_values("line")
    every = []
    for row, hypotheses in outputs.items():
        every.append(pd.DataFrame({
            "system": row, "segment_id": (lines["line"] + 1).astype(str).to_numpy(), "document": lines["document"].to_numpy(),
            "reference": [reference[line] for line in lines["line"]], "hypothesis": [hypotheses[line] for line in lines["line"]],
        }))
    all_segments = pd.concat(every, ignore_index=True)[list(ALL_SEGMENT_COLUMNS)]
    selected = scores[(scores["domain"] == domain) & scores["name"].isin(list(outputs))]
    if drop_placeholders:
        selected = selected[~selected["placeholder"]]
    rated = []
    for row, hypotheses in outputs.items():
        own = selected[selected["name"] == row].sort_values("line")
        rated.append(pd.DataFrame({
            "system": row, "segment_id": (own["line"] + 1).astype(str).to_numpy(), "document": own["document"].to_numpy(),
            "source": [source[line] for line in own["line"]], "reference": [reference[line] for line in own["line"]],
            "hypothesis": [hypotheses[line] for line in own["line"]], "human": own[score].to_numpy(dtype=np.float64),
        }))
    return pd.concat(rated, ignore_index=True)[list(SEGMENT_COLUMNS)], all_segments


def da_domain_means(scores: pd.DataFrame, segments: Mapping[str, pd.DataFrame], rows: Sequence[str], metrics: Sequence[str],
                    system_scores: pd.DataFrame | None) -> pd.DataFrame:
    """Per row of a DA study: the organisers' system z and raw (plain means over *all* its DA rows, placeholders
    included, as the organisers compute them), the published values beside them when given, and per domain the
    rated segments, mean human score and mean metric scores on them (placeholders dropped as in the tables).

    ``segments``: domain -> rated-segment table with the metric columns.
    """
    table = []
    for row in rows:
        own = scores[scores["name"] == row]
        entry: dict[str, Any] = {"system": row, "da_rows": len(own), "ratings": int(own["ratings"].sum()),
                                 "z_all_rows": float(own["z"].mean()), "raw_all_rows": float(own["raw"].mean()),
                                 "placeholder_rows": int(own["placeholder"].sum())}
        if system_scores is not None:
            published = system_scores[system_scores["name"] == row]
            entry["z_published"] = float(published["z"].iloc[0]) if len(published) else np.nan
            entry["raw_published"] = float(published["raw"].iloc[0]) if len(published) else np.nan
        for domain, frame in segments.items():
            mine = frame[frame["system"] == row]
            entry[f"{domain}_segments"] = len(mine)
            entry[f"{domain}_human"] = float(mine["human"].mean())
            for metric in metrics:
                entry[f"{domain}_{metric}"] = float(mine[metric].mean())
        table.append(entry)
    return pd.DataFrame(table)


def check_da_study(spec: Mapping[str, Any], where: str, path_of: Mapping[str, str | None]) -> None:
    """Check a DA study's files against each other before any job: the score file's columns, the domain file's
    length and domains, every DA system with an output, every segment id inside the test set, every output as long
    as the source. ``path_of``: each file value -> a readable path, or None where it is read only later (a download
    not fetched yet; the ``human_da_segments`` job then makes the same checks).

    Raises:
        InputError: As :func:`check_da_rows`, :func:`.data.wmt_da.rated_segments` and the readers name them.
    """
    from nlp_robustness.data.wmt_da import rated_segments, read_da_segment_scores, read_line_domains
    from nlp_robustness.fileio import read_text_lines

    paths = {key: path_of.get(spec[key]) for key in ("scores", "domain_file", "source")}
    if paths["scores"] is not None:
        scores = read_da_segment_scores(paths["scores"])
        check_da_rows(scores, [*spec["systems"], *spec.get("rated_references", {})], spec.get("ignore_systems", []),
                      paths["scores"], where)
    if paths["source"] is None:
        return
    source = read_text_lines(paths["source"], segments=True)
    for group in ("systems", "rated_references"):
        for row, value in spec.get(group, {}).items():
            path = path_of.get(value)
            if path is not None and len(lines := read_text_lines(path, segments=True)) != len(source):
                raise InputError(f"{where}.{group}.{row}: {path} has {len(lines)} lines, but the source {paths['source']} has "
                                 f"{len(source)}: an output has one line per source line")
    if paths["domain_file"] is None:
        return
    domains = read_line_domains(paths["domain_file"], source)
    known = sorted(set(domains["domain"]))
    unknown = [domain for domain in spec["domains"] if domain not in known]
    if unknown:
        raise InputError(f"{where}.domains: {unknown[0]!r} is not a domain of {paths['domain_file']} (its domains: {', '.join(known)})")
    if paths["scores"] is not None:
        rated_segments(scores, domains, where)
