"""The rules of the structure family (:mod:`nlp_robustness.perturbations.structure`, whose docstring says why
each preserves meaning): each rewrites one sentence of a parsed segment into :class:`~._rewrite.Piece`s, or
says why it does not apply."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from nlp_robustness.perturbations import _rewrite as rw
from nlp_robustness.perturbations._spelling import other_spelling
from nlp_robustness.perturbations._units import trailing_punctuation_start

__all__ = ["adverbial_fronting", "clause_fronting", "complementizer_drop", "coordination_swap", "relative_which_to_that",
           "spelling_variant"]


# --------------------------------------------------------------------------------------------
# adverbial_fronting
# --------------------------------------------------------------------------------------------

_ADVERBIAL_DEPS = frozenset({"advmod", "npadvmod", "prep", "obl", "tmod"})
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
_ALWAYS_TEMPORAL = frozenset({"during", "until", "till", "since", "throughout"})
_TEMPORAL_BEFORE_TIME_NOUN = frozenset({"in", "on", "at", "by", "over", "for"})
_EVENT_PREPOSITIONS = frozenset({"after", "before"})
_FINAL_MARKS = frozenset({".", "!"})
#: Frame adverbs set off by a comma wherever they stand.
_CONNECTIVES = frozenset({"however", "nevertheless", "nonetheless", "meanwhile"})


def _time_noun(tree: rw.Tree, index: int) -> bool:
    token = tree.tokens[index]
    word = token.text.lower()
    if word in rw.MONTHS_ONLY_AS_NAMES:
        return token.pos == "PROPN"
    return word in rw.TEMPORAL_NOUNS or rw.is_year(token.text)


def _movable(tree: rw.Tree, index: int) -> bool:
    """Whether a dependent of the main verb is a time or frame adjunct (the module docstring says why)."""
    token = tree.tokens[index]
    word = tree.lower(index)
    if token.dep == "advmod":
        return token.pos == "ADV" and word in rw.FRAME_ADVERBS
    if token.dep in ("npadvmod", "tmod"):
        return _time_noun(tree, index)
    if token.pos != "ADP":
        return False
    if word in _ALWAYS_TEMPORAL:
        return True
    objects = [child for child in tree.children[index] if tree.tokens[child].dep in ("pobj", "pcomp")]
    if len(objects) != 1:
        return False
    head = tree.tokens[objects[0]]
    if word in _TEMPORAL_BEFORE_TIME_NOUN:
        return head.dep == "pobj" and _time_noun(tree, objects[0])
    if word in _EVENT_PREPOSITIONS:
        return head.dep == "pcomp" or _time_noun(tree, objects[0])
    return False


def _clause(tree: rw.Tree, sentence: range) -> tuple[int, int] | str:
    """The main verb and where the final ``.``/``!`` starts, for a declarative sentence; else why not."""
    roots = tree.roots(sentence)
    if len(roots) != 1 or tree.tokens[roots[0]].pos not in ("VERB", "AUX"):
        return "no single verb at the root"
    root = roots[0]
    body_end = trailing_punctuation_start(tree.tokens, sentence.start, sentence.stop)
    final = {tree.tokens[index].text for index in range(body_end, sentence.stop)}
    if not final <= _FINAL_MARKS or tree.tokens[sentence.start].pos == "PUNCT":
        return "not a plain sentence (question, quotation or bracket at its edges)"
    subject = tree.child(root, _SUBJECT_DEPS)
    if subject is None or subject > root:
        return "no subject before the verb"
    return root, body_end


def _subject_start(tree: rw.Tree, root: int) -> int | None:
    span = tree.span(tree.child(root, _SUBJECT_DEPS))
    return None if span is None else span.start


def _single_verb_after(tree: rw.Tree, root: int, stop: int) -> bool:
    """Whether no verb but the main one stands between it and ``stop`` (an adjunct there could attach to it)."""
    return not any(tree.tokens[index].pos in ("VERB", "AUX") and tree.tokens[index].dep not in ("aux", "auxpass")
                   for index in range(root + 1, stop))


def adverbial_fronting(tree: rw.Tree, sentence: range, settings: Mapping[str, Any]) -> list[rw.Piece] | str:
    """Move a time or frame adjunct of the main verb between the end and the start of a declarative sentence.

    A sentence that starts with such an adjunct of the main verb, followed by a comma, gets it at its end
    (the comma goes): "Yesterday, he left." -> "He left yesterday."; otherwise one that ends (before its
    final ``.``/``!`` or none) with one after the verb gets it at its start, followed by a comma (a comma
    before it goes): "He left yesterday." -> "Yesterday, he left."; "This is wrong, however." ->
    "However, this is wrong." (a connective keeps a comma at the end too). The adjunct
    (:func:`_movable`) is a whole contiguous subtree of at most ``max_phrase_tokens`` tokens without
    punctuation; the sentence has one root, a verb whose subject starts the clause left behind, and no
    other verb between the main verb and the adjunct's place at the end. The new first word is
    capitalised; the old one is lowered unless it is a proper noun, "I" or an acronym.
    """
    return _move_to_other_end(tree, sentence, lambda child: tree.tokens[child].dep in _ADVERBIAL_DEPS and _movable(tree, child),
                              settings["max_phrase_tokens"], "time or frame adjunct")


_SUBORDINATORS = frozenset({"because", "when", "if", "although", "though", "while", "after", "before", "since", "unless",
                            "once", "until", "whereas", "whenever"})
#: A pronoun of the main clause may take a noun of the subordinate clause as its referent only when the
#: subordinate clause comes first: "He left because John was tired" (he is not John) and "Because John was
#: tired, he left" (he may be John) differ, so neither becomes the other; "John left because he was tired"
#: and "Because he was tired, John left" mean the same.
_PERSONAL_PRONOUNS = frozenset({"he", "she", "it", "they", "him", "her", "them", "his", "its", "their", "hers", "theirs"})


def _subordinate_clause(tree: rw.Tree, child: int) -> bool:
    marks = [grandchild for grandchild in tree.children[child] if tree.tokens[grandchild].dep == "mark"]
    return tree.tokens[child].dep == "advcl" and len(marks) == 1 and tree.lower(marks[0]) in _SUBORDINATORS


def clause_fronting(tree: rw.Tree, sentence: range, settings: Mapping[str, Any]) -> list[rw.Piece] | str:
    """Move an adverbial clause of the main verb between the end and the start of a declarative sentence:
    "He left because he was tired." <-> "Because he was tired, he left."

    The clause is an ``advcl`` of the main verb introduced by one subordinator of :data:`_SUBORDINATORS`
    (because, when, if, although, while, after, before, since, unless, once, until, whereas, whenever;
    not "as", "so", "than"); otherwise the rule of ``adverbial_fronting`` (commas, capitals, the clause
    left behind starts with its subject and has no other verb where the clause could attach), with
    ``max_clause_tokens``. Skipped where the main clause holds a personal pronoun and the subordinate
    clause a noun (:data:`_PERSONAL_PRONOUNS` says why).
    """
    return _move_to_other_end(tree, sentence, lambda child: _subordinate_clause(tree, child), settings["max_clause_tokens"],
                              "subordinate clause", pronoun_check=True)


def _move_to_other_end(tree: rw.Tree, sentence: range, movable: Callable[[int], bool], max_tokens: int, what: str,
                       pronoun_check: bool = False) -> list[rw.Piece] | str:
    clause = _clause(tree, sentence)
    if isinstance(clause, str):
        return clause
    root, body_end = clause
    tokens = tree.tokens
    start = sentence.start
    final = rw.pieces(tokens[body_end:sentence.stop])

    def fits(span: range | None) -> bool:
        return span is not None and len(span) <= max_tokens and all(tokens[index].pos != "PUNCT" for index in span)

    for child in tree.children[root]:
        span = tree.span(child)
        if child > root or not fits(span) or span.start != start or not movable(child):
            continue
        comma = span.stop
        if not (comma + 1 < body_end and tokens[comma].text == ","):
            continue
        if _subject_start(tree, root) != comma + 1 or not _single_verb_after(tree, root, body_end):
            return f"the fronted {what} could attach elsewhere at the end"
        if pronoun_check and _pronoun_and_noun(tree, range(comma + 1, body_end), span):
            return f"a pronoun of the main clause and a noun of the {what}: what it refers to could change"
        rest = rw.pieces(tokens[comma + 1:body_end])
        phrase = rw.pieces(tokens[span.start:span.stop])
        rest[0] = rw.Piece(rw.capitalised(rest[0].text), rest[0].space_after)
        connective = tree.lower(child) in _CONNECTIVES
        rest[-1] = rw.Piece(rest[-1].text, not connective)
        phrase[0] = rw.Piece(rw.decapitalised(tokens[span.start]), phrase[0].space_after)
        phrase[-1] = rw.Piece(phrase[-1].text, tokens[body_end - 1].space_after)
        return rest + ([rw.Piece(",", True)] if connective else []) + phrase + final
    for child in reversed(tree.children[root]):
        span = tree.span(child)
        if child < root or span is None or span.stop != body_end or not movable(child):
            continue
        if not fits(span):
            return f"the {what} at the end is longer than the limit or holds punctuation"
        rest_end = span.start - 1 if tokens[span.start - 1].text == "," else span.start
        if rest_end <= root or _subject_start(tree, root) != start or not _single_verb_after(tree, root, span.start):
            return f"the sentence does not start with its subject, or another verb precedes the {what}"
        if pronoun_check and _pronoun_and_noun(tree, range(start, rest_end), span):
            return f"a pronoun of the main clause and a noun of the {what}: what it refers to could change"
        rest = rw.pieces(tokens[start:rest_end])
        phrase = rw.pieces(tokens[span.start:span.stop])
        phrase[0] = rw.Piece(rw.capitalised(phrase[0].text), phrase[0].space_after)
        rest[0] = rw.Piece(rw.decapitalised(tokens[start]), rest[0].space_after)
        rest[-1] = rw.Piece(rest[-1].text, tokens[body_end - 1].space_after)
        return [*phrase[:-1], rw.Piece(phrase[-1].text, False), rw.Piece(",", True), *rest, *final]
    return f"no {what} of the main verb at either end"


def _pronoun_and_noun(tree: rw.Tree, main: range, clause: range) -> bool:
    """Whether the main clause has a personal pronoun and the subordinate clause a noun it could refer to."""
    return (any(tree.lower(index) in _PERSONAL_PRONOUNS for index in main)
            and any(tree.tokens[index].pos in ("NOUN", "PROPN") for index in clause))


# --------------------------------------------------------------------------------------------
# coordination_swap
# --------------------------------------------------------------------------------------------

_NOUNS = frozenset({"NOUN", "PROPN"})
_MODIFIER_DEPS = frozenset({"compound", "amod", "nmod", "poss", "npadvmod"})
_POST_MODIFIER_DEPS = frozenset({"relcl", "acl", "prep", "appos"})


def _conjuncts(tree: rw.Tree, first: int, conjunctions: frozenset[str]) -> tuple[range, int, range] | str | None:
    """The two noun phrases of "X and Y" headed by ``first`` (its span, the conjunction, the second's span),
    why they may not swap, or None if ``first`` heads no such coordination."""
    tokens = tree.tokens
    conjs = [child for child in tree.children[first] if tokens[child].dep == "conj"]
    if tokens[first].pos not in _NOUNS or len(conjs) != 1 or tokens[conjs[0]].pos not in _NOUNS:
        return None
    second = conjs[0]
    ccs = [child for child in tree.children[first] if tokens[child].dep == "cc"]
    if len(ccs) != 1 or tree.lower(ccs[0]) not in conjunctions:
        return None
    cc = ccs[0]
    second_span = tree.span(second)
    whole = tree.span(first)
    if second_span is None or whole is None or whole.stop != second_span.stop or second_span.start != cc + 1:
        return "the coordination is not two contiguous phrases around the conjunction"
    first_span = range(whole.start, cc)
    if any(tokens[child].dep == "conj" for child in tree.children[second]) or tree.child(first, frozenset({"preconj"})):
        return "more than two conjuncts, or both/either/neither"
    parts = [*first_span, *second_span]
    if any(tokens[index].pos in ("NUM", "PUNCT", "PRON") for index in parts):
        return "a number, pronoun or punctuation in a conjunct"
    if tokens[first].dep in _MODIFIER_DEPS:
        return "the conjuncts modify a noun (congestion and greenhouse gases)"
    if tokens[first].dep == "conj" or any(tree.lower(index) in ("both", "either", "neither") for index in parts):
        return "more than two conjuncts, or both/either/neither"
    if tokens[first].dep == "pobj" and tree.has_head(tokens[first].head) and tokens[tokens[first].head].pos == "ADP" \
            and tokens[tokens[tokens[first].head].head].pos in _NOUNS:
        return "N of X and Y: the conjunction may join the larger noun phrase"
    if all(any(tokens[index].pos == "PROPN" for index in span) for span in (first_span, second_span)):
        return "proper nouns in both conjuncts (may be one name: Marks and Spencer)"
    after = second_span.stop
    if after < len(tokens) and tokens[after].dep in _POST_MODIFIER_DEPS and not second_span.start <= tokens[after].head < after:
        return "a modifier after the coordination may belong to the second conjunct or both"
    if frozenset({tree.lower(first), tree.lower(second)}) in rw.FROZEN_BINOMIALS:
        return "a fixed binomial"
    head = tokens[first].head
    if tree.has_head(first) and tree.lower(head) in ("between", "from"):
        return "between/from X and Y (a range)"
    if first_span.start < first and second_span.start == second:
        return "a modifier before the first noun may also modify the second"
    return first_span, cc, second_span


def coordination_swap(tree: rw.Tree, sentence: range, settings: Mapping[str, Any]) -> list[rw.Piece] | str:
    """Swap the two noun phrases of every "X and Y" / "X or Y" whose order carries no meaning.

    X is a noun (or proper noun) with exactly one ``conj`` child Y, a noun, and a ``cc`` child in
    ``conjunctions``; X's phrase (its subtree without the conjunction and Y's subtree) ends right before
    the conjunction and Y's phrase starts right after it. Skipped (the module docstring says why): a
    sentence with "respectively"; three or more conjuncts (X a conjunct itself) or a both/either/neither;
    a number, pronoun or punctuation mark in a phrase; proper nouns in both phrases; a fixed binomial;
    "between"/"from" X and Y; X a modifier of a noun ("congestion and greenhouse gases"); X the object of a
    preposition of a noun ("the use of X and Y", where "and" may join "the use of X" and Y instead, a
    frequent misparse); left modifiers on X but none on Y; a modifier right after Y that is not Y's own. Nested or overlapping coordinations: the leftmost is swapped. A phrase
    that started the sentence gives up its capital to the other.
    """
    tokens = tree.tokens
    if any(tree.lower(index) == "respectively" for index in sentence):
        return "'respectively' pairs the conjuncts with another list"
    conjunctions = frozenset(settings["conjunctions"])
    swaps: list[tuple[range, range]] = []
    reasons: list[str] = []
    taken = -1
    for index in sentence:
        found = _conjuncts(tree, index, conjunctions)
        if isinstance(found, str):
            reasons.append(found)
        elif found is not None and found[0].start > taken:
            swaps.append((found[0], found[2]))
            taken = found[2].stop - 1
    if not swaps:
        return reasons[0] if reasons else "no coordinated noun phrases"
    parts: list[rw.Piece] = []
    position = sentence.start
    for first, second in swaps:
        parts.extend(rw.pieces(tokens[position:first.start]))
        left, right = rw.pieces(tokens[second.start:second.stop]), rw.pieces(tokens[first.start:first.stop])
        if first.start == sentence.start:
            left[0] = rw.Piece(rw.capitalised(left[0].text), left[0].space_after)
            right[0] = rw.Piece(rw.decapitalised(tokens[first.start]), right[0].space_after)
        left[-1] = rw.Piece(left[-1].text, tokens[first.stop - 1].space_after)
        right[-1] = rw.Piece(right[-1].text, tokens[second.stop - 1].space_after)
        conjunction = rw.pieces(tokens[first.stop:second.start])
        parts.extend([*left, *conjunction, *right])
        position = second.stop
    parts.extend(rw.pieces(tokens[position:sentence.stop]))
    return parts


# --------------------------------------------------------------------------------------------
# Style: complementizer_drop, relative_which_to_that
# --------------------------------------------------------------------------------------------


def complementizer_drop(tree: rw.Tree, sentence: range, settings: Mapping[str, Any]) -> list[rw.Piece] | str:
    """Drop the optional "that" of an object clause: "He said that it works." -> "He said it works."

    The token "that" (not first in the sentence) is the ``mark`` of a ``ccomp`` clause whose head is a verb
    (not a copula: "my guess is that ...") standing right before the "that"; the clause's subject phrase
    starts right after it and not with a verb form ("understand that fighting them was ..." would read
    "understand fighting them"); the clause is not coordinated with another ("said that X but that Y")
    and is not a mandative subjunctive ("requires that staff be able"). Every such "that" of the
    sentence goes.
    """
    tokens = tree.tokens
    dropped = set()
    for index in sentence:
        token = tokens[index]
        if token.text != "that" or token.dep != "mark" or not tree.has_head(index) or index == sentence.start:
            continue
        clause = token.head
        if tokens[clause].dep != "ccomp" or not tree.has_head(clause) or clause < index:
            continue
        verb = tokens[clause].head
        subject = tree.child(clause, _SUBJECT_DEPS)
        if verb != index - 1 or tokens[verb].pos != "VERB" or subject is None:
            continue  # after a copula ("my guess is that ...") the "that" is not optional
        if any(tokens[child].dep == "conj" for child in tree.children[clause]):
            continue  # "said that X but that Y": the second "that" would stay alone
        if tokens[clause].text == "be" and tree.child(clause, frozenset({"aux", "auxpass"})) is None:
            continue  # a mandative subjunctive ("requires that staff be able") needs its "that"
        subject_span = tree.span(subject)
        # a subject that opens with a verb form ("that fighting them was ...") would read as the verb's object
        if subject_span is not None and subject_span.start == index + 1 and tokens[index + 1].pos not in ("PUNCT", "VERB"):
            dropped.add(index)
    if not dropped:
        return "no optional 'that' of an object clause right after its verb"
    return [piece for index, piece in zip(sentence, rw.pieces(tokens[sentence.start:sentence.stop])) if index not in dropped]


def relative_which_to_that(tree: rw.Tree, sentence: range, settings: Mapping[str, Any]) -> list[rw.Piece] | str:
    """"which" -> "that" as the subject or object of a restrictive relative clause: "the book which I read"
    -> "the book that I read".

    The token "which" (lower case) is the ``nsubj``, ``nsubjpass`` or ``dobj`` of a ``relcl`` clause, is
    the clause's first token, and follows its antecedent directly (no comma: a non-restrictive clause;
    no preposition: "in which"). Every such "which" of the sentence changes.
    """
    tokens = tree.tokens
    parts = rw.pieces(tokens[sentence.start:sentence.stop])
    changed = False
    for index in sentence:
        token = tokens[index]
        if token.text != "which" or token.dep not in ("nsubj", "nsubjpass", "dobj") or not tree.has_head(index):
            continue
        clause = token.head
        span = tree.span(clause)
        if tokens[clause].dep != "relcl" or span is None or span.start != index or index == sentence.start:
            continue
        before = tokens[index - 1]
        if before.pos in ("PUNCT", "ADP") or tokens[clause].head >= index:
            continue
        parts[index - sentence.start] = rw.Piece("that", token.space_after)
        changed = True
    return parts if changed else "no restrictive relative 'which' as subject or object"


_RESPELLED_POS = frozenset({"NOUN", "VERB", "ADJ", "ADV"})


def spelling_variant(tree: rw.Tree, sentence: range, settings: Mapping[str, Any]) -> list[rw.Piece] | str:
    """Respell every word that has an American and a British spelling in the other one: "The organization
    analyzed the color" -> "The organisation analysed the colour", and back.

    A word is respelled when it is a common noun, verb, adjective or adverb (not a proper noun: "World
    Health Organization" stays) and not capitalised inside the sentence (a name the tagger missed); its
    other spelling comes from :func:`._spelling.other_spelling`, with the word's case.
    """
    tokens = tree.tokens
    parts = rw.pieces(tokens[sentence.start:sentence.stop])
    changed = False
    for index in sentence:
        token = tokens[index]
        if token.pos not in _RESPELLED_POS or (index != sentence.start and token.text[:1].isupper()):
            continue
        other = other_spelling(token.text)
        if other is not None:
            parts[index - sentence.start] = rw.Piece(other, token.space_after)
            changed = True
    return parts if changed else "no word with an American and a British spelling"
