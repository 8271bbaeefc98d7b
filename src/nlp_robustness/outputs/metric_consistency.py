"""The meta-evaluation of metrics on cross-domain consistency, for reading: its main table and its figure.

The numbers come from :mod:`nlp_robustness.statistics.metric_consistency`; this module only orders, names and draws
them. The figure shows, per consistency measure (and quality), every metric's Kendall tau with people and its
interval, the metrics in one order in every panel, and each metric's significance cluster beside its interval, so a
reader sees at once which metrics people's consistency ranking cannot tell apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from nlp_robustness.outputs.figures import grid, panel_grid, plt, save_figure
from nlp_robustness.outputs.report_sections import TEXT_PX_KEY

__all__ = ["MEASURE_TITLES", "main_table", "metric_names", "metric_order", "plot_agreement", "write_meta_evaluation"]

#: What each measure is, as a panel title and table heading.
MEASURE_TITLES = {
    "quality": "quality (mean score)",
    "between_sd": "between-domain SD (nested)",
    "interaction_sd": "system x domain interaction SD",
    "gamma_area": "gamma area",
}

_FONT_POINTS = 9.0
_FIGURE_WIDTH_INCHES = 9.0
_DPI = 150


def _measures(agreement: pd.DataFrame) -> list[str]:
    """The measures of the table, quality first (the reference point), then the consistency measures as listed."""
    listed = list(dict.fromkeys(agreement["measure"]))
    return sorted(listed, key=lambda measure: (measure != "quality", listed.index(measure)))


def metric_order(agreement: pd.DataFrame) -> list[str]:
    """The metrics by their mean tau over the consistency measures (not quality), best first; ties by name."""
    consistency = agreement[agreement["measure"] != "quality"]
    if consistency.empty:
        consistency = agreement
    means = consistency.groupby("metric", sort=False)["tau"].mean()
    return sorted(means.index, key=lambda metric: (-means[metric] if np.isfinite(means[metric]) else np.inf, metric))


def main_table(agreement: pd.DataFrame, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """One row per metric, one column group per measure: ``tau [lo, hi] (cluster)`` as text, the metrics in
    :func:`metric_order`. ``names``: display names of the metrics (default: as given)."""
    names = names or {}
    rows = []
    for metric in metric_order(agreement):
        row = {"metric": names.get(metric, metric)}
        for measure in _measures(agreement):
            cell = agreement[(agreement["metric"] == metric) & (agreement["measure"] == measure)]
            if cell.empty:
                row[measure] = ""
                continue
            entry = cell.iloc[0]
            cluster = f" ({int(entry['cluster'])})" if np.isfinite(entry["cluster"]) else ""
            row[measure] = (f"{entry['tau']:+.2f} [{entry['tau_lo']:+.2f}, {entry['tau_hi']:+.2f}]{cluster}"
                            if np.isfinite(entry["tau"]) else "no tau (every system tied)")
        rows.append(row)
    return pd.DataFrame(rows)


def plot_agreement(agreement: pd.DataFrame, outputs: Mapping[str, str], title: str,
                   names: Mapping[str, str] | None = None, human: str = "people") -> None:
    """Kendall tau of every metric with ``human`` per measure, with its interval and significance cluster: one panel
    per measure (two columns), the metrics in :func:`metric_order` from the top, a line at tau = 0."""
    names = names or {}
    measures = _measures(agreement)
    metrics = metric_order(agreement)
    columns = min(2, len(measures))
    rows = int(np.ceil(len(measures) / columns))
    height = max(2.6, 0.26 * len(metrics) + 1.2) * rows
    plt.rcParams.update({"font.size": _FONT_POINTS})
    figure, axes = panel_grid(rows, columns, (_FIGURE_WIDTH_INCHES, height), sharex=True, constrained_layout=True)
    positions = np.arange(len(metrics))[::-1]
    for index, measure in enumerate(measures):
        axis = axes[index // columns, index % columns]
        selected = agreement[agreement["measure"] == measure].set_index("metric").reindex(metrics)
        tau = selected["tau"].to_numpy(dtype=float)
        error = np.vstack([tau - selected["tau_lo"].to_numpy(dtype=float), selected["tau_hi"].to_numpy(dtype=float) - tau])
        axis.errorbar(tau, positions, xerr=error, fmt="o", color="tab:blue", capsize=2, markersize=4)
        for position, value, high, cluster in zip(positions, tau, selected["tau_hi"], selected["cluster"]):
            if np.isfinite(value) and np.isfinite(cluster):
                axis.text(min(float(high) + 0.03, 1.05), position, f"{int(cluster)}", va="center", fontsize=_FONT_POINTS)
        axis.axvline(0.0, color="grey", linewidth=0.8)
        axis.set_yticks(positions, [names.get(metric, metric) for metric in metrics], fontsize=_FONT_POINTS)
        axis.set_xlim(-1.05, 1.15)
        axis.set_title(MEASURE_TITLES.get(measure, measure), fontsize=_FONT_POINTS)
        axis.tick_params(labelsize=_FONT_POINTS)
        grid(axis, axis="x")
    for index in range(len(measures), rows * columns):
        axes[index // columns, index % columns].set_visible(False)
    figure.supxlabel(f"Kendall tau with {human} (number: the metric's significance cluster)", fontsize=_FONT_POINTS)
    figure.suptitle(title, fontsize=_FONT_POINTS)
    save_figure(figure, outputs, png_text={TEXT_PX_KEY: f"{_FONT_POINTS * _DPI / 72:g}"})


def metric_names(files: Mapping[str, Mapping[str, object]], computed: Sequence[str]) -> dict[str, str]:
    """Display names: a file metric by its config name (its ``description`` goes to the docs and captions, too long for a
    figure's axis); the workflow's own metrics marked as computed here (``bleu (computed here)``), so a reader tells
    them from the same metric read from a file."""
    names = {metric: f"{metric} (computed here)" for metric in computed}
    names.update({name: name for name in files})
    return names


def write_meta_evaluation(segment_files: Mapping[str, str], scores: Sequence[str], rows: Sequence[str],
                          epsilons: Mapping[str, Mapping[str, float]], higher_is_better: Mapping[str, bool],
                          names: Mapping[str, str], measures: Sequence[str], uncertainty: Mapping[str, object],
                          labels: Sequence[str], study: str, human_label: str, outputs: Mapping[str, str],
                          threads: int = 1) -> None:
    """Compute a human study's meta-evaluation (:func:`nlp_robustness.studies.metric_consistency.meta_evaluation`) and
    write its tables (CSV at full precision; Markdown and HTML for reading) and figure. ``outputs`` keys:
    ``agreement``, ``agreement_markdown``, ``agreement_html``, ``pairs``, ``pairs_markdown``, ``pairs_html``,
    ``per_domain``, ``per_domain_html``, ``consistency``, ``figure``, ``figure_pdf``."""
    import logging

    from nlp_robustness.fileio.atomic import atomic_write
    from nlp_robustness.outputs.table_writer import markdown_table, p_value_text, write_html_table
    from nlp_robustness.studies.metric_consistency import meta_evaluation

    found, arrays = meta_evaluation(segment_files, scores, rows, epsilons, higher_is_better, measures, uncertainty,
                                    labels, threads)
    confidence = float(uncertainty["confidence"])  # type: ignore[arg-type]
    percent = f"{confidence:.0%}"
    described = (f"{len(rows)} systems, {arrays.domains.size} segments in {arrays.n_documents} documents; {percent} intervals from "
                 f"{uncertainty['resamples']} document resamples shared by people and every metric")
    for frame, key in ((found.agreement, "agreement"), (found.metric_pairs, "pairs"), (found.per_domain, "per_domain"),
                       (found.consistency, "consistency")):
        with atomic_write(outputs[key]) as handle:
            frame.to_csv(handle, index=False, lineterminator="\n")
    reading = main_table(found.agreement, names)
    with atomic_write(outputs["agreement_markdown"]) as handle:
        handle.write(markdown_table(reading, caption=(
            f"{study}: Kendall tau-b of each metric's system ranking with {human_label}'s, by measure: tau [{percent} "
            f"interval] (significance cluster; 1 = best, metrics in one cluster are not separated by the paired tests, "
            f"Holm). {described}.")))
    write_html_table(found.agreement, outputs["agreement_html"],
                     f"{study}: which metric's consistency agrees with {human_label}'s (Kendall tau-b and pairwise accuracy)")
    pairs = found.metric_pairs.copy()
    pairs_text = pairs.assign(p=pairs["p"].map(p_value_text), p_holm=pairs["p_holm"].map(p_value_text))
    with atomic_write(outputs["pairs_markdown"]) as handle:
        handle.write(markdown_table(pairs_text.round(3), caption=(
            f"{study}: every pair of metrics per measure: tau_a - tau_b with its Holm-adjusted {percent} interval, Holm p over "
            "the pairs of the measure; documents_to_detect: documents (all domains scaled alike) at which the observed "
            "difference would be detected with power 0.8 where it is not separated.")))
    write_html_table(pairs, outputs["pairs_html"], f"{study}: paired tests between metrics (tau difference, Holm)")
    write_html_table(found.per_domain, outputs["per_domain_html"],
                     f"{study}: per domain, each metric's agreement with {human_label}'s system ranking (quality in the domain)")
    plot_agreement(found.agreement, {"png": outputs["figure"], "pdf": outputs["figure_pdf"]},
                   f"{study}: agreement with {human_label} on consistency across domains ({percent} intervals)", names,
                   human_label)
    logging.info("%s\n%s", described, reading.to_string(index=False))
