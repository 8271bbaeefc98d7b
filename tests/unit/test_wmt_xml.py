"""Tests of nlp_robustness.data.wmt_xml and wmt_xml_tables: the WMT XML reader, its alignment checks, the table; the real WMT'22 files."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import sacrebleu

from nlp_robustness.data.wmt_xml import read_wmt_xml, reference_translator, reference_translators
from nlp_robustness.data.wmt_xml_tables import hypothesis_column, read_declared_wmt_xml, wmt_xml_table
from nlp_robustness.errors import InputError
from tests.paths import MIRROR as DATA_MIRROR

MIRROR = DATA_MIRROR / "wmt22-general-defr-frde"


def _side(tag: str, attributes: str, texts: list[str], ids: list[str] | None = None) -> str:
    ids = ids or [str(number) for number in range(1, len(texts) + 1)]
    segs = "\n".join(f'        <seg id="{seg_id}">{text}</seg>' for seg_id, text in zip(ids, texts))
    return f"    <{tag} {attributes}>\n      <p>\n{segs}\n      </p>\n    </{tag}>\n"


def _doc(doc_id: str, domain: str | None, sides: list[str]) -> str:
    domain_attribute = f' domain="{domain}"' if domain is not None else ""
    return f'  <doc id="{doc_id}" origlang="de"{domain_attribute}>\n' + "".join(sides) + "  </doc>\n"


def _write(tmp_path: Path, documents: list[str]) -> Path:
    path = tmp_path / "test.xml"
    text = "<?xml version='1.0' encoding='utf-8'?>\n<dataset id=\"t\">\n<collection id=\"general\">\n"
    path.write_text(text + "".join(documents) + "</collection>\n</dataset>\n", encoding="utf-8")
    return path


def _good_doc(doc_id: str = "d1", domain: str = "news", systems: tuple[str, ...] = ("S1", "S2"), n: int = 2) -> str:
    sides = [_side("src", 'lang="de"', [f"quelle {doc_id} {i} &amp; mehr" for i in range(n)])]
    sides.append(_side("ref", 'lang="fr" translator="A"', [f"ref {doc_id} {i}" for i in range(n)]))
    sides += [_side("hyp", f'system="{system}" lang="fr"', [f"{system} {doc_id} {i}" for i in range(n)]) for system in systems]
    return _doc(doc_id, domain, sides)


def test_reads_documents_entities_and_table(tmp_path):
    path = _write(tmp_path, [_good_doc("d1", "news", n=2), _good_doc("d2", "social", n=3), _good_doc("d3", "news", n=1)])
    parsed = read_wmt_xml(path)
    assert [d.doc_id for d in parsed.documents] == ["d1", "d2", "d3"]
    assert parsed.domains == ("news", "social")
    assert parsed.systems == ("S1", "S2")
    assert parsed.segments == 6
    assert parsed.documents[0].source[0] == "quelle d1 0 & mehr"  # entity decoded
    assert parsed.documents[1].origlang == "de" and parsed.documents[1].line == 30
    table = wmt_xml_table(parsed, ["S2", "S1"])
    assert list(table.columns) == ["segment_id", "doc_id", "source", "reference", "domain", "hypothesis:S2", "hypothesis:S1"]
    assert table["segment_id"].tolist() == ["1", "2", "3", "4", "5", "6"]
    assert table["domain"].tolist() == ["news", "news", "social", "social", "social", "news"]
    assert table.loc[5, "hypothesis:S1"] == "S1 d3 0" and table.loc[2, "reference"] == "ref d2 0"
    assert [d.doc_id for d in parsed.documents_of_domain("news")] == ["d1", "d3"]


def test_unequal_segment_counts_name_file_line_document_and_system(tmp_path):
    bad = _doc("d2", "news", [
        _side("src", 'lang="de"', ["a", "b"]),
        _side("ref", 'lang="fr" translator="A"', ["a", "b"]),
        _side("hyp", 'system="S1" lang="fr"', ["a"]),
        _side("hyp", 'system="S2" lang="fr"', ["a", "b"]),
    ])
    path = _write(tmp_path, [_good_doc(), bad])
    with pytest.raises(InputError, match=r"test\.xml: line 43: document 'd2': system 'S1' has 1 segments, the source has 2"):
        read_wmt_xml(path)


def test_reference_with_fewer_segments(tmp_path):
    bad = _doc("d1", "news", [_side("src", 'lang="de"', ["a", "b"]), _side("ref", 'lang="fr" translator="A"', ["a"])])
    with pytest.raises(InputError, match=r"line 11: document 'd1': reference of translator 'A' has 1 segments, the source has 2"):
        read_wmt_xml(_write(tmp_path, [bad]))


def test_segment_ids_must_be_one_to_n_in_order(tmp_path):
    bad = _doc("d1", "news", [
        _side("src", 'lang="de"', ["a", "b", "c"], ids=["1", "3", "2"]),
        _side("ref", 'lang="fr" translator="A"', ["a", "b", "c"]),
    ])
    with pytest.raises(InputError, match=r"line 8: document 'd1': source: segment ids must be 1..n in order; segment 2 has id '3'"):
        read_wmt_xml(_write(tmp_path, [bad]))


def test_document_without_domain(tmp_path):
    path = _write(tmp_path, [_good_doc("d1"), _doc("d2", None, [])])
    with pytest.raises(InputError, match=r"line 30: document 'd2': <doc> without a domain attribute"):
        read_wmt_xml(path)


def test_system_missing_from_a_later_document(tmp_path):
    path = _write(tmp_path, [_good_doc("d1", systems=("S1", "S2")), _good_doc("d2", systems=("S1",))])
    with pytest.raises(InputError, match=r"line 30: document 'd2': no <hyp> of system\(s\) 'S2'"):
        read_wmt_xml(path)


def test_system_appearing_only_in_a_later_document(tmp_path):
    path = _write(tmp_path, [_good_doc("d1", systems=("S1",)), _good_doc("d2", systems=("S1", "S2"))])
    with pytest.raises(InputError, match=r"document 'd2': system 'S2' has no <hyp> in the documents before this one"):
        read_wmt_xml(path)


def test_no_reference_of_the_chosen_translator(tmp_path):
    path = _write(tmp_path, [_good_doc("d1")])
    with pytest.raises(InputError, match=r"^'B' is not a translator of .*test\.xml \(its translators: A\)$"):
        read_wmt_xml(path, translator="B")
    with pytest.raises(InputError, match=r"^--translator: 'B' is not a translator of .*test\.xml \(its translators: A\)$"):
        read_wmt_xml(path, translator="B", key="--translator")


def test_a_translator_of_the_file_missing_from_one_document_names_that_document(tmp_path):
    other = _doc("d2", "news", [_side("src", 'lang="de"', ["x"]), _side("ref", 'lang="fr" translator="B"', ["y"]),
                                _side("hyp", 'system="S1" lang="fr"', ["a"]), _side("hyp", 'system="S2" lang="fr"', ["b"])])
    path = _write(tmp_path, [_good_doc("d1"), other])
    with pytest.raises(InputError, match=r"line 30: document 'd2': 0 references of translator 'A' \(need one; translators here: 'B'\)"):
        read_wmt_xml(path)  # A among several (A, B): A, which d2 lacks


def _translators_file(tmp_path: Path, translators: list[str]) -> Path:
    sides = [_side("src", 'lang="de"', ["quelle"])]
    sides += [_side("ref", f'lang="en" translator="{name}"', [f"reference {name}"]) for name in translators]
    return _write(tmp_path, [_doc("d1", "news", sides + [_side("hyp", 'system="S" lang="en"', ["hypothesis"])])])


def test_without_a_translator_the_files_only_one_is_read_whatever_its_name(tmp_path):
    """WMT'23 names its single reference refA: the old default A failed on it."""
    parsed = read_wmt_xml(_translators_file(tmp_path, ["refA"]))
    assert parsed.translator == "refA" and parsed.documents[0].reference == ("reference refA",)
    assert reference_translator("f.xml", ["refA"]) == "refA"
    assert reference_translator("f.xml", [""]) == ""  # a <ref> without a translator attribute


def test_without_a_translator_a_file_with_several_is_read_with_a(tmp_path):
    parsed = read_wmt_xml(_translators_file(tmp_path, ["B", "A"]))
    assert parsed.translator == "A" and parsed.documents[0].reference == ("reference A",)
    assert read_wmt_xml(_translators_file(tmp_path, ["A", "B"]), "B").documents[0].reference == ("reference B",)


def test_without_a_translator_several_none_of_them_a_fail_listing_them_and_naming_the_key(tmp_path):
    path = _translators_file(tmp_path, ["B", "C"])
    with pytest.raises(InputError) as raised:
        read_wmt_xml(path)
    assert str(raised.value) == (
        f"{path} has 2 reference translators and none is A (B, C): name the one to read with testsets.<name>.translator"
    )
    with pytest.raises(InputError) as raised:
        reference_translator(path, ["B", "C"], key="testsets.news.translator")
    assert str(raised.value) == f"testsets.news.translator: {path} has 2 reference translators and none is A (B, C): name the one to read"
    assert read_wmt_xml(path, "C").documents[0].reference == ("reference C",)


def test_a_translator_given_but_missing_fails_listing_the_files(tmp_path):
    path = _translators_file(tmp_path, ["refA"])
    with pytest.raises(InputError) as raised:
        read_wmt_xml(path, "A")
    assert str(raised.value) == f"'A' is not a translator of {path} (its translators: refA)"


def test_a_file_without_any_reference_fails(tmp_path):
    path = _translators_file(tmp_path, [])
    with pytest.raises(InputError, match=r"test\.xml: no <ref> in the file, so no reference translation to read"):
        read_wmt_xml(path)


def test_unknown_system_and_domain_when_asked_for(tmp_path):
    parsed = read_wmt_xml(_write(tmp_path, [_good_doc("d1")]))
    with pytest.raises(InputError, match=r"test\.xml: no system 'S9' \(its systems: S1, S2\)"):
        wmt_xml_table(parsed, ["S1", "S9"])
    with pytest.raises(InputError, match=r"test\.xml: no document of domain 'sports' \(its domains: news\)"):
        parsed.documents_of_domain("sports")


def test_malformed_xml_names_the_line(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<dataset>\n<collection>\n<doc id='d' domain='news'>\n<src><p><seg id='1'>a & b</seg></p></src>\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken\.xml: line 4, column \d+: not well-formed XML"):
        read_wmt_xml(path)


def test_declared_domains_and_systems_must_match_the_file(tmp_path):
    path = _write(tmp_path, [_good_doc("d1", "news")])
    table = read_declared_wmt_xml(path, {"reference_translator": "A", "domains": ["news"], "systems": ["S2", "S1"]}, "ds")
    assert list(table.columns)[-2:] == ["hypothesis:S2", "hypothesis:S1"]
    with pytest.raises(InputError, match=r"dataset ds: .*test\.xml holds the systems S1, S2, but the manifest declares S1, S3; not in the file: S3; not declared: S2"):
        read_declared_wmt_xml(path, {"reference_translator": "A", "domains": ["news"], "systems": ["S1", "S3"]}, "ds")
    with pytest.raises(InputError, match=r"dataset ds: .*holds the domains news, but the manifest declares news, social; not in the file: social"):
        read_declared_wmt_xml(path, {"reference_translator": "A", "domains": ["news", "social"], "systems": ["S1", "S2"]}, "ds")


def _organisers_bleu() -> dict[tuple[str, str], float]:
    with open(MIRROR / "automatic-scores.de-fr.fr-de.tsv", encoding="utf-8") as handle:
        return {(row["pair"], row["system"]): float(row["score"]) for row in csv.DictReader(handle, delimiter="\t") if row["metric"] == "bleu-A"}


@pytest.mark.skipif(not MIRROR.is_dir(), reason="the WMT'22 mirror is not on this machine")
def test_real_wmt22_files_counts_systems_and_organisers_bleu():
    expected = {
        "de-fr": (1984, {"conversation": 462, "ecommerce": 501, "news": 506, "social": 515},
                  ["LT22", "Online-A", "Online-B", "Online-G", "Online-W", "Online-Y"]),
        "fr-de": (2006, {"conversation": 501, "ecommerce": 524, "news": 504, "social": 477},
                  ["Lan-Bridge", "Online-A", "Online-B", "Online-G", "Online-W", "Online-Y", "eTranslation"]),
    }
    organisers = _organisers_bleu()
    assert len(organisers) == 13
    checked = 0
    for pair, (segments, per_domain, systems) in expected.items():
        parsed = read_wmt_xml(MIRROR / "xml" / f"wmttest2022.{pair}.all.xml")
        table = wmt_xml_table(parsed)
        assert len(table) == segments == parsed.segments
        assert table["domain"].value_counts().to_dict() == per_domain
        assert sorted(parsed.systems) == systems
        assert table["segment_id"].tolist() == [str(i) for i in range(1, segments + 1)]
        for system in systems:
            bleu = sacrebleu.corpus_bleu(table[hypothesis_column(system)].tolist(), [table["reference"].tolist()]).score
            assert round(bleu, 2) == round(organisers[(pair, system)], 2), (pair, system)
            checked += 1
    assert checked == 13


def test_a_users_file_may_have_documents_without_a_domain(tmp_path):
    """A local file (require_domain=False) keeps such a document with the domain "" (it adds no domain)."""
    path = _write(tmp_path, [_good_doc("d1", "news"), _doc("d2", None, [
        _side("src", 'lang="de"', ["x"]), _side("ref", 'lang="fr" translator="A"', ["y"]),
        _side("hyp", 'system="S1" lang="fr"', ["a"]), _side("hyp", 'system="S2" lang="fr"', ["b"])])])
    parsed = read_wmt_xml(path, require_domain=False)
    assert parsed.domains == ("news",) and parsed.documents[1].domain == ""
    assert wmt_xml_table(parsed)["domain"].tolist() == ["news", "news", ""]
    with pytest.raises(InputError, match=r"line 30: document 'd2': <doc> without a domain attribute"):
        read_wmt_xml(path)  # the manifest's files: every document has one


def test_reference_translators_are_listed_without_other_checks(tmp_path):
    doc = _doc("d1", "news", [_side("src", 'lang="de"', ["x"]), _side("ref", 'lang="fr" translator="B"', ["y"]),
                              _side("ref", 'lang="fr" translator="C"', ["z"])])
    path = _write(tmp_path, [doc])
    assert reference_translators(path) == ["B", "C"]
    assert reference_translators(tmp_path / "missing.xml") == []
    with pytest.raises(InputError, match=r"has 2 reference translators and none is A \(B, C\)"):
        read_wmt_xml(path)
