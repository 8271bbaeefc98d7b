"""The robustness engine: Metrics I-III of any study, on every leave-one-out pool, by every method.

A *study* is a table of units, one row each, with a domain label, a unit id and a score: MT segments
scored by sentence BLEU (domains = test sets), reviews scored 0 or 100 for a wrong or right prediction
(domains = product domains), rated segments scored by humans, and later perturbed segments (domains =
perturbation functions). How a set of units becomes the *sample* that Metrics I-III are computed on is
the study's *aggregation*:

* ``unit``: every unit's score is one value of the sample (MT and human sentence scores);
* ``domain``: the mean unit score of every domain present is one value (sentiment: domain-level accuracy).

A *pool* is the units of every domain but the one left out (:data:`WHOLE_POOL`: none left out), in the
study's domain order, units in their own order within a domain. On each pool the engine computes the
whole-pool statistics (paper Tables 1/2), and averages them over the blocks of bagging (Algorithm 5,
Tables 3/4) and design bagging (Algorithm 6, Tables 5/6). Blocks are drawn over a pool's unit keys
``(domain, unit_id)`` by :func:`draw_study_blocks`, written to one file per study and re-applied by key
(:func:`block_positions`), so every row of a study (every system, every metric) is measured on the same
blocks and a reader can audit them.

With ``variance_components`` (studies whose sample values are means of unit scores by domain), the
whole-pool row of every pool also gets the decomposition of the pool's unit scores into between- and
within-domain variance (:mod:`.variance_components`, :data:`BETWEEN_COLUMNS`); it is NaN for the
bagging methods, for a pool of one domain, and for studies where it does not apply.

Pools too small for the statistics are errors, never a "perfect" score: a sample of fewer than two
values has variance 0 and gamma 0 whatever the system does, and blocks need at least two units each and
at least as many units in the pool as there are blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from nlp_robustness.errors import InputError
from nlp_robustness.sampling import block_size, rng_for
from nlp_robustness.statistics.bagging import (
    BAGGING_METHODS,
    BaggedStatistics,
    average_over_blocks,
    draw_blocks,
)
from nlp_robustness.statistics.pool_uncertainty import (
    INTERVAL_STATISTICS,
    UncertaintyOptions,
    block_interval,
    pool_replicates,
    replicate_intervals,
)
from nlp_robustness.statistics.robustness_metrics import cov_from_moments, gamma_curve, summarize
from nlp_robustness.statistics.variance_components import variance_components as decompose

__all__ = [
    "AGGREGATIONS",
    "BAGGING_METHODS",
    "BETWEEN_COLUMNS",
    "BLOCK_COLUMNS",
    "BLOCK_SCORE_COLUMNS",
    "GAMMA_COLUMNS",
    "INTERVAL_COLUMNS",
    "METHODS",
    "StudyEvaluation",
    "SUMMARY_COLUMNS",
    "UNIT_COLUMNS",
    "WHOLE_POOL",
    "block_positions",
    "column_groups",
    "csv_group",
    "document_clusters",
    "draw_study_blocks",
    "evaluate_study",
    "leave_out_labels",
    "pool_domains",
    "pool_label",
    "pool_units",
    "read_blocks",
    "read_summary",
    "units_from_tables",
    "whole_pool_between_domains",
    "write_blocks",
]

#: Left-out label of the whole pool (nothing left out), as written in every summary and block file.
WHOLE_POOL = "none"

#: Every method: the whole pool first, then the sampling methods of Algorithms 5 and 6.
METHODS = ("pool", *BAGGING_METHODS)

#: How units become the sample of the metrics (see the module docstring).
AGGREGATIONS = ("unit", "domain")

UNIT_COLUMNS = ("domain", "unit_id", "score")
BLOCK_COLUMNS = ("method", "left_out", "block", "domain", "unit_id")
#: The variance decomposition of a pool's unit scores by domain (appended to the summary, pool rows only).
BETWEEN_COLUMNS = ("between_variance", "between_sd", "within_sd", "between_share", "domain_mean_sd")
#: The interval of every statistic that has one (:mod:`.pool_uncertainty`): ``<statistic>_lo``, ``<statistic>_hi``.
INTERVAL_COLUMNS = tuple(f"{name}_{bound}" for name in INTERVAL_STATISTICS for bound in ("lo", "hi"))
SUMMARY_COLUMNS = ("left_out", "method", "domains", "units", "blocks", "block_size", "mean", "variance", "cov",
                   *BETWEEN_COLUMNS, "gamma_area", *INTERVAL_COLUMNS)
GAMMA_COLUMNS = ("left_out", "method", "epsilon", "gamma", "sigma", "gamma_lo", "gamma_hi")
BLOCK_SCORE_COLUMNS = ("left_out", "method", "block", "domain", "units", "score")


def leave_out_labels(left_out: Sequence[str]) -> list[str]:
    """The pools of a study: the whole pool first, then each domain left out in turn."""
    return [WHOLE_POOL, *left_out]


def pool_label(left_out: str) -> str:
    """How a pool is named for a reader: ``whole pool`` or ``w/o <domain>``."""
    return "whole pool" if left_out == WHOLE_POOL else f"w/o {left_out}"


def column_groups(pools: Sequence[str], domain: str) -> str:
    """What a study table's column groups are, for its caption: ``pools`` are its pools (:func:`leave_out_labels`,
    or only the domains left out), ``domain`` what its domains are called (``test set``, ``function``).

    A caption says which domains are left out, so that a study that leaves out none (one test set, or
    ``leave_out: []``) is not described as leaving each out in turn.
    """
    left_out = [pool for pool in pools if pool != WHOLE_POOL]
    if not left_out:
        return f"the whole pool only (no {domain} is left out)"
    return f"the whole pool, then each {domain} left out in turn: {', '.join(left_out)}"


def csv_group(left_out: str) -> str:
    """How a pool prefixes the column headers of a robustness table's CSV: ``whole_pool`` or the left-out
    domain (``whole_pool_COV``, ``wmt14_Mean``); the profile reads those columns back by this name."""
    return "whole_pool" if left_out == WHOLE_POOL else left_out


def pool_domains(domains: Sequence[str], left_out: str) -> list[str]:
    """The domains of the pool that leaves out ``left_out`` (study order)."""
    return [domain for domain in domains if domain != left_out]


def units_from_tables(tables: Mapping[str, pd.DataFrame], id_column: str, score_column: str | None = None,
                      document_column: str | None = None) -> pd.DataFrame:
    """One unit table from per-domain tables (domain -> table; mapping order is domain order).

    ``id_column`` holds the unit ids; ``score_column`` the scores (None: keys only, no ``score`` column);
    ``document_column`` the units' documents (a ``document`` column; "" where a table lacks it).
    """
    frames = []
    for domain, table in tables.items():
        frame = pd.DataFrame({"domain": domain, "unit_id": table[id_column].astype(str).to_numpy()})
        if score_column is not None:
            frame["score"] = table[score_column].to_numpy(dtype=np.float64)
        if document_column is not None:
            frame["document"] = (table[document_column].fillna("").astype(str).to_numpy() if document_column in table
                                 else "")
        frames.append(frame)
    columns = list(UNIT_COLUMNS if score_column is not None else UNIT_COLUMNS[:2])
    columns += ["document"] if document_column is not None else []
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def pool_units(units: pd.DataFrame, domains: Sequence[str], left_out: str, study: str = "study") -> pd.DataFrame:
    """The units of the pool that leaves out ``left_out``: domain order of ``domains``, unit order kept.

    Raises:
        InputError: A domain of the pool has no unit, or no domain remains (``study`` names the study).
    """
    return _pool(units, _rows_by_domain(units), domains, left_out, study)[0]


def _rows_by_domain(units: pd.DataFrame) -> dict[Any, NDArray[np.intp]]:
    """The row positions of every domain of ``units``, ascending: grouped once for all the pools of a study
    instead of comparing the domain column with every domain of every pool."""
    return units.groupby("domain", sort=False).indices


def _pool(units: pd.DataFrame, rows_by_domain: Mapping[Any, NDArray[np.intp]], domains: Sequence[str], left_out: str,
          study: str) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """:func:`pool_units` from the table's :func:`_rows_by_domain`, and the pool's domain codes (as :func:`_codes`
    gives them: the index of a unit's domain among the pool's)."""
    members = pool_domains(domains, left_out)
    if not members:
        raise InputError(f"{study}: leaving out {left_out} leaves no domain in the pool")
    parts = []
    for domain in members:
        rows = rows_by_domain.get(domain)
        if rows is None or rows.size == 0:
            raise InputError(f"{study}: domain {domain} has no units")
        parts.append(rows)
    pool = units.take(np.concatenate(parts)).reset_index(drop=True)
    if len(set(members)) < len(members):  # a domain named twice: its units take the code of the last mention
        return pool, _codes(pool, members)
    return pool, np.repeat(np.arange(len(members), dtype=np.int64), [rows.size for rows in parts])


def _check_blocks_fit(n_units: int, size: int, n_blocks: int, where: str) -> None:
    if n_units < n_blocks or size < 2:
        raise InputError(
            f"{where}: the pool has {n_units} units, too few for {n_blocks} blocks of at least 2 units "
            f"(block size here: {size}); lower robustness.bagging.blocks, raise the fraction or keep more units"
        )


def draw_study_blocks(
    keys: pd.DataFrame,
    domains: Sequence[str],
    leave_out: Sequence[str],
    *,
    seed: int,
    namespace: Sequence[str],
    n_blocks: int,
    fraction: float,
    study: str = "study",
) -> pd.DataFrame:
    """The blocks of both bagging methods over every pool of a study, as one long table.

    ``keys`` has the study's unit keys (``domain, unit_id``); ``leave_out`` the pool labels
    (:func:`leave_out_labels`). The generator of a pool is seeded by (``seed``, ``namespace``, method,
    left-out label) only, so adding a domain or a system leaves the other pools' blocks alone.
    Returns columns :data:`BLOCK_COLUMNS`, blocks numbered from 1, units ascending in pool order.

    Raises:
        InputError: A pool is too small for the blocks (see the module docstring).
    """
    frames = []
    for method in BAGGING_METHODS:
        for left_out in leave_out:
            pool = pool_units(keys, domains, left_out, study)
            size = block_size(len(pool), fraction)
            _check_blocks_fit(len(pool), size, n_blocks, f"{study}, {pool_label(left_out)}, {method}")
            indices = draw_blocks(method, len(pool), fraction, n_blocks, rng_for(seed, *namespace, method, left_out))
            flat = indices.reshape(-1)
            frames.append(pd.DataFrame({
                "method": method,
                "left_out": left_out,
                "block": np.repeat(np.arange(1, n_blocks + 1), indices.shape[1]),
                "domain": pool["domain"].to_numpy()[flat],
                "unit_id": pool["unit_id"].to_numpy()[flat],
            }))
    return pd.concat(frames, ignore_index=True)[list(BLOCK_COLUMNS)]


#: Characters that make the CSV writer quote a field (tab: the separator), and NUL, which it may refuse.
_QUOTED = ("\t", '"', "\r", "\n", "\0")


def _run_starts(*columns: NDArray[Any]) -> NDArray[np.intp]:
    """Where each run of rows with the same values in every one of ``columns`` (equal lengths) begins; none for
    no rows."""
    rows = len(columns[0])
    changed = np.zeros(max(rows - 1, 0), dtype=bool)
    for values in columns:
        changed |= values[1:] != values[:-1]
    return np.flatnonzero(np.concatenate(([rows > 0], changed)))


def write_blocks(blocks: pd.DataFrame, handle: TextIO) -> None:
    """Write a block table (:func:`draw_study_blocks`) exactly as ``blocks.to_csv(handle, sep="\\t", index=False,
    lineterminator="\\n")`` writes it, byte for byte, several times faster: the rows of each block share their
    method, pool and block number, so a block is one ``join`` of its units' ``domain<TAB>unit_id`` (pandas' writer
    was most of a study_blocks job). A table it cannot vouch for (other columns or dtypes, missing values, text
    the CSV writer would quote) is written by ``to_csv`` itself."""
    text = _blocks_text(blocks)
    if text is None:
        blocks.to_csv(handle, sep="\t", index=False, lineterminator="\n")
    else:
        handle.write(text)


def _blocks_text(blocks: pd.DataFrame) -> str | None:
    """:func:`write_blocks`' text of ``blocks``, or None where ``to_csv`` must write it."""
    if tuple(blocks.columns) != BLOCK_COLUMNS or blocks["block"].dtype != np.int64:
        return None
    columns = {}
    for column in ("method", "left_out", "domain", "unit_id"):
        if not isinstance(blocks[column].dtype, pd.StringDtype):
            return None
        values = blocks[column].to_numpy(dtype=object)
        if any(not isinstance(value, str) or any(mark in value for mark in _QUOTED) for value in set(values)):
            return None
        columns[column] = values
    numbers = blocks["block"].to_numpy()
    methods, left_outs = columns["method"], columns["left_out"]
    starts = _run_starts(methods, left_outs, numbers)
    units = (columns["domain"] + "\t" + columns["unit_id"]).tolist()
    parts = ["\t".join(BLOCK_COLUMNS) + "\n"]
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(blocks)]):
        prefix = f"{methods[start]}\t{left_outs[start]}\t{numbers[start]}\t"
        parts.append(prefix + ("\n" + prefix).join(units[start:end]) + "\n")
    return "".join(parts)


def read_blocks(path: str) -> pd.DataFrame:
    """Read a block file written from :func:`draw_study_blocks`.

    Raises:
        InputError: The columns are not :data:`BLOCK_COLUMNS` (the path is named).
    """
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    if tuple(frame.columns) != BLOCK_COLUMNS:
        raise InputError(f"{path}: expected columns {list(BLOCK_COLUMNS)}, found {list(frame.columns)}")
    frame["block"] = frame["block"].astype(np.int64)
    return frame


def block_positions(blocks: pd.DataFrame, pool: pd.DataFrame, source: str = "blocks") -> NDArray[np.int64]:
    """Positions in ``pool`` (a :func:`pool_units` table) of the units of ``blocks`` (one method and pool);
    an ``(M, b)`` array, one block per row.

    Raises:
        InputError: A block unit is not in the pool, or blocks differ in size (``source`` names them).
    """
    fast = _block_positions_by_key(blocks, pool, source)
    if fast is not None:
        return fast
    positions = pool[["domain", "unit_id"]].reset_index(drop=True).reset_index(names="position")
    merged = blocks[["block", "domain", "unit_id"]].merge(positions, on=["domain", "unit_id"], how="left", sort=False)
    if merged["position"].isna().any():
        missing = merged.loc[merged["position"].isna(), ["domain", "unit_id"]].iloc[0]
        raise InputError(
            f"{source}: unit {missing['domain']}:{missing['unit_id']} is not in the pool "
            "(the blocks were drawn for other units; rerun the study_blocks rule)"
        )
    sizes = merged.groupby("block").size()
    if sizes.empty or sizes.nunique() != 1:
        raise InputError(f"{source}: no blocks, or blocks of different sizes {sorted(set(sizes))}")
    merged = merged.sort_values(["block"], kind="stable")
    return merged["position"].to_numpy(dtype=np.int64).reshape(len(sizes), int(sizes.iloc[0]))


def _block_positions_by_key(blocks: pd.DataFrame, pool: pd.DataFrame, source: str) -> NDArray[np.int64] | None:
    """:func:`block_positions` by a dictionary of the pool's keys instead of a merge (a large study looks blocks
    up dozens of times); None where the merge's answer could differ: key columns of other dtypes than the
    pool's, keys missing or repeated in the pool, blocks not numbered by integers. Same results, same errors."""
    keys = ("domain", "unit_id")
    if (any(blocks[key].dtype != pool[key].dtype or pool[key].isna().any() for key in keys)
            or blocks["block"].dtype.kind not in "iu"):
        return None
    lookup = dict(zip(zip(pool["domain"].to_numpy(), pool["unit_id"].to_numpy()), range(len(pool))))
    if len(lookup) != len(pool):  # a repeated key: the merge would give several rows
        return None
    domains, unit_ids = blocks["domain"].to_numpy(), blocks["unit_id"].to_numpy()
    try:
        found = np.fromiter(map(lookup.__getitem__, zip(domains, unit_ids)), dtype=np.int64, count=len(blocks))
    except KeyError:  # the first unit not in the pool, named as the merge's check names it
        first = next(index for index, key in enumerate(zip(domains, unit_ids)) if key not in lookup)
        raise InputError(
            f"{source}: unit {domains[first]}:{unit_ids[first]} is not in the pool "
            "(the blocks were drawn for other units; rerun the study_blocks rule)"
        ) from None
    numbers = blocks["block"].to_numpy()
    sizes = np.unique(numbers, return_counts=True)[1].tolist()  # by block number, as groupby counts them
    if not sizes or len(set(sizes)) != 1:
        raise InputError(f"{source}: no blocks, or blocks of different sizes {sorted(set(sizes))}")
    return found[np.argsort(numbers, kind="stable")].reshape(len(sizes), sizes[0])


def _blocks_by_pool(blocks: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """The rows of ``blocks`` of every (method, left-out label), in table order: one pass over the table instead
    of comparing its string columns once per pool and method (that was most of a large study's time).

    :func:`draw_study_blocks` writes every pool's blocks as one run of rows, so each key is a slice; a table
    where a key comes back after another (or has missing keys) is grouped in full instead.
    """
    if blocks.empty:
        return {}
    methods, left_outs = blocks["method"].to_numpy(), blocks["left_out"].to_numpy()
    starts = _run_starts(methods, left_outs)
    keys = [(methods[start], left_outs[start]) for start in starts]
    if len(set(keys)) == len(keys) and not pd.isna(np.array(keys, dtype=object)).any():
        ends = [*starts[1:], len(blocks)]
        return {key: blocks.iloc[start:end] for key, start, end in zip(keys, starts, ends)}
    groups = blocks.groupby(["method", "left_out"], sort=False).indices
    return {(method, left_out): blocks.take(rows) for (method, left_out), rows in groups.items()}


def _domain_means(scores: NDArray[np.float64], codes: NDArray[np.int64], n_domains: int, members: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Mean score of every domain on the units at ``members`` (NaN where none) and the unit counts."""
    counts = np.bincount(codes[members], minlength=n_domains)
    sums = np.bincount(codes[members], weights=scores[members], minlength=n_domains)
    means = np.full(n_domains, np.nan)
    present = counts > 0
    means[present] = sums[present] / counts[present]
    return means, counts


def _between_domains(scores: NDArray[np.float64], codes: NDArray[np.int64], n_domains: int, where: str,
                     documents: NDArray | None = None) -> dict[str, float]:
    """The :data:`BETWEEN_COLUMNS` of one pool's unit scores (nested by ``documents`` when given: document noise is
    not spread between domains); NaN for a pool of one domain (no between part)."""
    if n_domains < 2:
        return dict.fromkeys(BETWEEN_COLUMNS, np.nan)
    components = decompose(scores, codes, where, documents)
    return {
        "between_variance": components.between_variance, "between_sd": components.between_sd,
        "within_sd": components.within_sd, "between_share": components.between_share,
        "domain_mean_sd": components.domain_mean_sd,
    }


@dataclass(frozen=True)
class StudyEvaluation:
    """What :func:`evaluate_study` returns for one row of a study (e.g. one system and metric).

    ``summary`` has :data:`SUMMARY_COLUMNS` (the shape the table writers read; :data:`BETWEEN_COLUMNS`
    NaN but in the pool method's rows of a study with variance components; the intervals NaN without
    ``uncertainty``), ``gamma`` has :data:`GAMMA_COLUMNS` (sigma: the pool's sample standard deviation the
    whole-pool curve is normalised by; NaN for the bagged curves; ``gamma_lo``/``gamma_hi`` the pointwise
    band), ``block_scores`` has :data:`BLOCK_SCORE_COLUMNS` with every domain score every block contributed
    (``domain`` aggregation only; empty otherwise), ``replicates`` the whole-pool bootstrap replicates of
    every pool by left-out label and statistic (empty without ``uncertainty``): what paired comparisons of
    rows read.
    """

    summary: pd.DataFrame
    gamma: pd.DataFrame
    block_scores: pd.DataFrame
    replicates: dict[str, dict[str, NDArray[np.float64]]]


def document_clusters(pool: pd.DataFrame) -> NDArray[np.object_] | None:
    """The document of every unit of a pool as a cluster id nested in its domain (``domain`` + ``document``; a unit
    with no document is its own cluster), or None when the units have no ``document`` column or every document
    is a single unit (the units are then resampled one by one, as before)."""
    if "document" not in pool.columns:
        return None
    documents = pool["document"].astype(str)
    if (documents == "").all():
        return None
    own = documents == ""
    keys = pool["domain"].astype(str) + "\x1f" + documents.where(~own, "\x1e" + pool["unit_id"].astype(str))
    if keys.nunique() == len(keys):
        return None
    return keys.to_numpy(dtype=object)


def _universe(documents: pd.DataFrame | None, members: Sequence[str]) -> tuple[NDArray[np.object_], NDArray[np.int64]] | None:
    """The documents of a pool's domains as cluster keys of :func:`document_clusters` with their domain codes
    (None without a universe)."""
    if documents is None:
        return None
    keys, strata = [], []
    for code, domain in enumerate(members):
        names = sorted(set(documents.loc[documents["domain"] == domain, "document"].astype(str)))
        keys += [f"{domain}\x1f{name}" for name in names]
        strata += [code] * len(names)
    return np.asarray(keys, dtype=object), np.asarray(strata, dtype=np.int64)


def _codes(frame: pd.DataFrame, members: Sequence[str]) -> NDArray[np.int64]:
    return frame["domain"].map({domain: index for index, domain in enumerate(members)}).to_numpy(dtype=np.int64)


def _bagged_intervals(bagged: BaggedStatistics, units: int, block_size: int, confidence: float) -> tuple[dict[str, float], tuple]:
    """The intervals of one method's bagged statistics (:func:`.pool_uncertainty.block_interval`) and its gamma band."""
    covs = np.array([cov_from_moments(mean, variance) for mean, variance in zip(bagged.block_means, bagged.block_variances)])
    per_block = {"mean": (bagged.block_means, bagged.mean), "variance": (bagged.block_variances, bagged.variance),
                 "cov": (covs, bagged.cov), "gamma_area": (bagged.block_gamma.mean(axis=1), bagged.gamma.mean())}
    columns = dict.fromkeys(INTERVAL_COLUMNS, np.nan)
    for name, (values, estimate) in per_block.items():
        low, high = block_interval(values, units, block_size, confidence, estimate)
        columns[f"{name}_lo"], columns[f"{name}_hi"] = float(low), float(high)
    return columns, block_interval(bagged.block_gamma, units, block_size, confidence)


def evaluate_study(
    units: pd.DataFrame,
    domains: Sequence[str],
    leave_out: Sequence[str],
    blocks: pd.DataFrame,
    epsilons: NDArray[np.float64],
    aggregation: str = "unit",
    study: str = "study",
    variance_components: bool = False,
    uncertainty: UncertaintyOptions | None = None,
    crossed_units: bool = False,
    replicate_units: pd.DataFrame | None = None,
    seed_labels: Sequence[str] = (),
    document_universe: pd.DataFrame | None = None,
) -> StudyEvaluation:
    """Metrics I-III of one row of a study on every pool (``leave_out``: :func:`leave_out_labels`) and method.

    ``units`` has :data:`UNIT_COLUMNS`; ``blocks`` is the study's block table (:func:`draw_study_blocks`).
    The bagged mean and variance are averaged over the blocks and COV is formed from those averages
    (:func:`.bagging.average_over_blocks`). ``variance_components``: whether the pool rows get the
    between/within-domain decomposition of the unit scores (a study whose domain values are means of its
    unit scores; see the module docstring).

    ``uncertainty``: the intervals (:mod:`.pool_uncertainty`): a bootstrap of the whole pool, seeded by the
    study and the pool only (so every row of a study is resampled alike), and the blocks' jackknife for the
    bagged rows. ``crossed_units``: a unit id names the same item in every domain (a segment under every
    perturbation function), so ids are resampled together; otherwise units are resampled within domains.
    ``units`` may carry a ``document`` column (WMT documents; "" for none): whole documents are then resampled
    within their domain and the between-domain decomposition is the nested one (:func:`document_clusters`,
    :mod:`.pool_uncertainty`); units shared across domains (``crossed_units``) ignore it.
    ``replicate_units`` (columns ``domain, unit_id, cluster, score``): finer units whose domain means are
    the domain values of ``units``, resampled by ``cluster`` instead (a study whose units are aggregates).
    ``seed_labels`` (with the left-out label) seed the replicates: the study's name, never the row's.
    ``document_universe`` (columns ``domain, document``): every document the study's rows are resampled over, for
    studies whose rows are measured on different units of the same documents (each system rated on its own
    segments): every row then draws the same documents, so paired comparisons and rank intervals hold.

    Raises:
        InputError: A pool or block sample has fewer than two values, a block unit is not in the pool,
            ``aggregation`` is unknown, or a pool of several domains has no within-domain spread to
            decompose (``study`` names the study).
    """
    if aggregation not in AGGREGATIONS:
        raise InputError(f"{study}: aggregation must be one of {', '.join(AGGREGATIONS)}, got {aggregation!r}")
    summary_rows, gamma_frames, block_frames, replicates = [], [], [], {}
    by_pool, no_blocks = _blocks_by_pool(blocks), blocks.iloc[:0]
    unit_rows = _rows_by_domain(units)
    finer_rows = _rows_by_domain(replicate_units) if uncertainty is not None and replicate_units is not None else {}
    for left_out in leave_out:
        pool, codes = _pool(units, unit_rows, domains, left_out, study)
        members = pool_domains(domains, left_out)
        scores = pool["score"].to_numpy(dtype=np.float64)

        def domain_means(positions: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
            return _domain_means(scores, codes, len(members), positions)

        def sample(positions: NDArray[np.int64]) -> NDArray[np.float64]:
            if aggregation == "unit":
                return scores[positions]
            means, counts = domain_means(positions)
            return means[counts > 0]

        where = f"{study}, {pool_label(left_out)}"
        whole = sample(np.arange(len(pool)))
        if whole.size < 2:
            raise InputError(f"{where}: the pool gives {whole.size} value(s); variance and gamma need at least 2")
        statistics = summarize(whole)
        whole_gamma = gamma_curve(whole, epsilons)
        documents = None if crossed_units else document_clusters(pool)
        between = _between_domains(scores, codes, len(members), where, documents) if variance_components else {}
        band = (np.full(epsilons.shape, np.nan), np.full(epsilons.shape, np.nan))
        intervals_of_pool = dict.fromkeys(INTERVAL_COLUMNS, np.nan)
        if uncertainty is not None:
            if replicate_units is not None:
                finer, finer_codes = _pool(replicate_units, finer_rows, domains, left_out, study)
                drawn, clusters = pool_replicates(finer["score"].to_numpy(dtype=np.float64), finer_codes, len(members),
                                        finer["cluster"].to_numpy(), "domain", epsilons, uncertainty, [*seed_labels, left_out])
            else:
                drawn, clusters = pool_replicates(scores, codes, len(members), pool["unit_id"].to_numpy() if crossed_units else documents,
                                        aggregation, epsilons, uncertainty, [*seed_labels, left_out],
                                        variance_components and len(members) > 1,
                                        _universe(document_universe, members) if documents is not None else None)
            replicates[left_out] = {name: values for name, values in drawn.items() if name != "gamma"}
            estimates = {"mean": statistics.mean, "variance": statistics.variance, "cov": statistics.cov,
                         "gamma_area": float(whole_gamma.mean()), **between}
            intervals_of_pool = replicate_intervals(drawn, estimates, uncertainty.confidence, clusters,
                                                    reflect=aggregation == "domain" or replicate_units is not None)
            band = tuple(np.nanquantile(drawn["gamma"], [(1 - uncertainty.confidence) / 2, (1 + uncertainty.confidence) / 2], axis=0))
        summary_rows.append({
            "left_out": left_out, "method": "pool", "domains": len(members), "units": len(pool), "blocks": 1,
            "block_size": len(pool), "mean": statistics.mean, "variance": statistics.variance, "cov": statistics.cov,
            **between, "gamma_area": float(whole_gamma.mean()), **intervals_of_pool,
        })
        gamma_frames.append(pd.DataFrame({
            "left_out": left_out, "method": "pool", "epsilon": epsilons, "gamma": whole_gamma,
            "sigma": float(np.std(whole, ddof=1)), "gamma_lo": band[0], "gamma_hi": band[1],
        }))
        for method in BAGGING_METHODS:
            selected = by_pool.get((method, left_out), no_blocks)
            positions = block_positions(selected, pool, source=f"{where}, {method} blocks")
            if aggregation == "unit":
                samples = [scores[row] for row in positions]
            else:  # each block's domain means, computed once for the sample and for the audit table
                per_block = [domain_means(row) for row in positions]
                samples = [means[counts > 0] for means, counts in per_block]
            if min(len(values) for values in samples) < 2:
                raise InputError(f"{where}, {method}: a block gives fewer than 2 values; variance and gamma need at least 2")
            bagged: BaggedStatistics = average_over_blocks(samples, epsilons)
            bagged_intervals, bagged_band = (_bagged_intervals(bagged, len(pool), positions.shape[1], uncertainty.confidence)
                                             if uncertainty is not None else (dict.fromkeys(INTERVAL_COLUMNS, np.nan), band))
            summary_rows.append({
                "left_out": left_out, "method": method, "domains": len(members), "units": len(pool),
                "blocks": positions.shape[0], "block_size": positions.shape[1],
                "mean": bagged.mean, "variance": bagged.variance, "cov": bagged.cov,
                "gamma_area": float(bagged.gamma.mean()), **bagged_intervals,
            })
            gamma_frames.append(pd.DataFrame({
                "left_out": left_out, "method": method, "epsilon": epsilons, "gamma": bagged.gamma, "sigma": np.nan,
                "gamma_lo": bagged_band[0], "gamma_hi": bagged_band[1],
            }))
            if aggregation == "domain":
                for block, (means, counts) in enumerate(per_block, start=1):
                    present = np.flatnonzero(counts > 0)
                    block_frames.append(pd.DataFrame({
                        "left_out": left_out, "method": method, "block": block,
                        "domain": np.asarray(members, dtype=object)[present], "units": counts[present],
                        "score": means[present],
                    }))
    block_scores = (pd.concat(block_frames, ignore_index=True) if block_frames
                    else pd.DataFrame(columns=list(BLOCK_SCORE_COLUMNS)))
    floats = dict.fromkeys((*BETWEEN_COLUMNS, "gamma_area", *INTERVAL_COLUMNS), np.float64)
    return StudyEvaluation(
        summary=pd.DataFrame(summary_rows, columns=list(SUMMARY_COLUMNS)).astype(floats),
        gamma=pd.concat(gamma_frames, ignore_index=True)[list(GAMMA_COLUMNS)],
        block_scores=block_scores[list(BLOCK_SCORE_COLUMNS)],
        replicates=replicates,
    )


def read_summary(path: str) -> pd.DataFrame:
    """Read a row's summary (written from :attr:`StudyEvaluation.summary`); a missing value is NaN.

    Raises:
        InputError: The columns are not :data:`SUMMARY_COLUMNS` (the path is named).
    """
    frame = pd.read_csv(path, sep="\t", dtype={"left_out": str, "method": str}, keep_default_na=False, na_values=[""])
    if tuple(frame.columns[1:]) != SUMMARY_COLUMNS:
        raise InputError(f"{path}: expected a row column, then {list(SUMMARY_COLUMNS)}; found {list(frame.columns)}")
    return frame


def whole_pool_between_domains(path: str) -> tuple[float, float]:
    """The whole-pool between-domain SD and its share of the variance (0 to 1) of one row's summary
    (``path``); NaN for a study without the decomposition.

    Raises:
        InputError: Not a summary, or it has no whole-pool row of the pool method.
    """
    summary = read_summary(path)
    selected = summary[(summary["left_out"] == WHOLE_POOL) & (summary["method"] == "pool")]
    if len(selected) != 1:
        raise InputError(f"{path}: expected one whole-pool row of method pool, found {len(selected)}")
    return float(selected["between_sd"].iloc[0]), float(selected["between_share"].iloc[0])
