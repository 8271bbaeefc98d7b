"""Tables and figure of the Natural Robustness branch (paper 001): scores with intervals, and what the
perturbations changed.

Every caption says what the score is: the share of perturbations that leave the response **unchanged**,
so **1.0 = robust** (paper 001's page defines the share *causing different* responses while saying that
1.0 means robust; we compute the share that fits its reading of the scale).

Every score table shows, for every system and classifier, the **noise floor** next to the scores: the
instability (1 - share unchanged) of its identity control, unperturbed inputs translated in the
whole-test-set layout and in the perturbed test sets' layout (one column per record sample: ``noise floor``
when the families share one; :mod:`nlp_robustness.studies.natural_robustness_responses`), and beside a type with few
perturbations its own noise floor (``noise floor (<type>)``: its records unperturbed in its perturbed test
set's layout against the identity layout). A dagger marks a circular pair: a round-trip paraphrase
made with an Apertium mode the system also uses (and the pooled score holding it). A double dagger marks a type with
fewer than :data:`~nlp_robustness.statistics.natural_robustness.FEW_PERTURBATIONS` perturbations, whose interval is
conservative (it holds the level minus 0.02 at every share only by covering more on average; the CSV's
``few_perturbations`` column).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from pathlib import Path

import numpy as np
import pandas as pd

from nlp_robustness.display_names import MISSING, NATURAL_CRITERION_NAMES, NATURAL_CRITERION_TITLES
from nlp_robustness.fileio.text_files import read_table
from nlp_robustness.outputs.table_writer import latex_cell, latex_escape, latex_row, latex_table, markdown_lines, markdown_table
from nlp_robustness.perturbations.collect import read_derived, read_status
from nlp_robustness.perturbations.meaning import REASON_PREFIX
from nlp_robustness.scoring.sentence_scores import sentence_scores
from nlp_robustness.statistics.natural_robustness import CLUSTER_BOOTSTRAP, FEW_PERTURBATIONS, few_perturbations
from nlp_robustness.studies.natural_robustness_responses import CONTROL_PREFIX
from nlp_robustness.studies.natural_robustness_scores import SCORE_COLUMNS
from nlp_robustness.studies.natural_robustness_controls import THRESHOLD_COLUMNS

# matplotlib is imported by the drawing functions, on first use: the jobs that only write tables start without it.

__all__ = [
    "CIRCULAR_MARK", "FEW_MARK", "MEANING_CHECK", "NOISE_NOTE", "circular_note", "few_note", "meaning_check_rejections",
    "noise_columns", "with_marks",
    "changes_with_circular", "with_circular", "read_thresholds", "thresholds_markdown", "thresholds_wide", "CHANGE_COLUMNS", "SCORE_DEFINITION", "changes_markdown", "perturbation_changes", "plot_scores", "read_scores",
    "score_cell", "scores_latex", "scores_markdown", "scores_wide",
]

SCORE_DEFINITION = (
    "Natural Robustness score = share of perturbations that leave the response unchanged (1.0 = robust; paper 001's "
    "page writes the share causing different responses while calling 1.0 robust)."
)
#: Columns of the changes table: one row per kind of input and perturbation type.
CHANGE_COLUMNS = ("inputs", "family", "type", "sampled", "perturbed", "skipped", "share_perturbed",
                  "rejected_by_meaning_check", "chrf_to_input", "levenshtein_similarity_to_input")
#: Marks a circular (system, perturbation type) pair in every table.
CIRCULAR_MARK = "\u2020"
#: Marks a type with few perturbations (:func:`~nlp_robustness.statistics.natural_robustness.few_perturbations`).
FEW_MARK = "\u2021"
#: A skip reason (after its side's ``source: ``) that the paraphrases' meaning check gave.
MEANING_CHECK = REASON_PREFIX


def read_scores(path: str | Path) -> pd.DataFrame:
    """The score table (rule ``natural_robustness_scores``) with numbers as numbers (empty score: NaN)."""
    table = read_table(path, SCORE_COLUMNS, "natural-robustness score table")
    for column in ("records", "perturbations", "unchanged"):
        table[column] = table[column].astype(int)
    for column in ("score", "ci_low", "ci_high"):
        table[column] = pd.to_numeric(table[column].replace("", np.nan), errors="raise").astype(float)
    table["design_effect"] = pd.to_numeric(table["design_effect"].replace("", np.nan), errors="raise").astype(float)
    return table


def _sample_label(sample: str, records: Mapping[str, int]) -> str:
    """``5 records`` or ``all records (MT system: 100; classifier: 100)``: the sizes of every kind of row."""
    if sample != "all":
        return f"{sample} records"
    return "all records (" + "; ".join(f"{kind}s: {count}" for kind, count in records.items()) + ")"


def score_cell(score: float, low: float, high: float) -> str:
    """``0.93 [0.88, 0.97]``; no score (no perturbation): the missing-value marker."""
    if math.isnan(score):
        return MISSING
    return f"{score:.2f} [{low:.2f}, {high:.2f}]"


def noise_columns(table: pd.DataFrame) -> dict[str, str]:
    """Control type (``identity/...``) of a long score table -> its column: a per-type control (``identity/<type>``
    of a type of the table) ``noise floor (<type>)``; a record sample's (or the classifiers') ``noise floor`` when
    no kind of row has more than one such control, else ``noise floor (<sample>)``."""
    types = {str(name) for name in table["type"] if not str(name).startswith(CONTROL_PREFIX)}
    controls = table[table["type"].astype(str).str.startswith(CONTROL_PREFIX)]
    shared = controls[~controls["type"].astype(str).str[len(CONTROL_PREFIX):].isin(types)]
    one_each = bool((shared.groupby("kind")["type"].nunique() <= 1).all())
    columns = {}
    for control in dict.fromkeys(controls["type"].astype(str)):
        name = control[len(CONTROL_PREFIX):]
        columns[control] = "noise floor" if name not in types and one_each else f"noise floor ({name})"
    return columns


def _column_order(table: pd.DataFrame, columns: Mapping[str, str]) -> list[str]:
    """The wide tables' column order: each type with its own noise floor after it, ``all``, the shared noise floors."""
    order: list[str] = []
    for name in dict.fromkeys(table["type"].astype(str)):
        if name.startswith(CONTROL_PREFIX):
            continue
        order.append(name)
        if CONTROL_PREFIX + name in columns:
            order.append(columns[CONTROL_PREFIX + name])
    return order + [column for column in dict.fromkeys(columns.values()) if column not in order]


def _cell(row: Any, circular: Mapping[str, Sequence[str]], columns: Mapping[str, str]) -> tuple[str, str]:
    """(column, cell) of one score row (with ``few_perturbations``): a control as its instability in its column
    (:func:`noise_columns`), a type with few perturbations and a circular pair marked."""
    few = FEW_MARK if row.few_perturbations else ""
    if str(row.type).startswith(CONTROL_PREFIX):
        return columns[row.type], score_cell(1.0 - row.score, 1.0 - row.ci_high, 1.0 - row.ci_low) + few
    if row.type == "all":  # the pooled score holds every circular type of the system
        marked = any(row.responder in systems for systems in circular.values())
    else:
        marked = row.responder in circular.get(row.type, ())
    return row.type, score_cell(row.score, row.ci_low, row.ci_high) + few + (CIRCULAR_MARK if marked else "")


def with_circular(table: pd.DataFrame, circular: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """A long score table (``responder``, ``type``) with a ``circular`` column: the row's pair is circular (for
    ``all``: it pools a circular type of the system)."""
    def marked(responder: str, kind: str) -> bool:
        if kind == "all":
            return any(responder in systems for systems in circular.values())
        return responder in circular.get(kind, ())
    return table.assign(circular=[marked(str(r), str(t)) for r, t in zip(table["responder"], table["type"])])


def with_marks(table: pd.DataFrame, circular: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """A long score table with the marks of its cells as columns: ``circular`` (:func:`with_circular`) and
    ``few_perturbations`` (a type on fewer than FEW_PERTURBATIONS perturbations: a conservative interval)."""
    return with_circular(table, circular).assign(few_perturbations=few_perturbations(table))


def changes_with_circular(changes: pd.DataFrame, circular: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """The changes table with ``circular_for``: the Apertium systems for which the type is circular (empty: none)."""
    return changes.assign(circular_for=[" ".join(circular.get(str(kind), ())) for kind in changes["type"]])


def scores_wide(scores: pd.DataFrame, sample: str, circular: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """One record sample as a wide table: rows ``<responder> (<criterion>)``, a column per type (with its own noise
    floor after it, where it has a per-type control), ``all``, then the noise floor of each shared identity control
    (its instability, 1 - share unchanged; columns: :func:`noise_columns`). ``circular``: type -> the systems
    for which it is circular (:func:`~nlp_robustness.studies.natural_robustness_controls.circular_pairs`); their
    cells, and the pooled cell of such a system, carry :data:`CIRCULAR_MARK`."""
    selected = scores[scores["sample"] == sample]
    selected = selected.assign(few_perturbations=few_perturbations(selected))
    columns = noise_columns(selected)
    rows: dict[str, dict[str, str]] = {}
    for row in selected.itertuples(index=False):
        name = f"{row.responder} ({NATURAL_CRITERION_NAMES.get(row.criterion, row.criterion)})"
        column, cell = _cell(row, circular or {}, columns)
        rows.setdefault(name, {})[column] = cell
    table = pd.DataFrame.from_dict(rows, orient="index")[_column_order(selected, columns)].fillna(MISSING)
    table.index.name = "system or classifier (same response)"
    return table


def _samples(scores: pd.DataFrame) -> list[tuple[str, dict[str, int]]]:
    """Each record sample with its size for every kind of row (MT systems, classifiers)."""
    samples = []
    for sample in dict.fromkeys(scores["sample"]):
        selected = scores[scores["sample"] == sample]
        samples.append((sample, {kind: int(selected.loc[selected["kind"] == kind, "records"].max()) for kind in dict.fromkeys(selected["kind"])}))
    return samples


def _interval_note(scores: pd.DataFrame) -> str:
    """What the brackets are: the methods the rows name (``interval``), in words."""
    methods = [name for name in dict.fromkeys(scores["interval"]) if name]
    words = {"wilson": "Wilson score", "jeffreys": "Jeffreys", "clopper-pearson": "Clopper-Pearson"}
    binomial = [words[name] for name in methods if name in words]
    parts = []
    if binomial:
        parts.append(f"{' / '.join(binomial)} interval on the type's perturbations, widened where needed to contain the "
                     "Clopper-Pearson interval at the level minus 0.02 (so it covers at least that at every share); for all "
                     "pooled, on its perturbations divided by the design effect of a record's correlated perturbations "
                     "(estimated from the records)")
    if CLUSTER_BOOTSTRAP in methods:
        parts.append("on the samples of many records, the percentile bootstrap over records")
    return "Brackets: " + "; ".join(parts) + "." if parts else ""


NOISE_NOTE = (
    "Originals are translated in the layout of the perturbed inputs (one identity test set of the sampled records, "
    "shared by the families that sample them, translated once). "
    "Noise floor = 1 - share unchanged of the identity control: the same unperturbed records translated in the "
    "whole-test-set layout and in that layout (only their neighbours differ; Apertium's output depends on them), an "
    "upper bound of the noise in the scores; classifiers: the originals classified again. "
    "Noise floor (<type>), beside a type with few perturbations: its own records unperturbed, in its perturbed test "
    "set's layout (its neighbours there) against the identity layout; a score is above the type's noise where its "
    "instability (1 - score) exceeds that floor."
)


def circular_note(circular: Mapping[str, Sequence[str]]) -> str:
    """The caption's note on the circular pairs (empty without any)."""
    if not circular:
        return ""
    pairs = "; ".join(f"{kind}: {', '.join(systems)}" for kind, systems in circular.items())
    return (f"{CIRCULAR_MARK} circular: the round-trip paraphrase uses an Apertium mode the system also uses ({pairs}); "
            "all pooled holds it.")


def few_note(table: pd.DataFrame) -> str:
    """The caption's note on the cells of types with few perturbations (empty without any)."""
    if not few_perturbations(table).any():
        return ""
    return (f"{FEW_MARK} fewer than {FEW_PERTURBATIONS} perturbations of the type: a conservative interval. On so few "
            "outcomes it holds its level at every share only by being wider: a 95 % one covers the share at least 93 % "
            "of the time at every share and 97-100 % on average (the Wilson interval alone falls to 80-89 % at some share).")


def _caption(chrf_threshold: float, scores: pd.DataFrame, circular: Mapping[str, Sequence[str]] | None = None) -> str:
    return " ".join(part for part in (
        f"{SCORE_DEFINITION} Same response: exact = equal translations after normalisation; chrF = sentence chrF of the "
        f"new translation against the original one >= {chrf_threshold:g}; label = same predicted label.",
        NOISE_NOTE, circular_note(circular or {}), few_note(scores), _interval_note(scores),
    ) if part)


def scores_markdown(scores: pd.DataFrame, chrf_threshold: float, circular: Mapping[str, Sequence[str]] | None = None) -> str:
    """Every record sample's wide table under its own heading, then the caption."""
    parts = []
    for sample, records in _samples(scores):
        table = scores_wide(scores, sample, circular)
        lines = markdown_lines(table, index=True, align="l" + "r" * table.shape[1])
        parts.append(f"**Sample: {_sample_label(sample, records)}**\n\n" + "\n".join(lines))
    return "\n\n".join(parts) + f"\n\n{_caption(chrf_threshold, scores, circular)}\n"


def scores_latex(scores: pd.DataFrame, chrf_threshold: float, circular: Mapping[str, Sequence[str]] | None = None) -> str:
    """One booktabs table per record sample (rows: systems and classifiers; columns: types, all, noise floors)."""
    tables = []
    for sample, records in _samples(scores):
        table = scores_wide(scores, sample, circular)
        header = [latex_row(latex_escape(name) for name in [table.index.name, *table.columns])]
        body = [latex_row(latex_cell(value) for value in [name, *values]) for name, values in table.iterrows()]
        caption = f"Natural Robustness, {_sample_label(sample, records)}. {_caption(chrf_threshold, scores, circular)}"
        tables.append(latex_table("l" + "r" * len(table.columns), header, body, caption, f"tab:natural-robustness-{sample}"))
    return "\n".join(tables)


def perturbation_changes(inputs: Mapping[str, Mapping[str, Mapping[str, object]]]) -> pd.DataFrame:
    """How much each perturbation type changed its inputs (:data:`CHANGE_COLUMNS`): sampled, perturbed
    and skipped records, and the mean sentence chrF and normalised Levenshtein similarity of a perturbed
    input to its original (100 = unchanged).

    ``inputs`` maps a kind of input (``MT test sets``, ``reviews``) -> type -> ``family``, ``derived`` and
    ``status`` (paths of the perturbed inputs and of every sampled input's status).
    """
    rows = []
    for kind, types in inputs.items():
        for perturbation_type, files in types.items():
            status = read_status({perturbation_type: files["status"]})
            derived = read_derived(files["derived"])
            originals, perturbed = derived["original_source"].tolist(), derived["source"].tolist()
            rows.append({
                "inputs": kind, "family": files["family"], "type": perturbation_type, "sampled": len(status),
                "perturbed": int(status["kept"].sum()), "skipped": int((~status["kept"]).sum()),
                "share_perturbed": float(status["kept"].mean()),
                "rejected_by_meaning_check": float(meaning_check_rejections(status["reason"]).mean()),
                "chrf_to_input": float(sentence_scores(perturbed, originals, "chrf").mean()),
                "levenshtein_similarity_to_input": float(sentence_scores(perturbed, originals, "levenshtein").mean()),
            })
    return pd.DataFrame(rows, columns=list(CHANGE_COLUMNS))


def meaning_check_rejections(reasons: pd.Series) -> pd.Series:
    """Which skip reasons (``source: meaning check: ...; reference: ...``) include a rejection by the meaning check."""
    def rejected(reason: object) -> bool:
        return any(part.split(": ", 1)[-1].startswith(MEANING_CHECK) for part in str(reason or "").split("; "))
    return reasons.fillna("").map(rejected).astype(bool)


def changes_markdown(changes: pd.DataFrame) -> str:
    """The changes table in Markdown, with what its columns mean."""
    columns = ["inputs", "family", "type", "sampled", "perturbed", "skipped", "rejected_by_meaning_check",
               "chrf_to_input", "levenshtein_similarity_to_input"]
    headers = {"chrf_to_input": "chrF to input", "levenshtein_similarity_to_input": "Levenshtein similarity",
               "rejected_by_meaning_check": "rejected by meaning check"}
    note = ("How much each perturbation type changed what it perturbed: records sampled, perturbed (the type changed them) "
            "and skipped (it could not, or the result equalled the input), the share of the sampled records whose "
            "perturbation the meaning check rejected (a skip; 0 for types without one), and the mean sentence chrF and "
            "normalised Levenshtein similarity (0-100) of a perturbed input to its original: 100 = unchanged.")
    if "circular_for" in changes:  # changes_with_circular
        columns.append("circular_for")
        headers["circular_for"] = f"{CIRCULAR_MARK} circular for"
        note += (f" {CIRCULAR_MARK} circular for: the Apertium systems that share a mode with the type's round trip "
                 "(their score on it is made with the engine under test).")
    table = changes[columns].assign(rejected_by_meaning_check=changes["rejected_by_meaning_check"].map(lambda v: f"{v:.2f}"))
    return markdown_table(table, caption=note, headers=headers, align="lll" + "r" * 6 + "l" * (len(columns) - 9), decimals=1)


def read_thresholds(path: str | Path) -> pd.DataFrame:
    """The threshold table (rule ``natural_robustness_scores``) with numbers as numbers."""
    table = read_table(path, THRESHOLD_COLUMNS, "natural-robustness threshold table")
    table["threshold"] = table["threshold"].astype(float)
    for column in ("score", "ci_low", "ci_high"):
        table[column] = pd.to_numeric(table[column].replace("", np.nan), errors="raise").astype(float)
    return table


def _largest(table: pd.DataFrame) -> str:
    """The largest record sample of a table (``all`` above every size)."""
    return max(dict.fromkeys(table["sample"]), key=lambda s: math.inf if s == "all" else int(s))


def thresholds_wide(thresholds: pd.DataFrame, circular: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """The chrF criterion's score against its threshold on the largest record sample: rows ``<system> / <type>``
    (types, each with its own noise floor where it has one, all, then the shared noise floors, as instabilities), a
    column per threshold."""
    largest = _largest(thresholds)
    selected = thresholds[thresholds["sample"] == largest]
    selected = selected.assign(few_perturbations=few_perturbations(selected))
    columns = noise_columns(selected)
    rows: dict[str, dict[str, str]] = {}
    for row in selected.itertuples(index=False):
        column, cell = _cell(row, circular or {}, columns)
        rows.setdefault(f"{row.responder} / {column}", {})[f"chrF >= {row.threshold:g}"] = cell
    order = [f"{responder} / {column}" for responder in dict.fromkeys(selected["responder"]) for column in _column_order(selected, columns)]
    table = pd.DataFrame.from_dict(rows, orient="index").reindex([name for name in order if name in rows])
    table.index.name = f"system / perturbation type ({_sample_label(largest, {'MT system': int(selected['records'].max())})})"
    return table


def thresholds_markdown(thresholds: pd.DataFrame, circular: Mapping[str, Sequence[str]] | None = None) -> str:
    """The threshold table in Markdown, with its caption."""
    table = thresholds_wide(thresholds, circular)
    lines = markdown_lines(table, index=True, align="l" + "r" * table.shape[1])
    caption = (f"{SCORE_DEFINITION} Sensitivity of the chrF criterion: a response is unchanged when the sentence chrF of "
               f"the new translation against the original one is at least the column's threshold. {NOISE_NOTE} "
               f"{circular_note(circular or {})} {few_note(thresholds[thresholds['sample'] == _largest(thresholds)])} "
               f"{_interval_note(thresholds)}")
    return "\n".join(lines) + f"\n\n{' '.join(caption.split())}\n"


def plot_scores(scores: pd.DataFrame, chrf_threshold: float, outputs: Mapping[str, str | Path]) -> None:
    """One panel per criterion (exact, chrF, label): perturbation types (and all pooled) top to bottom, one
    colour per system or classifier; a filled dot with its interval for the largest record sample, an
    open square for the smallest one (below it), so the effect of a five-record sample is seen at a glance."""
    from nlp_robustness.outputs.figures import grid, panel_grid, plt, save_figure
    scores = scores[~scores["type"].astype(str).str.startswith(CONTROL_PREFIX)]  # the noise floors are in the tables
    criteria = [criterion for criterion in NATURAL_CRITERION_NAMES if criterion in set(scores["criterion"])]
    types = list(dict.fromkeys(scores["type"]))
    samples = [sample for sample, _ in _samples(scores)]
    largest, smallest = max(samples, key=lambda s: math.inf if s == "all" else int(s)), None
    if len(samples) > 1:
        smallest = min(samples, key=lambda s: math.inf if s == "all" else int(s))
    responders = list(dict.fromkeys(scores["responder"]))
    colours = {name: plt.get_cmap("tab10")(index % 10) for index, name in enumerate(responders)}
    figure, axes = panel_grid(1, len(criteria), (4.2 * len(criteria), 0.55 * len(types) + 2.2), sharey=True, constrained_layout=True)
    for axis, criterion in zip(axes[0], criteria):
        selected = scores[scores["criterion"] == criterion]
        rows = list(dict.fromkeys(selected["responder"]))
        for index, responder in enumerate(rows):
            offset = (index - (len(rows) - 1) / 2) * 0.8 / max(len(rows), 1)
            for sample, marker, fill, shift in ((largest, "o", True, 0.0), (smallest, "s", False, 0.08)):
                if sample is None:
                    continue
                part = selected[(selected["responder"] == responder) & (selected["sample"] == sample)].set_index("type")
                y = np.array([types.index(name) for name in part.index]) + offset + shift
                axis.errorbar(
                    part["score"], y, xerr=[part["score"] - part["ci_low"], part["ci_high"] - part["score"]], fmt=marker,
                    color=colours[responder], markerfacecolor=colours[responder] if fill else "white", markersize=4.5,
                    elinewidth=1.2 if fill else 0.8, capsize=0, label=responder if sample == largest else None,
                )
        axis.set_title(NATURAL_CRITERION_TITLES[criterion].format(threshold=chrf_threshold), fontsize=10)
        axis.set_xlim(-0.02, 1.02)
        axis.axhline(len(types) - 1.5, color="grey", linewidth=0.6)
        grid(axis, axis="x")
    axes[0][0].set_yticks(range(len(types)), types)
    axes[0][0].invert_yaxis()
    handles = [plt.Line2D([], [], marker="o", linestyle="", color=colours[name], label=name) for name in responders]
    if smallest is not None:
        handles.append(plt.Line2D([], [], marker="s", linestyle="", color="black", markerfacecolor="white",
                                  label=f"{smallest} records (open)"))
    # 9.5 points: at least 9 px where the report shows the figure 900 px wide (8 points were 7.9 px)
    figure.supxlabel("share of perturbations leaving the response unchanged (1 = robust)", fontsize=10)
    figure.legend(handles=handles, loc="outside right upper", frameon=False, fontsize=9.5)
    figure.suptitle("Natural Robustness (paper 001): share unchanged with its interval; filled: every record")
    save_figure(figure, outputs)

