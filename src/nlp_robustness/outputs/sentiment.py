"""The sentiment study's accuracy table for readers (paper Section 5): every classifier on every test domain.

The table itself (:func:`nlp_robustness.studies.sentiment.accuracy_summary`) is the study's; this module
only prints it, through the one table writer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from nlp_robustness.outputs.table_writer import MISSING, format_value, is_missing, markdown_table

__all__ = ["SOURCE_MARKS", "accuracy_summary_markdown"]

#: How a cell says which split it was tested on (a cross-domain cell is unmarked).
SOURCE_MARKS = {"held-out": " (held-out)", "in-domain": " (in-domain)", "cross-domain": ""}


def accuracy_summary_markdown(summary: pd.DataFrame, accuracies: Mapping[str, pd.DataFrame], test_domains: Sequence[str]) -> str:
    """The summary as Markdown, two decimals; a classifier's own held-out (or in-domain) cell is marked."""
    header = ["classifier", "train", "valid", "C", "valid acc", *test_domains, "cross-domain mean"]
    rows = []
    for _, row in summary.iterrows():
        sources = accuracies[row["classifier"]].set_index("test_domain")["source"]
        chosen_c = MISSING if is_missing(row["chosen_c"]) else f"{row['chosen_c']:g}"
        cells = [format_value(row["classifier"]), format_value(row["training_reviews"]), format_value(row["validation_reviews"]),
                 chosen_c, format_value(row["validation_accuracy"], 2)]
        cells += [format_value(row[domain], 2) + SOURCE_MARKS[sources[domain]] for domain in test_domains]
        cells.append(format_value(row["cross_domain_mean"], 2))
        rows.append(cells)
    note = ("Accuracy in percent of each classifier (rows: training domain) on each test domain. "
            "(held-out): the classifier's own validation split, which also chose C, so slightly optimistic.")
    if summary["training_reviews"].isna().any():
        note += (" A row without training columns is a Hugging Face model (sentiment.models), trained elsewhere and "
                 "tested on every review of every test domain.")
    return markdown_table(pd.DataFrame(rows, columns=header), caption=note, align="l" + "r" * (len(header) - 1))
