"""Parser of the Amazon multi-domain sentiment reviews (Blitzer, Dredze & Pereira 2007).

The ``*.review`` files of ``sorted_data_acl`` (4 domains) and ``unprocessed`` (25 domains) are
*pseudo*-XML: a sequence of ``<review>`` blocks with no root element, every tag alone on its line and
its value on the lines between the opening and the closing tag::

    <review>
    <unique_id>
    0785758968:one_of_the_best_crichton_novels:joseph_m
    </unique_id>
    ...
    <review_text>
    Sphere by Michael Crichton is an excellant novel. ...
    </review_text>
    </review>

Values hold raw ``&`` and ``<`` (``light & funny``, ``<3``) next to HTML entities (``&quot;``), so an
XML parser fails on them. The file is read line by line instead: a field opens on a line that is
exactly ``<name>`` and closes on the line that is exactly ``</name>`` with the same name; every line
in between is value text, whatever it looks like. Choices (documented and tested):

* HTML entities in values are decoded (``&quot;`` becomes ``"``) with :func:`html.unescape`, which
  leaves a raw ``&`` not starting an entity as it is.
* A value's lines are joined with ``\\n`` and the value is stripped at both ends; inner blank lines of
  a review text (paragraph breaks) are kept.
* A field given twice in one review keeps its first value (the duplicate is counted in the log).
* ``review_text`` is required; every other field may be missing (empty string).
"""

from __future__ import annotations

import html
import logging
import os
import re

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines

PathLike = str | os.PathLike[str]

#: Fields of a review, in the order of the files.
REVIEW_FIELDS: tuple[str, ...] = (
    "unique_id",
    "asin",
    "product_name",
    "product_type",
    "helpful",
    "rating",
    "title",
    "date",
    "reviewer",
    "reviewer_location",
    "review_text",
)

#: Columns of a review table: an id, the domain and label from the file's place, then the fields.
REVIEW_COLUMNS: tuple[str, ...] = ("review_id", "domain", "label", *REVIEW_FIELDS)

_OPEN_TAG = re.compile(r"^<(?P<name>[a-z_]+)>$")
_CLOSE_TAG = re.compile(r"^</(?P<name>[a-z_]+)>$")

logger = logging.getLogger(__name__)


def read_blitzer_reviews(path: PathLike, *, domain: str, label: str) -> pd.DataFrame:
    """Read one ``.review`` file into a table with the columns of :data:`REVIEW_COLUMNS`.

    Args:
        path: The file, e.g. ``sorted_data_acl/books/positive.review``.
        domain: Its domain (the directory name, e.g. ``"kitchen_&_housewares"``).
        label: Its label (``"positive"``, ``"negative"`` or ``"unlabeled"``; the file name).

    Returns:
        One row per review, in file order; ``review_id`` is ``<domain>/<label>/<n>`` (1-based).

    Raises:
        InputError: The file is unreadable or not UTF-8, or its structure is broken: text outside a
            ``<review>``, a ``<review>`` inside another, a field left open at ``</review>`` or at the
            end of the file, a ``</review>`` without ``<review>``, or a review without ``review_text``
            (each names the file and line).
    """
    records: list[dict[str, str]] = []
    review: dict[str, str] | None = None
    review_line = 0
    field: str | None = None
    field_line = 0
    value: list[str] = []
    duplicates = 0
    for number, line in enumerate(read_text_lines(path, segments=False), start=1):
        stripped = line.strip()
        if field is not None:
            close = _CLOSE_TAG.match(stripped)
            if close is not None and close.group("name") == field:
                assert review is not None
                if field in review:
                    duplicates += 1
                else:
                    review[field] = html.unescape("\n".join(value)).strip()
                field, value = None, []
            elif stripped == "</review>":
                raise InputError(f"{path}: line {number}: </review> while <{field}> (line {field_line}) is still open")
            else:
                value.append(line)
            continue
        if stripped == "<review>":
            if review is not None:
                raise InputError(f"{path}: line {number}: <review> inside the review opened on line {review_line}")
            review, review_line = {}, number
            continue
        if stripped == "</review>":
            if review is None:
                raise InputError(f"{path}: line {number}: </review> without an open <review>")
            if "review_text" not in review:
                raise InputError(f"{path}: line {review_line}: review without <review_text>")
            records.append(review)
            review = None
            continue
        opening = _OPEN_TAG.match(stripped)
        if review is not None and opening is not None:
            field, field_line, value = opening.group("name"), number, []
            continue
        if stripped:
            where = "outside every <review>" if review is None else "between fields of a review"
            raise InputError(f"{path}: line {number}: unexpected text {where}: {stripped[:60]!r}")
    if field is not None:
        raise InputError(f"{path}: line {field_line}: <{field}> is never closed")
    if review is not None:
        raise InputError(f"{path}: line {review_line}: <review> is never closed")
    if duplicates:
        logger.warning("%s: %d duplicate field(s) ignored (the first value of each was kept)", path, duplicates)
    frame = pd.DataFrame(
        [{name: record.get(name, "") for name in REVIEW_FIELDS} for record in records],
        columns=list(REVIEW_FIELDS),
        dtype=str,
    )
    frame.insert(0, "label", label)
    frame.insert(0, "domain", domain)
    frame.insert(0, "review_id", [f"{domain}/{label}/{index}" for index in range(1, len(frame) + 1)])
    return frame
