"""Texts parsed with spaCy into :class:`~nlp_robustness.perturbations.parse.ParsedSegment`: the one place that
loads a spaCy model (the perturbation functions read the parses as plain data, :mod:`nlp_robustness.perturbations.parse`).

:func:`parse_texts` parses one side's texts with one model (its named-entity recognizer and lemmatizer left out);
:func:`parse_samples` parses the sides of sampled tables in one go; :func:`parsed_segment_from_doc` converts one
parsed ``Doc``. spaCy is imported without torch when every model of the process builds its layers from spaCy's
own architectures (:func:`_import_spacy`).

Whitespace tokens
    spaCy keeps runs of extra whitespace (a double space, a line break) as tokens of their own (``pos``
    ``SPACE``). They are dropped: a perturbed text is its tokens joined by single spaces, so they would
    only become stray spaces. A dropped token that heads others hands its children to its own nearest
    kept ancestor; a dropped sentence root leaves its children as roots of the sentence, which may then
    have several roots. Sentences and noun chunks left without tokens disappear, and both are numbered
    again from 0 in order.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

import pandas as pd

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.parse import ParsedSegment, ParsedToken

__all__ = ["parse_samples", "parse_texts", "parsed_segment_from_doc"]

# Pipeline components whose output no perturbation reads; leaving them out parses about 2.4 times as
# fast and gives the same tags, labels, heads, sentences and noun chunks (checked on IWSLT'17, both sides).
_UNUSED_COMPONENTS = ("ner", "lemmatizer")


def parsed_segment_from_doc(segment_id: str, doc) -> ParsedSegment:
    """Convert a parsed spaCy ``Doc``; whitespace tokens are dropped (see the module docstring)."""
    kept = [token for token in doc if not token.is_space]
    new_index = {token.i: index for index, token in enumerate(kept)}
    sentence_of: dict[int, int] = {}
    for number, sentence in enumerate(doc.sents):
        for token in sentence:
            sentence_of[token.i] = number
    chunk_of: dict[int, int] = {}
    try:
        chunks = list(doc.noun_chunks)
    except NotImplementedError:  # a language without a noun-chunk rule: no token is in a chunk
        chunks = []
    for number, chunk in enumerate(chunks):
        for token in chunk:
            chunk_of[token.i] = number
    sentence_numbers = _renumber([sentence_of[token.i] for token in kept])
    chunk_numbers = _renumber([chunk_of.get(token.i, -1) for token in kept])
    tokens = []
    for index, token in enumerate(kept):
        following = token.i + 1
        space_after = bool(token.whitespace_) or (following < len(doc) and doc[following].is_space)
        head = token.head
        while head.is_space and head.head.i != head.i:  # a dropped head: climb to a kept ancestor
            head = head.head
        tokens.append(
            ParsedToken(
                text=token.text,
                pos=token.pos_,
                dep=token.dep_,
                head=index if head.is_space else new_index[head.i],
                sentence=sentence_numbers[index],
                noun_chunk=chunk_numbers[index],
                space_after=space_after,
            )
        )
    return ParsedSegment(segment_id, tuple(tokens))


def _renumber(numbers: list[int]) -> list[int]:
    """Numbers >= 0 replaced by 0, 1, ... in order of first appearance (-1 kept)."""
    mapping: dict[int, int] = {}
    return [-1 if number < 0 else mapping.setdefault(number, len(mapping)) for number in numbers]


def _model_package(model: str) -> str:
    return model.replace("_", "-")


#: An architecture a spaCy config names, as ``@architectures = "..."`` or ``{"@architectures":"..."}``.
_ARCHITECTURE = re.compile(r'@architectures"?\s*[=:]\s*"([^"]+)"')


def _builtin_architectures_only(model: str) -> bool:
    """Whether ``model`` is an installed spaCy model package whose config builds every layer from spaCy's
    own architectures (``spacy.*``: thinc's NumPy ops, never torch; spacy-transformers' are ``spacy-transformers.*``).
    False whenever that cannot be told (a path, a package laid out otherwise)."""
    try:
        spec = importlib.util.find_spec(model)  # finds the package without importing it
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    configs = [path for location in spec.submodule_search_locations
               for path in glob.glob(os.path.join(location, "*", "config.cfg"))]
    if len(configs) != 1:
        return False
    architectures = _ARCHITECTURE.findall(Path(configs[0]).read_text(encoding="utf-8"))
    return bool(architectures) and all(name.startswith("spacy.") for name in architectures)


def _import_spacy(models: Sequence[str]) -> ModuleType:
    """spaCy, imported without torch when none of ``models`` (every model the caller will load) runs on it
    (:func:`_builtin_architectures_only`).

    thinc imports torch when it is installed (about 1 s, more than a small model's whole parse) only to
    offer torch-backed layers; spaCy's own architectures run on thinc's NumPy ops either way, so the
    parses are the same. torch is hidden only while spaCy and thinc are first imported, and stays
    importable afterwards (thinc then offers no torch layers in this process).
    """
    hide = "thinc" not in sys.modules and "torch" not in sys.modules and all(map(_builtin_architectures_only, models))
    if hide:
        sys.modules["torch"] = None  # type: ignore[assignment]  # import torch raises ImportError: thinc goes without
    try:
        import spacy
    finally:
        if hide:
            del sys.modules["torch"]
    return spacy


def parse_texts(
    segment_ids: Sequence[str], texts: Sequence[str], model: str, batch_size: int = 256
) -> tuple[list[ParsedSegment], dict[str, str]]:
    """Parse ``texts`` with the spaCy model ``model`` (``nlp.pipe`` in batches of ``batch_size``).

    The model's named-entity recognizer and lemmatizer are not loaded: nothing here reads them, and
    they do not change the tags, heads, sentences or noun chunks.

    Returns:
        The segments, in the order of ``texts``, and the provenance of the parse: ``spacy`` (version),
        ``model`` (the name it was loaded by), ``model_version``, ``lang`` and ``pipeline`` (the
        components run, comma-separated).

    Raises:
        InputError: The model is not installed, or it has no dependency parser.
        ValueError: ``segment_ids`` and ``texts`` differ in length.
    """
    if len(segment_ids) != len(texts):
        raise ValueError(f"{len(segment_ids)} segment ids for {len(texts)} texts")
    spacy = _import_spacy([model])  # only here: reading and perturbing parses needs no spaCy

    try:
        nlp = spacy.load(model, exclude=list(_UNUSED_COMPONENTS))
    except OSError as error:
        raise InputError(
            f"spaCy model {model!r} is not installed: it is provided by the Python package "
            f"{_model_package(model)!r} (pip install {_model_package(model)}; the models the default "
            f"config uses are pinned in requirements.txt). spaCy said: {error}"
        ) from None
    if not nlp.has_pipe("parser"):
        raise InputError(f"spaCy model {model!r} has no dependency parser (components: {', '.join(nlp.pipe_names)})")
    docs = nlp.pipe(texts, batch_size=batch_size)
    segments = [parsed_segment_from_doc(str(segment_id), doc) for segment_id, doc in zip(segment_ids, docs)]
    provenance = {
        "spacy": spacy.__version__,
        "model": model,
        "model_version": str(nlp.meta.get("version", "")),
        "lang": nlp.lang,
        "pipeline": ",".join(nlp.pipe_names),
    }
    return segments, provenance


def parse_samples(
    samples: Mapping[str, pd.DataFrame], models: Mapping[str, str], batch_size: int,
) -> dict[str, dict[str, dict[str, ParsedSegment]]]:
    """Parse the sides of sampled test-set tables in one go (test set -> rows): test set -> side -> segment id
    -> parse, for each side named in ``models`` (side -> spaCy model), as the parse tables would hold them
    (a segment without tokens has no entry). For jobs that have no parse tables (the sampled reviews)."""
    parses: dict[str, dict[str, dict[str, ParsedSegment]]] = {testset: {} for testset in samples}
    _import_spacy(list(models.values()))  # torch stays out only if no model of this process needs it
    for side, model in models.items():
        keys = [(testset, str(segment_id)) for testset, sample in samples.items() for segment_id in sample["segment_id"]]
        texts = [text for sample in samples.values() for text in sample[side]]
        segments, _ = parse_texts([segment_id for _, segment_id in keys], texts, model, batch_size)
        for (testset, _), segment in zip(keys, segments):
            if segment.tokens:
                parses[testset].setdefault(side, {})[segment.segment_id] = segment
        for testset in samples:
            parses[testset].setdefault(side, {})
    return parses
