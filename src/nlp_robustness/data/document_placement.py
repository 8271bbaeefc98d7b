"""Where the documents of a WMT XML file lie in a test set's txt source, one per contiguous block of lines, and the
DA SID of each line: the XML reading of :func:`~nlp_robustness.data.wmt_da.read_line_domains`.

The documents may be in another order than in the txt file, and a line may occur more than once, so the documents
are placed by a depth-first search for a tiling of the source by whole documents (:func:`_tile`, bounded by
:data:`_MAX_TILING_STEPS`); documents with the same segments are interchangeable and get their places in file
order. The SID of a line is its 1-based position in the concatenation of the documents sorted by id (plain string
order), segment order inside a document kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from nlp_robustness.data.wmt_xml import DEFAULT_TRANSLATOR, WmtDocument, read_wmt_xml, reference_translators
from nlp_robustness.errors import InputError

__all__ = ["placed_document_rows"]

#: Most steps the search for a tiling of the source by the XML's documents may take before giving up.
_MAX_TILING_STEPS = 1_000_000


def _tile(
    total: int, starts: dict[int, list[tuple[str, ...]]], remaining: dict[tuple[str, ...], int]
) -> tuple[list[tuple[int, tuple[str, ...]]] | None, list[tuple[int, tuple[str, ...]]]]:
    """Cover lines ``0..total-1`` with blocks, each block used as often as ``remaining`` says (depth-first search).

    Args:
        total: The number of lines.
        starts: Line -> the blocks (segment tuples) that match the source from that line on.
        remaining: Block -> how many documents have it (changed during the search, restored on return).

    Returns:
        The (start line, block) of a tiling (``None`` if there is none, or the search ran out of steps) and the
        longest prefix of blocks placed from line 0 during the search (to explain a failure).
    """
    placed: list[tuple[int, tuple[str, ...]]] = []
    choices: list[int] = []
    deepest: list[tuple[int, tuple[str, ...]]] = []
    deepest_end = 0
    position, option = 0, 0
    for _ in range(_MAX_TILING_STEPS):
        if position == total:
            result = list(placed)
            break
        options = starts.get(position, [])
        while option < len(options) and remaining[options[option]] == 0:
            option += 1
        if option < len(options):
            block = options[option]
            remaining[block] -= 1
            placed.append((position, block))
            choices.append(option)
            position, option = position + len(block), 0
            continue
        if position > deepest_end or not deepest:
            deepest, deepest_end = list(placed), position
        if not placed:
            result = None
            break
        position, block = placed.pop()
        remaining[block] += 1
        option = choices.pop() + 1
    else:
        result = None
    for _, block in placed:
        remaining[block] += 1
    return result, deepest

def placed_document_rows(path: str, source_lines: Sequence[str]) -> list[tuple[int, str, str, int, int]]:
    """The (line, domain, document, position, SID) row of every source line, from a WMT XML file whose documents
    tile the source (the module docstring); the table and its reading are
    :func:`~nlp_robustness.data.wmt_da.read_line_domains`'s.

    Raises:
        InputError: As :func:`~nlp_robustness.data.wmt_da.read_line_domains` says of an XML file.
    """
    # the reference is not used here, so any translator will do: the package's rule where it chooses one (the only
    # one, else A), else the first, so that a file whose several translators lack A (WMT22 cs-en: B, C) still reads
    translators = reference_translators(path)
    fallback = translators[0] if len(translators) > 1 and DEFAULT_TRANSLATOR not in translators else None
    parsed = read_wmt_xml(path, fallback, require_domain=False)
    documents: dict[str, WmtDocument] = {}
    for document in parsed.documents:
        if not document.domain:
            raise InputError(f"{path}: line {document.line}: document {document.doc_id!r} has no domain attribute")
        if document.doc_id in documents:
            raise InputError(
                f"{path}: line {document.line}: document id {document.doc_id!r} is also the id of the document "
                f"on line {documents[document.doc_id].line}"
            )
        documents[document.doc_id] = document
    if parsed.segments != len(source_lines):
        raise InputError(
            f"{path}: its documents hold {parsed.segments} source segments, but the source has {len(source_lines)} lines"
        )
    lines = [line.strip() for line in source_lines]  # read_wmt_xml strips segments
    where: dict[str, list[int]] = {}
    for index, line in enumerate(lines):
        where.setdefault(line, []).append(index)
    starts: dict[int, list[tuple[str, ...]]] = {}
    remaining: dict[tuple[str, ...], int] = {}
    owners: dict[tuple[str, ...], list[WmtDocument]] = {}
    for document in parsed.documents:
        block = document.source
        if not block:
            continue
        if block not in remaining:
            candidates = [start for start in where.get(block[0], []) if tuple(lines[start : start + len(block)]) == block]
            if not candidates:
                raise InputError(
                    f"{path}: line {document.line}: document {document.doc_id!r} ({len(block)} segments) does not occur "
                    "as a contiguous block of the source"
                )
            for start in candidates:
                starts.setdefault(start, []).append(block)
            remaining[block] = 0
        remaining[block] += 1
        owners.setdefault(block, []).append(document)
    tiling, deepest = _tile(len(lines), starts, remaining)
    if tiling is None:
        used: dict[tuple[str, ...], int] = {}
        for _, block in deepest:
            used[block] = used.get(block, 0) + 1
        unplaced = next(
            document
            for document in parsed.documents
            if document.source and owners[document.source].index(document) >= used.get(document.source, 0)
        )
        covered = sum(len(block) for _, block in deepest)
        raise InputError(
            f"{path}: line {unplaced.line}: the documents do not tile the source: document {unplaced.doc_id!r} cannot be "
            f"placed (at best {len(deepest)} documents cover source lines 1-{covered}, and no other document starts "
            f"at line {covered + 1})"
        )
    # Documents with the same segments are interchangeable: give them their places in file order.
    placement: dict[str, int] = {}
    taken: dict[tuple[str, ...], int] = {}
    for start, block in sorted(tiling):
        document = owners[block][taken.get(block, 0)]
        taken[block] = taken.get(block, 0) + 1
        placement[document.doc_id] = start
    rows = []
    sid = 0
    for doc_id in sorted(documents):
        document = documents[doc_id]
        for offset in range(len(document.source)):
            sid += 1
            if doc_id in placement:
                rows.append((placement[doc_id] + offset, document.domain, doc_id, offset + 1, sid))
    return rows
