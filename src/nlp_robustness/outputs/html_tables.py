"""Tables as small self-contained HTML documents, the form in which Snakemake's HTML report shows them.

Snakemake's report (version 9) offers a CSV file only as a download, but shows an image or an HTML file
inline: an HTML file in an iframe, loaded from a ``data:`` URI. So every table the workflow marks for the
report is also written as HTML, from the same frame its CSV holds. Such a document can load nothing (no
stylesheet, no script, no font: a ``data:`` document has no base address, and the report must work
offline), so its CSS is inline and there is no JavaScript.

Values are rounded for display only; the CSV beside the HTML keeps full precision. A float is printed
with a fixed number of decimals, except a non-zero value so small that it would print as zero, which gets
two significant digits (a variance of ``3.2e-05`` is not ``0.000``); integers are printed as integers, a
missing value (NaN, ``None``, ``pd.NA``) as an en dash. All text is HTML-escaped (``<``, ``>``, ``&``; text
never stands inside an attribute, so quotes are left as they are, and the file reads well in an editor).
"""

from __future__ import annotations

import html
import math
import numbers
import os
from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from nlp_robustness.fileio import atomic_write

__all__ = ["DEFAULT_DECIMALS", "LONG_TEXT", "MISSING", "format_number", "html_table_document", "write_html_table"]

#: Decimals of a float when a table names none (enough for a tau, a COV or a share; BLEU tables ask for 2).
DEFAULT_DECIMALS = 3

#: Printed for a value that does not exist (a COV of a zero mean, a mean over no segment).
MISSING = "\u2013"

#: Text longer than this many characters (a URL, a sentence) may wrap inside its cell; shorter text (a
#: system name, a label) stays on one line, so that "NVIDIA-NeMo" is not broken at its hyphen.
LONG_TEXT = 40

# Sticky header: a long table scrolls inside the report's iframe and its columns stay named. Underscored
# column names may break after an underscore (<wbr>), so a wide table of long names stays readable.
_STYLE = """\
body { margin: 0; padding: 0.75rem; background: #ffffff; color: #1f2328;
       font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 0 0 0.5rem; max-width: 60rem; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
thead { position: sticky; top: 0; }
thead th { background: #eaeef2; text-align: left; vertical-align: bottom; border-bottom: 2px solid #8c959f; }
thead th[colspan] { text-align: center; }
tbody tr:nth-child(even) { background: #f6f8fa; }
tbody th { text-align: left; font-weight: 600; white-space: nowrap; }
td { white-space: nowrap; }
td.long { white-space: normal; overflow-wrap: anywhere; min-width: 16rem; max-width: 32rem; }
td.number { text-align: right; }
td.missing { text-align: center; color: #8c959f; }
"""


def format_number(value: float, decimals: int = DEFAULT_DECIMALS) -> str:
    """``value`` rounded to ``decimals`` places for display; a non-zero value that would print as zero
    gets two significant digits instead (``3.2e-05``), and ``-0.0`` prints without its sign."""
    if value == 0:
        value = 0.0  # no "-0.000"
    text = f"{value:.{decimals}f}"
    if value != 0 and float(text) == 0:
        return f"{value:.2g}"
    return text


def _cell(value: object, decimals: int) -> tuple[str, str | None]:
    """A value as escaped cell text and the CSS class of its cell (``number``, ``missing``, ``long`` or none)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return MISSING, "missing"
    if isinstance(value, bool):  # a bool is an Integral too; it reads as True/False, not 1/0
        return str(value), None
    if isinstance(value, numbers.Integral):
        return str(int(value)), "number"
    if isinstance(value, numbers.Real):
        if math.isnan(value):
            return MISSING, "missing"
        return format_number(float(value), decimals), "number"
    text = str(value)
    return html.escape(text, quote=False), "long" if len(text) > LONG_TEXT else None


def _header_text(label: Hashable) -> str:
    """A column or index name, escaped, with a line-break opportunity after each underscore."""
    return html.escape("" if label is None else str(label), quote=False).replace("_", "_<wbr>")


def _header_rows(columns: pd.Index, index_names: Sequence[Hashable]) -> list[str]:
    """The ``<tr>`` rows of the head: one per level of ``columns``; consecutive columns under the same
    labels share one cell (``colspan``), as a paper table groups Mean, Var and COV under a pool. The
    index names head the index columns (one cell spanning every row)."""
    labels = [label if isinstance(label, tuple) else (label,) for label in columns]
    levels = columns.nlevels
    rows = []
    for level in range(levels):
        cells = []
        if level == 0:
            span = f' rowspan="{levels}"' if levels > 1 else ""
            cells += [f'<th scope="col"{span}>{_header_text(name)}</th>' for name in index_names]
        position = 0
        while position < len(labels):
            width = 1
            if level < levels - 1:  # the last level names single columns
                prefix = labels[position][: level + 1]
                while position + width < len(labels) and labels[position + width][: level + 1] == prefix:
                    width += 1
            span = f' colspan="{width}"' if width > 1 else ""
            scope = "colgroup" if width > 1 else "col"
            cells.append(f'<th scope="{scope}"{span}>{_header_text(labels[position][level])}</th>')
            position += width
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return rows


def html_table_document(
    frame: pd.DataFrame,
    title: str,
    *,
    decimals: int = DEFAULT_DECIMALS,
    column_decimals: Mapping[Hashable, int] | None = None,
    index: bool = False,
) -> str:
    """``frame`` as a self-contained HTML document: ``title`` (the page title and the table's caption),
    one ``<table>`` with a ``<thead>`` (one row per level of the column labels) and a ``<tbody>`` (one
    row per row of ``frame``).

    Floats are rounded to ``decimals`` places, or to ``column_decimals[label]`` in the columns it names
    (e.g. scores to 2 and fractions to 3); see the module docstring for integers, missing values and
    very small numbers. ``index`` says whether the row labels are shown (first columns, headed by the
    index names), as ``DataFrame.to_csv(index=...)`` says whether they are written.

    Raises:
        ValueError: A number of decimals is negative.
    """
    column_decimals = dict(column_decimals or {})
    if decimals < 0 or any(places < 0 for places in column_decimals.values()):
        raise ValueError(f"decimals must be >= 0, got {decimals} and {column_decimals}")
    places = [column_decimals.get(label, decimals) for label in frame.columns]
    # tolist() gives Python scalars (int, float, bool, str; pd.NA kept), one list per column by position,
    # so duplicate column labels and mixed object columns are rendered cell by cell.
    values = [frame.iloc[:, position].tolist() for position in range(frame.shape[1])]
    index_names: list[Hashable] = list(frame.index.names) if index else []
    index_values = frame.index.to_frame(index=False) if index else pd.DataFrame(index=range(len(frame)))
    index_columns = [index_values.iloc[:, level].tolist() for level in range(index_values.shape[1])]
    body = []
    for row in range(len(frame)):
        cells = [f'<th scope="row">{_cell(labels[row], decimals)[0]}</th>' for labels in index_columns]
        for column, column_values in enumerate(values):
            text, css_class = _cell(column_values[row], places[column])
            cells.append(f'<td class="{css_class}">{text}</td>' if css_class else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    escaped_title = html.escape(title, quote=False)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{escaped_title}</title>",
        f"<style>\n{_STYLE}</style>",
        "</head>",
        "<body>",
        "<table>",
        f"<caption>{escaped_title}</caption>",
        "<thead>",
        *_header_rows(frame.columns, index_names),
        "</thead>",
        "<tbody>",
        *body,
        "</tbody>",
        "</table>",
        "</body>",
        "</html>",
        "",
    ])


def write_html_table(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    title: str,
    *,
    decimals: int = DEFAULT_DECIMALS,
    column_decimals: Mapping[Hashable, int] | None = None,
    index: bool = False,
) -> None:
    """Write :func:`html_table_document` of ``frame`` to ``path`` (UTF-8), atomically: the document is
    built before the file is opened, and a failure leaves no partial file under ``path``."""
    document = html_table_document(frame, title, decimals=decimals, column_decimals=column_decimals, index=index)
    with atomic_write(path) as handle:
        handle.write(document)
