"""American and British spellings of the same English words, for the structure family's ``spelling_variant``.

Only differences of spelling, never of word: a closed list of pairs (-or/-our, -er/-re, -ense/-ence,
-og/-ogue, doubled l, single words), and the American -ize/-yze endings, whose British forms are regular
(-ise/-yse; "size" and its compounds, "prize", "seize", "maize", "baize" and "capsize" are not such
endings). British -ise goes back to -ize only for the stems listed (:data:`ISE_STEMS`): most words in
-ise have no -ize form ("advise", "promise", "exercise"). Words whose spelling carries a difference of
meaning in one variety ("program"/"programme", "check"/"cheque", "tire"/"tyre", "meter"/"metre",
"story"/"storey") are left out.
"""

from __future__ import annotations

import re

__all__ = ["AMERICAN_TO_BRITISH", "BRITISH_TO_AMERICAN", "ISE_STEMS", "other_spelling"]

_PAIRS: tuple[tuple[str, str], ...] = (
    ("color", "colour"), ("colors", "colours"), ("colored", "coloured"), ("colorful", "colourful"),
    ("favor", "favour"), ("favors", "favours"), ("favored", "favoured"), ("favorable", "favourable"),
    ("favorite", "favourite"), ("favorites", "favourites"), ("honor", "honour"), ("honors", "honours"),
    ("honored", "honoured"), ("labor", "labour"), ("neighbor", "neighbour"), ("neighbors", "neighbours"),
    ("neighborhood", "neighbourhood"), ("neighborhoods", "neighbourhoods"), ("neighboring", "neighbouring"),
    ("behavior", "behaviour"), ("behaviors", "behaviours"), ("behavioral", "behavioural"), ("flavor", "flavour"),
    ("humor", "humour"), ("rumor", "rumour"), ("rumors", "rumours"), ("harbor", "harbour"), ("vapor", "vapour"),
    ("vigor", "vigour"), ("endeavor", "endeavour"), ("endeavors", "endeavours"), ("armor", "armour"),
    ("armored", "armoured"), ("odor", "odour"), ("tumor", "tumour"), ("tumors", "tumours"), ("rigor", "rigour"),
    ("savior", "saviour"), ("center", "centre"), ("centers", "centres"), ("centered", "centred"),
    ("theater", "theatre"), ("theaters", "theatres"), ("fiber", "fibre"), ("fibers", "fibres"), ("liter", "litre"),
    ("liters", "litres"), ("caliber", "calibre"), ("somber", "sombre"), ("defense", "defence"),
    ("offense", "offence"), ("offenses", "offences"), ("pretense", "pretence"), ("catalog", "catalogue"),
    ("catalogs", "catalogues"), ("dialog", "dialogue"), ("analog", "analogue"), ("traveled", "travelled"),
    ("traveling", "travelling"), ("traveler", "traveller"), ("travelers", "travellers"), ("canceled", "cancelled"),
    ("canceling", "cancelling"), ("labeled", "labelled"), ("labeling", "labelling"), ("modeled", "modelled"),
    ("modeling", "modelling"), ("fueled", "fuelled"), ("fueling", "fuelling"), ("signaled", "signalled"),
    ("signaling", "signalling"), ("totaled", "totalled"), ("leveled", "levelled"), ("counselor", "counsellor"),
    ("counselors", "counsellors"), ("jewelry", "jewellery"), ("gray", "grey"), ("aluminum", "aluminium"),
    ("maneuver", "manoeuvre"), ("maneuvers", "manoeuvres"), ("pediatric", "paediatric"),
    ("pediatrician", "paediatrician"), ("anemia", "anaemia"), ("anesthesia", "anaesthesia"),
    ("estrogen", "oestrogen"), ("diarrhea", "diarrhoea"), ("fetus", "foetus"), ("fetal", "foetal"),
    ("hemorrhage", "haemorrhage"), ("leukemia", "leukaemia"), ("orthopedic", "orthopaedic"), ("skeptical", "sceptical"),
    ("skepticism", "scepticism"), ("plow", "plough"), ("mold", "mould"), ("mustache", "moustache"),
    ("pajamas", "pyjamas"), ("cozy", "cosy"), ("fulfill", "fulfil"), ("enrollment", "enrolment"),
    ("installment", "instalment"), ("judgment", "judgement"), ("acknowledgment", "acknowledgement"),
    ("aging", "ageing"), ("artifact", "artefact"), ("artifacts", "artefacts"), ("licorice", "liquorice"),
)
AMERICAN_TO_BRITISH: dict[str, str] = dict(_PAIRS)
BRITISH_TO_AMERICAN: dict[str, str] = {british: american for american, british in _PAIRS}

#: Stems whose British -ise/-isation forms go back to American -ize/-ization.
ISE_STEMS: frozenset[str] = frozenset({
    "organ", "recogn", "real", "critic", "emphas", "apolog", "author", "character", "minim", "maxim",
    "priorit", "summar", "mobil", "stabil", "final", "legal", "modern", "privat", "special", "util", "normal",
    "optim", "categor", "civil", "global", "hospital", "memor", "scrutin", "sympath", "symbol", "visual",
    "central", "capital", "criminal", "neutral", "jeopard", "penal", "subsid", "harmon", "standard", "energ",
    "digit", "industrial", "national", "ration", "polar", "immun", "synchron", "computer", "colon", "public",
    "custom", "vandal", "terror", "trivial", "galvan", "legitim", "monopol", "stigmat",
})
_ENDINGS = ("e", "es", "ed", "ing", "ation", "ations", "er", "ers")
_AMERICAN_IZE = re.compile(rf"^([a-z]{{3,}})(iz|yz)({'|'.join(_ENDINGS)})$")
_BRITISH_ISE = re.compile(rf"^([a-z]{{3,}})is({'|'.join(_ENDINGS)})$")
_NOT_IZE_ENDINGS = ("size", "sized", "sizes", "sizing", "prize", "prizes", "prized", "seize", "seized", "seizes",
                    "seizing", "maize", "baize", "capsize", "capsized")


def _match_case(word: str, model: str) -> str:
    if model.isupper() and len(model) > 1:
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def other_spelling(word: str) -> str | None:
    """The word in the other variety (its case kept), or None if it is spelled alike in both or unknown."""
    lower = word.lower()
    other = AMERICAN_TO_BRITISH.get(lower) or BRITISH_TO_AMERICAN.get(lower)
    if other is None and not lower.endswith(_NOT_IZE_ENDINGS):
        american = _AMERICAN_IZE.match(lower)
        if american:
            other = american[1] + ("is" if american[2] == "iz" else "ys") + american[3]
        else:
            british = _BRITISH_ISE.match(lower)
            if british and british[1] in ISE_STEMS:
                other = british[1] + "iz" + british[2]
    return None if other is None else _match_case(other, word)
