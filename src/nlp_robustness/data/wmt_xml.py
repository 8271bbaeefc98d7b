"""The WMT XML format of the organisers (WMT'21 onwards): sources, references and system outputs in one file.

::

    <dataset id="wmttest2022">
      <collection id="general">
        <doc id="..." origlang="de" domain="news">
          <src lang="de"><p><seg id="1">...</seg> ...</p></src>
          <ref lang="fr" translator="A"><p><seg id="1">...</seg> ...</p></ref>
          <hyp system="Online-B" lang="fr"><p><seg id="1">...</seg> ...</p></hyp>
          ...

:func:`read_wmt_xml` reads one file with expat (so entities such as ``&amp;`` are decoded and every
element's line is known) and checks the alignment a table of segments relies on: in every document
the source, the chosen reference and every hypothesis have the same number of segments, numbered
1..n in order (across the document's paragraphs); every document has the chosen reference and (unless
``require_domain`` is false, as for a user's own file) a domain; every system translates every document. Each error is an :class:`InputError` naming the
file, the line, and the document (and system). Segment texts are stripped of leading and trailing
whitespace, as the other XML format (``iwslt-xml``) is; a U+FEFF in a segment is kept, as sacrebleu keeps it
(:mod:`nlp_robustness.fileio.text_files`).

The reference read is the ``translator`` asked for; when none is asked for, :func:`reference_translator` chooses:
the file's only translator whatever its name (WMT'23 names its single reference ``refA``), else ``A`` among
several, else none (an error listing them). The same rule as wmt-format-tools' ``wmt-unwrap``, which takes the one
reference of a file and wants ``--translator`` when there are several.

:mod:`nlp_robustness.data.wmt_xml_tables` turns the parsed file into a test-set table.
"""

from __future__ import annotations

import os
import xml.parsers.expat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from nlp_robustness.errors import InputError

__all__ = [
    "DEFAULT_TRANSLATOR", "TRANSLATOR_KEY", "WmtDocument", "WmtXmlFile", "read_wmt_xml", "reference_translator",
    "reference_translators",
]

PathLike = str | os.PathLike[str]

#: The translator read among several when none is named (WMT'21 and '22 name their first reference ``A``).
DEFAULT_TRANSLATOR = "A"

#: The config key that names a local test set's translator, in messages that tell a user how to choose.
TRANSLATOR_KEY = "testsets.<name>.translator"

_SIDES = ("src", "ref", "hyp")


def _listed(translators: Sequence[str]) -> str:
    return ", ".join(name or "(no translator attribute)" for name in translators) or "none"


def reference_translator(path: PathLike, translators: Sequence[str], asked: str | None = None, key: str | None = None) -> str:
    """The translator whose reference is read from a WMT XML file, the one rule of the package.

    Args:
        path: The file, for errors.
        translators: The ``translator`` of every ``<ref>`` of the file, in the order of first appearance
            (:func:`reference_translators`; "" for a ``<ref>`` without the attribute).
        asked: The translator asked for (config ``testsets.<name>.translator``), or None.
        key: The config key (or option) that names the translator, to start each message with.

    Returns:
        ``asked`` when given; else the only translator of the file, whatever its name; else
        :data:`DEFAULT_TRANSLATOR` when the file has it among several.

    Raises:
        InputError: ``asked`` is not a translator of the file, the file has no ``<ref>``, or (nothing asked for) it
            has several translators and none is ``A``; each lists the file's translators, the last names the key.
    """
    where = f"{key}: " if key else ""
    if asked is not None:
        if asked not in translators:
            raise InputError(f"{where}{asked!r} is not a translator of {path} (its translators: {_listed(translators)})")
        return asked
    if len(translators) == 1:
        return translators[0]
    if not translators:
        raise InputError(f"{path}: no <ref> in the file, so no reference translation to read")
    if DEFAULT_TRANSLATOR in translators:
        return DEFAULT_TRANSLATOR
    raise InputError(
        f"{where}{path} has {len(translators)} reference translators and none is {DEFAULT_TRANSLATOR} "
        f"({_listed(translators)}): name the one to read" + ("" if key else f" with {TRANSLATOR_KEY}")
    )


@dataclass(frozen=True)
class _Side:
    """One ``<src>``/``<ref>``/``<hyp>`` block of a document while it is read."""

    kind: str
    name: str  # translator (ref) or system (hyp); "" for src
    line: int
    segments: list[str] = field(default_factory=list)
    ids: list[tuple[str, int]] = field(default_factory=list)  # (id attribute, line)


@dataclass(frozen=True)
class WmtDocument:
    """One ``<doc>`` of a WMT XML file.

    Attributes:
        doc_id: Its ``id``.
        domain: Its ``domain`` (``news``, ``conversation``, ...; "" when absent, which only a file read
            with ``require_domain=False`` may have).
        origlang: Its ``origlang`` ("" when absent).
        line: The line of its ``<doc>`` tag.
        source: Its source segments, in order.
        reference: The segments of the chosen translator's reference.
        hypotheses: System -> its segments.
    """

    doc_id: str
    domain: str
    origlang: str
    line: int
    source: tuple[str, ...]
    reference: tuple[str, ...]
    hypotheses: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class WmtXmlFile:
    """A parsed WMT XML file.

    Attributes:
        path: The file.
        translator: The reference translator read (the one asked for, or :func:`reference_translator`'s choice).
        documents: In file order.
        systems: Every system, in the order of its first ``<hyp>``.
        domains: Every domain, in the order of its first document (a document without one adds none).
    """

    path: str
    translator: str
    documents: tuple[WmtDocument, ...]
    systems: tuple[str, ...]
    domains: tuple[str, ...]

    @property
    def segments(self) -> int:
        """The number of segments in the file."""
        return sum(len(document.source) for document in self.documents)

    def documents_of_domain(self, domain: str) -> list[WmtDocument]:
        """The documents of ``domain``, in file order.

        Raises:
            InputError: The file has no document of that domain (names the file and its domains).
        """
        if domain not in self.domains:
            raise InputError(f"{self.path}: no document of domain {domain!r} (its domains: {', '.join(self.domains)})")
        return [document for document in self.documents if document.domain == domain]

    def hypotheses_of(self, system: str) -> list[str]:
        """Every segment of ``system``, in file order.

        Raises:
            InputError: The file has no such system (names the file and its systems).
        """
        if system not in self.systems:
            raise InputError(f"{self.path}: no system {system!r} (its systems: {', '.join(self.systems)})")
        return [text for document in self.documents for text in document.hypotheses[system]]


class _Reader:
    """Expat handlers that collect the documents of one file (see :func:`read_wmt_xml`)."""

    def __init__(self, path: str, parser: xml.parsers.expat.XMLParserType, require_domain: bool = True) -> None:
        self.path = path
        self.translator = ""  # set by finish(): the choice needs every <ref> of the file
        self.require_domain = require_domain
        self.parser = parser
        self.documents: list[WmtDocument] = []
        self.systems: dict[str, None] = {}
        self.domains: dict[str, None] = {}
        self.translators: dict[str, None] = {}  # of every <ref>, in the order of first appearance
        self.parsed: list[tuple[dict[str, object], list[_Side]]] = []  # each <doc> as parsed, checked by finish()
        self._doc: dict[str, object] | None = None
        self._sides: list[_Side] = []
        self._side: _Side | None = None
        self._text: list[str] | None = None

    def _fail(self, message: str, line: int | None = None) -> InputError:
        line = self.parser.CurrentLineNumber if line is None else line
        document = f" document {self._doc['id']!r}:" if self._doc is not None else ""
        return InputError(f"{self.path}: line {line}:{document} {message}")

    def start(self, name: str, attributes: dict[str, str]) -> None:
        line = self.parser.CurrentLineNumber
        if name == "doc":
            if "id" not in attributes:
                raise self._fail("<doc> without an id attribute")
            self._doc = {"id": attributes["id"], "line": line, **attributes}
            self._sides = []
            if self.require_domain and not attributes.get("domain"):
                raise self._fail("<doc> without a domain attribute")
        elif name in _SIDES:
            if self._doc is None:
                raise self._fail(f"<{name}> outside every <doc>")
            if name == "hyp" and not attributes.get("system"):
                raise self._fail("<hyp> without a system attribute")
            label = {"src": "", "ref": attributes.get("translator", ""), "hyp": attributes.get("system", "")}[name]
            if name == "ref":
                self.translators.setdefault(label, None)
            self._side = _Side(name, label, line)
            self._sides.append(self._side)
        elif name == "seg":
            if self._side is None:
                raise self._fail("<seg> outside every <src>, <ref> or <hyp>")
            if "id" not in attributes:
                raise self._fail(f"{self._describe(self._side)}: <seg> without an id attribute")
            self._side.ids.append((attributes["id"], line))
            self._text = []

    def characters(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)

    def end(self, name: str) -> None:
        if name == "seg" and self._side is not None and self._text is not None:
            self._side.segments.append("".join(self._text).strip())
            self._text = None
        elif name in _SIDES:
            self._side = None
        elif name == "doc" and self._doc is not None:
            self.parsed.append((self._doc, self._sides))
            self._doc = None

    def finish(self, translator: str) -> None:
        """Check every document read, with ``translator``'s reference, and keep them (in file order)."""
        self.translator = translator
        for attributes, sides in self.parsed:
            self._doc, self._sides = attributes, sides  # what _finish_document and _fail read
            self.documents.append(self._finish_document())
        self._doc = None

    def _describe(self, side: _Side) -> str:
        return {"src": "source", "ref": f"reference of translator {side.name!r}", "hyp": f"system {side.name!r}"}[side.kind]

    def _finish_document(self) -> WmtDocument:
        assert self._doc is not None
        doc_line = int(self._doc["line"])  # type: ignore[call-overload]
        sources = [side for side in self._sides if side.kind == "src"]
        if len(sources) != 1:
            raise self._fail(f"{len(sources)} <src> blocks (need exactly one)", doc_line)
        source = sources[0]
        references = [side for side in self._sides if side.kind == "ref"]
        chosen = [side for side in references if side.name == self.translator]
        if len(chosen) != 1:
            found = ", ".join(repr(side.name) for side in references) or "none"
            raise self._fail(f"{len(chosen)} references of translator {self.translator!r} (need one; translators here: {found})", doc_line)
        hypotheses: dict[str, tuple[str, ...]] = {}
        for side in [source, chosen[0]] + [side for side in self._sides if side.kind == "hyp"]:
            expected = [str(number) for number in range(1, len(side.ids) + 1)]
            wrong = next((index for index, (seg_id, _) in enumerate(side.ids) if seg_id != expected[index]), None)
            if wrong is not None:
                seg_id, seg_line = side.ids[wrong]
                raise self._fail(
                    f"{self._describe(side)}: segment ids must be 1..n in order; segment {wrong + 1} has id {seg_id!r}", seg_line
                )
            if len(side.segments) != len(source.segments):
                raise self._fail(
                    f"{self._describe(side)} has {len(side.segments)} segments, the source has {len(source.segments)}", side.line
                )
            if side.kind == "hyp":
                if side.name in hypotheses:
                    raise self._fail(f"system {side.name!r} has two <hyp> blocks", side.line)
                hypotheses[side.name] = tuple(side.segments)
        domain = str(self._doc.get("domain", ""))
        if domain:
            self.domains.setdefault(domain, None)
        for system in hypotheses:
            if system not in self.systems:
                if self.documents:
                    raise self._fail(f"system {system!r} has no <hyp> in the documents before this one", doc_line)
                self.systems[system] = None
        missing = [system for system in self.systems if system not in hypotheses]
        if missing:
            raise self._fail(f"no <hyp> of system(s) {', '.join(map(repr, missing))}, which the first document has", doc_line)
        return WmtDocument(
            doc_id=str(self._doc["id"]),
            domain=domain,
            origlang=str(self._doc.get("origlang", "")),
            line=doc_line,
            source=tuple(source.segments),
            reference=tuple(chosen[0].segments),
            hypotheses=hypotheses,
        )


def read_wmt_xml(
    path: PathLike, translator: str | None = None, require_domain: bool = True, key: str | None = None
) -> WmtXmlFile:
    """Read and check one WMT XML file (see the module docstring).

    Args:
        path: The file.
        translator: The ``translator`` attribute of the ``<ref>`` to read; None: :func:`reference_translator`'s
            choice (the only one, else ``A``).
        require_domain: Refuse a document without a ``domain`` (a manifest dataset declares its domains); a
            user's own file may lack them (its documents then have the domain "") unless a domain is selected.
        key: The config key (or option) of ``translator``, to start the messages of the choice with.

    Raises:
        InputError: The file is missing, not well-formed XML, or not aligned: a document without an id
            or (``require_domain``) a domain, without exactly one ``<src>`` or one reference of the translator, a
            source, reference or hypothesis whose segment count differs from the source's or whose ids are
            not 1..n in order, a system missing from some document; or the file has no document.
            Each names the file, the line and the document (and side). Or no translator can be chosen
            (:func:`reference_translator`: one asked for that the file lacks, several and none ``A``, none at all).
    """
    parser = xml.parsers.expat.ParserCreate()
    reader = _Reader(str(path), parser, require_domain)
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.characters
    try:
        with open(path, "rb") as handle:
            parser.ParseFile(handle)
    except FileNotFoundError:
        raise InputError(f"file not found: {path}") from None
    except xml.parsers.expat.ExpatError as error:
        raise InputError(f"{path}: line {error.lineno}, column {error.offset}: not well-formed XML ({xml.parsers.expat.ErrorString(error.code)})") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    if not reader.parsed:
        raise InputError(f"{path}: no <doc> in the file")
    reader.finish(reference_translator(path, list(reader.translators), translator, key))
    return WmtXmlFile(
        path=str(path),
        translator=reader.translator,
        documents=tuple(reader.documents),
        systems=tuple(reader.systems),
        domains=tuple(reader.domains),
    )


def reference_translators(path: PathLike) -> list[str]:
    """The ``translator`` of every ``<ref>`` of a WMT XML file, in the order of their first appearance ("" for a
    ``<ref>`` without one), without checking anything else: for :func:`reference_translator` before the file is
    read in full. A file that cannot be read or parsed has those before the problem."""
    found: dict[str, None] = {}
    parser = xml.parsers.expat.ParserCreate()

    def start(name: str, attributes: dict[str, str]) -> None:
        if name == "ref":
            found.setdefault(attributes.get("translator", ""), None)

    parser.StartElementHandler = start
    try:
        with open(path, "rb") as handle:
            parser.ParseFile(handle)
    except (OSError, xml.parsers.expat.ExpatError):
        pass
    return list(found)
