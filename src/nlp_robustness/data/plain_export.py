"""A WMT XML file (the organisers' format since WMT'21) written out as line-aligned plain-text files.

Many users hold their test sets as plain text: one segment per line, one file per side and per system. The
workflow reads that with a per-line domain file (``testsets.<name>.domain_file``). :func:`export_plain` turns a
WMT XML file into exactly that layout, so a WMT release can be read either way and the two routes checked
against each other (the tests do), and so the README's plain-text worked config (config/own-data/plain-with-domains.yaml) has real files to run on::

    python -m nlp_robustness.data.plain_export wmttest2022.de-fr.all.xml data/wmt22-defr-plain

writes, in file order, one line per segment:

``source.txt``, ``reference.txt``
    The source and the chosen translator's reference.
``domains.tsv``
    The document's domain, a tab, and the document id (the workflow resamples whole documents).
``hypotheses/<system>.txt``
    Each system's output.

Line *i* of every file is segment *i* of the XML (its 1-based position in the whole file), so a test set that
selects one domain of the plain files has the same segment ids as one that selects it from the XML.
Nothing is re-segmented, unescaped beyond XML entities, or normalised: the texts are what
:func:`~nlp_robustness.data.wmt_xml.read_wmt_xml` reads (each segment stripped). A segment holding a line
break cannot be written one per line: it is an error naming the document.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nlp_robustness.data.wmt_xml import WmtXmlFile, read_wmt_xml
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import write_lines

PathLike = str | os.PathLike[str]

#: The files :func:`export_plain` writes, relative to its output folder (hypotheses: one per system).
SOURCE_FILE, REFERENCE_FILE, DOMAIN_FILE, HYPOTHESES_FOLDER = "source.txt", "reference.txt", "domains.tsv", "hypotheses"


def _refuse_line_breaks(parsed: WmtXmlFile) -> None:
    """Refuse a segment holding a line break: written one segment per line, it would shift every later line."""
    for document in parsed.documents:
        sides = {"source": document.source, "reference": document.reference, **document.hypotheses}
        for side, texts in sides.items():
            if any("\n" in text or "\r" in text for text in texts):
                raise InputError(
                    f"{parsed.path}: line {document.line}: document {document.doc_id!r}: a segment of {side} holds a line "
                    "break, so it cannot be written one segment per line"
                )


def export_plain(xml_path: PathLike, output: PathLike, translator: str | None = None) -> dict[str, int]:
    """Write the WMT XML file ``xml_path`` as plain, line-aligned files into the folder ``output`` (see the
    module docstring); each file is written atomically.

    Args:
        xml_path: The WMT XML file (every document needs a domain).
        output: The folder (made if missing).
        translator: The reference translator to write (None: the file's only one, else A; see
            :func:`~nlp_robustness.data.wmt_xml.reference_translator`).

    Returns:
        Counts: ``segments``, ``documents``, ``domains``, ``systems``.

    Raises:
        InputError: The XML is malformed or not aligned (:func:`read_wmt_xml`), a document has no domain,
            or a segment holds a line break.
    """
    parsed = read_wmt_xml(xml_path, translator, key="--translator")
    missing = next((document for document in parsed.documents if not document.domain), None)
    if missing is not None:
        raise InputError(f"{parsed.path}: line {missing.line}: document {missing.doc_id!r} has no domain, so domains.tsv cannot be written")
    source = [text for document in parsed.documents for text in document.source]
    reference = [text for document in parsed.documents for text in document.reference]
    domains = [f"{document.domain}\t{document.doc_id}" for document in parsed.documents for _ in document.source]
    hypotheses = {system: parsed.hypotheses_of(system) for system in parsed.systems}
    _refuse_line_breaks(parsed)
    folder = Path(output)
    (folder / HYPOTHESES_FOLDER).mkdir(parents=True, exist_ok=True)
    write_lines(source, folder / SOURCE_FILE)
    write_lines(reference, folder / REFERENCE_FILE)
    write_lines(domains, folder / DOMAIN_FILE)
    for system, lines in hypotheses.items():
        write_lines(lines, folder / HYPOTHESES_FOLDER / f"{system}.txt")
    return {"segments": len(source), "documents": len(parsed.documents), "domains": len(parsed.domains), "systems": len(hypotheses)}


def main(arguments: list[str] | None = None) -> int:
    """Command line: ``python -m nlp_robustness.data.plain_export XML OUTPUT [--translator NAME]``."""
    parser = argparse.ArgumentParser(
        prog="python -m nlp_robustness.data.plain_export",
        description="Write a WMT XML test set as plain line-aligned files: source.txt, reference.txt, domains.tsv "
        "(domain TAB document id) and hypotheses/<system>.txt.",
    )
    parser.add_argument("xml", help="the WMT XML file")
    parser.add_argument("output", help="the folder to write")
    parser.add_argument("--translator", help="the reference translator (default: the file's only one, else A)")
    options = parser.parse_args(arguments)
    try:
        counts = export_plain(options.xml, options.output, options.translator)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(
        f"{options.output}: {counts['segments']} segments in {counts['documents']} documents, {counts['domains']} domains, "
        f"{counts['systems']} systems"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
