"""Sentence BLEU and chrF of many pairs at once, bit-identical to sacrebleu's ``sentence_bleu``/``sentence_chrf``.

:func:`sentence_bleu_many` and :func:`sentence_chrf_many` score every hypothesis against its single reference
and return the same float64 values as ``sacrebleu.sentence_bleu(h, [r], ...)`` and
``sacrebleu.sentence_chrf(h, [r], ...)`` with the same keyword settings (so the metric signature is
sacrebleu's own), several times faster than the per-sentence loop. :func:`corpus_statistics_many` gives the same
integer statistics in sacrebleu's per-segment layout, for corpus scores re-summed over bootstrap replicates
(nlp_robustness.scoring.corpus_scores).

How, and why the floats are the same:

* **Segmentation** is sacrebleu's. Each distinct segment is processed once. BLEU segments are pre-processed
  as ``BLEU._preprocess_segment`` does (lowercase if asked, ``rstrip``, the tokenizer) and split on
  whitespace; ``none`` is just the split, other tokenizers (``intl``, ``char``, ``zh``, ...) are sacrebleu's
  objects called per distinct segment. ``13a`` (the default) is applied per distinct *word*: its whole-line
  string replacements run on the line, the line is cut at its ASCII spaces, and sacrebleu's
  ``TokenizerRegexp`` (13a's second stage) runs on ``" " + word + " "``. This equals running it on the line:
  its first rule puts spaces around single characters of one class (spaces included); its other rules rewrite
  two-character windows in which a space can only be the first character (``([^0-9])([.,])``), only the
  second (``([.,])([^0-9])``) or none (``([0-9])(-)``); no rule removes a space, so none sees across a space
  differently from the padded piece alone, and the final whitespace split yields the pieces' tokens in order.
  The same argument inside a word gives two shortcuts (about three words in four on WMT'22 skip the regular
  expressions): a word without any character a rule needs is its own tokens; otherwise the first rule is
  applied with ``str.translate`` (a per-character substitution, read off the rule itself) and each resulting
  piece is left as it is if no later rule can match it, split into ``X`` and the stop if it is ``X`` + ``.``/``,``
  with no ``.``/``,``/digit-dash in ``X`` and ``X`` not ending in a digit, else given to ``TokenizerRegexp``.
  chrF removes whitespace as sacrebleu does (``"".join(line.split())``) and counts Python characters.
* **Statistics** (n-gram totals, clipped matches, lengths) are integers computed by
  :mod:`nlp_robustness.scoring.bulk_ngrams` without hashing; integers are exact.
* **Scores** are computed from those integers by sacrebleu's own code, once per distinct row of statistics:
  ``BLEU.compute_bleu`` (as ``BLEU._compute_score_from_stats`` calls it) and ``CHRF._compute_f_score``
  (with the ``[hyp, ref, match]`` triples of ``CHRF._get_match_statistics``, which counts no hypothesis
  n-grams of an order the reference has none of). The final formulas are not vectorised: numpy's ``exp`` and
  ``log`` may differ from ``math``'s in the last bit.

chrF++ (``word_order > 0``) falls back to sacrebleu's own loop (exact by definition). Inputs are scored in
contiguous parts of at most :data:`PART_PAIRS` pairs (bounded memory); ``processes > 1`` scores the parts of
inputs of at least :data:`PARALLEL_MIN_PAIRS` pairs in worker processes. Each pair's score depends on that pair
alone and the parts are concatenated in input order, so the values depend on neither.
"""

from __future__ import annotations

import multiprocessing
import re
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.helpers import extract_all_char_ngrams, extract_all_word_ngrams

from nlp_robustness.errors import InputError
from nlp_robustness.scoring.bulk_ngrams import character_ids, clipped_matches, distinct_ids, gather_runs, symbol_ids

__all__ = ["PARALLEL_MIN_PAIRS", "PART_PAIRS", "check_pairs", "corpus_statistics_many", "sentence_bleu_many", "sentence_chrf_many"]

#: Below this many pairs ``processes`` is ignored (starting workers costs more than it saves).
PARALLEL_MIN_PAIRS = 20_000
#: Pairs scored together (one vocabulary, one set of arrays); larger inputs are cut into parts this long.
PART_PAIRS = 50_000
BLEU_ORDER = 4


def check_pairs(
    hypotheses: Sequence[str], references: Sequence[str], names: tuple[str, str] = ("hypotheses", "references")
) -> None:
    """Raise InputError unless both are equally long sequences of strings (``names`` name them in the message)."""
    first, second = names
    for name, values in ((first, hypotheses), (second, references)):
        if isinstance(values, str):
            raise InputError(f"{name}: expected a sequence of segments, got a single string")
    if len(hypotheses) != len(references):
        raise InputError(
            f"{first}/{second}: length mismatch, {len(hypotheses)} {first} "
            f"for {len(references)} {second}"
        )
    for name, values in ((first, hypotheses), (second, references)):
        for position, value in enumerate(values):
            if not isinstance(value, str):
                raise InputError(f"{name}[{position}]: expected a string, got {type(value).__name__}")


#: The characters any rule of sacrebleu's ``TokenizerRegexp`` needs (the first rule's class, ``.``, ``,``, ``-``):
#: a word with none of them is left as it is (its tokens: ``word.split()``).
_13A_ACTS_ON = re.compile(r"[\{-\~\[-\` -\&\(-\+\:-\@\/.,\-]")
#: Where the last three rules of sacrebleu's ``TokenizerRegexp`` (``([^0-9])([.,])``, ``([.,])([^0-9])``,
#: ``([0-9])(-)``) can match in a piece: a piece without either is left as it is by them.
_LATER_RULES = re.compile(r"[.,]|[0-9]-")
_DIGIT_DASH = re.compile(r"[0-9]-")
#: A piece ``X + c``: ``c`` one ``.``/``,``, ``X`` without any and not ending in a digit. If ``X`` has no digit
#: before a dash, the rules give ``X c`` (the second splits off ``c``, the third and fourth find nothing more).
_WORD_THEN_STOP = re.compile(r"[^.,]*[^.,0-9][.,]")


def _first_rule_table(regexp: Any) -> dict[int, str]:
    """sacrebleu's first 13a rule (``c -> " c "`` for each character of one ASCII class) as a ``str.translate``
    table, read off the rule itself; the class holds ASCII ranges only, so code points 0-127 are all it can match."""
    pattern, replacement = regexp._re[0]
    if replacement != r" \1 ":
        raise RuntimeError(f"sacrebleu's 13a first rule changed: {pattern.pattern!r} -> {replacement!r}")
    return {code: f" {chr(code)} " for code in range(128) if pattern.fullmatch(chr(code))}


def _word_tokens_13a(word: str, regexp: Any, first_rule: dict[int, str]) -> list[str]:
    """13a tokens of one space-free word: the first rule isolates its characters with spaces (a per-character
    substitution, so ``translate`` is the same), then, by the argument of the module docstring, each
    space-separated piece is tokenised alone: by sacrebleu's ``TokenizerRegexp`` unless no later rule can apply
    or the piece is a word and a final stop (the two cases above, about three in four pieces on WMT'22)."""
    tokens: list[str] = []
    for piece in word.translate(first_rule).split(" "):
        if not _LATER_RULES.search(piece):
            tokens += piece.split()
        elif _WORD_THEN_STOP.fullmatch(piece) and not _DIGIT_DASH.search(piece):
            tokens += piece[:-1].split()
            tokens.append(piece[-1])
        else:
            tokens += regexp(f" {piece} ").split()
    return tokens


def _preprocess_13a(line: str) -> str:
    """The whole-line replacements of sacrebleu's ``Tokenizer13a.__call__``, before its ``TokenizerRegexp``."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return line


def _token_ids_13a(lines: list[str], metric: BLEU) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Token ids and lengths of 13a-tokenised ``lines`` (pre-processed by ``BLEU._preprocess_segment`` but
    the tokenizer), tokenising each distinct space-separated word once (see the module docstring)."""
    regexp = metric.tokenizer._post_tokenizer
    prepared = [_preprocess_13a(line) for line in lines]
    words_per_line = np.fromiter((line.count(" ") + 1 for line in prepared), dtype=np.int64, count=len(prepared))
    distinct, word_ids = distinct_ids(" ".join(prepared).split(" "))
    first_rule, acts_on = _first_rule_table(regexp), _13A_ACTS_ON.search
    token_ids, tokens_per_word = symbol_ids(
        [_word_tokens_13a(word, regexp, first_rule) if acts_on(word) else word.split() for word in distinct]
    )
    gathered, counts = gather_runs(token_ids, tokens_per_word, word_ids)
    line_starts = np.concatenate(([0], np.cumsum(words_per_line)[:-1]))
    lengths = np.add.reduceat(counts, line_starts) if len(lines) else np.zeros(0, dtype=np.int64)
    return gathered, lengths.astype(np.int64)


def _bleu_token_ids(
    hypotheses: Sequence[str], references: Sequence[str], metric: BLEU, tokenize: str
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Token ids (one vocabulary for both sides) and lengths of the hypotheses and of the references."""
    # Each distinct segment is tokenised once (references are often shared by several systems' outputs).
    lines, which = distinct_ids([*hypotheses, *references])
    if tokenize in ("13a", "none"):
        # BLEU._preprocess_segment up to the tokenizer: lowercase if asked, strip trailing whitespace.
        lines = [line.lower().rstrip() if metric.lowercase else line.rstrip() for line in lines]
        ids, lengths = _token_ids_13a(lines, metric) if tokenize == "13a" else symbol_ids([line.split() for line in lines])
    else:
        ids, lengths = symbol_ids([metric._preprocess_segment(line).split() for line in lines])
    ids, lengths = gather_runs(ids, lengths, which)
    pairs = len(hypotheses)
    split = int(lengths[:pairs].sum())
    return ids[:split], lengths[:pairs], ids[split:], lengths[pairs:]


def _distinct_rows(statistics: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct rows of a non-negative integer matrix and, per input row, the index of its distinct row."""
    if len(statistics) == 0:
        return statistics, np.zeros(0, dtype=np.int64)
    bits = int(statistics.max()).bit_length()
    if bits * statistics.shape[1] <= 63:  # pack each row into one integer: a 1-D unique is much faster
        packed = np.zeros(len(statistics), dtype=np.int64)
        for column in statistics.T:
            packed = (packed << bits) | column
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
        return statistics[first], inverse.reshape(-1)
    rows, inverse = np.unique(statistics, axis=0, return_inverse=True)
    return rows, inverse.reshape(-1)


def _word_matches(hypothesis: str, reference: str, order: int) -> list[int]:
    """Clipped match counts of whitespace-separated n-grams, orders 1..order (the fallback for one pair)."""
    hyp_ngrams, _ = extract_all_word_ngrams(hypothesis, 1, order)
    ref_ngrams, _ = extract_all_word_ngrams(reference, 1, order)
    matches = [0] * order
    for ngram, count in hyp_ngrams.items():
        matches[len(ngram) - 1] += min(count, ref_ngrams.get(ngram, 0))
    return matches


def _bleu_counts(hypotheses: Sequence[str], references: Sequence[str], metric: BLEU, tokenize: str) -> NDArray[np.int64]:
    """Per pair ``(sys_len, ref_len, matches of orders 1..4)``: every BLEU statistic but the totals, which are
    ``max(sys_len - n + 1, 0)``."""
    hyp, hyp_lengths, ref, ref_lengths = _bleu_token_ids(hypotheses, references, metric, tokenize)

    def one_pair(index: int) -> list[int]:
        return _word_matches(
            metric._preprocess_segment(hypotheses[index]), metric._preprocess_segment(references[index]), BLEU_ORDER
        )

    matches = clipped_matches(hyp, hyp_lengths, ref, ref_lengths, BLEU_ORDER, one_pair)
    return np.column_stack((hyp_lengths, ref_lengths, matches)).astype(np.int64)


def _bleu_part(hypotheses: Sequence[str], references: Sequence[str], options: dict[str, Any]) -> NDArray[np.float64]:
    tokenize = options["tokenize"]
    metric = BLEU(
        lowercase=options["lowercase"], tokenize=tokenize, smooth_method=options["smooth_method"],
        smooth_value=options["smooth_value"], effective_order=options["use_effective_order"],
    )
    # The score is a function of (sys_len, ref_len, matches): compute it once per distinct row.
    rows, inverse = _distinct_rows(_bleu_counts(hypotheses, references, metric, tokenize))
    scores = np.empty(len(rows), dtype=np.float64)
    for index, (sys_len, ref_len, *correct) in enumerate(rows.tolist()):
        total = [max(sys_len - n, 0) for n in range(BLEU_ORDER)]
        scores[index] = BLEU.compute_bleu(
            correct=correct, total=total, sys_len=sys_len, ref_len=ref_len, smooth_method=metric.smooth_method,
            smooth_value=metric.smooth_value, effective_order=metric.effective_order,
            max_ngram_order=metric.max_ngram_order,
        ).score
    return scores[inverse]


def _chrf_counts(hypotheses: Sequence[str], references: Sequence[str], metric: CHRF) -> NDArray[np.int64]:
    """Per pair ``(hyp_len, ref_len, matches of orders 1..char_order)`` in characters (chrF without word n-grams):
    every chrF statistic, the n-gram counts being ``max(length - n + 1, 0)``."""
    order = metric.char_order
    lines, which = distinct_ids([*hypotheses, *references])
    ids, lengths = character_ids(lines if metric.whitespace else ["".join(line.split()) for line in lines])
    ids, lengths = gather_runs(ids, lengths, which)
    pairs = len(hypotheses)
    split = int(lengths[:pairs].sum())
    hyp, hyp_lengths, ref, ref_lengths = ids[:split], lengths[:pairs], ids[split:], lengths[pairs:]

    def one_pair(index: int) -> list[int]:
        hyp_ngrams = extract_all_char_ngrams(hypotheses[index], order, metric.whitespace)
        ref_ngrams = extract_all_char_ngrams(references[index], order, metric.whitespace)
        return [CHRF._get_match_statistics(h, r)[2] for h, r in zip(hyp_ngrams, ref_ngrams)]

    matches = clipped_matches(hyp, hyp_lengths, ref, ref_lengths, order, one_pair)
    return np.column_stack((hyp_lengths, ref_lengths, matches)).astype(np.int64)


def _chrf_part(hypotheses: Sequence[str], references: Sequence[str], options: dict[str, Any]) -> NDArray[np.float64]:
    metric = CHRF(
        char_order=options["char_order"], word_order=options["word_order"], beta=options["beta"],
        whitespace=not options["remove_whitespace"], eps_smoothing=options["eps_smoothing"],
    )
    if metric.word_order > 0:
        return np.array([metric.sentence_score(h, [r]).score for h, r in zip(hypotheses, references)], dtype=np.float64)
    order = metric.char_order
    rows, inverse = _distinct_rows(_chrf_counts(hypotheses, references, metric))
    scores = np.empty(len(rows), dtype=np.float64)
    for index, (hyp_len, ref_len, *match) in enumerate(rows.tolist()):
        statistics: list[int] = []
        for n in range(order):
            ref_count = max(ref_len - n, 0)
            statistics += (max(hyp_len - n, 0) if ref_count else 0, ref_count, match[n])
        scores[index] = metric._compute_f_score(statistics)
    return scores[inverse]


def _score_part(arguments: tuple[str, Sequence[str], Sequence[str], dict[str, Any]]) -> NDArray[np.float64]:
    kind, hypotheses, references, options = arguments
    return (_bleu_part if kind == "bleu" else _chrf_part)(hypotheses, references, options)


def _score(kind: str, hypotheses: Sequence[str], references: Sequence[str], options: dict[str, Any], processes: int) -> NDArray[np.float64]:
    """Check the input, then score it in parts of at most :data:`PART_PAIRS` pairs (bounded memory), in worker
    processes if ``processes > 1`` and there are at least :data:`PARALLEL_MIN_PAIRS` pairs."""
    check_pairs(hypotheses, references)
    if not isinstance(processes, int) or isinstance(processes, bool) or processes < 1:
        raise InputError(f"processes: expected a positive integer, got {processes!r}")
    hypotheses, references = list(hypotheses), list(references)
    parallel = processes > 1 and len(hypotheses) >= PARALLEL_MIN_PAIRS
    size = min(PART_PAIRS, -(-len(hypotheses) // processes)) if parallel else PART_PAIRS
    parts = [
        (kind, hypotheses[start : start + size], references[start : start + size], options)
        for start in range(0, len(hypotheses), size)
    ]
    if not parts:
        return np.zeros(0, dtype=np.float64)
    if not parallel:
        return np.concatenate([_score_part(part) for part in parts])
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with context.Pool(min(processes, len(parts))) as pool:
        return np.concatenate(list(pool.imap(_score_part, parts)))


def sentence_bleu_many(
    hypotheses: Sequence[str],
    references: Sequence[str],
    *,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    tokenize: str = "13a",
    use_effective_order: bool = True,
    processes: int = 1,
) -> NDArray[np.float64]:
    """``sacrebleu.sentence_bleu(h, [r], ...).score`` for every pair (bit-identical), as a float64 array.

    Raises:
        InputError: Length mismatch, a non-string segment, an unknown tokenizer or smoothing method, or a
            non-positive ``processes``.
    """
    if tokenize not in BLEU.TOKENIZERS:
        raise InputError(f"tokenize: unknown sacrebleu tokenizer {tokenize!r} (known: {', '.join(BLEU.TOKENIZERS)})")
    if smooth_method not in BLEU.SMOOTH_DEFAULTS:
        raise InputError(f"smooth_method: unknown {smooth_method!r} (known: {', '.join(BLEU.SMOOTH_DEFAULTS)})")
    options = {
        "smooth_method": smooth_method, "smooth_value": smooth_value, "lowercase": lowercase,
        "tokenize": tokenize, "use_effective_order": use_effective_order,
    }
    return _score("bleu", hypotheses, references, options, processes)


def sentence_chrf_many(
    hypotheses: Sequence[str],
    references: Sequence[str],
    *,
    char_order: int = CHRF.CHAR_ORDER,
    word_order: int = CHRF.WORD_ORDER,
    beta: int = CHRF.BETA,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
    processes: int = 1,
) -> NDArray[np.float64]:
    """``sacrebleu.sentence_chrf(h, [r], ...).score`` for every pair (bit-identical), as a float64 array.

    ``word_order > 0`` (chrF++) is scored by sacrebleu's own per-sentence loop.

    Raises:
        InputError: Length mismatch, a non-string segment, a character order below 1 or a negative word
            order, or a non-positive ``processes``.
    """
    if char_order < 1 or word_order < 0:
        raise InputError(f"char_order/word_order: expected >= 1 and >= 0, got {char_order} and {word_order}")
    options = {
        "char_order": char_order, "word_order": word_order, "beta": beta,
        "remove_whitespace": remove_whitespace, "eps_smoothing": eps_smoothing,
    }
    return _score("chrf", hypotheses, references, options, processes)


def corpus_statistics_many(hypotheses: Sequence[str], references: Sequence[str], metric: BLEU | CHRF) -> NDArray[np.int64] | None:
    """sacrebleu's per-segment sufficient statistics of ``metric`` (a corpus-level BLEU or chrF object), equal to
    ``metric._extract_corpus_statistics(hypotheses, [references])`` (tested): BLEU ``[sys_len, ref_len, correct_1..4,
    total_1..4]``, chrF ``[hyp, ref, match]`` per character order (no hypothesis n-grams counted for an order the
    reference has none of, as ``CHRF._get_match_statistics``). The corpus score re-sums them (the bootstrap of
    nlp_robustness.statistics.corpus_uncertainty re-sums them per replicate).

    None where this path does not apply (chrF++ or lowercased chrF, BLEU with another n-gram order): the caller
    takes sacrebleu's own extraction. Inputs are processed in parts of at most :data:`PART_PAIRS` pairs.

    Raises:
        InputError: Length mismatch or a non-string segment.
    """
    check_pairs(hypotheses, references)
    hypotheses, references = list(hypotheses), list(references)
    if isinstance(metric, BLEU):
        if metric.max_ngram_order != BLEU_ORDER:
            return None
        tokenize = metric.tokenizer.signature()
        if tokenize not in BLEU.TOKENIZERS:
            return None
    elif isinstance(metric, CHRF):
        if metric.word_order > 0 or metric.lowercase:
            return None
    else:
        return None
    parts = []
    for start in range(0, len(hypotheses), PART_PAIRS):
        part = (hypotheses[start : start + PART_PAIRS], references[start : start + PART_PAIRS])
        parts.append(_bleu_counts(*part, metric, tokenize) if isinstance(metric, BLEU) else _chrf_counts(*part, metric))
    n_orders = BLEU_ORDER if isinstance(metric, BLEU) else metric.char_order
    counts = np.concatenate(parts) if parts else np.zeros((0, 2 + n_orders), dtype=np.int64)
    lengths, matches = counts[:, :2], counts[:, 2:]
    shifts = np.arange(n_orders)  # an order-n n-gram count of a length-L segment is max(L - n + 1, 0)
    if isinstance(metric, BLEU):
        totals = np.maximum(lengths[:, :1] - shifts, 0)
        return np.column_stack((lengths, matches, totals))
    reference_counts = np.maximum(lengths[:, 1:2] - shifts, 0)
    hypothesis_counts = np.where(reference_counts > 0, np.maximum(lengths[:, :1] - shifts, 0), 0)
    return np.stack((hypothesis_counts, reference_counts, matches), axis=2).reshape(len(counts), -1)
