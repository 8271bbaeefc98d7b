"""The robustness profile in sentences: what the paired tests support, and nothing the noise could have made.

The reading opens the report, so every verdict it states is read from the profile's one verdict source,
the paired-comparison rows of :mod:`nlp_robustness.studies.profile_verdicts` (a column's rows are its
study's ``comparisons.csv``; an axis score's rows are computed by the same code into
``results/profile/comparisons.csv``), and each such statement is also written as a *claim*
(:mod:`.profile_claims`: kind, systems, pairs separated, largest Holm p, where its rows are) that
:func:`~.profile_claims.check_claims` re-reads against those CSVs:

* **Pairs and groups.** For every tested column or axis the sentence says how many of its pairs the rows
  separate (Holm over all pairs, as the tables) and, with three or more systems and a separated pair, the
  significance groups (a compact letter display, :mod:`nlp_robustness.statistics.significance_groups`):
  systems sharing a letter are not separated. Where no pair is separated it says so, with the rank
  intervals (descriptive: how far ranks move over the resamples).
* **Best and worst** (quality: best and worst; other axes: most and least robust) are named only when the
  system alone holds that place and its rows separate it from every other system in that direction. With
  two systems the one pair says it: "most robust A, least robust B: the pair is separated".
* **Which statistic separates.** An axis's named end is followed by the tested columns of the axis that
  separate it from every other system and those that do not -- always naming the between-domain SD
  (``answers_evenness``, the docs' answer to "is this system more even?") when it does not, in the same
  sentence.
* **Test domains** lead with the between-domain SD, its lowest and highest value with intervals and its
  verdict, then one line on what the pooled statistics measure; the pooled Var and COV of sentence scores
  (``tracks_quality``) mostly restate quality, so no system is named on them and the axis leaves them out.
  A study of one domain has no test-domains axis: the reading says so and why (the plan's ``left_out``).
* **An axis with no column that has replicates** (perturbation families, Natural Robustness) names nobody:
  its point order is given as such.
* **Disagreements between axes** are reported only when the Kendall tau's bootstrap interval lies below 0,
  its exact permutation p is below the level and both axes have columns with replicates. With few systems
  that p cannot be small (a full reversal of n systems is as extreme as 2 of n! orderings: 1/3 for three,
  1/12 for four): the reading says so instead of counting disagreements.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.display_names import MISSING
from nlp_robustness.outputs.profile_claims import claim
from nlp_robustness.statistics.significance_groups import letter_text
from nlp_robustness.studies.profile_plan import AXES
from nlp_robustness.studies.profile_uncertainty import axis_rows
from nlp_robustness.studies.profile_verdicts import Verdicts, axis_key

__all__ = ["axes_order", "is_separated", "rank_text", "read_out", "reading", "span_text", "value_text"]


def value_text(value: float) -> str:
    """A raw value with three significant digits (rounded for display only)."""
    if not math.isfinite(value):
        return MISSING
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def axes_order(frame: pd.DataFrame) -> list[str]:
    """The axes of ``frame`` in the profile's order (:data:`AXES`), others after them."""
    present = list(dict.fromkeys(frame["axis"]))
    return [axis for axis in AXES if axis in present] + [axis for axis in present if axis not in AXES]


def is_separated(values: Iterable[Any]) -> list[bool]:
    """The ``separated`` flags of a profile or axes table as booleans, as written or as read back from TSV
    (``True``/``False``/empty): only a true flag counts; untested (NA) is not separated."""
    return [str(value) in ("True", "1", "1.0") for value in values]


def span_text(low: float, high: float) -> str:
    """A rank interval: ``2–5``, or ``2`` when it is one rank; empty without one."""
    if not (isinstance(low, (int, float)) and isinstance(high, (int, float)) and math.isfinite(low) and math.isfinite(high)):
        return ""
    return f"{int(low)}" if low == high else f"{int(low)}–{int(high)}"


def rank_text(rank: Any, low: Any, high: Any) -> str:
    """A figure cell's rank with its rank interval where that is wider than one rank: ``#2 (1–6)``, ``#1``."""
    span = span_text(_number(low), _number(high))
    return f"#{int(rank)}" + (f" ({span})" if "–" in span else "")


def _names(systems: Sequence[str]) -> str:
    systems = list(systems)
    return systems[0] if len(systems) == 1 else ", ".join(systems[:-1]) + " and " + systems[-1]


def _number(value: Any) -> float:
    return float(value) if value is not None and value is not pd.NA and str(value) != "" else math.nan


def _intervals(rows: pd.DataFrame) -> str:
    """Every system's rank interval in rank order, compactly: ``rank intervals: A 1–2, B 1–3``, or ``rank
    interval of every system: 1–6`` when they are all alike."""
    ordered = rows.sort_values("rank", kind="stable")
    spans = [span_text(_number(row.rank_lo), _number(row.rank_hi)) for row in ordered.itertuples()]
    if len(set(spans)) == 1:
        return f"rank interval of every system: {spans[0]}"
    return "rank intervals: " + ", ".join(f"{system} {span}" for system, span in zip(ordered["system"], spans))


def _shown(values: Mapping[str, tuple[float, str]] | None) -> str:
    if not values:
        return ""
    lowest, highest = min(value for value, _ in values.values()), max(value for value, _ in values.values())
    return (f"lowest {_names([f'{system} {text}' for system, (value, text) in values.items() if value == lowest])}, "
            f"highest {_names([f'{system} {text}' for system, (value, text) in values.items() if value == highest])}; ")


def _verdict(rows: pd.DataFrame, verdicts: Verdicts | None, words: tuple[str, str], level: float, about: Mapping[str, str],
             values: Mapping[str, tuple[float, str]] | None = None, on: str = "") -> tuple[str, list[dict]]:
    """The verdict on one ranked set of rows (an axis, or one column; ``rows``: system, rank, rank_lo, rank_hi)
    from its verdict rows (module docstring), and the claims it makes (``about``: group, axis, statistic,
    label). ``values`` (system -> value and its text) leads with the lowest and highest value; ``on`` names
    the score separated (an axis of several tested columns: " on the axis score")."""
    rows = rows.assign(rank=rows["rank"].astype(float), rank_lo=[_number(value) for value in rows["rank_lo"]],
                       rank_hi=[_number(value) for value in rows["rank_hi"]])
    shown = _shown(values)
    if rows["rank"].nunique() == 1:
        return f"{shown}every system ties", []
    if verdicts is None:
        return f"{shown}no paired comparisons behind it, so no system is named", []
    separated, pairs = len(verdicts.separated_pairs()), verdicts.pairs
    note = "the mean rank over its tested columns; " if on else ""
    holm = f"{note}Holm over the {pairs} pair{'s' * (pairs != 1)} at {level:g}"
    counted = f"{separated} of {pairs} pair{'s' * (pairs != 1)} separated{on} ({holm})"
    claims = [claim("pairs separated" if separated else "none separated", about, verdicts, [], verdicts.largest_p())]
    if not separated:
        return f"{shown}no pair of systems is separated{on} ({holm}; {_intervals(rows)})", claims
    best, worst = verdicts.best(), verdicts.worst()
    named = [(system, word, kind) for system, word, kind in ((best, words[0], "best named"), (worst, words[1], "worst named")) if system]
    claims += [claim(kind, about, verdicts, [system], verdicts.largest_p(system)) for system, _, kind in named]
    if len(verdicts.order) == 2 and len(named) == 2:
        return f"{shown}{words[0]} {best}, {words[1]} {worst}: the pair is separated{on} ({note}Holm p {_p(verdicts.largest_p())})", claims
    text = shown + ", ".join(f"{word} {system}" for system, word, _ in named)
    text += (f", each separated from every other system{on}; " if len(named) == 2 else
             f", separated from every other system{on}; " if named else "")
    text += counted.replace(f"separated{on} (", "separated (") if named else counted
    if separated < pairs:
        letters = verdicts.letters()
        claims.append(claim("groups", about, verdicts, list(letters), verdicts.largest_p(), letters=letters))
        text += f"; significance groups (systems sharing a letter are not separated): {letter_text(letters)}"
    return text, claims


def _p(value: float | None) -> str:
    """A Holm p after "Holm p": ``= 0.012``, ``< 0.001``."""
    return "n/a" if value is None else ("< 0.001" if value < 0.001 else f"= {value:.3f}")


def _by_column(axis_verdicts: Verdicts, columns: Sequence[tuple[str, str, bool]], verdicts: Mapping[tuple[str, str], Verdicts],
               group: str, axis: str, words: tuple[str, str]) -> tuple[str, list[dict]]:
    """Which of an axis's tested columns (key, label, answers_evenness) separate its named ends, and which do not."""
    parts, claims = [], []
    for system, word, first in ((axis_verdicts.best(), words[0], True), (axis_verdicts.worst(), words[1], False)):
        if system is None:
            continue
        yes, no = [], []
        for key, label, _ in columns:
            found = verdicts.get((group, key))
            if found is None:
                continue
            end = found.best() if first else found.worst()
            about = {"group": group, "axis": axis, "statistic": key, "label": label}
            if end == system:
                yes.append(label)
                claims.append(claim("column names the end", about, found, [system], found.largest_p(system), end=word))
            else:
                no.append(f"{label} ({len(found.separated_pairs())} of {found.pairs} pairs separated)")
                claims.append(claim("column does not name the end", about, found, [system], None, end=word))
        if yes:
            parts.append(f"{system} is {word} and separated from every other system on {_names(yes)}"
                         + (f", not on {_names(no)}" if no else ""))
        else:
            parts.append(f"no tested column on its own separates {system} as {word} from every other system: {_names(no)}")
    return "; ".join(parts), claims


def _untested(frame: pd.DataFrame, axes: Sequence[str]) -> str:
    """One sentence for the axes without a column that has replicates: their point orders, named as such."""
    parts = []
    for axis in axes:
        rows = frame[frame["axis"] == axis].sort_values("rank", kind="stable")
        columns = int(rows["measures"].max())
        parts.append(f"{axis} ({columns} column{'s' * (columns > 1)}; {', '.join(rows['system'])})")
    return (f"No bootstrap replicates behind {_names(parts)}: {'its' if len(parts) == 1 else 'their'} ranks have no "
            "interval and no system is named (point order in brackets).")


def _axis_name(axis: str, columns: int, tested: int) -> str:
    name = f"{axis[0].upper()}{axis[1:]}"
    if axis == "quality" and columns == 1:
        return name
    detail = f"{columns} column{'s' * (columns > 1)}"
    if 0 < tested < columns:
        detail += f"; tested on the {tested} with bootstrap replicates"
    return f"{name} ({detail})"


def _evenness(measures: pd.DataFrame, verdicts: Mapping[tuple[str, str], Verdicts], level: float) -> tuple[list[str], list[list[dict]]]:
    """The test-domains axis's opening: the between-domain SD's verdict (with its lowest and highest value and
    their intervals), then what the pooled statistics measure; and the claims of each sentence."""
    sentences, claims = [], []
    flags = measures["answers_evenness"] if "answers_evenness" in measures else pd.Series(False, index=measures.index)
    for measure, rows in measures[is_separated(flags)].groupby("measure", sort=False):
        rows = rows.dropna(subset=["rank"])
        values = {row.system: (float(row.value), value_text(float(row.value)) + (
            f" [{value_text(float(row.ci_low))}, {value_text(float(row.ci_high))}]" if pd.notna(row.ci_low) else ""))
                  for row in rows.itertuples()}
        group, label = rows["group"].iloc[0], rows["label"].iloc[0]
        about = {"group": group, "axis": rows["axis"].iloc[0], "statistic": measure, "label": label}
        text, found = _verdict(rows, verdicts.get((group, measure)), ("most even", "least even"), level, about, values)
        sentences.append(f"{label[0].upper()}{label[1:]} (the spread of the domains' true mean scores with the noise of "
                         f"units taken out: is a system more even across these domains?): {text}.")
        claims.append(found)
    tracks = measures["tracks_quality"] if "tracks_quality" in measures else pd.Series(False, index=measures.index)
    if any(is_separated(tracks)):
        sentences.append("Pooled Var and COV of sentence scores mostly restate quality (a better system's scores sit "
                         "nearer the bound), so no system is named on them and the test-domains axis leaves them out; the γ-area "
                         "measures the tails of the pooled scores around their mean.")
        claims.append([])
    return sentences, claims


def _pair_text(row: Any) -> str:
    interval = f" [{row.tau_lo:+.2f}, {row.tau_hi:+.2f}]" if np.isfinite(row.tau_lo) else ""
    p_value = getattr(row, "p_value", math.nan)
    return f"{row.first} vs {row.second} (τ = {row.tau:+.2f}{interval}" + (f", p = {p_value:.3f})" if np.isfinite(p_value) else ")")


def _agreements(pairs: pd.DataFrame, level: float, tested_axes: set[str], drop_axes: set[str]) -> list[str]:
    """The axes' disagreements that the tests support, and a summary of the rest that implies no finding. A
    pair is untested unless both axes have columns with replicates (``tested_axes``): against an axis held at
    its point ranks the tau interval shows the other axis's noise only."""
    if pairs.empty:
        return ["Too few systems or axes to compare their rankings."]
    pairs = pairs.assign(tau_lo=pairs.get("tau_lo", math.nan), tau_hi=pairs.get("tau_hi", math.nan),
                         p_value=pairs.get("p_value", math.nan))
    floor = {row.Index: 2 / math.factorial(int(row.systems)) for row in pairs.itertuples()}
    few = [index for index, smallest in floor.items() if smallest >= level]
    if len(few) == len(pairs) and pairs["systems"].nunique() == 1:
        count = int(pairs["systems"].iloc[0])
        return [f"With {count} systems no Kendall τ between two axes can be told from 0: a full reversal is as extreme "
                f"as 2 of the {count}! = {math.factorial(count)} orderings, so the smallest two-sided permutation p is "
                f"{2 / math.factorial(count):.2f}, not below {level:g}; no agreement or disagreement between the axes is a finding."]
    untested = [row.Index for row in pairs.itertuples() if row.Index not in few
                and not (np.isfinite(row.tau_hi) and {row.first, row.second} <= tested_axes)]
    supported = pairs[[row.Index not in few and row.Index not in untested and row.tau_hi < 0
                       and not (np.isfinite(row.p_value) and row.p_value >= level) for row in pairs.itertuples()]]
    noise = len(pairs) - len(supported) - len(few) - len(untested)
    sentences = []
    if not supported.empty:
        supported = supported.sort_values("tau", kind="stable")
        sentences.append(f"The axes disagree beyond noise on {len(supported)} of {len(pairs)} pairs (τ interval below 0, "
                         f"permutation p below {level:g}): {'; '.join(_pair_text(row) for row in supported.itertuples())}.")
        against_quality = {row.second if row.first == "quality" else row.first for row in supported.itertuples()
                           if "quality" in (row.first, row.second)}
        if against_quality & drop_axes:
            sentences.append(f"{', '.join(sorted(against_quality & drop_axes)).capitalize()} measure an absolute "
                             "drop, which is smaller for a system with less quality to lose.")
    rest = [f"{noise} within noise (τ interval reaching 0, or permutation p at least {level:g})" if noise else "",
            f"{len(untested)} untested (an axis without bootstrap replicates)" if untested else "",
            f"{len(few)} on too few shared systems for τ to be told from 0" if few else ""]
    rest = [part for part in rest if part]
    if rest:
        lead = "No other pair of axes disagrees beyond noise" if not supported.empty else \
            f"No disagreement between the axes is established: of {len(pairs)} pairs"
        sentences.append(f"{lead}: {', '.join(rest)}.")
    return sentences


def read_out(axes: pd.DataFrame, axes_kendall: pd.DataFrame, profile: pd.DataFrame, groups: Mapping[str, Mapping[str, Any]],
             confidence: float = 0.95, verdicts: Mapping[tuple[str, str], Verdicts] | None = None) -> tuple[list[str], list[dict]]:
    """The profile in sentences, one paragraph per group (``groups``: name -> its plan group, with ``label``,
    ``scores``, ``measures`` and ``left_out``), and the claims those sentences make (each with its sentence),
    from the verdict rows (``verdicts``: (group, measure key or axis key) -> rows; module docstring)."""
    level = 1 - confidence
    verdicts = verdicts or {}
    axes = axes.assign(**{column: axes.get(column, math.nan) for column in ("rank_lo", "rank_hi")}, tested=axes.get("tested", 0))
    paragraphs, claims = [], []
    for group in dict.fromkeys([*axes["group"], *groups]):
        frame = axes[axes["group"] == group]
        spec = groups.get(group, {})
        measures = profile[profile["group"] == group]
        sentences = [f"{spec.get('label', group)} ({len(spec.get('systems', [])) or frame['system'].nunique()} systems; "
                     f"{spec.get('scores', 'scores')})."]
        said: list[list[dict]] = [[]]
        for left in spec.get("left_out", []):
            sentences.append(f"{left['axis'][0].upper()}{left['axis'][1:]}: left out of the profile, as {left['reason']}.")
            said.append([{"kind": "axis left out", "group": group, "axis": left["axis"], "statistic": None, "label": None,
                          "systems": [], "reason": left["reason"]}])
        untested = []
        for axis in axes_order(frame):
            rows = frame[frame["axis"] == axis]
            if axis == "test domains":
                opening, found = _evenness(measures[measures["axis"] == axis], verdicts, level)
                sentences += opening
                said += found
            key = axis_key(axis)
            if rows["rank"].nunique() > 1 and key not in {name for name_group, name in verdicts if name_group == group}:
                untested.append(axis)
                continue
            name = _axis_name(axis, int(rows["measures"].max()), int(rows["tested"].max()))
            words = ("best", "worst") if axis == "quality" else ("most robust", "least robust")
            about = {"group": group, "axis": axis, "statistic": key, "label": f"{axis} (mean rank over its tested columns)"}
            columns = [(measure, cells["label"].iloc[0], bool(is_separated(cells["answers_evenness"])[0]))
                       for measure, cells in axis_rows(measures[measures["axis"] == axis]).groupby("measure", sort=False)
                       if (group, measure) in verdicts]
            on = " on the axis score" if len(columns) > 1 else ""
            if len(columns) == 1:  # the axis takes its one tested column's rows (profile_verdicts)
                about = {**about, "statistic": columns[0][0], "label": f"{axis} (its one tested column: {columns[0][1]})"}
            text, found = _verdict(rows, verdicts.get((group, key)), words, level, about, on=on)
            if (group, key) in verdicts:
                detail, more = _by_column(verdicts[(group, key)], columns, verdicts, group, axis, words)
                if detail and (len(columns) > 1 or any(item["kind"] == "column does not name the end" for item in more)):
                    text += f"; by column: {detail}"
                    found += more
            sentences.append(f"{name}: {text}.")
            said.append(found)
        if untested:
            sentences.append(_untested(frame, untested))
            said.append([])
        drop_axes = {measure["axis"] for measure in spec.get("measures", []) if measure["source"].get("kind") == "function_drop"}
        pairs = axes_kendall[axes_kendall["group"] == group].dropna(subset=["tau"])
        tested_axes = set(frame.loc[frame["tested"].astype(float) > 0, "axis"])
        agreements = _agreements(pairs, level, tested_axes, drop_axes) if not frame.empty else []
        sentences += agreements
        said += [[] for _ in agreements]
        for sentence, found in zip(sentences, said):
            claims += [{**item, "sentence": sentence} for item in found]
        paragraphs.append(" ".join(sentences))
    return paragraphs, claims


def reading(axes: pd.DataFrame, axes_kendall: pd.DataFrame, profile: pd.DataFrame, groups: Mapping[str, Mapping[str, Any]],
            confidence: float = 0.95, verdicts: Mapping[tuple[str, str], Verdicts] | None = None) -> list[str]:
    """The paragraphs of :func:`read_out`."""
    return read_out(axes, axes_kendall, profile, groups, confidence, verdicts)[0]
