"""Human judgements (paper Section 4.2, Tables 7 and 8, Figure 5): the human studies as engine studies.

The paper's human data is private. A *human study* (config ``human_studies``) is one of the formats of public
judgements: ``mqm``, Google's MQM of WMT'21 English->German (Freitag et al. 2021) on news and TED talks
(:mod:`nlp_robustness.studies.human_mqm`), ``wmt-da``, the WMT organisers' direct assessment (WMT22 de-en and ja-en in
four domains: rater-standardised z or raw 0-100; :mod:`nlp_robustness.studies.human_da`, whose files
:mod:`nlp_robustness.data.wmt_da` reads), and ``mtme``, the layout of Google's mt-metrics-eval
(:mod:`nlp_robustness.studies.human_files`). Each format writes a domain's segment table (:data:`SEGMENT_COLUMNS`),
and every study becomes one engine study ``human/<name>`` whose rows are its systems under the human score and each
metric, read from those tables here. Tables 7 and 8 and the agreement of rankings are
:mod:`nlp_robustness.studies.human_rankings`.

Sign convention (stated in every output): the *human score* of a segment is the published MQM score,
``mqm_avg_score``, the negated error penalty averaged over raters: **0 = no error, higher = better**,
e.g. -5 for one major error. So mean human score, like mean BLEU, ranks best first. Its COV = sigma/mu
is negative (mu < 0); consistency is therefore ranked by gamma (and Var), which do not depend on the
sign, and never by the human COV.

Choices (documented in docs/human-judgements.md, tested in tests/unit/test_human.py and test_human_da.py):

* **DA: each system keeps its own rated segments** (the segments rated for every ja-en system are only 136 of
  2,008), with their documents; the engine resamples documents within domains from one universe of documents
  (:func:`resampling_design`), so systems rated on different segments of the same documents stay paired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.statistics.pools import units_from_tables
from nlp_robustness.statistics.study_design import StudyDesign, documents_in_domains

__all__ = [
    "SEGMENT_COLUMNS",
    "has_variance_components",
    "read_segments",
    "resampling_design",
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
