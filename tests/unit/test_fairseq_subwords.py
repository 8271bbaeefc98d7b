"""The fairseq subword pipeline: Moses tokenization, BPE and the way back, line breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlp_robustness.errors import InputError
from nlp_robustness.systems.fairseq.subwords import SubwordCodec, learn_joint_bpe, single_line

pytest.importorskip("sacremoses")
pytest.importorskip("subword_nmt")

FRENCH = [
    "L'homme a dit « bonjour » & au-revoir, n'est-ce pas ?",
    "Le sportif a sauté jeudi d'un hélicoptère au-dessus de Bogota, la capitale de la Colombie.",
    "Il coûte 3,50 euros (environ 4 dollars) : cher !",
]
ENGLISH = [
    "Sportsman Jhonathan Florez jumped from a helicopter above Bogota, the capital of Colombia, on Thursday.",
    "It's a well-known fact: \"quotes\" & ampersands survive.",
    "A mother-in-law's 3-4 e-mails.",
]


def test_tokenization_escapes_and_splits_hyphens_like_the_wmt14_recipe() -> None:
    codec = SubwordCodec()
    tokens = codec.tokenize(["It's a mother-in-law & co."], "en")[0]
    assert tokens == "It &apos;s a mother @-@ in @-@ law &amp; co ."


@pytest.mark.parametrize(("language", "segments"), [("fr", FRENCH), ("en", ENGLISH)])
def test_detokenization_restores_the_normalised_text(language: str, segments: list[str]) -> None:
    codec = SubwordCodec()
    restored = codec.decode(codec.tokenize(segments, language), language)
    # Moses punctuation normalisation turns « » into plain quotes; everything else comes back as it was
    expected = [segment.replace("« ", '"').replace(" »", '"') for segment in segments]
    assert restored == expected


def test_bpe_units_join_back_into_the_tokens(tmp_path: Path) -> None:
    tokenized = SubwordCodec().tokenize(ENGLISH * 3 + FRENCH * 3, "en")
    codes = learn_joint_bpe(tokenized, merges=40, min_frequency=1)
    assert codes.startswith("#version")
    assert len(codes.splitlines()) - 1 == 40
    (tmp_path / "bpecodes").write_text(codes, encoding="utf-8")
    codec = SubwordCodec(tmp_path / "bpecodes")
    encoded = codec.encode(["Helicopters jumped above unbelievable mountains."], "en")[0]
    assert "@@ " in encoded  # unseen words are split
    assert encoded.replace("@@ ", "") == codec.tokenize(["Helicopters jumped above unbelievable mountains."], "en")[0]
    assert codec.decode([encoded], "en") == ["Helicopters jumped above unbelievable mountains."]


def test_decode_joins_units_and_undoes_aggressive_hyphen_splits_at_edges() -> None:
    codec = SubwordCodec()
    assert codec.decode(["Jhon@@ na @-@ de , l@@ a", "anti @-@", ""], "fr") == ["Jhonna-de, la", "anti-", ""]


def test_encode_without_codes_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="no BPE codes"):
        SubwordCodec().encode(["x"], "en")


def test_bad_codes_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        SubwordCodec(tmp_path / "missing.codes")
    broken = tmp_path / "broken.codes"
    broken.write_text("#version: 0.2\nonlyonefield\n", encoding="utf-8")
    with pytest.raises(InputError, match="broken.codes"):
        SubwordCodec(broken)


def test_single_line_replaces_every_line_boundary() -> None:
    assert single_line("a\nb\r\nc\rd\u2028e") == "a b c d e"
    assert single_line("") == ""
