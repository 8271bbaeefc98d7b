"""MQM human studies (format ``mqm``): a domain's segment table from Google's MQM scores and the texts.

Choices (documented in docs/human-judgements.md, tested in tests/unit/test_human.py):

* **Rated segments only.** MQM rated part of each test set (news: 527 of 1002 segments; TED: 529 of
  606); ``None`` marks the others. A domain's segments are those every configured system has a score for.
* **TED texts.** TED outputs, sources and the reference (MQM's system ``ref``) exist only inside the
  per-error MQM file: a segment's source and target text are taken from its rows with the ``<v>...</v>`` error
  marks removed; rows of one system and segment must agree on the text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.studies.human import SEGMENT_COLUMNS

__all__ = ["domain_segments"]


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
