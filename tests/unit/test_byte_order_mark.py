"""U+FEFF (the byte-order mark) reaches the scorer as written, wherever it stands (nlp_robustness.fileio.text_files).

Every reader of segments keeps it, on line 1 as on any other line, as sacrebleu keeps it; a reader of fields
(scores, ids, a header, markup) drops only the UTF-8 signature opening the file. The WMT XML test compares the
project's segments and sentence BLEU with sacrebleu's own reading of the same file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu

from nlp_robustness.data.local_testsets import read_domain_file, read_local_testset
from nlp_robustness.data.mqm import read_mqm_error_texts, read_mqm_segment_scores
from nlp_robustness.data.mtme import read_mtme_documents, read_mtme_segment_scores, read_plain_scores
from nlp_robustness.data.reviews import read_blitzer_reviews
from nlp_robustness.data.testset_formats import (
    read_iwslt_xml,
    read_plain_lines,
    read_tsv_column,
    read_wit3_tags,
    read_wmt_sgml,
)
from nlp_robustness.data.testsets import read_testset_table, write_testset_table
from nlp_robustness.data.wmt19 import read_darr, read_lines
from nlp_robustness.data.wmt_da import read_da_segment_scores, read_line_domains
from nlp_robustness.data.wmt_xml import read_wmt_xml
from nlp_robustness.data.wmt_xml_tables import wmt_xml_table
from nlp_robustness.errors import InputError
from nlp_robustness.fileio.text_files import read_text_lines, write_lines
from nlp_robustness.systems.registry import TranslationBatch, system_kind

BOM = "\ufeff"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


# --- the one line reader ---------------------------------------------------------------------------------------


def test_segments_keep_every_u_feff_and_fields_drop_only_the_files_signature(tmp_path: Path) -> None:
    path = _write(tmp_path, "lines.txt", f"{BOM}one\r\ntwo\n{BOM}three {BOM}\n")
    assert read_text_lines(path, segments=True) == [f"{BOM}one", "two", f"{BOM}three {BOM}"]
    assert read_text_lines(path, segments=False) == ["one", "two", f"{BOM}three {BOM}"]


# --- readers of segments: every U+FEFF kept ----------------------------------------------------------------------


def test_plain_tsv_and_wmt19_segment_files_keep_u_feff_on_the_first_line_as_on_the_others(tmp_path: Path) -> None:
    plain = _write(tmp_path, "plain.txt", f"{BOM}first\nsecond\n {BOM}third \n")
    assert read_plain_lines(plain) == [f"{BOM}first", "second", f"{BOM}third"]  # U+FEFF is no whitespace to strip()
    assert read_lines(plain) == [f"{BOM}first", "second", f" {BOM}third "]
    tsv = _write(tmp_path, "mtnt.tsv", f"{BOM}src\tref\nx\t{BOM}y\n")
    assert read_tsv_column(tsv, 0) == [f"{BOM}src", "x"]
    assert read_tsv_column(tsv, 1) == ["ref", f"{BOM}y"]


def test_markup_files_drop_the_signature_before_their_first_tag_and_keep_u_feff_in_segments(tmp_path: Path) -> None:
    sgml = _write(tmp_path, "t.sgm", f'{BOM}<doc docid="d1">\n<seg id="1">{BOM}eins</seg>\n<seg id="2">zwei</seg>\n</doc>\n')
    assert [segment.text for segment in read_wmt_sgml(sgml)] == [f"{BOM}eins", "zwei"]
    iwslt = _write(tmp_path, "t.xml", f'{BOM}<mteval><doc docid="1"><seg id="1">{BOM}one</seg><seg id="2">two</seg></doc></mteval>\n')
    assert [segment.text for segment in read_iwslt_xml(iwslt)] == [f"{BOM}one", "two"]
    wit3 = _write(tmp_path, "train.tags.en-fr.en", f"{BOM}<url>http://x</url>\n{BOM}Hello.\n<talkid>1</talkid>\nBye.\n")
    assert read_wit3_tags(wit3) == [f"{BOM}Hello.", "Bye."]


def test_a_hypotheses_file_reaches_the_translations_as_written(tmp_path: Path) -> None:
    """Line 1 and line 3 start with U+FEFF; each translation keeps it, as sacrebleu would score the file."""
    table = pd.DataFrame({"segment_id": ["1", "2", "3"], "doc_id": "d", "source": ["s1", "s2", "s3"],
                          "reference": ["The cat sat on the mat.", "A dog.", "It rained all day long."]})
    write_testset_table(table, tmp_path / "t.tsv")
    hypotheses = [f"{BOM}The cat sat on a mat.", "A dog.", f"{BOM}It rained all day."]
    write_lines(hypotheses, tmp_path / "hyp.txt")
    batch = TranslationBatch(
        system="h", testsets=("t",), testset_files=(str(tmp_path / "t.tsv"),), translation_files=(str(tmp_path / "out.txt"),),
        report_files=(str(tmp_path / "out.json"),), inputs={"hypotheses": str(tmp_path / "hyp.txt")},
        params={"max_segments": None}, log=str(tmp_path / "log"),
    )
    system_kind("hypotheses").translate(batch)
    translations = read_plain_lines(tmp_path / "out.txt")
    assert translations == hypotheses
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["segments"] == 3
    references = read_testset_table(tmp_path / "t.tsv")["reference"].tolist()
    with open(tmp_path / "hyp.txt", encoding="utf-8", newline="\n") as handle:  # as sacrebleu's smart_open reads it
        theirs = [line.rstrip() for line in handle]
    assert theirs == hypotheses
    for ours, their, reference in zip(translations, theirs, references):
        assert sacrebleu.sentence_bleu(ours, [reference]).score == sacrebleu.sentence_bleu(their, [reference]).score
    assert sacrebleu.sentence_bleu(translations[0], [references[0]]).score != sacrebleu.sentence_bleu(
        translations[0].removeprefix(BOM), [references[0]]).score  # dropping it would change the score


def test_a_local_plain_test_set_keeps_u_feff_in_its_segments_and_reads_its_domain_file_signature_as_one(tmp_path: Path) -> None:
    spec = {"format": "plain", "domain": "x",
            "source": str(_write(tmp_path, "s.txt", f"{BOM}eins\n{BOM}zwei\n")),
            "reference": str(_write(tmp_path, "r.txt", f"{BOM}one\ntwo\n")),
            "domain_file": str(_write(tmp_path, "d.tsv", f"{BOM}news\td1\nsocial\td2\n"))}
    table, _, _ = read_local_testset(spec)
    assert table["source"].tolist() == [f"{BOM}eins", f"{BOM}zwei"]
    assert table["reference"].tolist() == [f"{BOM}one", "two"]
    assert table["domain"].tolist() == ["news", "social"] and table["doc_id"].tolist() == ["d1", "d2"]
    assert read_domain_file(spec["domain_file"]).values == ("news", "social")


# --- readers of fields: the signature dropped, any other U+FEFF kept (and refused as a malformed field) ------


def test_score_and_document_files_drop_their_signature(tmp_path: Path) -> None:
    scores = _write(tmp_path, "x.seg.score", f"{BOM}A\t0.5\nA\t{BOM}0.25\n")
    with pytest.raises(InputError, match=r"x\.seg\.score: line 2: score '\\ufeff0\.25' is not a number"):
        read_mtme_segment_scores(str(scores))
    scores.write_bytes(f"{BOM}A\t0.5\nA\t0.25\n".encode("utf-8"))
    np.testing.assert_array_equal(read_mtme_segment_scores(str(scores))["A"], [0.5, 0.25])
    np.testing.assert_array_equal(read_plain_scores(str(_write(tmp_path, "p.txt", f"{BOM}1\n2\n"))), [1.0, 2.0])
    assert read_mtme_documents(str(_write(tmp_path, "x.docs", f"{BOM}news\td1\n")))["domain"].tolist() == ["news"]
    da = _write(tmp_path, "ad-seg-scores.csv", f"{BOM}SYS SID RAW.SCR Z.SCR N \nS.0 1 50 0.1 1 \n")
    assert read_da_segment_scores(str(da))["sid"].tolist() == [1]
    domains = _write(tmp_path, "domains.tsv", f"{BOM}news\td1\t1\t1\n")
    assert read_line_domains(str(domains), ["x"])["domain"].tolist() == ["news"]
    mqm = _write(tmp_path, "avg_seg_scores.tsv", f"{BOM}system mqm_avg_score seg_id\nS 1.5 1\n")
    assert read_mqm_segment_scores(str(mqm))["mqm"].tolist() == [1.5]
    errors = _write(tmp_path, "errors.tsv", f"{BOM}system\tseg_id\tsource\ttarget\nS\t1\t{BOM}quelle\t<v>{BOM}ziel</v>\n")
    assert read_mqm_error_texts(str(errors)).iloc[0].tolist() == ["S", "1", f"{BOM}quelle", f"{BOM}ziel"]
    darr = _write(tmp_path, "RR-seglevel.csv", f"{BOM}LP DATA SID BETTER WORSE\nde-en newstest2019 1 A B\n")
    assert read_darr(darr)["sid"].tolist() == [1]
    review = _write(tmp_path, "positive.review", f"{BOM}<review>\n<review_text>\n{BOM}Great.\n</review_text>\n</review>\n")
    assert read_blitzer_reviews(review, domain="books", label="positive")["review_text"].tolist() == [f"{BOM}Great."]


# --- WMT XML: the same segments and sentence BLEU as sacrebleu's reading of the file ------------------------------


def _xml(tmp_path: Path) -> Path:
    """A WMT XML file (with a signature) whose segments start with U+FEFF on the source, reference and hypothesis
    sides, in both documents, not only on the first segment: in segment 1 both the reference and the hypothesis
    have it; in segment 2 only the hypothesis; in segment 3 only the reference."""
    def side(tag: str, attributes: str, texts: list[str]) -> str:
        segs = "".join(f'<seg id="{number}">{text}</seg>\n' for number, text in enumerate(texts, start=1))
        return f"<{tag} {attributes}><p>\n{segs}</p></{tag}>\n"

    documents = [
        ("d1", [f"{BOM}Die Katze sitzt auf der Matte.", f"{BOM}Es regnete den ganzen Tag."],
         [f"{BOM}The cat sits on the mat.", "It rained all day long."],
         [f"{BOM}The cat sat on the mat.", f"{BOM}It rained the whole day long."]),
        ("d2", [f"{BOM}Der Hund bellt laut.", "Gute Nacht."],
         [f"{BOM}The dog barks loudly.", "Good night."],
         ["The dog is barking loudly.", "Good night."]),
    ]
    body = "".join(
        f'<doc id="{doc_id}" origlang="de" domain="news">\n' + side("src", 'lang="de"', source)
        + side("ref", 'lang="en" translator="A"', reference) + side("hyp", 'system="S" lang="en"', hypothesis) + "</doc>\n"
        for doc_id, source, reference, hypothesis in documents
    )
    text = f'{BOM}<?xml version="1.0" encoding="utf-8"?>\n<dataset id="t">\n<collection id="general">\n{body}</collection>\n</dataset>\n'
    return _write(tmp_path, "bom.xml", text)


def test_wmt_xml_segments_and_sentence_bleu_equal_sacrebleus_reading_of_the_file(tmp_path: Path) -> None:
    from sacrebleu.dataset.base import Dataset
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    path = _xml(tmp_path)
    table = wmt_xml_table(read_wmt_xml(path))
    write_testset_table(table, tmp_path / "table.tsv")  # the test set's table on disk, as the scorer reads it
    table = read_testset_table(tmp_path / "table.tsv")
    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(path))  # what `sacrebleu -t <wmt xml test set>` writes out
    theirs = {name: [Dataset._clean(text) for text in fields[name]] for name in ("src", "ref:A", "S")}
    assert table["source"].tolist() == theirs["src"]
    assert table["reference"].tolist() == theirs["ref:A"]
    assert table["hypothesis:S"].tolist() == theirs["S"]
    assert [text.startswith(BOM) for text in table["source"]] == [True, True, True, False]
    assert [text.startswith(BOM) for text in table["reference"]] == [True, False, True, False]
    assert [text.startswith(BOM) for text in table["hypothesis:S"]] == [True, True, False, False]

    def bleu(hypothesis: str, reference: str) -> float:
        return sacrebleu.sentence_bleu(hypothesis, [reference]).score

    ours = [bleu(hypothesis, reference) for hypothesis, reference in zip(table["hypothesis:S"], table["reference"])]
    assert ours == [bleu(hypothesis, reference) for hypothesis, reference in zip(theirs["S"], theirs["ref:A"])]
    clean = [bleu(hypothesis.replace(BOM, ""), reference.replace(BOM, ""))
             for hypothesis, reference in zip(table["hypothesis:S"], table["reference"])]
    assert ours[0] == clean[0]  # the same mark on both sides: the BLEU of the clean text
    assert ours[1] != clean[1] and ours[2] != clean[2]  # on one side only: sacrebleu's score, not the clean text's
    assert ours[3] == clean[3]
    corpus = sacrebleu.corpus_bleu(table["hypothesis:S"].tolist(), [table["reference"].tolist()]).score
    assert corpus == sacrebleu.corpus_bleu(theirs["S"], [theirs["ref:A"]]).score

    # The same hypotheses as a plain file (a U+FEFF opening it, as a file unwrapped from the XML has) read back by
    # the hypotheses kind's reader: the same segments, so the same scores.
    write_lines(table["hypothesis:S"].tolist(), tmp_path / "S.txt")
    assert (tmp_path / "S.txt").read_bytes().startswith(BOM.encode("utf-8"))
    assert read_plain_lines(tmp_path / "S.txt") == theirs["S"]
