"""The package's one table writer: CSV, GitHub Markdown, LaTeX (booktabs) and self-contained HTML.

Every table the workflow prints goes through here, so that one value reads the same in every format:

* **Missing values.** A value that does not exist (NaN, ``None``, ``pd.NA``: a COV of a zero mean, a
  mean over no segment, a system absent from a branch) prints as :data:`MISSING`, an en dash, in every
  format. (Before, Markdown and LaTeX printed ``n/a`` or ``nan`` and HTML an en dash; the en dash is what
  a typeset table uses, it cannot be misread as a name, and it is valid UTF-8 LaTeX.)
* **Rounding.** The caller names the decimals of a table, or of some of its columns; a float is printed
  with that many fixed decimals. Integers print as integers, booleans as ``True``/``False``, and a float
  without named decimals as Python prints it (the tables that round beforehand, e.g. the human rankings).
  HTML, the form the report shows, additionally keeps a non-zero value that would print as zero
  (:func:`format_number`: ``3.2e-05``, not ``0.000``) and prints ``-0.0`` without its sign; Markdown and
  LaTeX print fixed decimals exactly, as the papers' tables do.
* **p-values** (:func:`p_value_text`, for every table that prints one): three decimals, and ``< 0.001`` below
  that, never ``0.000`` (a Holm p of 0, of 1e-40 and of 0.0004 all read as "below a thousandth", which is all three
  decimals can say; ``0.000`` would read as "no chance at all"). A table that prints p converts its p columns with it.
* **Escaping.** Markdown: ``|`` is escaped and a line break becomes a space (a cell stays in its row).
  LaTeX: the ten special characters (``\\ & % _ # $ { } ~ ^``). HTML: ``<``, ``>`` and ``&`` (text never
  stands inside an attribute, so quotes stay as they are and the file reads well in an editor).

CSV is written at full precision (pandas' shortest round-trip form), NaN as an empty field.

An HTML table is a small self-contained document because that is how Snakemake's report (version 9)
shows a table inline: it offers a CSV only as a download, but shows an HTML file in an iframe loaded
from a ``data:`` URI. Such a document can load nothing (no stylesheet, script or font: a ``data:``
document has no base address, and the report must work offline), so its CSS is inline and there is no
JavaScript. Column labels with several levels (a robustness table's pool over Mean, Var, COV) become
several header rows, consecutive equal labels sharing one cell.
"""

from __future__ import annotations

import html
import math
import numbers
import os
from collections.abc import Hashable, Iterable, Mapping, Sequence

import pandas as pd

from nlp_robustness.display_names import MISSING
from nlp_robustness.fileio.atomic import atomic_write

__all__ = [
    "DEFAULT_DECIMALS", "LONG_TEXT", "MISSING", "csv_text", "format_number", "format_value", "html_table_document",
    "is_missing", "latex_cell", "latex_escape", "latex_row", "latex_table", "markdown_escape", "markdown_lines", "markdown_table",
    "p_value_text", "write_html_table",
    "write_summary_table", "write_text",
]

#: Decimals of a float in an HTML table that names none (enough for a tau, a COV or a share; BLEU tables ask for 2).
DEFAULT_DECIMALS = 3

#: Text longer than this many characters (a URL, a sentence) may wrap inside its HTML cell; shorter text (a
#: system name, a label) stays on one line, so that "NVIDIA-NeMo" is not broken at its hyphen.
LONG_TEXT = 40


# ---- values -----------------------------------------------------------------------------------------------


def is_missing(value: object) -> bool:
    """Whether ``value`` is a value that does not exist: ``None``, ``pd.NA``, ``pd.NaT`` or a NaN float."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value)


def format_number(value: float, decimals: int = DEFAULT_DECIMALS) -> str:
    """``value`` rounded to ``decimals`` places for the report (HTML); a non-zero value that would print as
    zero gets two significant digits instead (``3.2e-05``), and ``-0.0`` prints without its sign."""
    if value == 0:
        value = 0.0  # no "-0.000"
    text = f"{value:.{decimals}f}"
    if value != 0 and float(text) == 0:
        return f"{value:.2g}"
    return text


def p_value_text(p: object) -> str:
    """A p-value as every table prints it: three decimals, ``< 0.001`` below that, :data:`MISSING` without one."""
    if is_missing(p):
        return MISSING
    value = float(p)  # type: ignore[arg-type]
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def format_value(value: object, decimals: int | None = None, *, keep_small: bool = False) -> str:
    """One cell's text, unescaped (see the module docstring): :data:`MISSING`, a boolean, an integer, a
    float with ``decimals`` fixed places (``None``: as Python prints it; ``keep_small``: by
    :func:`format_number`) or the text of anything else."""
    if is_missing(value):
        return MISSING
    if isinstance(value, bool):  # a bool is an Integral too; it reads as True/False, not 1/0
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real) and decimals is not None:
        return format_number(float(value), decimals) if keep_small else f"{float(value):.{decimals}f}"
    return str(value)


def _columns(frame: pd.DataFrame, index: bool) -> tuple[list[Hashable], list[list[object]]]:
    """The labels and the values (Python scalars, one list per column, by position, so duplicate labels
    are fine) of ``frame``'s columns, preceded by its index levels when ``index``."""
    labels: list[Hashable] = []
    values: list[list[object]] = []
    if index:
        levels = frame.index.to_frame(index=False)
        labels += list(frame.index.names)
        values += [levels.iloc[:, level].tolist() for level in range(levels.shape[1])]
    labels += list(frame.columns)
    values += [frame.iloc[:, position].tolist() for position in range(frame.shape[1])]
    return labels, values


# ---- CSV --------------------------------------------------------------------------------------------------


def csv_text(frame: pd.DataFrame, *, index: bool = False, sep: str = ",") -> str:
    """``frame`` as CSV (or TSV with ``sep="\\t"``) at full precision, lines ending in ``\\n``."""
    return frame.to_csv(sep=sep, index=index, lineterminator="\n")


def write_text(text: str, path: str | os.PathLike[str]) -> None:
    """Write one rendered table (any format) to ``path`` (UTF-8), atomically."""
    with atomic_write(path) as handle:
        handle.write(text)


def write_summary_table(table: pd.DataFrame, csv_path: str | os.PathLike[str], markdown_path: str | os.PathLike[str]) -> None:
    """Write a summary table as CSV (no index) and as Markdown (values as they are), each atomically."""
    write_text(csv_text(table), csv_path)
    write_text(markdown_table(table), markdown_path)


# ---- Markdown ---------------------------------------------------------------------------------------------


def markdown_escape(text: str) -> str:
    """Text safe inside a Markdown table cell: ``|`` escaped, line breaks as spaces."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown_lines(
    frame: pd.DataFrame,
    *,
    headers: Mapping[Hashable, str] | None = None,
    align: str | None = None,
    decimals: int | None = None,
    column_decimals: Mapping[Hashable, int] | None = None,
    index: bool = False,
) -> list[str]:
    """The lines of ``frame`` as a GitHub Markdown table: a header row, the alignment row, a row per row.

    ``headers`` renames columns for print (a label it does not name prints as itself); ``align`` holds one
    letter per printed column, ``l`` (Markdown's default, ``---``) or ``r`` (``---:``), default all ``l``;
    ``decimals`` and ``column_decimals`` round floats as :func:`format_value`; ``index`` prints the row
    labels first (headed by the index names).
    """
    labels, values = _columns(frame, index)
    headers = dict(headers or {})
    column_decimals = dict(column_decimals or {})
    align = align or "l" * len(labels)
    if len(align) != len(labels) or set(align) - {"l", "r"}:
        raise ValueError(f"align must hold l or r for each of the {len(labels)} columns, got {align!r}")
    places = [column_decimals.get(label, decimals) for label in labels]
    header = [markdown_escape(headers.get(label, "" if label is None else str(label))) for label in labels]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if letter == "r" else "---" for letter in align) + "|"]
    for row in range(len(frame)):
        cells = [markdown_escape(format_value(column[row], places[position])) for position, column in enumerate(values)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown_table(frame: pd.DataFrame, *, caption: str | None = None, **options: object) -> str:
    """``frame`` as a GitHub Markdown table (:func:`markdown_lines` takes the ``options``), then ``caption``
    after a blank line when one is given; the text ends in a newline."""
    text = "\n".join(markdown_lines(frame, **options))  # type: ignore[arg-type]
    return f"{text}\n\n{caption}\n" if caption is not None else f"{text}\n"


# ---- LaTeX ------------------------------------------------------------------------------------------------

_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$",
                   "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                   "<": r"\textless{}", ">": r"\textgreater{}"}


def latex_escape(text: str) -> str:
    """Text safe in LaTeX: its special characters as commands."""
    return "".join(_LATEX_SPECIALS.get(character, character) for character in str(text))


def latex_cell(value: object, decimals: int | None = None) -> str:
    """A value as a LaTeX cell: :func:`format_value`, escaped."""
    return latex_escape(format_value(value, decimals))


def latex_row(cells: Iterable[str]) -> str:
    """One table row of cells already in LaTeX (escaped text or markup)."""
    return " & ".join(cells) + r" \\"


def latex_table(column_spec: str, header: Sequence[str], body: Sequence[str], caption: str, label: str) -> str:
    """A floating booktabs table (needs ``\\usepackage{booktabs}``): ``header`` lines, a rule, ``body``
    lines (rows from :func:`latex_row`, rules), caption (escaped here) and label."""
    return "\n".join([
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{column_spec}}}",
        r"\toprule",
        *header,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{{label}}}",
        r"\end{table}",
        "",
    ])


# ---- HTML -------------------------------------------------------------------------------------------------

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


def _html_cell(value: object, decimals: int) -> tuple[str, str | None]:
    """A value as escaped cell text and the CSS class of its cell (``number``, ``missing``, ``long`` or none)."""
    text = format_value(value, decimals, keep_small=True)
    if is_missing(value):
        return text, "missing"
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return text, "number"
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
    (e.g. scores to 2 and fractions to 3), by :func:`format_number`. ``index`` says whether the row
    labels are shown (first columns, headed by the index names), as ``DataFrame.to_csv(index=...)`` says
    whether they are written.

    Raises:
        ValueError: A number of decimals is negative.
    """
    column_decimals = dict(column_decimals or {})
    if decimals < 0 or any(places < 0 for places in column_decimals.values()):
        raise ValueError(f"decimals must be >= 0, got {decimals} and {column_decimals}")
    places = [column_decimals.get(label, decimals) for label in frame.columns]
    _, values = _columns(frame, index=False)
    index_names: list[Hashable] = list(frame.index.names) if index else []
    index_columns = _columns(frame.iloc[:, :0], index=True)[1] if index else []
    body = []
    for row in range(len(frame)):
        cells = [f'<th scope="row">{_html_cell(labels[row], decimals)[0]}</th>' for labels in index_columns]
        for column, column_values in enumerate(values):
            text, css_class = _html_cell(column_values[row], places[column])
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
    write_text(html_table_document(frame, title, decimals=decimals, column_decimals=column_decimals, index=index), path)
