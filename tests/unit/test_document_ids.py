"""Test sets without document ids (nlp_robustness.data.document_ids): found when planned from the files' formats,
recorded by the prepare step (no "documents" counted from segments), and named with the way to give ids in the
caption of every table whose bootstrap drew their segments as independent units (issue 52, item 7)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nlp_robustness.data.acquisition import plan_dataset
from nlp_robustness.data.document_ids import configured_without_document_ids, has_document_ids, segments_as_units_note
from nlp_robustness.data.local_testsets import read_local_testset
from nlp_robustness.data.manifest import load_manifest
from nlp_robustness.data.testset_preparation import prepare_testset
from nlp_robustness.data.testsets import load_parallel_files
from nlp_robustness.outputs.comparisons import comparisons_markdown
from nlp_robustness.outputs.corpus_tables import lacking_document_ids, write_corpus_tables
from nlp_robustness.scoring.corpus_scores import segment_statistics
from nlp_robustness.statistics.corpus_uncertainty import POOL, StudyCorpus, corpus_bootstrap
from tests.paths import MANIFEST, MANIFEST_SCHEMA, MIRROR

SOURCES = [f"Le chat numéro {i} dort sur le tapis rouge ." for i in range(1, 25)]
REFERENCES = [f"The cat number {i} sleeps on the red mat ." for i in range(1, 25)]


def _write_lines(path: Path, lines: list[str]) -> str:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return str(path)


def _plain_pair(tmp_path: Path) -> dict[str, str]:
    """A plain file pair the test writes: 24 segments, no document ids."""
    return {"source": _write_lines(tmp_path / "source.txt", SOURCES), "reference": _write_lines(tmp_path / "reference.txt", REFERENCES),
            "format": "plain", "domain": "x"}


def test_a_plain_file_counts_no_documents_and_says_it_has_no_ids(tmp_path: Path) -> None:
    spec = _plain_pair(tmp_path)
    table = load_parallel_files(spec["source"], spec["reference"], "plain")
    _, counts = prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False,
                                files=(spec["source"], spec["reference"], "plain"))
    # before: documents 1 (the one empty id counted as a document) and nothing said of the resampling
    assert (counts["segments"], counts["documents"], counts["document_ids"]) == (24, 0, False)


def test_a_domain_file_with_ids_counts_its_documents(tmp_path: Path) -> None:
    spec = _plain_pair(tmp_path) | {"domain_file": _write_lines(tmp_path / "domains.tsv", [f"news\td{i // 6}" for i in range(24)])}
    table, files, _ = read_local_testset(spec)
    _, counts = prepare_testset(table, max_segments=None, allow_empty_segments=False, drop_source_equals_reference=False, files=files)
    assert (counts["documents"], counts["document_ids"]) == (4, True)


def test_test_sets_without_document_ids_are_found_when_planned(tmp_path: Path) -> None:
    plain = _plain_pair(tmp_path)
    without_ids = plain | {"domain_file": _write_lines(tmp_path / "domains.tsv", ["news"] * 12 + ["social"] * 12)}
    with_ids = plain | {"domain_file": _write_lines(tmp_path / "documents.tsv", [f"news\td{i // 6}" for i in range(24)])}
    testsets = {
        "plain": plain, "domains-only": without_ids, "documents": with_ids,
        "sgml": {"source": "a.sgm", "reference": "b.sgm", "format": "wmt-sgml", "domain": "x"},
        "xml": {"file": "x.xml", "format": "wmt-xml", "translator": "A", "domain": "x"},
        "wmt15": {"dataset": "wmt15-newsdiscusstest2015-enfr", "domain": "discussion"},
        "wmt14": {"dataset": "wmt14-newstest2014-enfr", "domain": "news"},
    }
    manifest = load_manifest(MANIFEST, MANIFEST_SCHEMA)
    # wmt15's mirror copy is OPUS's plain text; its download the organisers' SGML (with document ids)
    for mirror, expected in ((MIRROR, ["plain", "domains-only", "wmt15"]), (None, ["plain", "domains-only"])):
        formats = {key: plan_dataset(manifest.datasets[key], manifest, mirror, tmp_path / "downloads").format
                   for key in ("wmt15-newsdiscusstest2015-enfr", "wmt14-newstest2014-enfr")}
        if mirror is not None and formats["wmt15-newsdiscusstest2015-enfr"] != "plain":
            pytest.skip(f"the mirror under {MIRROR} lacks wmt15's plain copy")
        assert configured_without_document_ids(testsets, formats) == expected
    # a domain file not there yet (made by a rule) is not known
    assert has_document_ids(plain | {"domain_file": str(tmp_path / "later.tsv")}, {}) is None


def test_the_note_names_the_test_sets_and_the_domain_file() -> None:
    assert segments_as_units_note([]) == ""
    one, two = segments_as_units_note(["bio18"]), segments_as_units_note(["wmt15", "bio18"])
    assert one.startswith("Test set bio18 has no document ids: its segments were resampled as independent units")
    assert two.startswith("Test sets wmt15, bio18 have no document ids: their segments")
    assert "domain_file" in one and "docs/own-data.md" in one


def _study(tmp_path: Path) -> StudyCorpus:
    """Two systems on two test sets: "plain" (24 segments, no ids) and "documents" (24 segments in 4 documents)."""
    hypotheses = {"copy": REFERENCES, "shuffled": [REFERENCES[(i * 7) % 24] for i in range(24)]}
    statistics = {system: {"bleu": {testset: segment_statistics(lines, REFERENCES, "bleu") for testset in ("plain", "documents")}}
                  for system, lines in hypotheses.items()}
    return StudyCorpus(["plain", "documents"], {"plain": [""] * 24, "documents": [f"d{i // 6}" for i in range(24)]}, statistics)


def test_the_corpus_table_prints_no_documents_for_a_plain_file_and_says_why(tmp_path: Path) -> None:
    study = _study(tmp_path)
    scores, comparisons = corpus_bootstrap(study, resamples=200, seed=0, confidence=0.95, name="plain-study")
    without = lacking_document_ids(study.doc_ids)
    assert without == ["plain"]
    paths = {table: {extension: tmp_path / f"{table}.{extension}" for extension in ("csv", "md", "html")} for table in ("scores", "comparisons")}
    write_corpus_tables(scores, comparisons, "plain-study", ["bleu"], 0.95, 200, paths["scores"], paths["comparisons"], without)
    written = pd.read_csv(paths["scores"]["csv"], keep_default_na=False).set_index(["pool", "system"])
    # documents are documents: none in the plain file (before: 24, its segments), 4 in the other, 4 on the pool
    assert written.loc[("plain", "copy"), "documents"] == 0 and written.loc[("documents", "copy"), "documents"] == 4
    assert written.loc[(POOL, "copy"), "documents"] == 4
    # what the bootstrap drew: the segments of the plain file, the documents of the other
    assert written.loc[("plain", "copy"), "resampled_units"] == 24 and written.loc[(POOL, "copy"), "resampled_units"] == 28
    markdown = paths["scores"]["md"].read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line for line in markdown.splitlines() if line.startswith("| ") and "copy" in line}
    assert "none: segments resampled" in rows["plain"] and "| 24 " not in rows["plain"].split("copy")[1].split("|")[2]
    assert "4 + 24 segments resampled alone" in rows["whole pool"]
    for table in ("scores", "comparisons"):
        for extension in ("md", "html"):
            text = " ".join(paths[table][extension].read_text(encoding="utf-8").split())
            assert "Test set plain has no document ids: its segments were resampled as independent units" in text
            assert "domain_file" in text


def test_a_study_with_documents_everywhere_prints_no_note(tmp_path: Path) -> None:
    study = _study(tmp_path)
    study = StudyCorpus(["documents"], {"documents": study.doc_ids["documents"]},
                        {system: {"bleu": {"documents": by["bleu"]["documents"]}} for system, by in study.statistics.items()})
    scores, comparisons = corpus_bootstrap(study, resamples=50, seed=0, confidence=0.95, name="documents-study")
    paths = {table: {extension: tmp_path / f"{table}.{extension}" for extension in ("csv", "md", "html")} for table in ("scores", "comparisons")}
    write_corpus_tables(scores, comparisons, "documents-study", ["bleu"], 0.95, 50, paths["scores"], paths["comparisons"],
                        lacking_document_ids(study.doc_ids))
    assert "resampled as independent units" not in paths["scores"]["md"].read_text(encoding="utf-8")
    written = pd.read_csv(paths["scores"]["csv"])
    assert (written["documents"] == written["resampled_units"]).all() and set(written["documents"]) == {4}


def test_the_comparisons_report_carries_the_note() -> None:
    note = segments_as_units_note(["wmt15"])
    empty = pd.DataFrame(columns=["statistic"])
    assert note in comparisons_markdown(empty, [], "x", 0.95, 2, note=note)
    assert "no document ids" not in comparisons_markdown(empty, [], "x", 0.95, 2)
