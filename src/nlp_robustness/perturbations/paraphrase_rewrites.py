"""The two rule-based paraphrases of the paraphrase family (:mod:`nlp_robustness.perturbations.paraphrase`):
contractions and number words, each as the list of edits it makes to a text.

``contractions`` (category ``rewrite``)
    Both directions in one left-to-right pass; every occurrence is rewritten (:func:`contraction_edits`).
    Expanded: the unambiguous n't forms of :data:`NEGATIONS` ("don't" -> "do not", "won't" -> "will not",
    "can't" -> "cannot"), "I'm" -> "I am", and "'re", "'ve", "'ll" after any word -> " are", " have",
    " will". Never expanded: "'s" (is, has or a possessive), "'d" (would or had), "ain't", and an n't form
    followed by a subject pronoun, which is inverted ("isn't it?", "don't you think", "wasn't there"): its
    expansion would need the words reordered ("is it not?").
    Contracted: an auxiliary of :data:`NEGATIONS` followed by "not" ("do not" -> "don't", "will not" ->
    "won't", "cannot" -> "can't"; "can not" is left, since it may be "can not only"), and the subject-verb
    pairs of :data:`SUBJECT_VERBS` ("I am" -> "I'm", "it is" -> "it's", "they are" -> "they're", "we will"
    -> "we'll"). A subject-verb pair is contracted only when another word follows it: "That is what it is."
    -> "That's what it is.", since a verb at the end of a clause cannot be contracted. It is also left after
    "as" or "than" ("as it is today"), before a pronoun that ends the clause ("what is it?"), and when "not"
    follows ("it is not" -> "it isn't": when both contractions are possible, the negation is the one
    contracted). The words of a rewritten span are separated by exactly one space, so no rewrite spans a
    line break. Case is kept: lower, Capitalised or
    UPPER spans are rewritten in the same case ("Do not" -> "Don't", "DO NOT" -> "DON'T"). Mixed-case spans
    ("do NOT", where the case is emphasis) are left. A new contraction takes the apostrophe the text uses:
    typographic ’ if the text has more ’ than ', else ASCII '.
``number_words`` (category ``rewrite``)
    Standalone integers in digits from 0 to ``max_number`` become words ("25" -> "twenty-five"; capitalised
    at the start of a sentence). Cardinal words from two to ``max_number`` (at most ninety-nine, hyphenated
    compounds included) become digits (:func:`number_edits`). These are never rewritten: "one" (a pronoun:
    "the one who") and "zero"; digits that are part of a longer token ("3.5", "1,000", "2014-15", "10am",
    "COVID-19", "$5", "50%", "10:30", "5/12"); numbers that stand beside a month name (dates), before am/pm,
    after a label word of :data:`LABELS` ("page 5", "No. 3"), or right beside a Capitalised word, which makes
    them part of a name ("Windows 8", "9 Rue Hébert"; the word before does not count at the start of a
    sentence); list labels ("1." or "2)" at the start of a line); numbers outside running text
    (:func:`outside_running_text`): alone in brackets ("(1)", "[2]": labels), or with a mathematical symbol
    or "=" as the nearest character before or after, spaces skipped ("(n=42)", "≥18", "x + 2", "<5"; the same
    for number words: "(two)" stays); a number word in a longer number phrase or
    compound ("twenty five", "two hundred", "three-year-old", "twenty-first"); and a number word written
    Capitalised except at the start of a sentence, or in UPPER case (probably a name or a title: "the Big
    Ten", "Ocean's Eleven"). A sentence starts at the start of the text or of a line, or after . ! or ?
    (and closing quotes) and a space; opening quotes or brackets may come first.

Each rule set gives its rewrites as :data:`Edit` spans in text order (:func:`contraction_edits`,
:func:`number_edits`), which :func:`apply_edits` applies; the family turns them into outcomes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from nlp_robustness.errors import InputError

__all__ = [
    "LABELS", "MONTHS", "NEGATIONS", "SUBJECT_VERBS", "Edit", "apply_edits", "contraction_edits", "number_edits",
    "number_to_words", "outside_running_text",
]

#: The unambiguous negative contractions and their expansions; each is rewritten both ways.
NEGATIONS: dict[str, str] = {
    "don't": "do not", "doesn't": "does not", "didn't": "did not", "isn't": "is not", "aren't": "are not",
    "wasn't": "was not", "weren't": "were not", "haven't": "have not", "hasn't": "has not",
    "hadn't": "had not", "won't": "will not", "wouldn't": "would not", "can't": "cannot",
    "couldn't": "could not", "shouldn't": "should not", "mustn't": "must not", "shan't": "shall not",
}
#: Verb -> the subjects it is contracted with ("I am" -> "I'm"); the clitic is the verb's.
SUBJECT_VERBS: dict[str, tuple[str, ...]] = {
    "am": ("i",), "are": ("you", "we", "they"), "is": ("he", "she", "it", "that", "there", "what", "who"),
    "will": ("i", "you", "we", "they", "he", "she", "it"),
}
_CLITICS = {"am": "m", "are": "re", "is": "s", "will": "ll"}
_EXPANDED_CLITICS = {"m": "am", "re": "are", "ve": "have", "ll": "will"}
MONTHS = frozenset(("january february march april may june july august september october november december "
                    "jan feb mar apr jun jul aug sep sept oct nov dec").split())
#: Words after which a number is a name or an address, not a quantity ("page 5").
LABELS = frozenset("page pages p chapter section article paragraph clause rule no number room floor flight gate "
                   "terminal terminals platform exit route channel row seat act figure fig table version episode "
                   "season vol volume line track level grade".split())
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUES = {word: value for value, word in enumerate(_SMALL)} | {word: 10 * (i + 2) for i, word in enumerate(_TENS)}
_NUMBER_NEIGHBOURS = frozenset(_WORD_VALUES) | {"hundred", "thousand", "point"}

_PRONOUNS = "i|you|he|she|it|we|they|this|that|there"  # "what is it?": the verb ends the clause
_START, _END = r"(?<![\w'’-])", r"(?![\w'’-])"  # not inside a word, a contraction or a hyphenated compound
_CONTRACTION = re.compile(
    rf"{_START}(?P<contracted>[a-z]+['’](?:t|m|re|ve|ll)){_END}"
    rf"|{_START}(?P<negated>(?:{'|'.join(e.split()[0] for e in NEGATIONS.values() if ' ' in e)}) not|cannot){_END}"
    rf"|{_START}(?<!\bas )(?<!\bthan )(?P<pair>"
    + "|".join(f"(?:{'|'.join(subjects)}) {verb}" for verb, subjects in SUBJECT_VERBS.items())
    + rf")(?! not{_END}){_END}(?=[ \t]+[\"“‘'(]?\w)(?![ \t]+(?:{_PRONOUNS})[ \t]*(?:[^\w\s'’-]|\Z))",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"(?<![\w.,:/$£€¥#+'’-])(?:100|[1-9][0-9]|[0-9])(?![\w%°'’/:-])(?![.,][0-9])")
_WORDS = re.compile(  # tens with an optional hyphenated unit ("twenty-five"), then nineteen .. two (longest first)
    rf"{_START}(?:(?:{'|'.join(_TENS)})(?:-(?:{'|'.join(_SMALL[1:10])}))?|{'|'.join(_SMALL[19:1:-1])}){_END}",
    re.IGNORECASE,
)
_INVERSION = re.compile(r"[ \t]+(?:i|you|he|she|it|we|they|there|this|that|these|those)(?![\w'’-])", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(?:\A|[.!?][\"”’')\]]*[ \t]+|\n[ \t]*)[\"“‘'(\[]*\Z")
_LINE_START = re.compile(r"(?:\A|\n)[ \t]*\Z")
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")

#: One rewrite: the span ``text[start:end]`` is replaced by ``replacement``.
Edit = tuple[int, int, str]


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with the non-overlapping ``edits`` (in text order) applied."""
    pieces, position = [], 0
    for start, end, replacement in edits:
        pieces += [text[position:start], replacement]
        position = end
    return "".join(pieces) + text[position:]


def _recase(original: str, replacement: str) -> str | None:
    """``replacement`` (lower case) in the case of ``original``: lower, Capitalised or UPPER; None if mixed."""
    letters = "".join(character for character in original if character.isalpha())
    if letters.islower():
        return replacement
    if letters.isupper() and len(letters) > 1:
        return replacement.upper()
    if letters[0].isupper() and (len(letters) == 1 or letters[1:].islower()):
        return replacement[0].upper() + replacement[1:]
    return None


def contraction_edits(text: str) -> list[Edit]:
    """The rewrites of ``contractions`` (module docstring), in text order."""
    apostrophe = "’" if text.count("’") > text.count("'") else "'"
    edits: list[Edit] = []
    for match in _CONTRACTION.finditer(text):
        span = match.group(0)
        if match.group("contracted"):
            word = span.replace("’", "'").lower()
            stem, _, clitic = word.partition("'")
            if word in NEGATIONS and _INVERSION.match(text, match.end()):
                continue  # "isn't it?" must not become "is not it?"
            if word in NEGATIONS:
                replacement = NEGATIONS[word]
            elif clitic in _EXPANDED_CLITICS and (clitic != "m" or stem == "i"):
                replacement = f"{stem} {_EXPANDED_CLITICS[clitic]}"
            else:
                continue  # ain't, 't of another word
        elif match.group("negated"):
            replacement = next(short for short, long in NEGATIONS.items() if long == span.lower())
        else:
            subject, verb = span.lower().split(" ")
            replacement = f"{subject}'{_CLITICS[verb]}"
        replacement = _recase(span, replacement.replace("'", apostrophe))
        if replacement is not None and replacement != span:
            edits.append((match.start(), match.end(), replacement))
    return edits


def number_to_words(number: int) -> str:
    """``number`` (0..100) in words: "seven", "twenty-five", "one hundred"."""
    if not 0 <= number <= 100:
        raise InputError(f"number_to_words: {number} is not in 0..100")
    if number == 100:
        return "one hundred"
    if number < 20:
        return _SMALL[number]
    tens, units = divmod(number, 10)
    return _TENS[tens - 2] + (f"-{_SMALL[units]}" if units else "")


def _neighbours(text: str, start: int, end: int) -> tuple[str, str, str]:
    """The two words before and the word after ``text[start:end]`` as written ("" where there is none)."""
    before, after = text[:start].split()[-2:], text[end:].split()[:1]
    return ("", "", *before)[-2], ("", *before)[-1], (after or [""])[0]


def _bare(word: str) -> str:
    """``word`` in lower case, letters and digits only."""
    return "".join(character for character in word.lower() if character.isalnum())


def _name_beside(text: str, start: int, end: int, before: str, after: str) -> bool:
    """A Capitalised word right beside the number, with no punctuation between: a name ("Windows 8",
    "9 Rue Hébert"). The word before does not count at the start of a sentence ("In 5 years")."""
    touching_before = text[:start].endswith((" ", "\t")) and before[-1:].isalnum() and before[:1].isupper()
    touching_after = text[end:].startswith((" ", "\t")) and after[:1].isupper()
    return touching_after or (touching_before and not _SENTENCE_START.search(text, 0, text.rfind(before, 0, start)))


def _is_math(character: str) -> bool:
    """A mathematical symbol (Unicode category Sm: ``+ < = > ± × ÷ ≤ ≥ ≠ −`` ...) or ``*`` ``^``."""
    return character != "" and (unicodedata.category(character) == "Sm" or character in "*^")


def outside_running_text(text: str, start: int, end: int) -> bool:
    """Whether the number ``text[start:end]`` is a label or part of mathematics, not running text: the
    nearest characters before and after it on its line, spaces and tabs skipped, are an opening and a
    closing bracket (a bracket that holds only the number: "(1)", "[ 2 ]"), or either is a mathematical
    symbol (:func:`_is_math`: "n=42", "≥18", "x + 2", "<5", "2 × 3")."""
    before, after = text[:start].rstrip(" \t")[-1:], text[end:].lstrip(" \t")[:1]
    return (before in _OPENING and after in _CLOSING) or _is_math(before) or _is_math(after)


def number_edits(text: str, max_number: int = 100) -> list[Edit]:
    """The rewrites of ``number_words`` (module docstring), in text order."""
    edits: list[Edit] = []
    for match in _DIGITS.finditer(text):
        start, end, value = match.start(), match.end(), int(match.group(0))
        _, raw_before, raw_after = _neighbours(text, start, end)
        before, after = _bare(raw_before), _bare(raw_after)
        if (value > max_number or outside_running_text(text, start, end) or before in MONTHS or after in MONTHS
                or after in {"am", "pm"} or before in LABELS
                or before[:1].isdigit() or after[:1].isdigit() or _name_beside(text, start, end, raw_before, raw_after)
                or (_LINE_START.search(text, 0, start) and text[end:end + 1] in {".", ")"})):
            continue
        words = number_to_words(value)
        if _SENTENCE_START.search(text, 0, start):
            words = words[0].upper() + words[1:]
        edits.append((start, end, words))
    for match in _WORDS.finditer(text):
        start, end, word = match.start(), match.end(), match.group(0)
        value = sum(_WORD_VALUES[part] for part in word.lower().split("-"))
        before2, before, after = (_bare(neighbour) for neighbour in _neighbours(text, start, end))
        if (value < 2 or value > max_number or outside_running_text(text, start, end) or after in _NUMBER_NEIGHBOURS
                or before in _NUMBER_NEIGHBOURS
                or (before == "and" and before2 in _NUMBER_NEIGHBOURS)):
            continue
        capitalised = word[0].isupper() and word[1:].islower()
        if not (word.islower() or (capitalised and _SENTENCE_START.search(text, 0, start))):
            continue
        edits.append((start, end, str(value)))
    return sorted(edits)
