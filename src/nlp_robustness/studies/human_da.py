"""WMT direct assessment (DA) human studies (format ``wmt-da``): segment tables, domain means, the planning check.

A DA study's systems each keep their own rated segments, with their documents (the engine pairs them by document:
:func:`~nlp_robustness.studies.human.resampling_design`). Placeholder rows (raw 0 and z 0 exactly: unrated
documents) are dropped when ``drop_placeholders``. Its files are read by :mod:`nlp_robustness.data.wmt_da`; a
domain's rated-segment table has the columns of every human study's
(:data:`~nlp_robustness.studies.human.SEGMENT_COLUMNS`), and its every-segment table those of
:data:`ALL_SEGMENT_COLUMNS`, scored by the metrics only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.studies.human import SEGMENT_COLUMNS

__all__ = ["ALL_SEGMENT_COLUMNS", "check_da_rows", "check_da_study", "da_domain_means", "da_domain_tables"]

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
    from nlp_robustness.fileio.text_files import read_text_lines

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
