"""The robustness profile in sentences: what the tests support, and nothing the noise could have made.

The reading opens the report, so it names a system only where a test separates it
(:mod:`nlp_robustness.studies.profile_uncertainty`):

* **Best and worst on an axis** (quality: best and worst; other axes: most and least robust) are named only
  when the system is *separated* from every other system on that axis: the paired bootstrap of the
  difference of tested axis scores (the mean rank over the axis's columns with replicates), a Wald p for
  each of the S - 1 other systems, Holm, at the run's level, and a rank interval of one rank. Otherwise the
  sentence says "no system is distinguishable from the others on this axis" and gives the rank intervals.
  An axis with no column that has replicates (perturbation families, Natural Robustness) has no interval
  and names nobody: its point order is given as such.
* **Test domains** lead with the between-domain SD (``answers_evenness``: is this system more even across
  these domains?), its lowest and highest value with intervals and its verdict, then one line on what the
  pooled statistics measure. The pooled Var and COV of sentence scores (``tracks_quality``) mostly restate
  quality, so no system is named on them and the axis ranking leaves them out.
* **Disagreements between axes** are reported only when the Kendall tau's bootstrap interval lies below 0,
  its exact permutation p is below the level and both axes have columns with replicates (against an axis
  held at its point ranks the interval shows one axis's noise only). With few systems that p cannot be
  small (a full reversal of n systems is as extreme as 2 of n! orderings: 1/3 for three, 1/12 for four):
  the reading says so instead of counting disagreements. The other pairs are summarised by why they are
  not findings (within noise, untested, too few systems), never as disagreements.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlp_robustness.display_names import MISSING
from nlp_robustness.studies.profile_plan import AXES

__all__ = ["axes_order", "is_separated", "rank_text", "reading", "span_text", "value_text"]


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


def _verdict(rows: pd.DataFrame, best_word: str, worst_word: str, where: str = " on this axis",
             values: Mapping[str, tuple[float, str]] | None = None) -> str:
    """The verdict on one ranked set of rows (an axis, or one column): ``rows`` has system, rank, rank_lo,
    rank_hi, separated; ``values`` (system -> value and its text) leads with the lowest and highest value."""
    rows = rows.assign(rank=rows["rank"].astype(float), rank_lo=[_number(value) for value in rows["rank_lo"]],
                       rank_hi=[_number(value) for value in rows["rank_hi"]], separated=is_separated(rows["separated"]))
    if rows["rank"].nunique() == 1:
        return "every system ties"
    shown = ""
    if values is not None:
        lowest, highest = min(value for value, _ in values.values()), max(value for value, _ in values.values())
        shown = (f"lowest {_names([f'{system} {text}' for system, (value, text) in values.items() if value == lowest])}, "
                 f"highest {_names([f'{system} {text}' for system, (value, text) in values.items() if value == highest])}; ")
    if rows["rank_lo"].isna().all():
        return f"{shown}no bootstrap replicates behind it, so its ranks have no interval and no system is named"
    best, worst = rows[rows["rank"] == rows["rank"].min()], rows[rows["rank"] == rows["rank"].max()]
    best_named = len(best) == 1 and bool(best["separated"].iloc[0])
    worst_named = len(worst) == 1 and bool(worst["separated"].iloc[0])
    if best_named and worst_named:
        return f"{shown}{best_word} {best['system'].iloc[0]}, {worst_word} {worst['system'].iloc[0]}, each separated from every other system"
    if best_named or worst_named:
        named, word, other = (best, best_word, worst_word) if best_named else (worst, worst_word, best_word)
        return (f"{shown}{word} {named['system'].iloc[0]}, separated from every other system; no system is "
                f"distinguishable as {other} ({_intervals(rows)})")
    if rows["separated"].any():
        return f"{shown}neither the {best_word} nor the {worst_word} system is distinguishable ({_intervals(rows)})"
    return f"{shown}no system is distinguishable from the others{where} ({_intervals(rows)})"


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


def _evenness(measures: pd.DataFrame) -> list[str]:
    """The test-domains axis's opening: the between-domain SD's verdict (with its lowest and highest value and
    their intervals), then what the pooled statistics measure."""
    sentences = []
    flags = measures["answers_evenness"] if "answers_evenness" in measures else pd.Series(False, index=measures.index)
    for _, rows in measures[is_separated(flags)].groupby("measure", sort=False):
        rows = rows.dropna(subset=["rank"])
        values = {row.system: (float(row.value), value_text(float(row.value)) + (
            f" [{value_text(float(row.ci_low))}, {value_text(float(row.ci_high))}]" if pd.notna(row.ci_low) else ""))
                  for row in rows.itertuples()}
        sentences.append(f"{rows['label'].iloc[0][0].upper()}{rows['label'].iloc[0][1:]} (the spread of the domains' "
                         "true mean scores with the noise of units taken out: is a system more even across these domains?): "
                         f"{_verdict(rows, 'most even', 'least even', '', values)}.")
    tracks = measures["tracks_quality"] if "tracks_quality" in measures else pd.Series(False, index=measures.index)
    if any(is_separated(tracks)):
        sentences.append("Pooled Var and COV of sentence scores mostly restate quality (a better system's scores sit "
                         "nearer the bound), so no system is named on them and the test-domains axis leaves them out; the γ-area "
                         "measures the tails of the pooled scores around their mean.")
    return sentences


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


def reading(axes: pd.DataFrame, axes_kendall: pd.DataFrame, profile: pd.DataFrame, groups: Mapping[str, Mapping[str, Any]],
            confidence: float = 0.95) -> list[str]:
    """The profile in sentences, one paragraph per group (``groups``: name -> its plan group, with ``label``,
    ``scores`` and ``measures``), naming only what the tests at ``confidence`` support (module docstring).
    ``axes`` and ``profile`` carry the rank intervals and separated flags of
    :mod:`nlp_robustness.studies.profile_uncertainty`; ``axes_kendall`` the taus' intervals and p-values."""
    level = 1 - confidence
    axes = axes.assign(**{column: axes.get(column, math.nan) for column in ("rank_lo", "rank_hi")},
                       separated=axes.get("separated", pd.NA), tested=axes.get("tested", 0))
    paragraphs = []
    for group in dict.fromkeys(axes["group"]):
        frame = axes[axes["group"] == group]
        spec = groups.get(group, {})
        measures = profile[profile["group"] == group]
        sentences = [f"{spec.get('label', group)} ({frame['system'].nunique()} systems; {spec.get('scores', 'scores')})."]
        untested = []
        for axis in axes_order(frame):
            rows = frame[frame["axis"] == axis]
            if axis == "test domains":
                sentences += _evenness(measures[measures["axis"] == axis])
            if rows["rank"].nunique() > 1 and pd.to_numeric(rows["rank_lo"], errors="coerce").isna().all():
                untested.append(axis)
                continue
            name = _axis_name(axis, int(rows["measures"].max()), int(rows["tested"].max()))
            words = ("best", "worst") if axis == "quality" else ("most robust", "least robust")
            sentences.append(f"{name}: {_verdict(rows, *words)}.")
        if untested:
            sentences.append(_untested(frame, untested))
        drop_axes = {measure["axis"] for measure in spec.get("measures", []) if measure["source"].get("kind") == "function_drop"}
        pairs = axes_kendall[axes_kendall["group"] == group].dropna(subset=["tau"])
        tested_axes = set(frame.loc[frame["tested"].astype(float) > 0, "axis"])
        sentences += _agreements(pairs, level, tested_axes, drop_axes)
        paragraphs.append(" ".join(sentences))
    return paragraphs
