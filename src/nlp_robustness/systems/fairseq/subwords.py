"""Subword pipeline of the fairseq systems: Moses normalisation and tokenization, subword-nmt BPE, and back.

Text is prepared as the fairseq recipe that trained the WMT'14 en-fr ConvS2S did
(``examples/translation/prepare-wmt14en2fr.sh``): Moses punctuation normalisation, Moses
tokenization with aggressive hyphen splitting (``-a``) and HTML escaping (tokenizer.perl's
default; also what fairseq's own ``--tokenizer moses`` does), then subword-nmt BPE with the
model's codes. sacremoses and subword-nmt do this, no hand-written rules. The output is restored by
removing the ``@@ `` continuation markers and Moses detokenization (which unescapes) in the target
language. The script also removed non-printing characters; sacremoses' normaliser does the same
with ``post_remove_control_chars``. Line breaks inside a segment become spaces (a line break would
otherwise split it in two).
"""

from __future__ import annotations

import io
import os
import re
from typing import Any, Iterable

from nlp_robustness.errors import InputError

__all__ = ["SubwordCodec", "learn_joint_bpe", "single_line"]

_BPE_MARKER = "@@ "
# Moses' aggressive hyphen splitting writes "a-b" as "a @-@ b"; its detokenizer leaves "@-@" alone
# (fairseq's recipes undo it with sed 's/ @\(\S*\)@ /\1/g'). A model may also emit it at an edge.
_AGGRESSIVE_SPLIT = re.compile(r" ?@(-)@ ?")


def single_line(segment: str) -> str:
    """``segment`` with every line boundary (``\\n``, ``\\r``, U+2028, ...) replaced by a space."""
    return " ".join(segment.splitlines()) if segment else segment


class SubwordCodec:
    """Moses normalisation + tokenization + subword-nmt BPE, and the way back (see the module doc).

    Args:
        bpe_codes: A subword-nmt codes file, or ``None`` to tokenize only (before BPE is learnt).
    """

    def __init__(self, bpe_codes: str | os.PathLike[str] | None = None) -> None:
        from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

        self._normalizer_class = MosesPunctNormalizer
        self._tokenizer_class = MosesTokenizer
        self._detokenizer_class = MosesDetokenizer
        self._cache: dict[tuple[str, str], Any] = {}
        self._bpe = None
        if bpe_codes is not None:
            from subword_nmt.apply_bpe import BPE

            try:
                with open(bpe_codes, encoding="utf-8") as handle:
                    self._bpe = BPE(handle)
            except FileNotFoundError:
                raise InputError(f"BPE codes file not found: {bpe_codes}") from None
            except (ValueError, IndexError, UnicodeDecodeError, SystemExit) as error:
                # subword-nmt calls sys.exit() on a malformed line, after printing it to stderr
                raise InputError(f"{bpe_codes}: not a subword-nmt BPE codes file ({error or 'malformed line'})") from None

    def _tool(self, kind: str, language: str) -> Any:
        key = (kind, language)
        if key not in self._cache:
            if kind == "normalizer":
                self._cache[key] = self._normalizer_class(language, post_remove_control_chars=True)
            elif kind == "tokenizer":
                self._cache[key] = self._tokenizer_class(language)
            else:
                self._cache[key] = self._detokenizer_class(language)
        return self._cache[key]

    def tokenize(self, segments: Iterable[str], language: str) -> list[str]:
        """Moses-normalise and tokenize (aggressive hyphen splitting, HTML escaping), one line each."""
        normalizer, tokenizer = self._tool("normalizer", language), self._tool("tokenizer", language)
        return [
            tokenizer.tokenize(
                normalizer.normalize(single_line(segment)), aggressive_dash_splits=True, return_str=True, escape=True
            )
            for segment in segments
        ]

    def encode(self, segments: Iterable[str], language: str) -> list[str]:
        """Tokenize and split into BPE units (needs the codes)."""
        if self._bpe is None:
            raise ValueError("this SubwordCodec has no BPE codes")
        return [self._bpe.process_line(line) for line in self.tokenize(segments, language)]

    def decode(self, lines: Iterable[str], language: str) -> list[str]:
        """Join BPE units, undo aggressive hyphen splitting and Moses-detokenize (unescaping) in ``language``."""
        detokenizer = self._tool("detokenizer", language)
        return [
            detokenizer.detokenize(_AGGRESSIVE_SPLIT.sub(r"\1", (line + " ").replace(_BPE_MARKER, "")).split())
            for line in lines
        ]


def learn_joint_bpe(tokenized_lines: Iterable[str], merges: int, min_frequency: int = 2) -> str:
    """Learn ``merges`` subword-nmt BPE merge operations on tokenized text of both languages.

    Returns:
        The codes file's text (subword-nmt's format, with its version header).
    """
    from subword_nmt.learn_bpe import learn_bpe

    codes = io.StringIO()
    # learn_bpe reads a file object of text lines (it counts words itself).
    learn_bpe(io.StringIO("\n".join(tokenized_lines) + "\n"), codes, merges, min_frequency=min_frequency)
    return codes.getvalue()
